"""OmniEval's graph-based evaluator: replay subtask states over a trajectory, then Coverage Rate and Logical Consistency.

Declarative only: the evaluator reads the recorded actions and, per action, the keys of
the subtask state checks that held right after it (:attr:`ActionRecord.holds`); nothing
is executed and no page is opened.

**Node states** (paper §4.1). Subtasks with no predecessor start *Evaluating*, the others
*Waiting*; a subtask becomes Evaluating once all its predecessors completed, and
*Completed* at the first action by which it was **really done** and its predecessors were:

- a subtask is *done after action i* when all its *state checks* (``url_matches``,
  ``text_present``, ``text_absent``, ``element_state``, ``page_is``) held together right after
  ``i`` (in the holds of ``i``: state is observed, not remembered) and each of its *action
  checks* (``clicked``, ``typed``, ``action_performed``) was met by a successful action at or
  before ``i`` (:func:`action_satisfies`);
- it completes at ``max(first i it was done, when its last predecessor completed)``. On the web
  a page's state is transient and what a subtask produces is often knowledge (a value read on
  a page), so a page the agent saw before the subtask was released still counts — the same rule
  :func:`~taskloom.tools.generate.compose.dag.verify_composite` applies to gold replays, so a
  verified composite's oracle run completes every subtask. (OmniBench re-checks a released node
  on later actions only; its desktop state persists, a web page's does not.)

A subtask **with no checks** cannot be observed: it does not hold its successors back, and it
counts as completed when a successor that consumes it completed (at that successor's action),
or, when it is a sink of a task with a gold answer, when the episode's answer passes the task's
answer metrics (at the last action, every action replayed). Otherwise it stays Evaluating.
Subtasks completing on the same action enter the completion sequence by depth, then task order.

**Imported trajectories** (``holds is None`` on an action): state checks cannot be read
from a probe. ``url_matches`` is then tested against the action's ``url_after``; after the
trajectory's last action (when it is replayed) a state check equal to one of the close
record's final-page verdicts (``closed.checks``) takes that verdict; any other state check is
*unobservable*, counts as not holding, and is listed in :attr:`ProgressResult.unobservable`.

``max_steps`` is the paper's step budget N: only the first N actions are replayed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Literal

from pydantic import BaseModel, Field

from .checks import action_satisfies
from .metrics import answer_scores, answer_success
from ..environment.trajectory import ActionRecord, Trajectory
from ..errors import InputError
from ..tasks.dag import Dag
from ..tasks.model import SuccessCriterion, Task, criterion_key
from .coherency import coherency_score, logical_consistency, max_coherency

__all__ = ["NodeState", "NodeProgress", "ProgressResult", "coverage_rate", "evaluate_progress"]

NodeState = Literal["waiting", "evaluating", "completed"]


class NodeProgress(BaseModel):
    """One subtask's final state in the replay."""

    id: str
    state: NodeState
    depth: int = Field(description="1 for a root, else 1 + the deepest predecessor.")
    evaluating_since: int | None = Field(
        None, description="Index of the action after which it became Evaluating (-1 for roots, before any action); None if it never did."
    )
    completed_at: int | None = Field(None, description="Index of the action after which it was Completed.")
    unmet: list[str] = Field(default_factory=list, description="Still Evaluating at the end: keys of the checks not met on the last action.")


class ProgressResult(BaseModel):
    """The graph evaluator's verdict on one trajectory of a composite task."""

    task_id: str
    nodes: list[NodeProgress] = Field(description="Every subtask, in task order.")
    sequence: list[tuple[str, int]] = Field(description="(subtask id, action index) in completion order.")
    completed: int
    total: int
    success: bool = Field(description="Every subtask completed.")
    steps: int = Field(description="Actions replayed.")
    cr: float = Field(description="Coverage Rate: depth-weighted share of completed subtasks.")
    cs_agent: int = Field(description="Coherency score of the completion sequence.")
    cs_max: int = Field(description="Best coherency score over all topological orders.")
    best_order: list[str] = Field(description="One topological order reaching cs_max.")
    lc: float = Field(description="Logical Consistency: cs_agent / cs_max (see coherency module for cs_max = 0).")
    unobservable: list[str] = Field(default_factory=list, description="Keys of state checks that could not be observed (holds missing).")

    def state(self, subtask_id: str) -> NodeState:
        """The final state of one subtask."""
        for node in self.nodes:
            if node.id == subtask_id:
                return node.state
        raise InputError(f"no subtask {subtask_id!r} in task {self.task_id}; known: {[n.id for n in self.nodes]}")


def coverage_rate(dag: Dag, completed: Collection[str]) -> float:
    """CR = Σ w(s)·I(s) / Σ w(s) with w(s) = d(s) / Σ_{s'} d(s'), d the depth (roots 1): every level weighs in.

    >>> coverage_rate(Dag(["a", "b", "c"], [("a", "b"), ("b", "c")]), {"a", "b"})
    0.5
    """
    unknown = sorted(set(completed) - set(dag.nodes))
    if unknown:
        raise InputError(f"completed subtasks {unknown} are not in the DAG {dag.nodes}")
    total = sum(dag.depth(n) for n in dag.nodes)
    if total == 0:
        return 0.0
    weights = {n: dag.depth(n) / total for n in dag.nodes}
    return sum(weights[n] for n in dag.nodes if n in completed) / sum(weights.values())


class _Observer:
    """Whether a state check held right after one action, from holds or the imported fallbacks."""

    def __init__(self, trajectory: Trajectory, replayed: int) -> None:
        self.patterns: dict[str, re.Pattern[str]] = {}
        self.final: dict[str, bool] = {}
        self.last = trajectory.actions[-1].index if trajectory.actions and replayed == len(trajectory.actions) else None
        if trajectory.closed is not None and trajectory.closed.checks:
            self.final = {criterion_key(r.criterion): r.ok for r in trajectory.closed.checks}
        self.unobservable: set[str] = set()

    def _url(self, criterion: SuccessCriterion, url: str) -> bool:
        if criterion.value not in self.patterns:
            try:
                self.patterns[criterion.value] = re.compile(criterion.value)
            except re.error as exc:
                raise InputError(f"url_matches check {criterion.value!r} is not a valid regular expression ({exc}); fix the task's subtask checks") from exc
        return self.patterns[criterion.value].search(url) is not None

    def holds(self, criterion: SuccessCriterion, action: ActionRecord) -> bool:
        key = criterion_key(criterion)
        if action.holds is not None:
            return key in action.holds
        if criterion.kind == "url_matches" and action.url_after is not None:
            return self._url(criterion, action.url_after)
        if action.index == self.last and key in self.final:
            return self.final[key]
        self.unobservable.add(key)
        return False


def _subtask_dag(task: Task) -> Dag:
    if not task.subtasks:
        raise InputError(f"task {task.id} has no subtasks; the graph evaluator scores composite tasks (compose one with tasks_compose)")
    ids = [s.id for s in task.subtasks]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise InputError(f"task {task.id} has duplicate subtask ids {duplicated}; give every subtask a unique id")
    return Dag(ids, task.dag)


def evaluate_progress(task: Task, trajectory: Trajectory, max_steps: int | None = None) -> ProgressResult:
    """Replay the Waiting/Evaluating/Completed states over ``trajectory`` and score CR and LC (see module doc)."""
    if max_steps is not None and max_steps < 0:
        raise InputError(f"max_steps must be >= 0, got {max_steps}")
    dag = _subtask_dag(task)
    subtasks = {s.id: s for s in task.subtasks}
    actions = trajectory.actions if max_steps is None else trajectory.actions[:max_steps]
    observer = _Observer(trajectory, len(actions))
    ready = {n: _first_ready(subtasks[n].checks, actions, observer.holds) for n in dag.nodes}
    answered = _answered(task, trajectory, actions)

    topo = sorted(dag.nodes, key=lambda n: (dag.depth(n), dag.index[n]))
    gate: dict[str, int] = {}  # action index after which every predecessor had completed (-1: a root)
    done_at: dict[str, int] = {}
    passed: dict[str, int] = {}  # when a subtask lets its successors go: its completion, or for one without checks, its own gate
    for n in topo:
        preds = dag.predecessors(n)
        if any(p not in passed for p in preds):
            continue
        gate[n] = max((passed[p] for p in preds), default=-1)
        seen = ready[n]
        if subtasks[n].checks:
            if seen is not None:
                done_at[n] = passed[n] = max(gate[n], seen)
        else:
            passed[n] = gate[n]
    for n in reversed(topo):  # a subtask without checks: done when a successor that consumed it was, or (a sink) when the answer is right
        if subtasks[n].checks or n not in gate:
            continue
        later = [done_at[s] for s in dag.successors(n) if s in done_at]
        if later:
            done_at[n] = min(later)
        elif not dag.successors(n) and answered is not None:
            done_at[n] = max(gate[n], answered)
    sequence = sorted(done_at.items(), key=lambda item: (item[1], dag.depth(item[0]), dag.index[item[0]]))

    nodes = []
    last = actions[-1] if actions else None
    for n in dag.nodes:
        unmet: list[str] = []
        state: NodeState = "completed" if n in done_at else "evaluating" if n in gate else "waiting"
        if state == "evaluating":
            met = {k for k, c in enumerate(subtasks[n].checks) if not c.on_state and any(action_satisfies(c, a) for a in actions)}
            for k, c in enumerate(subtasks[n].checks):
                if not ((last is not None and observer.holds(c, last)) if c.on_state else k in met):
                    unmet.append(criterion_key(c))
        nodes.append(NodeProgress(id=n, state=state, depth=dag.depth(n), evaluating_since=gate.get(n), completed_at=done_at.get(n), unmet=unmet))

    apps = {s.id: s.category for s in task.subtasks}
    order = [n for n, _ in sequence]
    cs_agent = coherency_score(order, apps)
    cs_max, best_order = max_coherency(dag, apps)
    return ProgressResult(
        task_id=task.id,
        nodes=nodes,
        sequence=sequence,
        completed=len(sequence),
        total=len(dag.nodes),
        success=len(sequence) == len(dag.nodes),
        steps=len(actions),
        cr=coverage_rate(dag, done_at),
        cs_agent=cs_agent,
        cs_max=cs_max,
        best_order=best_order,
        lc=logical_consistency(cs_agent, cs_max, len(sequence)),
        unobservable=sorted(observer.unobservable),
    )


def _first_ready(checks: list[SuccessCriterion], actions: list[ActionRecord], holds: Callable[[SuccessCriterion, ActionRecord], bool]) -> int | None:
    """The first action after which every state check held together and every action check had been met by a successful action so far."""
    if not checks:
        return None
    pending = [c for c in checks if not c.on_state]
    for action in actions:
        pending = [c for c in pending if not action_satisfies(c, action)]
        if not pending and all(holds(c, action) for c in checks if c.on_state):
            return action.index
    return None


def _answered(task: Task, trajectory: Trajectory, actions: list[ActionRecord]) -> int | None:
    """The last replayed action's index when the episode's answer passes the task's answer metrics (every action replayed); else None."""
    if task.gold_answer is None or trajectory.answer is None or not actions or len(actions) != len(trajectory.actions):
        return None
    return actions[-1].index if answer_success(task, answer_scores(task, trajectory.answer)) else None
