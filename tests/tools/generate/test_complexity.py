"""The five complexities at every Table 2 cut-off, and capability test sets by Table 12 constraints."""

from __future__ import annotations

import pytest

from taskloom.tools.errors import InputError
from taskloom.tools.generate.compose.complexity import CAPABILITIES, capabilities_of, capability_id, complexities, level_of, select
from taskloom.tools.tasks.model import Provenance, Subtask, Task


def _subs(n: int, categories: list[str] | None = None) -> list[Subtask]:
    cats = categories or ["web"] * n
    return [Subtask(id=f"s{i + 1}", instruction=f"step {i + 1}", category=cats[i]) for i in range(n)]


def _chain(n: int) -> list[tuple[str, str]]:
    return [(f"s{i}", f"s{i + 1}") for i in range(1, n)]


def _star(leaves: int) -> list[tuple[str, str]]:
    return [("s1", f"s{i}") for i in range(2, leaves + 2)]


def _values(result: dict) -> dict[str, tuple[int, str]]:
    return {dim: (v["value"], v["level"]) for dim, v in result.items()}


@pytest.mark.parametrize(
    ("dimension", "value", "level"),
    [
        ("dependency", 0, "easy"), ("dependency", 1, "easy"), ("dependency", 2, "medium"), ("dependency", 3, "medium"), ("dependency", 4, "hard"),
        ("instruction", 2, "easy"), ("instruction", 3, "medium"), ("instruction", 4, "medium"), ("instruction", 5, "hard"),
        ("knowledge", 1, "easy"), ("knowledge", 2, "medium"), ("knowledge", 3, "medium"), ("knowledge", 4, "hard"),
        ("hierarchy", 2, "easy"), ("hierarchy", 3, "medium"), ("hierarchy", 4, "medium"), ("hierarchy", 5, "hard"),
        ("branch", 2, "easy"), ("branch", 3, "medium"), ("branch", 4, "medium"), ("branch", 5, "hard"),
    ],
)
def test_levels_at_every_cutoff(dimension: str, value: int, level: str) -> None:
    assert level_of(dimension, value) == level


def test_chains_cross_the_edge_node_and_depth_cutoffs() -> None:
    assert _values(complexities(_subs(2), _chain(2))) == {
        "dependency": (1, "easy"), "instruction": (2, "easy"), "knowledge": (1, "easy"), "hierarchy": (2, "easy"), "branch": (1, "easy")}
    assert _values(complexities(_subs(3), _chain(3))) == {
        "dependency": (2, "medium"), "instruction": (3, "medium"), "knowledge": (1, "easy"), "hierarchy": (3, "medium"), "branch": (1, "easy")}
    assert _values(complexities(_subs(4), _chain(4)))["hierarchy"] == (4, "medium")
    assert _values(complexities(_subs(4), _chain(4)))["dependency"] == (3, "medium")
    assert _values(complexities(_subs(5), _chain(5))) == {
        "dependency": (4, "hard"), "instruction": (5, "hard"), "knowledge": (1, "easy"), "hierarchy": (5, "hard"), "branch": (1, "easy")}


def test_stars_and_antichains_cross_the_width_cutoffs() -> None:
    assert _values(complexities(_subs(3), _star(2)))["branch"] == (2, "easy")
    assert _values(complexities(_subs(4), _star(3)))["branch"] == (3, "medium")
    assert _values(complexities(_subs(5), _star(4))) == {
        "dependency": (4, "hard"), "instruction": (5, "hard"), "knowledge": (1, "easy"), "hierarchy": (2, "easy"), "branch": (4, "medium")}
    assert _values(complexities(_subs(6), _star(5)))["branch"] == (5, "hard")
    assert _values(complexities(_subs(3), [])) == {
        "dependency": (0, "easy"), "instruction": (3, "medium"), "knowledge": (1, "easy"), "hierarchy": (1, "easy"), "branch": (3, "medium")}


def test_a_diamond_and_categories() -> None:
    diamond = [("s1", "s2"), ("s1", "s3"), ("s2", "s4"), ("s3", "s4")]
    assert _values(complexities(_subs(4, ["home", "search", "search", "book"]), diamond)) == {
        "dependency": (4, "hard"), "instruction": (4, "medium"), "knowledge": (3, "medium"), "hierarchy": (3, "medium"), "branch": (2, "easy")}
    assert complexities(_subs(4, ["a", "b", "c", "d"]), [])["knowledge"] == {"value": 4, "level": "hard"}
    assert complexities(_subs(3, ["", "", "a"]), [])["knowledge"] == {"value": 2, "level": "medium"}  # uncategorised counts once


def _task(task_id: str, n: int, edges: list[tuple[str, str]], categories: list[str] | None = None) -> Task:
    return Task(id=task_id, kind="composite", type="task_graph", instruction="x", subtasks=_subs(n, categories), dag=edges,
                provenance=Provenance(graph_id="g", generator="compose-dag"))


def test_capabilities_follow_table_12() -> None:
    assert set(CAPABILITIES) == {
        "parallel_planning", "long_range_planning", "long_sequence_reasoning", "long_instruction_following", "sequential_decision_making",
        "cross_domain_decision_making", "subtask_identification", "dependency_identification", "cross_domain_knowledge", "domain_specific_knowledge"}
    wide = complexities(_task("wide", 6, _star(5)))  # edges 5 hard, nodes 6 hard, depth 2, width 5 hard, one category
    assert capabilities_of(wide) == ["parallel_planning", "long_instruction_following", "subtask_identification", "dependency_identification",
                                     "domain_specific_knowledge"]
    deep = complexities(_task("deep", 5, _chain(5), ["a", "b", "c", "d", "a"]))  # edges 4, nodes 5, depth 5, width 1, 4 categories
    assert capabilities_of(deep) == ["long_range_planning", "long_sequence_reasoning", "subtask_identification", "dependency_identification",
                                     "cross_domain_knowledge"]
    assert capabilities_of(complexities(_task("small", 2, _chain(2)))) == []


def test_select_picks_the_tasks_of_one_test_set() -> None:
    tasks = [_task("wide", 6, _star(5)), _task("deep", 5, _chain(5)), _task("small", 2, _chain(2))]
    assert [t.id for t in select(tasks, "Parallel Planning")] == ["wide"]
    assert [t.id for t in select(tasks, "long-range planning")] == ["deep"]
    assert [t.id for t in select(tasks, "dependency_identification")] == ["wide", "deep"]
    stored = tasks[2].model_copy(update={"complexity": complexities(tasks[0])})  # a stored complexity is used as is
    assert [t.id for t in select([stored], "parallel_planning")] == ["small"]
    assert capability_id("Cross-Domain Decision-Making") == "cross_domain_decision_making"
    with pytest.raises(InputError, match="unknown capability"):
        select(tasks, "mind reading")
    with pytest.raises(InputError, match="unknown complexity dimension"):
        level_of("beauty", 1)
