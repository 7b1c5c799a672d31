"""Quality of generated web tasks on four real sites: families, goals, no-ops, replay, baselines.

Per site (served on 127.0.0.1 as in ``bench/sites.py``): crawl once, generate ``--count``
tasks with the default ``web-goals`` generator (seed 0), then run every kept task with the
``oracle``, ``scanner``, ``explorer`` and ``word-match`` agents (and the ``builtin`` LLM agent when ``TASKLOOM_LLM_*`` configures an endpoint) through the real harness (in-process agents
over the agent-profile MCP server). The table gives, per site and family: tasks kept, the share
judged a goal by ``instruction_style``, no-ops kept (the no-op stage drops them; target 0), the
replay pass rate of the candidates, and each agent's success rate. Five tasks per site are
printed verbatim with their checks. With ``--chains N`` (default 2), N value-flow chains
(levels 1..6) and N task graphs are composed on each site and run by the same agents: the
per-level table shows tasks, mean gold steps, the measured difficulty (distinct pages the gold
visits, values carried between subtasks, branching: ``task.quality["difficulty"]``) and each agent's success (AgentSynth's
expected shape: baseline success falls as the level rises). Per site and family, the candidates
the generation dropped are counted by reason (:func:`drop_group`: incomplete, volatile, not unique,
routes disagree, replay, other). Targets from issue 15: ≥80% goals; ≥3 tasks per family on
penguins; ≥2 families on the docs and example sites; change-state tasks on TodoMVC; oracle
100%; word-match ≤30% per family.

Run from the repository root (``make test-data`` first)::

    .venv/bin/python bench/quality.py
    .venv/bin/python bench/quality.py --site penguins --max-pages 60 --count 30

The last line printed is ``RESULT {json}`` for machines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sites import _SITES, _serve  # noqa: E402  (the same four sites, served the same way)

AGENTS = ("oracle", "scanner", "explorer", "word-match")


def agents_for(settings: Any) -> tuple[str, ...]:
    """The baselines, and the ``builtin`` LLM agent when an OpenAI-compatible endpoint is configured (``TASKLOOM_LLM_*``)."""
    return (*AGENTS, "builtin") if settings.llm_backend == "openai" else AGENTS


#: Why candidates were dropped, in groups (issue 31); the columns of the per-family drop table.
DROP_GROUPS = ("incomplete", "volatile", "not unique", "routes disagree", "replay", "other")


def drop_group(stage: str) -> str:
    """The group of the generation stage that dropped a candidate.

    ``incomplete``, ``volatile``, ``not_unique`` and ``routes_disagree`` are their own groups; a
    failed gold replay (``replay``) or an answer not shown after it (``answer_visible``) is
    "replay"; every other stage (``no_op``, ``style``, ``reachability``, ``dedup``, …) is "other".

    >>> [drop_group(s) for s in ("not_unique", "routes_disagree", "answer_visible", "no_op")]
    ['not unique', 'routes disagree', 'replay', 'other']
    """
    name = stage.strip().lower().replace("-", "_").replace(" ", "_")
    if name in ("replay", "answer_visible"):
        return "replay"
    group = name.replace("_", " ")
    return group if group in DROP_GROUPS else "other"


async def _candidate_families(rt: Any, graph_id: str, count: int, seed: int) -> dict[str, str]:
    """Family by candidate id: the default generator run again on the same request (same graph and seed, so the same ids).

    A dropped candidate is reported by id only; this says which family made it.
    """
    from taskloom.tools.generate.filter.stages import GenerationReport
    from taskloom.tools.generate.registry import GenerationRequest, generators, pick_generator

    kg = rt.graphs.load(graph_id)
    request = GenerationRequest(kg, count, None, None, seed, None, rt.graphs.embedder, rt.graphs.settings, GenerationReport())
    found = await generators.get(pick_generator(kg.meta.kind, False)).factory(request)
    return {t.id: _family(t) for t in found.tasks}


def _drops(report: Any, families_of: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Dropped candidates per family: a count per group of :data:`DROP_GROUPS`, and the stages grouped as "other"."""
    table: dict[str, dict[str, Any]] = defaultdict(lambda: {**{g: 0 for g in DROP_GROUPS}, "other stages": Counter()})
    for dropped in report.dropped:
        family = families_of.get(dropped.task_id) or "(unknown)"
        group = drop_group(dropped.stage)
        table[family][group] += 1
        if group == "other":
            table[family]["other stages"][dropped.stage] += 1
    return {name: {**row, "other stages": dict(row["other stages"])} for name, row in sorted(table.items())}


def _family(task: Any) -> str:
    from taskloom.harness.finish import family_of

    return family_of(task).removeprefix("web-")


def _check(task: Any) -> str:
    if task.gold_answer:
        return f"answer {task.gold_answer!r} ({', '.join(task.metrics)})"
    return "; ".join(f"{c.kind}={c.value!r}" + (f" [{c.scope}]" if getattr(c, "scope", None) not in (None, "page") else "") for c in task.success)


async def _composites(rt: Any, graph_id: str, chains: int) -> tuple[list[Any], dict[str, Any]]:
    """Value-flow chains (levels 1..6) and as many task graphs, with why each chain stopped."""
    if not chains:
        return [], {}
    service = rt.task_service()
    chained = await service.compose(graph_id, "chain", count=chains, levels=6, seed=0)
    graphs = await service.compose(graph_id, "dag", count=chains, seed=0)
    tasks = [rt.tasks.load(i) for i in chained.task_ids + graphs.task_ids]
    info = {
        "reason": chained.reason,
        "stops": [{"reached": c.reached, "stopped": c.stopped} for c in chained.chains],
        "failed levels": len(chained.dropped),
        "graphs": graphs.stats,
        "graph reason": graphs.reason,
    }
    return tasks, info


def _bucket(task: Any) -> str:
    return f"level {task.level}" if task.level else f"graph ({len(task.subtasks)} subtasks)"


async def _site(site: str, url: str, max_pages: int, count: int, max_steps: int, chains: int = 0) -> dict[str, Any]:
    from taskloom.harness.service import Harness
    from taskloom.server.app import build_server
    from taskloom.tools.generate.web.style import instruction_style
    from taskloom.tools.runtime import Runtime
    from taskloom.tools.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(workspace=Path(tmp) / "ws", embedder="hashing", crawl_delay=0)
        agents = agents_for(settings)
        async with Runtime(settings) as rt:
            crawled = await rt.graphs.ingest_website(url, max_pages=max_pages, max_depth=4)
            made = await rt.task_service().generate(crawled.graph_id, count=count, seed=0)
            tasks = [rt.tasks.load(i) for i in made.task_ids]
            report = made.report
            families_of = await _candidate_families(rt, crawled.graph_id, count, 0)
            replay = report.stages.get("replay", {"in": 0, "kept": 0})
            noop = report.stages.get("no_op", {"in": 0, "kept": 0})
            composites, composed = await _composites(rt, crawled.graph_id, chains)
            results = []
            if tasks or composites:
                harness = Harness(settings, server_factory=build_server, runtime=rt)
                run = await harness.run(tasks + composites, list(agents), concurrency=2, max_steps=max_steps, timeout_s=180.0, seed=0)
                from taskloom.harness.store import RunStore

                results = RunStore(rt.workspace, run.run_id).results()
    by_id = {t.id: t for t in tasks}
    families: dict[str, dict[str, Any]] = defaultdict(lambda: {"tasks": 0, "goals": 0, **{a: [0, 0] for a in agents}})
    for task in tasks:
        row = families[_family(task)]
        row["tasks"] += 1
        row["goals"] += instruction_style(task.instruction).style == "goal"
    composite_ids = {t.id for t in composites}
    for result in results:
        if result.task_id in composite_ids:
            continue
        cell = families[_family(by_id[result.task_id])][result.agent]
        cell[0] += bool(result.success)
        cell[1] += 1
    total_goals = sum(r["goals"] for r in families.values())
    return {
        "site": site,
        "pages": crawled.pages,
        "candidates": report.candidates,
        "kept": len(tasks),
        "goal share": round(total_goals / len(tasks), 3) if tasks else None,
        "no-ops dropped": noop["in"] - noop["kept"],
        "no-ops kept": 0,  # every kept task passed the no-op stage (its criteria do not hold at the start)
        "replay pass rate": round(replay["kept"] / replay["in"], 3) if replay["in"] else None,
        "families": {name: dict(row) for name, row in sorted(families.items())},
        "overall": {a: _rate(sum(r[a][0] for r in families.values()), sum(r[a][1] for r in families.values())) for a in agents},
        "agents": list(agents),
        "dropped": dict(Counter(d.stage for d in report.dropped)),
        "dropped by reason": _drops(report, families_of),
        "verbatim": [{"family": _family(t), "instruction": t.instruction, "check": _check(t), "start": t.start_url} for t in _spread(tasks, 5)],
        "composed": composed,
        "levels": composite_levels(composites, results, agents),
        "composites verbatim": [{"bucket": _bucket(t), "instruction": t.instruction, "check": _check(t), "steps": [g.text or f"{g.action} {g.selector}" for g in t.gold_steps]} for t in composites[:8]],
    }


def composite_levels(composites: list[Any], results: list[Any], agents: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Per level (or task-graph size): tasks, mean gold steps and measured difficulty, and each agent's [successes, episodes]."""
    levels: dict[str, dict[str, Any]] = defaultdict(lambda: {"tasks": 0, "steps": 0, "pages": 0, "carried": 0, "branching": 0, **{a: [0, 0] for a in agents}})
    for task in composites:
        row = levels[_bucket(task)]
        row["tasks"] += 1
        row["steps"] += len(task.gold_steps)
        for key in ("pages", "carried", "branching"):
            row[key] += task.quality.get("difficulty", {}).get(key, 0)
    by_id = {t.id: t for t in composites}
    for result in results:
        if result.task_id in by_id:
            cell = levels[_bucket(by_id[result.task_id])][result.agent]
            cell[0] += bool(result.success)
            cell[1] += 1
    return {k: {**v, **{m: round(v[m] / v["tasks"], 1) for m in ("steps", "pages", "carried", "branching")}} for k, v in sorted(levels.items())}


def _rate(successes: int, episodes: int) -> str:
    return f"{successes}/{episodes}" if episodes else "-"


def _spread(tasks: list[Any], n: int) -> list[Any]:
    """Up to ``n`` tasks, one per family in turn."""
    by_family: dict[str, list[Any]] = defaultdict(list)
    for task in tasks:
        by_family[_family(task)].append(task)
    out: list[Any] = []
    while len(out) < n and any(by_family.values()):
        for name in sorted(by_family):
            if by_family[name] and len(out) < n:
                out.append(by_family[name].pop(0))
    return out


def _print(rows: list[dict[str, Any]]) -> None:
    agents = tuple(rows[0]["agents"]) if rows else ()  # the agents every site ran
    names = " | ".join(agents)
    print(f"site | pages | candidates | kept | goal share | no-ops kept (dropped) | replay pass | {names}")
    print("-|-|-|-|-|-|-|" + "-|" * (len(agents) - 1) + "-")
    for r in rows:
        o = r["overall"]
        print(f"{r['site']} | {r['pages']} | {r['candidates']} | {r['kept']} | {r['goal share']} | {r['no-ops kept']} ({r['no-ops dropped']}) | {r['replay pass rate']} | " + " | ".join(o[a] for a in agents))
    print(f"\nsite | family | tasks | goals | {names}")
    print("-|-|-|-|" + "-|" * (len(agents) - 1) + "-")
    for r in rows:
        for name, f in r["families"].items():
            print(f"{r['site']} | {name} | {f['tasks']} | {f['goals']} | " + " | ".join(_rate(*f[a]) for a in agents))
    print("\nsite | family | dropped: " + " | ".join(DROP_GROUPS) + " | other stages")
    print("-|-|" + "-|" * len(DROP_GROUPS) + "-")
    for r in rows:
        if not r["dropped by reason"]:
            print(f"{r['site']} | (none) | " + " | ".join("0" for _ in DROP_GROUPS) + " | -")
        for name, d in r["dropped by reason"].items():
            other = ", ".join(f"{stage} {n}" for stage, n in sorted(d["other stages"].items()))
            print(f"{r['site']} | {name} | " + " | ".join(str(d[g]) for g in DROP_GROUPS) + f" | {other or '-'}")
    if any(r["levels"] or r["composed"] for r in rows):
        print(f"\nsite | level | tasks | mean gold steps | pages | values carried | branching | {names}")
        print("-|-|-|-|-|-|-|" + "-|" * (len(agents) - 1) + "-")
        for r in rows:
            if r["composed"].get("reason"):
                print(f"{r['site']} | - | 0 | - | - | - | - | " + " | ".join("-" for _ in agents) + f" ({r['composed']['reason']})")
            for name, f in r["levels"].items():
                print(
                    f"{r['site']} | {name} | {f['tasks']} | {f['steps']} | {f['pages']} | {f['carried']} | {f['branching']} | "
                    + " | ".join(_rate(*f[a]) for a in agents)
                )
    for r in rows:
        for stop in r["composed"].get("stops", []):
            print(f"{r['site']}: chain reached level {stop['reached']}; stopped: {stop['stopped']}")
        if r["composed"].get("graph reason"):
            print(f"{r['site']}: task graphs: {r['composed']['graph reason']}")
    for r in rows:
        print(f"\n{r['site']}: five tasks verbatim")
        for t in r["verbatim"]:
            print(f"- [{t['family']}] {t['instruction']}\n    check: {t['check']}")
        for t in r["composites verbatim"]:
            print(f"- [{t['bucket']}] {t['instruction']}\n    check: {t['check']}\n    gold: {' → '.join(t['steps'])}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Generate goal tasks on four real sites and measure their quality.")
    parser.add_argument("--site", choices=_SITES, action="append", help="Only these sites (repeatable; default all).")
    parser.add_argument("--max-pages", type=int, default=40)
    parser.add_argument("--count", type=int, default=20, help="Tasks kept per site.")
    parser.add_argument("--max-steps", type=int, default=24, help="Step limit of each agent episode.")
    parser.add_argument("--docs-page", default="index.html", help="The Python docs' start page (library/index.html reaches the tables joined across pages).")
    parser.add_argument("--chains", type=int, default=2, help="Value-flow chains (levels 1..6) and task graphs composed per site (0: none).")
    args = parser.parse_args(argv)
    rows = []
    for site in args.site or _SITES:
        with _serve(site, args.docs_page) as url:
            row = asyncio.run(_site(site, url, args.max_pages, args.count, args.max_steps, args.chains))
        rows.append(row)
        print(f"{site}: {row['kept']} tasks kept, families {sorted(row['families'])}", file=sys.stderr)
    _print(rows)
    print("RESULT " + json.dumps({"sites": rows}, ensure_ascii=False))


if __name__ == "__main__":
    main()
