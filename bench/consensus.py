"""Benchmark consensus-graph construction (merge + every analysis) against the naive all-pairs merge.

Data: 5,000 synthetic trajectories (≈ 45k actions; seeded, ``random.Random``) over 10 tasks of
500 trajectories each — a consensus graph is per task, as in WebGraphEval — from 6 agents of
different skill. Each task is a catalogue site with its own host, target title and query; the
vocabulary is clicks on named links and buttons, typed queries with small variations (typos,
case, an extra word, an author name), selects (genre, sort order, format), navigations (start
page, paged search URLs) and scrolls; agents add detours (scrolls, stray links, back, cookie
banners), some take a trap ("Advanced search" → title field), some stop early, and the less
skilled pick the wrong title more often; only the right title (then "Place hold") can succeed.

Timed: ``build_consensus`` (string mode, the paper's merge) per task (canonical actions are built before the clock starts),
summed over the tasks, wall clock and process CPU time, best of ``--repeat`` runs; also
``merge_actions`` alone.

Naive baseline, in the same process: ``naive_merge`` — every pair of action *occurrences*, full
Levenshtein (no duplicate collapse, blocking or bound), union–find — on a seeded sample of
``--naive-sample`` occurrences of task 0. Its time is scaled quadratically to each task's
occurrence count n (× n(n−1) / m(m−1)) and summed over tasks. Its analyses are not counted, so the
ratio total_naive / total_ours understates the gap.

Fields mode (the default merge) on the same data: wall and CPU time (target ≤ 1 s). Scale:
``--scale`` (default 100,000) more trajectories of the same kind, built in both modes, wall and CPU
time of ``build_consensus`` over the tasks (target ≤ 10 s in fields mode). Each figure is printed
beside a floor measured in the same run: one Python pass reading the fields every merge reads of
every action, and the ratio to it (machines here differ about 2× in speed).

Usage: python bench/consensus.py [--trajectories 5000] [--tasks 10] [--naive-sample 150] [--seed 0] [--repeat 3] [--scale 100000]
"""

from __future__ import annotations

import argparse
import gc
import random
import time

from taskloom.tools.evaluate.consensus import AgentTrajectory, CanonicalAction, build_consensus, group_by_task, make_action, merge_actions, naive_merge
from taskloom.tools.evaluate.consensus.analyze import MergeMode

TITLES = [
    ("Dune", "Frank Herbert"), ("Foundation", "Isaac Asimov"), ("The Left Hand of Darkness", "Ursula K. Le Guin"),
    ("Neuromancer", "William Gibson"), ("Hyperion", "Dan Simmons"), ("Solaris", "Stanislaw Lem"), ("Kindred", "Octavia E. Butler"),
    ("The Dispossessed", "Ursula K. Le Guin"), ("Snow Crash", "Neal Stephenson"), ("Ubik", "Philip K. Dick"), ("Ringworld", "Larry Niven"),
]  # fmt: skip
LINKS = ["Home", "Catalogue", "New arrivals", "Best sellers", "About us", "Contact", "Help", "My account", "Events", "Gift cards", "Opening hours"]
BUTTONS = ["Apply filters", "Next page", "Previous page", "Save", "Cancel", "Close", "Share", "Print"]
SELECTS = {"Genre": ["Science fiction", "Fantasy", "Poetry", "History", "Crime"], "Sort by": ["Relevance", "Newest", "Title A-Z"], "Format": ["Paperback", "Hardcover", "E-book"]}
# name, skill (base success), detour rate, typo rate, trap rate, early-stop rate
AGENTS = [("jace", 0.75, 0.15, 0.05, 0.05, 0.05), ("cuga", 0.7, 0.1, 0.05, 0.08, 0.05), ("lbi", 0.6, 0.25, 0.1, 0.1, 0.08),
          ("uitars", 0.45, 0.5, 0.15, 0.15, 0.05), ("cua", 0.35, 0.2, 0.1, 0.2, 0.2), ("browseruse", 0.35, 0.6, 0.2, 0.2, 0.1)]  # fmt: skip


def _act(name: str, **fields: object) -> CanonicalAction:
    return make_action(name, dict(fields), confidence=1.0, source="synthetic")


def _typo(rng: random.Random, word: str) -> str:
    if len(word) < 3:
        return word
    i = rng.randrange(len(word) - 1)
    op = rng.randrange(3)
    if op == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if op == 1:
        return word[:i] + word[i + 1 :]
    return word[:i] + rng.choice("aeinorst") + word[i:]


def _query(rng: random.Random, title: str, author: str, typo: float) -> str:
    roll = rng.random()
    q = title.lower() if roll < 0.5 else title if roll < 0.7 else f"{title} {author.split()[-1]}" if roll < 0.85 else f"{title} novel"
    return _typo(rng, q) if rng.random() < typo else q


def _detour(rng: random.Random, host: str) -> CanonicalAction:
    roll = rng.random()
    if roll < 0.3:
        return _act("scroll", direction=rng.choice(["down", "down", "up"]))
    if roll < 0.55:
        return _act("click", text=rng.choice(LINKS), element="link")
    if roll < 0.65:
        return _act("go_back")
    if roll < 0.75:
        return _act("click", text=rng.choice(BUTTONS), element="button")
    if roll < 0.85:
        return _act("click", text="Accept cookies", element="button")
    return _act("navigate", url=f"https://{host}/search?page={rng.randint(1, 12)}")


def synthesize(n: int, tasks: int, seed: int) -> list[AgentTrajectory]:
    """``n`` trajectories spread evenly over ``tasks`` tasks and the six agents."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        t = i % tasks
        title, author = TITLES[t % len(TITLES)]
        host = f"library{t}.example.org"
        agent, skill, detour, typo, trap, stop = AGENTS[(i // tasks) % len(AGENTS)]
        acts = [_act("navigate", url=f"https://{host}/")]
        if rng.random() < 0.5:
            acts.append(_act("click", text="Accept cookies", element="button"))
        if rng.random() < 0.6:
            acts.append(_act("click", text="Catalogue", element="link"))
        trapped = rng.random() < trap
        if trapped:
            acts += [_act("click", text="Advanced search", element="link"), _act("type", text=_query(rng, title, author, typo), element="Title")]
        acts.append(_act("type", text=_query(rng, title, author, typo), element="Search the catalogue"))
        acts.append(_act("click", text="Search", element="button") if rng.random() < 0.7 else _act("press", key="Enter"))
        if rng.random() < 0.5:
            field = rng.choice(sorted(SELECTS))
            acts.append(_act("select", option=rng.choice(SELECTS[field]), element=field))
        stopped = rng.random() < stop
        right = rng.random() < 0.5 + skill / 2
        if not stopped:
            if right:
                acts.append(_act("click", text=title if rng.random() < 0.8 else f"{title} ({author})", element="link"))
            else:
                other, _ = TITLES[rng.randrange(len(TITLES))]
                acts.append(_act("click", text=other if other != title else f"{title}: a graphic novel", element="link"))
            acts.append(_act("click", text="Place hold" if rng.random() < 0.8 else "Reserve", element="button"))
            if rng.random() < 0.5:
                acts.append(_act("click", text="Confirm", element="button"))
        for _ in range(rng.randint(1, 5) if rng.random() < detour * 2 else 0):
            acts.insert(rng.randint(1, len(acts)), _detour(rng, host))
        p = 0.0 if stopped or not right else 0.2 if trapped else 0.95
        out.append(AgentTrajectory(id=f"{agent}-{i}", task_id=f"task-{t}", agent=agent, actions=acts, success=rng.random() < p))
    return out


def _timed_builds(groups: dict[str, list[AgentTrajectory]], mode: MergeMode) -> tuple[int, float, float]:
    """One ``build_consensus`` per task in ``mode``: action nodes in all graphs, wall seconds and process CPU seconds.

    The input is collected and frozen first and each graph is dropped once counted, so the figure is
    the builds' own work, not the collector's passes over a million-object input or earlier graphs
    (those vary with what the process holds: up to +50% on 100,000 runs).
    """
    gc.collect()
    gc.freeze()
    try:
        nodes = 0
        start, cpu = time.perf_counter(), time.process_time()
        for ts in groups.values():
            nodes += build_consensus(ts, mode=mode).summary.action_nodes
        return nodes, time.perf_counter() - start, time.process_time() - cpu
    finally:
        gc.unfreeze()


def _floor(groups: dict[str, list[AgentTrajectory]]) -> float:
    """CPU seconds of one pass that reads the fields every merge reads (kind, text, target, value, url) of every action."""
    cpu = time.process_time()
    seen = 0
    for ts in groups.values():
        for t in ts:
            for a in t.actions:
                seen += (a.kind, a.text, a.target, a.value, a.url) is not None
    assert seen >= 0
    return time.process_time() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=5000)
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--naive-sample", type=int, default=150, help="occurrences the naive merge runs on before quadratic scaling")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="runs of our build; the fastest is reported (the machine may be shared)")
    parser.add_argument("--scale", type=int, default=100_000, help="trajectories of the scale run (fields mode, one build; 0 skips it)")
    args = parser.parse_args()

    trajs = synthesize(args.trajectories, args.tasks, args.seed)
    groups = group_by_task(trajs)
    actions = sum(len(t.actions) for t in trajs)
    print(f"data: {len(trajs)} trajectories, {actions} actions, {len(groups)} tasks, {sum(t.success for t in trajs)} successful")

    walls, cpus, merges = [], [], []
    for _ in range(args.repeat):
        start, cpu = time.perf_counter(), time.process_time()
        graphs = {task: build_consensus(ts, mode="string") for task, ts in groups.items()}
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        start = time.perf_counter()
        for ts in groups.values():
            merge_actions(ts)
        merges.append(time.perf_counter() - start)
    ours, ours_cpu, merge_only = min(walls), min(cpus), min(merges)

    first = next(iter(groups.values()))
    occurrences = [a.text for t in first for a in t.actions]
    sample = random.Random(args.seed).sample(occurrences, min(args.naive_sample, len(occurrences)))
    m = len(sample)
    start = time.perf_counter()
    naive_merge(sample)
    naive_sample = time.perf_counter() - start
    naive = 0.0
    for ts in groups.values():
        n = sum(len(t.actions) for t in ts)
        naive += naive_sample * (n * (n - 1)) / (m * (m - 1))

    distinct = sum(g.merge.distinct for g in graphs.values())
    comparisons = sum(g.merge.comparisons for g in graphs.values())
    nodes = sum(g.summary.action_nodes for g in graphs.values())
    edges = sum(len(g.edges) for g in graphs.values())
    classes = {c: sum(g.summary.edge_classes[c] for g in graphs.values()) for c in ("trap", "critical", "bottleneck", "normal")}
    sweeps = max(g.summary.value_iterations for g in graphs.values())
    print(f"merge: {distinct} distinct strings, {comparisons} edit distances computed, {nodes} action nodes, {edges} edges")
    print(f"edge classes: {classes}; value iteration ≤ {sweeps} sweeps")
    print(f"ours: build_consensus {ours:.3f} s wall / {ours_cpu:.3f} s CPU total, best of {args.repeat} ({ours / len(groups) * 1000:.1f} ms/task), merge alone {merge_only:.3f} s")
    print(f"naive: {naive_sample:.3f} s on {m} occurrences ({m * (m - 1) // 2} pairs) -> {naive:.1f} s estimated for all tasks")
    print(f"speed-up: {naive / ours:.0f}x total (target >= 50x), {naive / merge_only:.0f}x merge vs merge; total {ours:.2f} s wall, {ours_cpu:.2f} s CPU (target <= 3 s)")
    fields_nodes, fields_wall, fields_cpu = _timed_builds(groups, "fields")
    floor = _floor(groups)
    print(
        f"fields mode (the default) on the same data: {fields_wall:.3f} s wall / {fields_cpu:.3f} s CPU (target <= 1 s), "
        f"{fields_nodes} action nodes; floor (one pass reading every action's fields) "
        f"{floor:.3f} s, ratio {fields_cpu / floor:.1f}"
    )
    if args.scale:
        big_groups = group_by_task(synthesize(args.scale, args.tasks, args.seed))
        n = sum(len(t.actions) for ts in big_groups.values() for t in ts)
        floor = _floor(big_groups)
        modes: tuple[MergeMode, ...] = ("fields", "string")
        for mode in modes:
            _, wall, used = _timed_builds(big_groups, mode)
            target = " (target <= 10 s)" if mode == "fields" else ""
            print(
                f"scale: {args.scale} trajectories ({n} actions, {len(big_groups)} tasks), {mode} mode: {wall:.2f} s wall / {used:.2f} s CPU{target}; "
                f"floor {floor:.2f} s, ratio {used / floor:.1f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
