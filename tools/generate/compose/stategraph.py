"""Task graphs over an application's state: two independent changes, then a step that needs both.

The material is the one of :mod:`.statechain` (a graph's verified ``web-change`` goals). A graph:

* ``s1`` creates the record of a create goal; the application gives it a number (hidden);
* ``s2`` makes an edit goal's change to an *existing* record (independent of ``s1``);
* ``s3`` comments on that edited record with a sentence holding the new record's number
  ("Same problem as #301"): it consumes ``s1``'s number and comes after ``s2``'s change.

``s1`` and ``s2`` may come in either order: 2 valid orders. The instruction states both changes
and the join, never the new number or page. Every valid order is replayed in a fresh state
(:func:`.dag.verify_composite` on the gold steps in that order) and the graph is kept only when
every check holds after each of them. When an order fails because the application changed an edited
field on its own once the comment came (Roundup moves a commented "unread" issue to "chatting"), that
field leaves the graph's end checks (``s2``'s own checks, watched while the episode runs, keep it) and
every order is replayed again; any other failure drops the graph, with the order and the failed check,
and the next pair of goals is tried.
Numbers are order-independent here because only ``s1`` creates a record.
"""

from __future__ import annotations

import hashlib
import json
from urllib.parse import urlparse

from ...environment.manager import EpisodeManager
from ...graph.model import KnowledgeGraph
from ...tasks.model import Provenance, Resource, Subtask, SuccessCriterion, Task
from .dag import shaped, verify_composite
from .flowcompose import FlowResult
from .flowtasks import leaks
from .statechain import LINK_TEXT, NewRecord, _app_changed, _criterion, _kind, _new_record, _on_page, _own_export, settled

__all__ = ["compose_state_graphs"]

#: Pairs tried beyond ``count``: a graph an application's own rules break (a comment that resets a status) is replaced by another pair.
EXTRA_ATTEMPTS = 4


def _verified(tasks: list[Task], kind: str) -> list[Task]:
    return [t for t in tasks if _kind(t) == kind and t.quality.get("replay", {}).get("ok")]


async def compose_state_graphs(kg: KnowledgeGraph, tasks: list[Task], episodes: EpisodeManager, count: int, seed: int) -> FlowResult:
    """Up to ``count`` task graphs (create ∥ edit → linking comment), each verified in every valid order."""
    result = FlowResult()
    creates, comments, edits = _verified(tasks, "create"), _verified(tasks, "comment"), _verified(tasks, "edit")
    if not creates or not comments or not edits:
        missing = [name for name, found in (("create", creates), ("comment", comments), ("edit", edits)) if not found]
        result.reason = f"no verified {' or '.join(missing)} goal on this graph (generate with web-change first): no two independent changes to join"
        return result
    used: set[str] = set()  # a goal in a kept graph is not used again
    for index, (create, edit) in enumerate(_pairs(creates, edits, count + EXTRA_ATTEMPTS)):
        if len(result.tasks) >= count:
            break
        if create.id in used or edit.id in used:
            continue
        comment = comments[index % len(comments)]
        made = await _new_record(create, str(edit.quality["change"]["record"]), episodes, _own_export(edits))
        if made is None:
            result.dropped.append((f"state-graph-{create.id}", "the new record's number and page could not be read from the export after the create goal"))
            continue
        changed = _changed(edit)
        if changed is None:
            result.dropped.append((f"state-graph-{create.id}", f"no check of the edit goal {edit.id} shows the fields it changes"))
            continue
        task = _graph(kg, create, edit, comment, made, changed, seed)
        if leaked := leaks(task.instruction, task.quality["flow"]["hidden"]):
            result.dropped.append((task.id, f"the instruction states intermediate values {leaked}"))
            continue
        failed = await _verify_orders(task, episodes)
        if failed is not None and (app := await _app_changed(json.loads(changed[0].value))):
            # the failed order's comment left the application's own change on the edited record (read now): the edit's
            # fields it changed are checked while the episode runs (s2's watched checks), no longer at the end
            task = _graph(kg, create, edit, comment, made, changed, seed, app)
            failed = await _verify_orders(task, episodes)
        if failed is not None:
            result.dropped.append((task.id, failed))
            continue
        result.tasks.append(task)
        used |= {create.id, edit.id}
    if not result.tasks and result.reason is None:
        result.reason = "every state task graph failed: " + "; ".join(why for _, why in result.dropped[:3])
    return result


def _pairs(creates: list[Task], edits: list[Task], limit: int) -> list[tuple[Task, Task]]:
    """Up to ``limit`` distinct (create, edit) pairs: each create with the edit of its index first, then with the next edits.

    >>> _pairs(["c0", "c1"], ["e0", "e1", "e2"], 5)  # type: ignore[arg-type]
    [('c0', 'e0'), ('c1', 'e1'), ('c0', 'e1'), ('c1', 'e2'), ('c0', 'e2')]
    """
    pairs = [(creates[i], edits[(i + shift) % len(edits)]) for shift in range(len(edits)) for i in range(len(creates))]
    return pairs[:limit]


def _graph(kg: KnowledgeGraph, create: Task, edit: Task, comment: Task, made: NewRecord, changed: list[SuccessCriterion], seed: int, app: dict[str, str] | None = None) -> Task:
    """Create ∥ edit → the linking comment; ``app``: the edit's fields the application changes on its own once the comment comes."""
    url, number = made.url, made.number
    change = edit.quality["change"]
    target, title = str(change["record"]), next(iter(change["key"].values()))
    noun = str(change.get("noun") or comment.quality["change"].get("noun") or "record")
    sentence = LINK_TEXT.format(number=number)
    join = f"on the {noun} “{title}”, add a comment that reads “{LINK_TEXT.format(number='N')}”, where N is the number your new {noun} was given"
    number_out, edited = Resource(kind="field_value", name=f"number of the new {noun}"), Resource(kind="record", name=f"{noun} {title} changed")
    subtasks = [
        Subtask(id="s1", instruction=create.instruction, category="application", gold_steps=list(create.gold_steps), checks=list(create.success), outputs=[number_out]),
        Subtask(id="s2", instruction=edit.instruction, category="application", gold_steps=list(edit.gold_steps), checks=changed, outputs=[edited]),
        Subtask(id="s3", instruction=join, category="application", gold_steps=_on_page(comment, target, sentence),
                checks=[_criterion({"source": target, "text": sentence, "count": 1})], inputs=[number_out, edited]),
    ]  # fmt: skip
    digest = hashlib.sha1(f"{kg.id}|state-graph|{create.id}|{edit.id}|{seed}".encode()).hexdigest()[:12]
    task = Task(
        id=f"dag-{digest}",
        kind="composite",
        type="task_graph",
        difficulty="medium",
        instruction=f"Make two changes, in either order. {create.instruction.rstrip('.')}. {edit.instruction.rstrip('.')}. Once both are done, {join}.",
        start_url=create.start_url,
        allowed_domains=create.allowed_domains or [urlparse(create.start_url or "").hostname or ""],
        gold_steps=[s for sub in subtasks for s in sub.gold_steps],
        success=[c for sub in subtasks for c in (settled(sub.checks, app) if app and sub.id == "s2" else sub.checks)],
        subtasks=subtasks,
        provenance=Provenance(graph_id=kg.id, template="state-graph", generator="compose-dag", model="none", seed=seed),
        quality={"intent": "two independent changes, then a comment that needs both", "flow": {"hidden": [url, number], "steps": [s.instruction for s in subtasks], **({"app_changed": app} if app else {})}},
    )
    return shaped(task, seed)


def _changed(edit: Task) -> list[SuccessCriterion] | None:
    """The edit's change as a check on its record alone (None when no check of the edit shows the changed fields).

    The edit's own checks also say the rest of the listing is unchanged, which ``s1``'s new record breaks; the
    check kept reads the first export that shows every changed field (the record's own export, which shows all).
    """
    values = edit.quality["change"]["values"]
    for criterion in edit.success:
        check = json.loads(criterion.value)
        if check.get("key") and all(check.get("fields", {}).get(k) == v for k, v in values.items()):
            return [_criterion({"source": check["source"], "key": check["key"], "fields": values, "count": 1})]
    return None


async def _verify_orders(task: Task, episodes: EpisodeManager) -> str | None:
    """Replay the gold in each valid order (a fresh state each); None when all pass, else the first order that failed and why."""
    by_id = {s.id: s for s in task.subtasks}
    for order in task.orders:
        replay = task.model_copy(update={"gold_steps": [step for sid in order for step in by_id[sid].gold_steps]}, deep=True)
        failed = await verify_composite(replay, episodes)
        if failed is not None:
            return f"order {' → '.join(order)} failed verification: {failed}"
        if order == task.orders[0]:
            task.gold_steps, task.gold_trajectory, task.quality["replay"] = replay.gold_steps, replay.gold_trajectory, replay.quality["replay"]
    task.quality["replay"]["orders"] = len(task.orders)
    return None
