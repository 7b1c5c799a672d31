"""The five task-graph complexities (OmniBench Table 2) and the ten capability test sets (Table 12).

A composite task's subtask DAG is measured along five dimensions, each with a
value and an easy/medium/hard level:

============  ===================================  ======  =======  ======
dimension     value                                easy    medium   hard
============  ===================================  ======  =======  ======
dependency    number of edges                      <= 1    2-3      >= 4
instruction   number of nodes (subtasks)           <= 2    3-4      >= 5
knowledge     number of distinct categories        <= 1    2-3      >= 4
hierarchy     depth (:attr:`Dag.height`, levels)   <= 2    3-4      >= 5
branch        width (:attr:`Dag.width`)            <= 2    3-4      >= 5
============  ===================================  ======  =======  ======

Knowledge counts distinct :attr:`Subtask.category` values (a site section, an
application, or ``document``); subtasks without a category count together as one
``uncategorised`` category.

Each capability test set constrains some dimensions and leaves the others
arbitrary (Table 12: three solid stars = the hard level, hollow stars = any level):

============================  ==========  ===========  =========  ======  =========
capability                    dependency  instruction  hierarchy  branch  knowledge
============================  ==========  ===========  =========  ======  =========
parallel_planning             hard        any          any        hard    any
long_range_planning           hard        any          hard       any     any
long_sequence_reasoning       any         hard         hard       any     any
long_instruction_following    any         any          any        hard    any
sequential_decision_making    any         any          hard       hard    any
cross_domain_decision_making  any         any          any        hard    hard
subtask_identification        hard        hard         any        any     any
dependency_identification     hard        any          any        any     any
cross_domain_knowledge        any         hard         any        any     hard
domain_specific_knowledge     any         hard         any        any     easy
============================  ==========  ===========  =========  ======  =========

The text of Table 12 we work from gives cross-domain and domain-specific knowledge
identical rows; we read domain-specific knowledge as many subtasks (instruction
hard) within one category (knowledge easy), the only reading that makes the two
sets differ and matches the names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ...errors import InputError
from ...tasks.dag import Dag
from ...tasks.model import Subtask, Task

__all__ = ["Level", "DIMENSIONS", "CUTOFFS", "CAPABILITIES", "level_of", "complexities", "capabilities_of", "satisfies", "select", "capability_id"]

Level = Literal["easy", "medium", "hard"]
DIMENSIONS: tuple[str, ...] = ("dependency", "instruction", "knowledge", "hierarchy", "branch")
#: dimension -> (largest easy value, largest medium value); anything above is hard.
CUTOFFS: dict[str, tuple[int, int]] = {
    "dependency": (1, 3),
    "instruction": (2, 4),
    "knowledge": (1, 3),
    "hierarchy": (2, 4),
    "branch": (2, 4),
}
#: capability -> {dimension: allowed levels}; dimensions not named are arbitrary.
CAPABILITIES: dict[str, dict[str, frozenset[str]]] = {
    "parallel_planning": {"dependency": frozenset({"hard"}), "branch": frozenset({"hard"})},
    "long_range_planning": {"dependency": frozenset({"hard"}), "hierarchy": frozenset({"hard"})},
    "long_sequence_reasoning": {"instruction": frozenset({"hard"}), "hierarchy": frozenset({"hard"})},
    "long_instruction_following": {"branch": frozenset({"hard"})},
    "sequential_decision_making": {"hierarchy": frozenset({"hard"}), "branch": frozenset({"hard"})},
    "cross_domain_decision_making": {"branch": frozenset({"hard"}), "knowledge": frozenset({"hard"})},
    "subtask_identification": {"dependency": frozenset({"hard"}), "instruction": frozenset({"hard"})},
    "dependency_identification": {"dependency": frozenset({"hard"})},
    "cross_domain_knowledge": {"instruction": frozenset({"hard"}), "knowledge": frozenset({"hard"})},
    "domain_specific_knowledge": {"instruction": frozenset({"hard"}), "knowledge": frozenset({"easy"})},
}


def level_of(dimension: str, value: int) -> Level:
    """The easy/medium/hard level of one dimension's value (Table 2 cut-offs).

    Examples
    --------
    >>> level_of("dependency", 1), level_of("dependency", 2), level_of("dependency", 4)
    ('easy', 'medium', 'hard')
    """
    if dimension not in CUTOFFS:
        raise InputError(f"unknown complexity dimension {dimension!r}; use one of {', '.join(DIMENSIONS)}")
    easy, medium = CUTOFFS[dimension]
    return "easy" if value <= easy else "medium" if value <= medium else "hard"


def complexities(task_or_subtasks: Task | Sequence[Subtask], dag: Sequence[tuple[str, str]] | None = None) -> dict[str, dict[str, Any]]:
    """The five complexities of a composite task, or of ``(subtasks, dag)``: ``{dim: {"value", "level"}}``."""
    if isinstance(task_or_subtasks, Task):
        subtasks, edges = list(task_or_subtasks.subtasks), list(task_or_subtasks.dag)
    else:
        subtasks, edges = list(task_or_subtasks), list(dag or [])
    graph = Dag([s.id for s in subtasks], edges)
    values = {
        "dependency": len(graph.edges),
        "instruction": len(graph.nodes),
        "knowledge": len({s.category or "uncategorised" for s in subtasks}),
        "hierarchy": graph.height,
        "branch": graph.width,
    }
    return {dim: {"value": values[dim], "level": level_of(dim, values[dim])} for dim in DIMENSIONS}


def capability_id(name: str) -> str:
    """``'Long-Range Planning'`` -> ``'long_range_planning'``; raises InputError for an unknown capability."""
    key = "_".join(name.strip().lower().replace("-", " ").split())
    if key not in CAPABILITIES:
        raise InputError(f"unknown capability {name!r}; use one of {', '.join(CAPABILITIES)}")
    return key


def satisfies(complexity: Mapping[str, Mapping[str, Any]], capability: str) -> bool:
    """Whether a complexity dict meets one capability's constraints."""
    constraints = CAPABILITIES[capability_id(capability)]
    return all(dim in complexity and complexity[dim].get("level") in allowed for dim, allowed in constraints.items())


def capabilities_of(complexity: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The capability test sets a task with this complexity belongs to, in Table 12 order."""
    return [name for name in CAPABILITIES if satisfies(complexity, name)]


def select(tasks: Sequence[Task], capability: str) -> list[Task]:
    """The composite tasks (in the given order) that belong to one capability's test set."""
    key = capability_id(capability)
    return [t for t in tasks if t.subtasks and satisfies(t.complexity or complexities(t), key)]
