"""Building and analysing a consensus graph: :func:`build_consensus` is the one entry point.

Choices where the paper leaves details open (all parameters live in :class:`Thresholds`):

* **Reward back-propagation.** ``V(success) = +1``, ``V(failure) = −1`` and for every other node
  ``V(n) = γ · Σ_m p(m | n) · V(m)`` with ``p(m | n) = count(n → m) / Σ_k count(n → k)``. Every
  action node has out-edges (each trajectory ends in a terminal), so this is a discounted Markov
  chain and, γ < 1, a contraction: consensus graphs may have cycles (retries, back-and-forth), and
  we solve it by Gauss–Seidel value iteration, sweeping nodes in decreasing mean step, until no
  value moves more than ``value_tolerance`` (or ``value_max_iterations`` sweeps). On a DAG whose
  edges go forward in mean step one sweep is exact (the second confirms it). An edge's value is
  ``γ · V(target)``.
* **Edge classes**: see :class:`Thresholds` (trap → critical → bottleneck → normal). Trap and
  critical compare the runs taking an edge with the task's other runs by Fisher's exact test
  (:mod:`.stats`), so a step is not a trap merely because the whole task is hard.
* **Node importance** = the unweighted mean success rate over the node's distinct in- and
  out-edges × the fraction of trajectories visiting the node. Virtual nodes get 0.
* **Path optimality.** The reference is the shortest successful trajectory with at least
  ``min_reference_steps`` actions (the paper excludes one-step "anomalies"); if none qualifies,
  the shortest successful one. ``step_inflation = steps / reference``, ``optimality =
  min(1, reference / steps)``, for every trajectory (failed ones too; the paper's averages can be
  below 1 for that reason).
* **Necessity.** A node is necessary when it lies on a reference-length successful trajectory
  (a shortest successful route). When actions carry necessity labels (an LLM annotator), the
  majority of the node's labelled occurrences decides instead (ties: necessary).
* **Strategies**: see :class:`StrategyStats`. Float sums use ``math.fsum`` and every loop runs in
  sorted order, so shuffling the input gives the same JSON.
"""

from __future__ import annotations

import gc
import math
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from ...errors import InputError
from .fields import DEFAULT_PIXEL_TOLERANCE
from .merge import MergeResult, count_texts, merge_actions, merge_fields
from .stats import fisher_exact, pass_at_k, pass_hat_k, pass_ks
from .model import (
    FAILURE,
    START,
    SUCCESS,
    AgentProfile,
    AgentTrajectory,
    ConsensusEdge,
    ConsensusGraph,
    ConsensusNode,
    EdgeClass,
    GraphSummary,
    NodeKind,
    StrategyStats,
    Thresholds,
    TrajectoryReport,
    from_counts,
)

__all__ = ["build_consensus", "propagate_values", "classify_edge", "compare_runs", "entropy", "group_by_task", "MergeMode"]

Path = list[str]
MergeMode = Literal["fields", "string"]


@dataclass
class _NodeAcc:
    visits: int = 0
    repeats: int = 0
    steps: Counter[int] = field(default_factory=Counter)
    trajectories: int = 0
    successes: int = 0
    agents: set[str] = field(default_factory=set)
    labels: list[bool] = field(default_factory=list)


def entropy(counts: Sequence[float]) -> float:
    """Shannon entropy in bits of a distribution given by non-negative weights.

    >>> entropy([1, 1])
    1.0
    >>> entropy([5])
    0.0
    """
    total = math.fsum(counts)
    if total <= 0:
        return 0.0
    return max(0.0, -math.fsum((c / total) * math.log2(c / total) for c in sorted(counts) if c > 0))


def group_by_task(trajectories: Sequence[AgentTrajectory]) -> dict[str, list[AgentTrajectory]]:
    """Trajectories grouped by task id (``""`` for none), task ids sorted."""
    out: dict[str, list[AgentTrajectory]] = defaultdict(list)
    for t in trajectories:
        out[t.task_id or ""].append(t)
    return {k: out[k] for k in sorted(out)}


def propagate_values(
    successors: dict[str, list[tuple[str, int]]], order: Sequence[str], gamma: float, tolerance: float, max_iterations: int
) -> tuple[dict[str, float], int]:
    """Gauss–Seidel value iteration (see the module notes); returns (values, sweeps).

    ``successors[n]`` lists ``(m, count)``; ``order`` is the sweep order of the non-terminal nodes.

    >>> v, _ = propagate_values({"a": [("b", 1)], "b": [("success", 3), ("failure", 1)]}, ["b", "a"], 0.9, 1e-12, 100)
    >>> round(v["b"], 6), round(v["a"], 6)
    (0.45, 0.405)
    """
    value = {SUCCESS: 1.0, FAILURE: -1.0}
    value.update({n: 0.0 for n in order})
    totals = {n: sum(c for _, c in successors[n]) for n in order}
    probs = {n: [(m, c / totals[n]) for m, c in successors[n]] for n in order}
    sweeps = 0
    while sweeps < max_iterations:
        sweeps += 1
        delta = 0.0
        for n in order:
            new = gamma * math.fsum(p * value[m] for m, p in probs[n])
            delta = max(delta, abs(new - value[n]))
            value[n] = new
        if delta <= tolerance:
            break
    return value, sweeps


def compare_runs(edge: ConsensusEdge, runs: int, successes: int, t: Thresholds) -> None:
    """Fill ``success_without`` and ``p_value`` of an edge of a task with ``runs`` runs, ``successes`` of them successful.

    Only edges that could be labelled are tested (enough runs, not into a terminal, some runs without them).
    """
    without = runs - edge.runs
    if without <= 0 or edge.target in (SUCCESS, FAILURE):
        return
    ok_without = successes - edge.run_successes
    edge.success_without = ok_without / without
    if edge.runs >= t.min_runs and edge.count >= t.min_count:
        edge.p_value = fisher_exact(edge.run_successes, edge.runs - edge.run_successes, ok_without, without - ok_without)


def classify_edge(edge: ConsensusEdge, t: Thresholds) -> EdgeClass:
    """The class of one edge under ``t`` (see :class:`Thresholds`); trap and critical need :func:`compare_runs` first."""
    if edge.target in (SUCCESS, FAILURE) or edge.count < t.min_count:
        return "normal"
    rate = edge.run_successes / edge.runs if edge.runs else edge.success_rate
    significant = edge.runs >= t.min_runs and edge.p_value is not None and edge.p_value <= t.alpha and edge.success_without is not None
    if significant and edge.success_without is not None and rate < edge.success_without and rate <= t.trap_max_success and edge.coverage >= t.trap_min_coverage:
        return "trap"
    if (
        significant and edge.success_without is not None and rate > edge.success_without and rate >= t.critical_min_success
        and edge.success_coverage >= t.critical_min_coverage
    ):  # fmt: skip
        return "critical"
    if edge.coverage >= t.bottleneck_min_coverage and t.trap_max_success < edge.success_rate < t.critical_min_success:
        return "bottleneck"
    return "normal"


def _same_runs(edges: dict[tuple[str, str], ConsensusEdge], paths: list[Path], nodes: dict[str, ConsensusNode]) -> None:
    """Point each trap or critical edge taken by exactly the runs of an earlier one of its class (lower mean step) at that edge."""
    labelled = {k for k, e in edges.items() if e.edge_class in ("trap", "critical")}
    if len(labelled) < 2:
        return
    runs: dict[tuple[str, str], set[int]] = defaultdict(set)
    for i, path in enumerate(paths):
        for pair in zip(path, path[1:]):
            if pair in labelled:
                runs[pair].add(i)
    first: dict[tuple[str, frozenset[int]], tuple[str, str]] = {}
    step = {n: node.mean_step for n, node in nodes.items()}
    for key in sorted(labelled, key=lambda k: (step.get(k[0], -1.0), step.get(k[1], math.inf), k)):
        group = (edges[key].edge_class, frozenset(runs[key]))
        if group in first:
            edges[key].same_runs_as = "->".join(first[group])
        else:
            first[group] = key


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def _assemble(trajs: Sequence[AgentTrajectory], merge: MergeResult) -> tuple[dict[str, ConsensusNode], dict[str, _NodeAcc], list[Path]]:
    """Action nodes (ids ``n1, n2, …``) and every trajectory's node path, start and terminal included.

    Consecutive actions of one trajectory that fall into the same node are one visit with
    repeats: the path holds the node once, so a repeat never makes a self-loop edge.
    """
    acc: dict[object, _NodeAcc] = defaultdict(_NodeAcc)
    hints: dict[object, Counter[str]] = defaultdict(Counter)
    clusters: list[list[object]] = []
    raw_paths = merge.paths_of(trajs)
    for traj, raw in zip(trajs, raw_paths):
        actions = traj.actions
        path: list[object] = []
        for step, c in enumerate(raw):
            a = acc[c]
            if path and path[-1] == c:
                a.repeats += 1
                continue
            path.append(c)
            a.visits += 1
            a.steps[step] += 1
        for act, c in zip(actions, raw):
            if act.hint:
                hints[c][act.hint] += 1
            if act.necessary is not None:
                acc[c].labels.append(act.necessary)
        clusters.append(path)
        for c in set(path):
            a = acc[c]
            a.trajectories += 1
            a.successes += traj.success
            a.agents.add(traj.agent)
    texts: dict[object, Counter[str]] = defaultdict(Counter)
    names: dict[str, str] = {}
    for (c, text, name), n in (merge.texts or count_texts(trajs, raw_paths)).items():
        texts[c][text] += n
        names.setdefault(text, name)
    labels = {c: min(texts[c], key=lambda t: (-texts[c][t], t)) for c in acc}
    ordered = sorted(acc, key=lambda c: (min(acc[c].steps), -acc[c].visits, labels[c], repr(c)))
    ids = {c: f"n{i + 1}" for i, c in enumerate(ordered)}
    nodes: dict[str, ConsensusNode] = {}
    stats: dict[str, _NodeAcc] = {}
    for c in ordered:
        a, label = acc[c], labels[c]
        variants = sorted(texts[c])
        hint = min(hints[c], key=lambda h: (-hints[c][h], h)) if hints[c] else None
        nodes[ids[c]] = ConsensusNode(
            id=ids[c], kind="action", label=f"{label}  “{hint}”" if hint else label, name=names[label],
            hint=f"{hint} ({hints[c][hint]} of {sum(texts[c].values())})" if hint else None, members=len(variants), variants=variants, visits=a.visits,
            repeats=a.repeats, trajectories=a.trajectories, successes=a.successes, steps=dict(sorted(a.steps.items())),
            mean_step=math.fsum(s * n for s, n in a.steps.items()) / a.visits, agents=sorted(a.agents),
        )  # fmt: skip
        stats[ids[c]] = a
    paths = [[START, *(ids[c] for c in path), SUCCESS if t.success else FAILURE] for t, path in zip(trajs, clusters)]
    return nodes, stats, paths


def _virtual(trajs: Sequence[AgentTrajectory]) -> list[ConsensusNode]:
    kinds: tuple[tuple[NodeKind, list[AgentTrajectory], float], ...] = (
        ("start", list(trajs), 0.0),
        ("success", [t for t in trajs if t.success], 1.0),
        ("failure", [t for t in trajs if not t.success], -1.0),
    )
    out = []
    for kind, group, value in kinds:
        steps = Counter(-1 if kind == "start" else len(t.actions) for t in group)
        n = len(group)
        out.append(
            ConsensusNode(
                id=kind, kind=kind, label=kind.upper(), visits=n, trajectories=n, steps=dict(sorted(steps.items())),
                mean_step=math.fsum(s * c for s, c in steps.items()) / n if n else 0.0, necessary=kind != "failure",
                necessity_source="virtual", agents=sorted({t.agent for t in group}), value=value,
            )
        )  # fmt: skip
    return out


def _edges(trajs: Sequence[AgentTrajectory], paths: list[Path]) -> dict[tuple[str, str], ConsensusEdge]:
    count: Counter[tuple[str, str]] = Counter()
    succ: Counter[tuple[str, str]] = Counter()
    attribution: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(dict)  # pair -> agent -> [runs, successful runs]
    for traj, path in zip(trajs, paths):
        pairs = list(zip(path, path[1:]))
        count.update(pairs)
        agent, ok = traj.agent, int(traj.success)
        if ok:
            succ.update(pairs)
        for pair in set(pairs):
            mine = attribution[pair].get(agent)
            if mine is None:
                attribution[pair][agent] = [1, ok]
            else:
                mine[0] += 1
                mine[1] += ok
    cover = {pair: sum(r for r, _ in by.values()) for pair, by in attribution.items()}
    cover_ok = {pair: sum(ok for _, ok in by.values()) for pair, by in attribution.items()}
    agents = {pair: sorted(by) for pair, by in attribution.items()}
    total, n, n_ok = sum(count.values()), len(trajs), sum(t.success for t in trajs)
    return {
        (s, d): from_counts(  # built from counts: nothing to validate, and graphs hold many edges
            ConsensusEdge,
            source=s, target=d, count=c, successes=succ[(s, d)], failures=c - succ[(s, d)], success_rate=succ[(s, d)] / c,
            weight=c / total, coverage=cover[(s, d)] / n, success_coverage=_ratio(cover_ok[(s, d)], n_ok), agents=agents[(s, d)],
            runs=cover[(s, d)], run_successes=cover_ok[(s, d)], success_without=None, p_value=None, support=None, value=0.0, edge_class="normal",
            attribution={a: (r, ok) for a, (r, ok) in sorted(attribution[(s, d)].items())}, same_runs_as=None,
        )  # fmt: skip
        for (s, d), c in sorted(count.items())
    }


def _reports(trajs: Sequence[AgentTrajectory], paths: list[Path], nodes: dict[str, ConsensusNode], traps: set[tuple[str, str]], reference: int | None) -> list[TrajectoryReport]:
    out = []
    necessary = {n for n, node in nodes.items() if node.necessary}
    for t, path in zip(trajs, paths):
        steps = len(t.actions)
        out.append(
            from_counts(  # one per trajectory, built from counts
                TrajectoryReport,
                id=t.id, agent=t.agent, success=t.success, steps=steps, reference_steps=reference,
                step_inflation=steps / reference if reference else None,
                optimality=min(1.0, reference / steps) if reference and steps else None,
                trap_hits=sum(1 for e in zip(path, path[1:]) if e in traps) if traps else 0,
                necessary_fraction=_ratio(sum(n in necessary for n in path[1:-1]), len(path) - 2) if steps else None,
            )
        )  # fmt: skip
    return out


def _mean(values: Sequence[float | None]) -> float | None:
    xs = [v for v in values if v is not None]
    return math.fsum(xs) / len(xs) if xs else None


def _strategies(trajs: Sequence[AgentTrajectory], paths: list[Path], nodes: dict[str, ConsensusNode], k: int | None) -> tuple[StrategyStats, dict[str, Counter[tuple[str, ...]]]]:
    per_agent: dict[str, Counter[tuple[str, ...]]] = defaultdict(Counter)
    for t, path in zip(trajs, paths):
        if t.success:
            actions = tuple(path[1:-1])
            per_agent[t.agent][actions if k is None else actions[:k]] += 1
    pooled: Counter[tuple[str, ...]] = Counter()
    for c in per_agent.values():
        pooled.update(c)
    agents = sorted(per_agent)
    dists = [{s: n / sum(per_agent[a].values()) for s, n in per_agent[a].items()} for a in agents]
    mixture = {s: math.fsum(d.get(s, 0.0) for d in dists) / len(dists) for s in sorted(pooled)} if dists else {}
    mix_h = entropy(list(mixture.values()))
    mean_h = math.fsum(entropy(list(per_agent[a].values())) for a in agents) / len(agents) if agents else 0.0
    top = sorted(pooled.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    stats = StrategyStats(
        prefix=k, successful=sum(pooled.values()), distinct=len(pooled), entropy=entropy(list(pooled.values())), agents=len(agents),
        mixture_entropy=mix_h, mean_agent_entropy=mean_h, divergence=max(0.0, mix_h - mean_h),
        top=[([nodes[n].label for n in s], c) for s, c in top],
    )  # fmt: skip
    return stats, per_agent


def _pass(runs: int, wins: int) -> tuple[dict[int, float], dict[int, float]]:
    """pass@k and pass^k for k = 1 … runs, at most 16 (rounded to 4 places)."""
    ks = pass_ks(runs)
    return {k: round(pass_at_k(runs, wins, k), 4) for k in ks}, {k: round(pass_hat_k(runs, wins, k), 4) for k in ks}


def _profiles(reports: list[TrajectoryReport], per_agent: dict[str, Counter[tuple[str, ...]]]) -> list[AgentProfile]:
    by_agent: dict[str, list[TrajectoryReport]] = defaultdict(list)
    for r in reports:
        by_agent[r.agent].append(r)
    out = []
    for agent in sorted(by_agent):
        rs = by_agent[agent]
        steps = sum(r.steps for r in rs)
        necessary = math.fsum((r.necessary_fraction or 0.0) * r.steps for r in rs)
        at_k, hat_k = _pass(len(rs), sum(r.success for r in rs))
        out.append(
            AgentProfile(
                agent=agent, trajectories=len(rs), successes=sum(r.success for r in rs), success_rate=sum(r.success for r in rs) / len(rs),
                mean_steps=steps / len(rs), mean_step_inflation=_mean([r.step_inflation for r in rs]), trap_hits=sum(r.trap_hits for r in rs),
                trajectories_with_traps=sum(r.trap_hits > 0 for r in rs), necessity_rate=necessary / steps if steps else None,
                strategies=len(per_agent.get(agent, {})), strategy_entropy=entropy(list(per_agent.get(agent, Counter()).values())),
                pass_at_k=at_k, pass_hat_k=hat_k,
            )
        )  # fmt: skip
    return out


def _check(trajectories: Sequence[AgentTrajectory], theta: float) -> str | None:
    if not trajectories:
        raise InputError("build_consensus needs at least one trajectory; import some first (see consensus.importers).")
    if not 0.0 < theta <= 1.0:
        raise InputError(f"theta must be in (0, 1], got {theta}; the paper uses 0.9.")
    tasks = sorted({t.task_id for t in trajectories if t.task_id is not None})
    if len(tasks) > 1:
        raise InputError(f"A consensus graph is built per task, but these trajectories belong to {len(tasks)} tasks ({', '.join(tasks[:5])}…); group them with group_by_task first.")
    return tasks[0] if tasks else None


def _reference(trajectories: Sequence[AgentTrajectory], t: Thresholds) -> tuple[int | None, str | None]:
    """The task's reference length and where it comes from: an external one given with the task, else the shortest success."""
    given = Counter(x.reference_steps for x in trajectories if x.reference_steps is not None)
    if given:
        return min(given, key=lambda n: (-given[n], n)), "external"
    lengths = sorted(len(x.actions) for x in trajectories if x.success)
    qualified = [n for n in lengths if n >= t.min_reference_steps] or lengths
    return (qualified[0], "shortest_success") if qualified else (None, None)


def _first(values: Sequence[str | None]) -> str | None:
    """The most common present value; the smallest of the most common on a tie."""
    counts = Counter(v for v in values if v)
    return min(counts, key=lambda v: (-counts[v], v)) if counts else None


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a graph is built (restored after).

    Building allocates hundreds of thousands of small objects and no reference cycles worth
    collecting; the collector's passes over the live input cost about a third of the time
    on 100,000 trajectories (bench/consensus.py). Anything cyclic is collected afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_consensus(
    trajectories: Sequence[AgentTrajectory],
    theta: float = 0.9,
    thresholds: Thresholds | None = None,
    *,
    cross_step: bool = True,
    mode: MergeMode = "fields",
    pixel_tolerance: float = DEFAULT_PIXEL_TOLERANCE,
) -> ConsensusGraph:
    """Merge the trajectories of one task into a consensus graph and attach every analysis.

    ``mode="fields"`` merges by typed fields (:mod:`.fields`), ``"string"`` by the paper's
    Levenshtein similarity ≥ ``theta`` on canonical strings. Analyses that compare runs (edge
    classes, necessity, strategy entropy; step inflation without an external reference) are
    left out for a single trajectory and named in ``not_computable``; so are traps when no run
    succeeded (every shared step would be one). The result is the same
    whatever the order of ``trajectories``.
    """
    with _collector_paused():
        return _build(trajectories, theta, thresholds or Thresholds(), cross_step, mode, pixel_tolerance)


def _build(trajectories: Sequence[AgentTrajectory], theta: float, t: Thresholds, cross_step: bool, mode: MergeMode, pixel_tolerance: float) -> ConsensusGraph:
    task_id = _check(trajectories, theta)
    merge = merge_fields(trajectories, pixel_tolerance) if mode == "fields" else merge_actions(trajectories, theta, cross_step=cross_step)
    nodes, acc, paths = _assemble(trajectories, merge)
    edges = _edges(trajectories, paths)
    n_traj = len(trajectories)
    single = n_traj < 2
    missing: dict[str, str] = {}
    if single:
        why = "not computable: 1 run"
        missing = {"edge_classes": f"{why} (traps, critical steps and bottlenecks compare runs)", "necessity": why, "strategy_entropy": why}

    successors: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for (s, d), e in edges.items():
        successors[s].append((d, e.count))
    order = sorted(nodes, key=lambda n: (-nodes[n].mean_step, n)) + [START]
    values, sweeps = propagate_values(successors, order, t.gamma, t.value_tolerance, t.value_max_iterations)
    wins = sum(x.success for x in trajectories)
    if not single and wins in (0, n_traj):
        what = "none" if wins == 0 else "all"
        missing["traps"] = f"not computable: {what} of the {n_traj} runs succeeded, so no step's success rate differs from the others'"
    for e in edges.values():
        e.value = t.gamma * values[e.target]
        if not single:
            compare_runs(e, n_traj, wins, t)
            e.edge_class = classify_edge(e, t)
        if e.edge_class in ("trap", "critical"):
            e.support = "agents" if len(e.agents) >= t.min_agents else "one agent"
    _same_runs(edges, paths, nodes)

    incident: dict[str, list[float]] = defaultdict(list)
    for (s, d), e in edges.items():
        incident[s].append(e.success_rate)
        incident[d].append(e.success_rate)
    reference, source = _reference(trajectories, t)
    if single and source == "shortest_success":
        reference, source = None, None
        missing["step_inflation"] = "not computable: 1 run and no external reference length"
    on_shortest = {n for x, p in zip(trajectories, paths) if x.success and len(x.actions) == reference for n in p[1:-1]}
    for nid, node in nodes.items():
        node.value = values[nid]
        node.importance = (_mean(incident[nid]) or 0.0) * node.trajectories / n_traj
        labels = acc[nid].labels
        if labels:
            node.necessary, node.necessity_source = 2 * sum(labels) >= len(labels), "labels"
        else:
            node.necessary = not single and source == "shortest_success" and nid in on_shortest
    if not single and source == "external":
        missing["necessity"] = "not computable: the reference length is external, so no trajectory here is the reference route"
    virtual = _virtual(trajectories)
    virtual[0].value = values[START]

    traps = {k for k, e in edges.items() if e.edge_class == "trap"}
    reports = sorted(_reports(trajectories, paths, nodes, traps, reference), key=lambda r: (r.id, r.agent, r.success, r.steps, r.trap_hits, r.necessary_fraction or 0.0))
    strategies, per_agent = _strategies(trajectories, paths, nodes, t.strategy_prefix)
    if single:
        strategies = strategies.model_copy(update={"entropy": 0.0, "mixture_entropy": 0.0, "mean_agent_entropy": 0.0, "divergence": 0.0})
    action_edges = sum(1 for s, d in edges if s in nodes and d in nodes)
    summary = GraphSummary(
        trajectories=n_traj, successes=sum(x.success for x in trajectories), actions=merge.stats.actions, action_nodes=len(nodes),
        action_edges=action_edges, complexity=len(nodes) * action_edges / n_traj, reference_steps=reference, reference_source=source,
        mean_step_inflation=_mean([r.step_inflation for r in reports]),
        edge_classes={c: sum(1 for e in edges.values() if e.edge_class == c) for c in ("trap", "critical", "bottleneck", "normal")},
        value_iterations=sweeps,
    )  # fmt: skip
    return ConsensusGraph(
        task_id=task_id, instruction=_first([x.instruction for x in trajectories]), level=_first([x.level for x in trajectories]),
        theta=theta, thresholds=t, merge=merge.stats, nodes=[*virtual, *nodes.values()], edges=list(edges.values()),
        summary=summary, agents=_profiles(reports, per_agent), trajectories=reports, strategies=strategies, not_computable=missing,
    )  # fmt: skip
