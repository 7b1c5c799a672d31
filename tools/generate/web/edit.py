"""Edit and comment on a record (issue 33): goals that change a record an application already holds.

Read from what the crawl observed, never from a site's names:

- **Edit forms.** A POST form on a record's page (a page whose path holds the record's
  id, as a list export's id column gives it) with a commit button (submit, save, update,
  apply, change), choice fields (selects with real options) and, when it has one, a
  comment box (a text field named or labelled comment, note, reply or message). The one
  page the crawl saw stands for every record: its URL with another id is that record's
  page, and an export linked from it (CSV/TSV of the record itself) is that record's export.
- **Records.** Rows of the broadest list export whose title (the create form's naming
  column, else a title-like column) no other row has. Each record's own export is read
  once at generation: it must name the same record (a second route to the record and
  its current values), or the record is not used.

Goals:

- **edit**: set one or two choice fields of the record named by its title to other real
  options. Checked on the record's export (exactly one row with the title, every field
  as it was except the ones asked for; date-time columns are left out, the application
  stamps them) and on the list export (the row has the new values; every other row is as
  it was: a wrong record edited or a second change fails).
- **comment**: add a given sentence as a comment. Checked on the record's page (the
  sentence appears exactly once), on the record's export (no field changed) and on the
  list export (every other row as it was).

When the form's fields are hidden until something on the page is clicked (a folded
editor), a fresh browser finds the same-page link that shows them (:func:`probe_reveal`)
and the gold clicks it first. Every goal is replayed in a fresh copy of the application's
state before it is kept, like every change goal.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse, urlunparse

import httpx
import numpy as np
from playwright.async_api import Error as PlaywrightError

from ...browser.pool import BrowserPool
from ...evaluate.appstate import parse_rows, rows_digest
from ...graph.model import KnowledgeGraph, Node
from ...tasks.model import GoldStep, SuccessCriterion, Task
from .create import _EXPORT_NAME, _EXPORT_URL, _KEY_LABEL, Export, _field_label, _options, create_forms

__all__ = ["EditForm", "edit_forms", "probe_reveal", "edit_tasks", "COMMENTS"]

_COMMIT = re.compile(r"^(?:submit|save|update|apply|change|modify)\b", re.I)
_NOT_COMMIT = re.compile(r"\b(?:preview|cancel|reset|back|search|filter|delete|remove)\b", re.I)
_COMMENT = re.compile(r"\b(?:comment|note|reply|message)\b", re.I)
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}|$)")
#: Neutral comments (none is in the seeded data; one found on the record's page makes the goal a no-op, which is dropped).
COMMENTS = (
    "Seen again after the latest update.", "Could not reproduce this on a clean profile.", "Happens only right after signing in.",
    "The workaround from the support desk helps for now.", "Still happening after clearing the cache.", "A customer reported the same thing today.",
)
_EDIT_PHRASES = (
    "On the {noun} “{title}”, set {moves}.",
    "The {noun} “{title}” needs a change: its {state}.",
    "Update the {noun} titled “{title}”: its {state}.",
)
_COMMENT_PHRASES = (
    "Add the comment “{text}” to the {noun} “{title}”.",
    "Comment on the {noun} “{title}” with: “{text}”",
    "Leave a comment saying “{text}” on the {noun} titled “{title}”.",
)


@dataclass
class EditForm:
    """A form that edits one record, read from the one record page the crawl saw, with the URL templates for every other record."""

    form: Node
    page_url: str
    page_template: str  # the record page's URL with "{id}" for the record's id
    export_template: str | None  # the record's own export, likewise
    listing: Export  # the broadest list export naming records by ``key``
    id_column: str
    key: str
    choices: list[Node]
    comment: Node | None
    submit: Node
    noun: str
    reveal: Node | None = None  # a same-page link that shows the form's fields (see probe_reveal)


def _id_template(url: str, value: str) -> str | None:
    """``url`` with the path segment that holds ``value`` (alone or after letters: ``/ticket/7``, ``/issue7``) as ``{id}``.

    >>> _id_template("http://h/ticket/7", "7"), _id_template("http://h/issue7", "7"), _id_template("http://h/a/17", "7")
    ('http://h/ticket/{id}', 'http://h/issue{id}', None)
    """
    parts = urlparse(url)
    segments = parts.path.split("/")
    hits = [i for i, s in enumerate(segments) if s == value or (s.endswith(value) and s[: -len(value)].isalpha())]
    if len(hits) != 1:
        return None
    segments[hits[0]] = segments[hits[0]][: -len(value)] + "{id}"
    return urlunparse(parts._replace(path="/".join(segments)))


def _is_export(link: Node) -> bool:
    href = urlparse(str(link.attrs.get("href") or ""))
    return bool(_EXPORT_NAME.match(str(link.attrs.get("name") or "")) or _EXPORT_URL.search(href.path) or _EXPORT_URL.search(href.query))


def _id_column(listing: Export, key: str) -> str | None:
    """A column of whole numbers that no two rows share: the records' ids."""
    for column in listing.columns:
        values = [r.get(column, "") for r in listing.rows]
        if column != key and values and all(v.isdigit() for v in values) and len(set(values)) == len(values):
            return column
    return None


def edit_forms(kg: KnowledgeGraph, exports: list[Export]) -> list[EditForm]:
    """Forms that edit a record (see the module notes), one per record-page template."""
    keys = [_field_label(f.key) for f in create_forms(kg)]
    nouns = {_field_label(f.key): f.noun for f in create_forms(kg)}
    found: list[EditForm] = []
    seen: set[str] = set()
    for form in kg.nodes("form"):
        page_url = str(form.attrs.get("page_url") or "")
        if form.attrs.get("method") != "post" or not page_url or urlparse(page_url).query:
            continue
        fillers = [kg.node(e.source) for e in kg.edges_into(form.id, "fills")]
        buttons = [kg.node(e.source) for e in kg.edges_into(form.id, "controls")]
        submit = next((b for b in buttons if b.attrs.get("input_type") in (None, "submit") and b.attrs.get("selector")
                       and _COMMIT.match(str(b.attrs.get("name") or "").strip()) and not _NOT_COMMIT.search(str(b.attrs.get("name") or ""))), None)
        choices = [f for f in fillers if f.type.value == "select" and f.attrs.get("selector") and len(_options(f)) >= 2 and _field_label(f)]
        comment = next((f for f in fillers if f.type.value == "input" and f.attrs.get("input_type") in (None, "text", "textarea") and f.attrs.get("selector")
                        and (_COMMENT.search(str(f.attrs.get("field_name") or "")) or _COMMENT.search(_field_label(f)))), None)
        if submit is None or not (choices or comment):
            continue
        for listing in sorted(exports, key=lambda e: (-len(e.rows), e.url)):
            key = next((k for k in keys if k in listing.columns), None) or next((c for c in listing.columns if _KEY_LABEL.match(c)), None)
            id_column = _id_column(listing, key) if key else None
            if key is None or id_column is None:
                continue
            matched = [(r, t) for r in listing.rows if (t := _id_template(page_url, r[id_column])) is not None]
            if len(matched) != 1 or matched[0][1] in seen:
                continue
            row, template = matched[0]
            own = [str(n.attrs["href"]) for n in kg.nodes("link") if n.attrs.get("page_url") == page_url and _is_export(n)
                   and urlparse(str(n.attrs["href"])).path == urlparse(page_url).path]
            export = _id_template(min(own, key=lambda u: ("csv" not in u.lower(), u)), row[id_column]) if own else None
            seen.add(template)
            found.append(EditForm(form, page_url, template, export, listing, id_column, key, choices, comment, submit, nouns.get(key, "record")))
            break
    return found


async def probe_reveal(pool: BrowserPool, kg: KnowledgeGraph, plan: EditForm) -> bool:
    """Whether the form's fields can be shown in a fresh browser: visible at once, or after a same-page link (then ``plan.reveal``)."""
    needed = [n.attrs["selector"] for n in (*plan.choices, *([plan.comment] if plan.comment else []), plan.submit)]
    links = [n for n in kg.nodes("link") if n.attrs.get("page_url") == plan.page_url and n.attrs.get("selector")
             and str(n.attrs.get("href") or "").startswith(plan.page_url + "#")]
    guarded = await pool.new_context()
    try:
        page = await guarded.context.new_page()
        for trigger in [None, *links]:
            try:
                await page.goto(plan.page_url, wait_until="load")
                if trigger is not None:
                    await page.locator(str(trigger.attrs["selector"])).first.click(timeout=3_000)
                if all([await page.locator(str(s)).first.is_visible() for s in needed]):
                    plan.reveal = trigger
                    return True
            except PlaywrightError:
                continue
        return False
    finally:
        await guarded.context.close()


async def _record_row(client: httpx.AsyncClient, url: str, key: str, title: str) -> dict[str, str] | None:
    """The one row of a record's own export, when it names the record ``title``; else None."""
    try:
        response = await client.get(url)
    except httpx.HTTPError:
        return None
    rows = parse_rows(response.text) if response.status_code == 200 and "html" not in response.headers.get("content-type", "") else []
    same = len(rows) == 1 and " ".join(rows[0].get(key, "").split()).lower() == " ".join(title.split()).lower()
    return rows[0] if same else None


def _criterion(value: dict[str, Any]) -> SuccessCriterion:
    return SuccessCriterion(kind="record", value=json.dumps(value, ensure_ascii=False, sort_keys=True))


def _listing_check(plan: EditForm, title: str, changed: dict[str, str]) -> SuccessCriterion:
    key = {plan.key: title}
    fields = {k: v for k, v in changed.items() if k in plan.listing.columns}
    return _criterion({"source": plan.listing.url, "key": key, "fields": fields, "count": 1, "total": len(plan.listing.rows), "others": rows_digest(plan.listing.rows, key)})


def _record_check(plan: EditForm, url: str | None, title: str, row: dict[str, str], changed: dict[str, str]) -> SuccessCriterion | None:
    if url is None:
        return None
    fields = {k: v for k, v in row.items() if k and not _STAMP.match(v.strip())}
    return _criterion({"source": url, "key": {plan.key: title}, "fields": {**fields, **changed}, "count": 1, "total": 1})


def _steps(plan: EditForm, url: str, actions: list[GoldStep]) -> list[GoldStep]:
    steps = [GoldStep(action="navigate", text=url)]
    if plan.reveal is not None:
        steps.append(GoldStep(action="click", selector=str(plan.reveal.attrs["selector"]), node_id=plan.reveal.id))
    return [*steps, *actions, GoldStep(action="click", selector=str(plan.submit.attrs["selector"]), node_id=plan.submit.id)]


def _joined(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _edit_instruction(phrase: str, noun: str, title: str, values: dict[str, str]) -> str:
    """An edit goal in words: the fields as moves (``the milestone to “1.1”``) or as a state (``milestone should be “1.1”``).

    >>> _edit_instruction(_EDIT_PHRASES[1], "ticket", "A", {"milestone": "1.1", "component": "Login"})
    'The ticket “A” needs a change: its milestone should be “1.1” and its component “Login”.'
    """
    moves = _joined([f"the {k} to “{v}”" for k, v in values.items()])
    items = list(values.items())
    state = _joined([f"{items[0][0]} should be “{items[0][1]}”", *(f"its {k} “{v}”" for k, v in items[1:])])
    return phrase.format(noun=noun, title=title, moves=moves, state=state)


async def edit_tasks(kg: KnowledgeGraph, plan: EditForm, seed: int, count: int, home: str, make: Any, report: dict[str, Any]) -> list[Task]:
    """Up to ``count`` edit goals and ``count`` comment goals on records of ``plan``'s listing, starting at ``home``; ``make`` builds the task."""
    rng = np.random.default_rng([seed, int(hashlib.sha1(f"{kg.id}|{plan.page_template}".encode()).hexdigest()[:8], 16)])
    titles = [" ".join(r.get(plan.key, "").split()).lower() for r in plan.listing.rows]
    rows = [r for r, t in zip(plan.listing.rows, titles) if t and titles.count(t) == 1]
    order = [rows[int(i)] for i in rng.permutation(len(rows))]
    tasks: list[Task] = []
    edits = comments = 0
    fields = {_field_label(c): {"selector": str(c.attrs["selector"]), "node_id": c.id, "options": _options(c)} for c in plan.choices}
    async with httpx.AsyncClient(timeout=15.0, follow_redirects=False) as client:
        for row in order:
            if edits >= count and comments >= count:
                break
            title, record_id = row[plan.key], row[plan.id_column]
            url = plan.page_template.replace("{id}", record_id)
            export = plan.export_template.replace("{id}", record_id) if plan.export_template else None
            current = await _record_row(client, export, plan.key, title) if export else row
            if current is None:
                report.setdefault("edit_records_skipped", []).append(f"{url}: its own export does not name {title!r}")
                continue
            labelled = [c for c in plan.choices if _field_label(c) in current]  # fields the record's export shows (not a workflow's helper select)
            if edits < count and labelled:
                picked = [labelled[int(i)] for i in sorted(rng.choice(len(labelled), size=min(len(labelled), 1 + edits % 2), replace=False))]
                changed: dict[str, str] = {}
                for choice in picked:
                    others = [o for o in _options(choice) if o.lower() != current.get(_field_label(choice), "").strip().lower()]
                    if others:
                        changed[_field_label(choice)] = others[int(rng.integers(len(others)))]
                if changed:
                    actions = [GoldStep(action="select_option", selector=str(c.attrs["selector"]), text=changed[_field_label(c)], node_id=c.id) for c in picked if _field_label(c) in changed]
                    success = [c for c in (_record_check(plan, export, title, current, changed), _listing_check(plan, title, changed)) if c is not None]
                    phrase = _EDIT_PHRASES[int(rng.integers(len(_EDIT_PHRASES)))]
                    instruction = _edit_instruction(phrase, plan.noun, title, changed)
                    goal = {"kind": "edit", "record": url, "noun": plan.noun, "key": {plan.key: title}, "values": changed, "before": {k: current.get(k, "") for k in changed}, "fields": fields}
                    tasks.append(make(kg, seed, json.dumps(goal, sort_keys=True), instruction, home, _steps(plan, url, actions), success, goal))
                    edits += 1
                    continue
            if comments < count and plan.comment is not None:
                text = COMMENTS[(comments + int(rng.integers(len(COMMENTS)))) % len(COMMENTS)]
                actions = [GoldStep(action="type", selector=str(plan.comment.attrs["selector"]), text=text, node_id=plan.comment.id)]
                mention = _criterion({"source": url, "text": text, "count": 1})
                success = [c for c in (mention, _record_check(plan, export, title, current, {}), _listing_check(plan, title, {})) if c is not None]
                phrase = _COMMENT_PHRASES[int(rng.integers(len(_COMMENT_PHRASES)))]
                goal = {"kind": "comment", "record": url, "noun": plan.noun, "key": {plan.key: title}, "text": text, "fields": fields}
                instruction = phrase.format(text=text, noun=plan.noun, title=title)
                tasks.append(make(kg, seed, json.dumps(goal, sort_keys=True), instruction, home, _steps(plan, url, actions), success, goal))
                comments += 1
    report.update(edit_tasks=edits, comment_tasks=comments)
    return tasks
