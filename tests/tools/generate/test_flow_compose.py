"""Value-flow chains and task graphs on sqlite-web's penguins: right against the CSV, no leaks, no padding, verified by replay.

Every pick is checked against the palmerpenguins CSV (the record really is the extreme of
its set), every count is recounted from the CSV, and the instruction of level k is checked
to state none of the values the generator knew (the flowing values, counts, records' keys).
Composition runs through the task service and its real browser; the graph evaluator scores
a real partial run of a task graph (one branch done, the other not).
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import numpy as np
import pytest

from taskloom.tools.environment.gold import run_gold_steps
from taskloom.tools.environment.manager import watched_checks
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.evaluate.metrics import answer_scores, answer_success
from taskloom.tools.evaluate.progress import evaluate_progress
from taskloom.tools.generate.compose.consistency import check_consistency
from taskloom.tools.generate.compose.dag import resource_edges
from taskloom.tools.generate.compose.flow import MAX_SET, MIN_SET, Count, Pick, chain_plan, two_branch_plan
from taskloom.tools.generate.compose.flowcompose import usable_listings
from taskloom.tools.generate.compose.flowtasks import describe, flow_subtasks, hidden_values, leaks, level_task
from taskloom.tools.generate.web.lookup import start_page
from taskloom.tools.generate.web.style import instruction_style
from taskloom.tools.runtime import Runtime
from taskloom.tools.tasks.model import Task

from .conftest import penguin_rows

pytestmark = pytest.mark.integration

_PAD_WORDS = ("next", "previous", "home", "table of contents", "contents", "index")


def _row(record: Any, rows: list[dict[str, str]]) -> dict[str, str]:
    """The CSV row of a record (by its study name, individual ID and sample number, which together identify it)."""
    fields = record.attrs["fields"]
    keys = ("studyName", "Individual ID", "Sample Number")
    found = [r for r in rows if all(r[k] == str(fields[k]["raw"]) for k in keys)]
    assert len(found) == 1
    return found[0]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _meets(row: dict[str, str], cond: Any) -> bool:
    """A CSV row meets a condition: a value, or a number above or below a threshold."""
    label, op, value = cond
    if op == "eq":
        return row[label] == value
    number = _number(row[label])
    return number is not None and (number > value if op == "gt" else number < value)


def _relates(row: dict[str, str], picked: dict[str, str], shared: str, relation: str) -> bool:
    """A CSV row shares the picked row's value, or lies above or below its number."""
    if relation == "eq":
        return row[shared] == picked[shared]
    mine = _number(picked[shared])
    return mine is not None and _meets(row, (shared, relation, mine))


def _plans(kg: Any, n: int = 4) -> list[Any]:
    groups = usable_listings(kg)[0]
    return [chain_plan(groups, np.random.default_rng([7, i, int(hashlib.sha1(groups.data.node.id.encode()).hexdigest()[:8], 16)]), 6) for i in range(n)]


def test_plans_match_the_csv(penguins_graph: Any) -> None:
    rows = penguin_rows()
    plans = _plans(penguins_graph.kg)
    assert max(len(p.steps) for p in plans) >= 4
    for plan in plans:
        assert plan.stopped or len(plan.steps) == 6
        members = None
        previous: Pick | None = None
        for step in plan.steps:
            if isinstance(step, Pick):
                pool = [_row(r, rows) for r in step.members]
                if members is not None:  # a later pick ranges over the last count's set
                    assert {r.id for r in step.members} == {r.id for r in members}
                values = [v for r in pool if (v := _number(r[step.measure])) is not None]
                best = max(values) if step.op == "max" else min(values)
                assert _number(_row(step.record, rows)[step.measure]) == best
                assert sorted(values).count(best) == 1
                previous = step
            else:
                assert isinstance(step, Count) and previous is not None
                picked = _row(previous.record, rows)
                related = [r for r in rows if _relates(r, picked, step.shared, step.relation)]
                expected = [r for r in related if _meets(r, step.extra)]
                assert len(expected) == len(step.members) and MIN_SET <= len(expected) <= MAX_SET
                assert not _meets(picked, step.extra)  # "the same island as X" never counts X
                assert len(expected) < min(len(related), sum(_meets(r, step.extra) for r in rows))  # the relation and the condition both narrow
                members = step.members


def test_levels_state_only_the_goal_and_never_pad(penguins_graph: Any) -> None:
    kg = penguins_graph.kg
    start = start_page(kg)
    made = 0
    for plan in _plans(kg):
        texts = describe(plan.groups, plan.steps)
        for level in range(1, len(plan.steps) + 1):
            task, why = level_task(kg, plan, level, start, 0, "c")
            if task is None:
                assert why
                continue
            made += 1
            hidden = hidden_values(kg, plan.groups, plan.steps[: level - 1])
            assert not leaks(task.instruction, hidden), task.instruction
            assert instruction_style(task.instruction).style == "goal"
            urls = [s.text for s in task.gold_steps]
            assert all(s.action == "navigate" for s in task.gold_steps) and task.start_url not in urls
            assert len(urls[:-1]) == len(set(urls[:-1])) and urls[-1] not in urls[-2:-1]  # no page twice, but the deliverable's at the end
            if task.gold_answer and task.answer_kind == "number":
                assert len(urls) == len(set(urls))  # a count's answer is on no one page: nothing is reopened for it
            assert not any(w in (s.text or "").lower().rsplit("/", 1)[-1] for s in task.gold_steps for w in _PAD_WORDS)
            assert task.level == level and len(task.subtasks) == level and task.dag == [(f"s{i}", f"s{i + 1}") for i in range(1, level)]
            assert resource_edges(task.subtasks) == task.dag  # the edges are the values that flow
            if level > 1:  # the deliverable nests the previous levels' descriptions
                assert (texts[level - 2].record or "") in task.instruction
            assert task.gold_answer is not None or [c.kind for c in task.success] == ["page_is"]
    assert made >= 8


def test_two_picks_that_read_the_same_value_are_two_resources(penguins_graph: Any) -> None:
    """A later pick may flow the value an earlier one flowed (two penguins of one island): no edge may then run backwards."""
    kg = penguins_graph.kg
    groups = usable_listings(kg)[0]
    dream = [r for r in groups.data.records if r.attrs["fields"]["Island"]["raw"] == "Dream"]
    a, b = dream[:2]
    males = ("Sex", "eq", "MALE")
    steps: list[Any] = [Pick([a], [], "Body Mass (g)", "max", a, "Island"), Count("Island", males, dream),
                        Pick(dream, [], "Body Mass (g)", "max", b, "Island"), Count("Island", males, dream)]
    subtasks = flow_subtasks(kg, groups, steps, describe(groups, steps), ["s1", "s2", "s3", "s4"])
    assert subtasks[0].outputs[-1].name.endswith("Island=Dream") and subtasks[2].outputs[-1].name.endswith("Island=Dream")
    assert resource_edges(subtasks) == [("s1", "s2"), ("s2", "s3"), ("s3", "s4")]


def test_composed_chains_verify_and_say_why_they_stopped(penguins_graph: Any) -> None:
    async def go() -> Any:
        async with Runtime(penguins_graph.settings) as rt:
            result = await rt.task_service().compose(penguins_graph.graph_id, "chain", count=2, levels=4, seed=0)
            return result, [rt.tasks.load(i) for i in result.task_ids]

    result, tasks = asyncio.run(go())
    assert len(result.chains) == 2 and all(c.stopped for c in result.chains)
    assert sum(c.reached for c in result.chains) == len(tasks) >= 4
    assert [row.level for row in result.levels] == sorted({t.level for t in tasks})
    for task in tasks:
        assert task.quality["replay"]["ok"] and task.gold_trajectory
        if task.gold_answer:  # the gold answer passes the answer metrics, another record's value does not
            assert answer_success(task, answer_scores(task, task.gold_answer))
            assert not answer_success(task, answer_scores(task, "N1A1" if task.answer_kind == "text" else str(int(task.gold_answer) + 3)))
    deepest = max(tasks, key=lambda t: t.level or 0)
    assert (deepest.level or 0) >= 3


def test_task_graphs_branch_and_are_consistent_and_verified(penguins_graph: Any) -> None:
    rows = penguin_rows()

    async def go() -> Any:
        async with Runtime(penguins_graph.settings) as rt:
            result = await rt.task_service().compose(penguins_graph.graph_id, "dag", count=2, seed=0)
            return result, [rt.tasks.load(i) for i in result.task_ids]

    result, tasks = asyncio.run(go())
    assert len(tasks) == 2 and {len(t.subtasks) for t in tasks} == {3, 5}
    branching = [t for t in tasks if len(t.subtasks) >= 3]
    assert sum((t.order_count or 0) >= 2 for t in branching) >= len(branching) / 2
    for task in tasks:
        assert task.dag == resource_edges(task.subtasks)
        assert check_consistency(task)[0]
        assert task.instruction.startswith("Goal: find ") and not leaks(task.instruction, task.quality["flow"]["hidden"] + [task.gold_answer or ""])
        assert task.complexity and task.quality["replay"]["ok"]
        steps = task.quality["flow"]["steps"]
        counts = [s for s in steps if "count" in s]
        recount = [sum(1 for r in rows if _relates(r, _row(_by_id(penguins_graph.kg, p["record"]), rows), c["shared"], c["relation"]) and _meets(r, c["extra"]))
                   for p, c in zip(steps[:2], counts)]
        assert recount == [c["count"] for c in counts]
        if len(task.subtasks) == 5:
            assert task.gold_answer == str(abs(recount[0] - recount[1]))


def _by_id(kg: Any, node_id: str) -> Any:
    return kg.node(node_id)


def test_the_graph_evaluator_scores_a_run_that_finishes_one_branch(penguins_graph: Any) -> None:
    """A real episode that visits only the first pick's pages completes s1 and not the other branch.

    Which values the first pick's pages show depends on the plan (a sorted listing may show the
    other branch's value too), so the plan is one whose other branch the episode did not see: scored
    with no edges at all, s3 and s4 stay undone. The edges, not chance, then keep s5 waiting.
    """
    kg = penguins_graph.kg
    groups = usable_listings(kg)[0]
    from taskloom.tools.generate.compose.flowtasks import graph_task

    async def partial(task: Task) -> Any:
        async with Runtime(penguins_graph.settings) as rt:
            episode, _ = await rt.episodes.start(url=task.start_url, agent="partial", allowed_domains=task.allowed_domains)
            episode.task, episode.watch = task, watched_checks(task)
            await run_gold_steps(episode, task.gold_steps[:2])  # the first pick's sorted listing and its record only
            return load_trajectory(await rt.episodes.close(episode.id))

    chosen: tuple[Task, Any] | None = None
    for attempt in range(12):
        branches = two_branch_plan(groups, np.random.default_rng([3, attempt]))
        task = graph_task(kg, groups, branches, five=True, start=start_page(kg), seed=0) if branches else None
        if task is None:
            continue
        task.dag = resource_edges(task.subtasks)
        trajectory = asyncio.run(partial(task))
        seen = {n.id for n in evaluate_progress(task.model_copy(update={"dag": []}), trajectory).nodes if n.state == "completed"}
        if not {"s3", "s4"} & seen:
            chosen = (task, trajectory)
            break
    assert chosen is not None, "no plan in 12 whose other branch the first pick's pages do not show"
    task, trajectory = chosen
    assert ("s3", "s5") in task.dag or ("s4", "s5") in task.dag  # the last subtask needs the other branch
    progress = evaluate_progress(task, trajectory)
    states = {n.id: n.state for n in progress.nodes}
    assert states["s1"] == "completed" and states["s5"] != "completed"
    assert 0 < progress.cr < 1
