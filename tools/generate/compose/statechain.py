"""Chains over an application's state (issue 33): later steps act on what earlier steps made.

The material is a graph's verified change goals (``web-change``): a *create* goal, and *comment*
and *edit* goals whose gold opens a record's page. A chain:

1. creates the record of the create goal (title and field values as that goal states them);
2. adds a comment to *that new record* (the comment goal's steps on the new record's page);
3. changes one of its fields (an edit goal's field the create goal leaves alone, to a value the new
   record does not have);
4. comments on another, existing record (one an edit or comment goal names) with a sentence that holds the number the application
   gave the new record ("Same problem as #301"): the value flows from step 1 into step 4.

The new record's page and number are never in the instruction (they are the chain's hidden
values): they are learnt once at composition, by replaying the create goal in a fresh state and
reading the list export the create goal is checked on (its row for the new title, its id column),
and the record-page URL template the comment goal's page gives (the page with that id). Each
level k is one composite task whose checks are all of levels 1..k, on the application's state
after the episode; it is replayed in a fresh state (:func:`.dag.verify_composite`) and kept only
when they all hold and every subtask's checks held at some point. A chain stops at the first
level that cannot be made or verified, with the reason. When level 2 fails because the application
changed a field of the new record on its own once the comment came (Roundup moves an "unread" issue to
"chatting"), that field leaves the end checks of levels 2..4 (the first subtask's checks, watched
while the episode runs, keep it) and the chain goes on from level 2. Level 3's field may come from any
list export the verified goals are checked on (Roundup's create export shows no priority; its bulk
goals' export does).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import httpx

from ...environment.manager import EpisodeManager
from ...evaluate.appstate import column_key, parse_rows
from ...graph.model import KnowledgeGraph
from ...tasks.model import GoldStep, Provenance, SuccessCriterion, Subtask, Task
from ..web.edit import _id_column, _id_template
from ..web.create import Export
from ..web.paths import replay_web_task
from .flowcompose import ChainStop, FlowResult, verify_levels
from .flowtasks import leaks
from .levels import level_difficulty

__all__ = ["compose_state_chains", "LINK_TEXT", "NewRecord", "settled"]

#: The sentence of level 4; ``{number}`` is the number the application gave the new record.
LINK_TEXT = "Same problem as #{number}."


def _kind(task: Task) -> str:
    return str(task.quality.get("change", {}).get("kind") or "")


def _criterion(value: dict[str, Any]) -> SuccessCriterion:
    return SuccessCriterion(kind="record", value=json.dumps(value, ensure_ascii=False, sort_keys=True))


@dataclass
class NewRecord:
    """What the application gave the create goal's record: its page, its number, its fields and the export each was read from."""

    url: str
    number: str
    row: dict[str, str]
    sources: dict[str, str]


async def _rows(client: httpx.AsyncClient, url: str) -> list[dict[str, str]]:
    response = await client.get(url)
    return parse_rows(response.text) if response.status_code == 200 else []


def _titled(rows: list[dict[str, str]], key: str, title: str) -> list[dict[str, str]]:
    return [r for r in rows if " ".join(r.get(key, "").split()).lower() == title]


async def _new_record(create: Task, record_url: str, episodes: EpisodeManager, own_export: tuple[str, str] | None, exports: tuple[str, ...] = ()) -> NewRecord | None:
    """The new record as the application made it, read after ``create``'s gold replay in a fresh state.

    Its fields come from the create goal's export, then from the other list ``exports`` the verified
    goals are checked on (more columns: priority, keyword …), then from the record's own export.
    """
    check = json.loads(create.success[0].value)
    title = " ".join(next(iter(check["key"].values())).split()).lower()
    _, dropped = await replay_web_task(create.model_copy(deep=True), episodes)
    if dropped is not None:
        return None
    key = column_key(next(iter(check["key"])))
    async with httpx.AsyncClient(timeout=15.0) as client:
        rows = await _rows(client, check["source"])
        id_column = _id_column(Export(url=check["source"], columns=list(rows[0]) if rows else [], rows=rows), key)
        mine = _titled(rows, key, title)
        if id_column is None or len(mine) != 1:
            return None
        old = next((r[id_column] for r in rows if r is not mine[0] and _id_template(record_url, r[id_column]) is not None), None)
        template = _id_template(record_url, old) if old else None
        if template is None:
            return None
        made = NewRecord(template.replace("{id}", mine[0][id_column]), mine[0][id_column], dict(mine[0]), dict.fromkeys(mine[0], check["source"]))
        for url in exports:
            wider = [r for r in _titled(await _rows(client, url), key, title) if r.get(id_column) == made.number]
            if len(wider) == 1:
                made.sources.update({k: url for k in wider[0] if k not in made.row})
                made.row = {**wider[0], **made.row}
        if own_export is not None:  # the record's own export: every field of the new record, as the application filled it in
            url = own_export[0].replace(own_export[1], made.url)
            own = await _rows(client, url)
            if len(own) == 1:
                made.row = {**made.row, **own[0]}
                made.sources.update(dict.fromkeys(own[0], url))
    return made


async def _app_changed(check: dict[str, Any]) -> dict[str, str]:
    """The fields a record check asks for that the application has since changed on its own (read now, after a later step's replay).

    Roundup moves an "unread" issue to "chatting" when a comment comes: the status asked for no longer holds at the end,
    though it held when the step was done.
    """
    (label, title), = check["key"].items()
    async with httpx.AsyncClient(timeout=15.0) as client:
        mine = _titled(await _rows(client, check["source"]), column_key(label), " ".join(title.split()).lower())
    if len(mine) != 1:
        return {}
    return {k: mine[0].get(column_key(k), "") for k, v in check.get("fields", {}).items() if mine[0].get(column_key(k), "").strip().lower() != str(v).strip().lower()}


def settled(checks: list[SuccessCriterion], changed: dict[str, str]) -> list[SuccessCriterion]:
    """``checks`` without the fields the application changed on its own."""
    out = []
    for check in checks:
        value = json.loads(check.value)
        if isinstance(value.get("fields"), dict) and changed:
            value["fields"] = {k: v for k, v in value["fields"].items() if k not in changed}
        out.append(check.model_copy(update={"value": json.dumps(value, ensure_ascii=False, sort_keys=True)}))
    return out


def _exports(tasks: list[Task]) -> tuple[str, ...]:
    """The list exports (keyed checks over many records) the verified change goals are checked on, most columns first."""
    found = {str(v["source"]) for t in tasks for c in t.success if c.kind == "record" and (v := json.loads(c.value)).get("key") and (v.get("total") or 0) > 1}
    return tuple(sorted(found, key=lambda u: (-len(u), u)))


def _own_export(edits: list[Task]) -> tuple[str, str] | None:
    """An edit goal's record-export URL and its record page's URL (the export of another record is the one with that page swapped)."""
    for edit in edits:
        record = edit.quality["change"]["record"]
        for criterion in edit.success:
            source = str(json.loads(criterion.value).get("source") or "")
            if source != record and source.startswith(record) and not source[len(record):][:1].isalnum():
                return source, record
    return None


def _on_page(task: Task, url: str, text: str | None = None) -> list[GoldStep]:
    """``task``'s gold on another record's page (and, for a comment, with other text)."""
    steps = [s.model_copy(update={"text": url}) if s.action == "navigate" else s for s in task.gold_steps]
    return [s.model_copy(update={"text": text}) if text is not None and s.action == "type" else s for s in steps]


async def compose_state_chains(kg: KnowledgeGraph, tasks: list[Task], episodes: EpisodeManager, count: int, levels: int, seed: int) -> FlowResult:
    """Up to ``count`` chains over the application's state, each giving its verified levels 1..min(levels, 4)."""
    result = FlowResult()
    creates = [t for t in tasks if _kind(t) == "create" and t.quality.get("replay", {}).get("ok")]
    comments = [t for t in tasks if _kind(t) == "comment" and t.quality.get("replay", {}).get("ok")]
    edits = [t for t in tasks if _kind(t) == "edit" and t.quality.get("replay", {}).get("ok")]
    if not creates or not comments:
        kinds = sorted({_kind(t) for t in tasks if t.quality.get("replay", {}).get("ok")})
        why_list = " (a list's items have no number or page of their own to carry)" if "list" in kinds else ""
        found = f"its verified change goals are of kinds {', '.join(kinds)}{why_list}" if kinds else "generate with web-change first"
        result.reason = f"no verified create and comment goals on this graph ({found}): no record to build on"
        return result
    exports = _exports(creates + comments + edits + [t for t in tasks if _kind(t) == "bulk" and t.quality.get("replay", {}).get("ok")])
    budget = f"the step budget ran out at level {min(levels, 4)}"
    for index in range(min(count, len(creates))):
        create = creates[index]
        comment = comments[index % len(comments)]
        other = next((t for t in comments + edits if t.quality["change"]["record"] != comment.quality["change"]["record"]), None)
        chain_id = hashlib.sha1(f"{kg.id}|state|{create.id}|{seed}".encode()).hexdigest()[:10]
        made = await _new_record(create, comment.quality["change"]["record"], episodes, _own_export(edits), exports)
        if made is None:
            result.chains.append(ChainStop(chain=chain_id, listing="", reached=0, stopped="the new record's number and page could not be read from the export after the create goal"))
            continue
        made_levels = [_checked(t) for t in _levels(kg, create, comment, edits, other, made, chain_id, seed, {})[:levels]]
        reached, stopped = await verify_levels(made_levels, episodes, result, budget)
        if reached == 1 and stopped.startswith("level 2 failed") and (app := await _app_changed(json.loads(create.success[0].value))):
            # the comment's replay left the application's own change in place (read now): level 1's fields it changed
            # are checked while the episode runs (the subtask's watched checks), no longer at its end
            result.dropped.pop()
            again = [_checked(t) for t in _levels(kg, create, comment, edits, other, made, chain_id, seed, app)[:levels]]
            more, stopped = await verify_levels(again[1:], episodes, result, budget, first=2)
            reached += more
        result.chains.append(ChainStop(chain=chain_id, listing=create.quality["change"]["form"], reached=reached, stopped=stopped))
    return result


def _checked(task: Task | None) -> tuple[Task | None, str]:
    """A level as :func:`.flowcompose.verify_levels` takes it: None with the reason when it is missing or states a hidden value."""
    if task is None:
        return None, "no goal on this graph supplies the step"
    if leaked := leaks(task.instruction, task.quality["flow"]["hidden"]):
        return None, f"the instruction states intermediate values {leaked}"
    return task, ""


def _joined(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else "; ".join(parts[:-1]) + "; and " + parts[-1]


def _field_change(created: dict[str, str], row: dict[str, str], goals: list[Task], url: str) -> tuple[str, str, list[GoldStep]] | None:
    """A field the create goal leaves alone set, on the new record's page ``url``, to a real option the new record has not got.

    An edit goal's own change comes first; else any choice field of the record form that an edit or comment goal saw
    (its gold up to its first field action, that field's selection, its submit click).
    """
    def fits(field: str, value: str) -> bool:
        return field not in created and field in row and row[field].strip().lower() != value.strip().lower()

    for edit in goals:
        for field, value in edit.quality["change"].get("values", {}).items():
            if fits(field, value):
                return field, value, [s for s in _on_page(edit, url) if s.action != "select_option" or s.text == value]
    for task in goals:
        for field, seen in sorted(task.quality["change"].get("fields", {}).items()):
            value = next((o for o in seen["options"] if fits(field, o)), None)
            if value is None:
                continue
            steps = _on_page(task, url)
            first = next((i for i, s in enumerate(steps) if s.action not in ("navigate", "click")), len(steps) - 1)
            pick = GoldStep(action="select_option", selector=seen["selector"], text=value, node_id=seen["node_id"])
            return field, value, [*steps[:first], pick, steps[-1]]
    return None


def _levels(
    kg: KnowledgeGraph, create: Task, comment: Task, edits: list[Task], other: Task | None, made: NewRecord, chain_id: str, seed: int, app: dict[str, str]
) -> list[Task | None]:
    """The composite of each level 1..4 (None where no goal supplies that level's step).

    ``app``: the create goal's fields the application changes on its own after a later step; from level 2 on, the
    composite's end checks leave them out (the first subtask's checks, watched during the episode, still hold them).
    """
    url, number, row = made.url, made.number, made.row
    goal, noun = create.quality["change"], str(comment.quality["change"].get("noun") or "record")
    text = comment.quality["change"]["text"]
    parts: list[tuple[str, list[GoldStep], list[SuccessCriterion]]] = [
        (create.instruction.rstrip("."), list(create.gold_steps), list(create.success)),
        (f"add the comment “{text}” to it", _on_page(comment, url), [_criterion({"source": url, "text": text, "count": 1})]),
    ]
    picked = _field_change(goal["values"], row, [*edits, comment], url)
    if picked is not None:  # a field the new record has not got that value in, which the create goal leaves alone
        field, value, steps = picked
        parts.append((f"set its {field} to “{value}”", steps, [_criterion({"source": made.sources[field], "key": goal["key"], "fields": {field: value}, "count": 1})]))
    if other is not None and len(parts) == 3:
        sentence, target = LINK_TEXT.format(number=number), other.quality["change"]["record"]
        title = next(iter(other.quality["change"]["key"].values()))
        ask = f"on the {noun} “{title}”, add a comment that reads “{LINK_TEXT.format(number='N')}”, where N is the number your new {noun} was given"
        parts.append((ask, _on_page(comment, target, sentence), [_criterion({"source": target, "text": sentence, "count": 1})]))  # the comment goal's steps, on that record
    out: list[Task | None] = []
    for level in range(1, 5):
        if level > len(parts):
            out.append(None)
            continue
        chosen = parts[:level]
        instruction = chosen[0][0] + "." + (f" Then {_joined([p[0] for p in chosen[1:]])}." if level > 1 else "")
        ids = [f"s{i}" for i in range(1, level + 1)]
        subtasks = [Subtask(id=i, instruction=p[0], category="application", gold_steps=p[1], checks=p[2]) for i, p in zip(ids, chosen)]
        out.append(Task(
            id=f"chain-{chain_id}-l{level}",
            kind="composite",
            type="chained",
            difficulty=level_difficulty(level),
            instruction=instruction,
            start_url=create.start_url,
            allowed_domains=create.allowed_domains or [urlparse(create.start_url or "").hostname or ""],
            gold_steps=[s for p in chosen for s in p[1]],
            success=[c for p in chosen for c in (settled(p[2], app) if p is parts[0] and level > 1 else p[2])],
            subtasks=subtasks,
            dag=[(ids[i], ids[i + 1]) for i in range(level - 1)],
            level=level,
            provenance=Provenance(graph_id=kg.id, template="state-chain", generator="compose-chain", model="none", seed=seed),
            quality={"flow": {"chain": chain_id, "hidden": [url, number], "steps": [p[0] for p in chosen], **({"app_changed": app} if app and level > 1 else {})}},
        ))
    return out
