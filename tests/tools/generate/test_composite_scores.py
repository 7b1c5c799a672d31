"""Coverage Rate and Logical Consistency on real value-flow composites over the penguins browser.

A chain and a five-subtask task graph are verified by replay (their gold trajectories are
the oracle runs); then real episodes do part of the work (the chain's first level only, one
branch of the graph) or nothing, and one episode crashes before it starts. The graph
evaluator must give the oracle 1.0, the empty and crashed runs 0, and the partial runs a
score strictly between. (Before the evaluator read "held after some action" as gold replays
do, the oracle of the five-subtask graph scored CR 0.67 and a crashed run no score at all.)
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from taskloom.tools.environment.gold import run_gold_steps
from taskloom.tools.environment.manager import watched_checks
from taskloom.tools.environment.trajectory import Trajectory, load_trajectory
from taskloom.tools.evaluate.episode import evaluate_episode
from taskloom.tools.evaluate.progress import evaluate_progress
from taskloom.tools.generate.compose.dag import resource_edges, verify_composite
from taskloom.tools.generate.compose.flow import chain_plan, two_branch_plan
from taskloom.tools.generate.compose.flowcompose import usable_listings
from taskloom.tools.generate.compose.flowtasks import graph_task, level_task
from taskloom.tools.generate.web.lookup import start_page
from taskloom.tools.runtime import Runtime
from taskloom.tools.tasks.model import Task

pytestmark = pytest.mark.integration


def _chain(kg: Any) -> list[Task]:
    """Level-3 chains of the first listing, a few seeds (each a candidate; the test takes the first that works)."""
    groups = usable_listings(kg)[0]
    salt = int(hashlib.sha1(groups.data.node.id.encode()).hexdigest()[:8], 16)
    out = []
    for i in range(6):
        plan = chain_plan(groups, np.random.default_rng([7, i, salt]), 3)
        task = level_task(kg, plan, 3, start_page(kg), 0, f"c{i}")[0] if len(plan.steps) >= 3 else None
        if task is not None and all(s.checks for s in task.subtasks):
            out.append(task)
    return out


def _graph(kg: Any) -> Task:
    groups = usable_listings(kg)[0]
    for attempt in range(12):
        branches = two_branch_plan(groups, np.random.default_rng([3, attempt]))
        task = graph_task(kg, groups, branches, five=True, start=start_page(kg), seed=0) if branches else None
        if task is not None:
            task.dag = resource_edges(task.subtasks)
            return task
    raise AssertionError("no five-subtask task graph on the penguins listing")


async def _episode(rt: Runtime, task: Task, steps: int) -> Trajectory:
    """A real episode that runs the first ``steps`` gold steps, every subtask check probed after each action."""
    episode, _ = await rt.episodes.start(url=task.start_url, agent="partial", allowed_domains=task.allowed_domains)
    episode.task, episode.watch = task, watched_checks(task)
    await run_gold_steps(episode, task.gold_steps[:steps])
    return load_trajectory(await rt.episodes.close(episode.id))


def _scores(task: Task, trajectory: Trajectory | None) -> tuple[float, float]:
    result = evaluate_episode(task, trajectory, "agent", status="finished" if trajectory else "crashed")
    return result.scores["cr"], result.scores["lc"]


def test_oracle_one_crashed_and_empty_zero_partial_runs_in_between(penguins_graph: Any) -> None:
    kg = penguins_graph.kg

    async def go() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Runtime(penguins_graph.settings) as rt:
            graph = _graph(kg)
            assert await verify_composite(graph, rt.episodes) is None
            oracle = load_trajectory(Path(graph.gold_trajectory or ""))
            done = {n.id: n.completed_at for n in evaluate_progress(graph, oracle).nodes}
            branch = await _episode(rt, graph, done["s3"] or 0)  # the first pick and its count: one branch, the other untouched
            out["graph"] = (graph, oracle, branch, await _episode(rt, graph, 0))
            for chain in _chain(kg):
                if await verify_composite(chain, rt.episodes) is not None:
                    continue
                oracle = load_trajectory(Path(chain.gold_trajectory or ""))
                first = evaluate_progress(chain, oracle).nodes[0].completed_at or 0
                partial = await _episode(rt, chain, first)
                if [n.state for n in evaluate_progress(chain, partial).nodes][:2] == ["completed", "evaluating"]:
                    out["chain"] = (chain, oracle, partial)
                    break
        return out

    runs = asyncio.run(go())
    graph, oracle, branch, empty = runs["graph"]
    assert _scores(graph, oracle) == (1.0, 1.0)
    assert _scores(graph, empty) == (0.0, 0.0) and _scores(graph, None) == (0.0, 0.0)
    states = {n.id: n.state for n in evaluate_progress(graph, branch).nodes}
    assert states["s1"] == states["s3"] == "completed" and "completed" not in (states["s2"], states["s4"], states["s5"])
    cr, lc = _scores(graph, branch)
    assert cr == pytest.approx(3 / 9, abs=1e-6) and lc == pytest.approx(1 / 4, abs=1e-6)  # depths 1+2 of 1+1+2+2+3; one same-listing pair of CS_max 4
    assert "chain" in runs, "no level-3 chain whose first level can be done alone"
    chain, oracle, partial = runs["chain"]
    assert _scores(chain, oracle) == (1.0, 1.0) and _scores(chain, None) == (0.0, 0.0)
    cr, lc = _scores(chain, partial)
    assert cr == pytest.approx(1 / 6, abs=1e-6) and lc == 0.0  # depth 1 of 1+2+3; one subtask alone has no coherent pair yet
