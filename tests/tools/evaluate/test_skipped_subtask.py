"""A composite is a success only when every subtask's checks held at some point, not on its final page alone.

A run that reaches the last page while skipping a step in between (word-match on a walk chain: the
last page reached by a search, the middle page never opened) gets a failed verdict at close, on one
of the skipped subtask's own checks.
"""

from __future__ import annotations

from taskloom.tools.environment.manager import skipped_subtask
from taskloom.tools.environment.trajectory import ActionRecord
from taskloom.tools.tasks.model import Provenance, SuccessCriterion, Subtask, Task, criterion_key

GENRES = SuccessCriterion(kind="page_is", value="http://127.0.0.1/genres.html")
BOOK = SuccessCriterion(kind="page_is", value="http://127.0.0.1/book.html?id=b01")


def _task() -> Task:
    subtasks = [Subtask(id="s1", instruction="open the genres", checks=[GENRES]), Subtask(id="s2", instruction="open the book", checks=[BOOK])]
    return Task(id="chain-x-l2", kind="composite", type="chained", instruction="…", subtasks=subtasks, success=[BOOK], dag=[("s1", "s2")],
                provenance=Provenance(graph_id="g", generator="compose-chain"))


def _action(index: int, holds: list[SuccessCriterion]) -> ActionRecord:
    return ActionRecord(index=index, name="navigate", canonical="navigate(url=…)", t_start=0.0, t_end=0.1, holds=[criterion_key(c) for c in holds])


def test_a_skipped_subtask_fails_the_close_verdict_on_its_own_check() -> None:
    (verdict,) = skipped_subtask(_task(), [_action(0, [BOOK])])
    assert verdict.ok is False and verdict.criterion == GENRES and "subtask s1" in verdict.observed


def test_every_subtask_done_in_turn_adds_nothing() -> None:
    assert skipped_subtask(_task(), [_action(0, [GENRES]), _action(1, [BOOK])]) == []
    assert skipped_subtask(_task().model_copy(update={"subtasks": []}), []) == []
