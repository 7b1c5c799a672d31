"""Create a record (issue 33): goals to add a record with given field values to an application that keeps state.

Read from what the crawl observed, never from a site's names:

- **Create forms.** A POST form seen on a page whose query sets none of its fields (a
  blank form, not one pre-filled from the URL) with a submit button whose first word
  creates (create, add, new, file, submit, save, post, register; a second button such as
  *Preview*, or one that submits *changes* or *edits*, is not the one used), a text input
  that names the record (labelled title, summary, subject or name; a field without a
  label goes by its HTML name), and selects with real options (placeholders such as
  ``(unset)``, ``--``, *none* or *any* are skipped). The record's noun is the button's
  (*Create ticket*), or, when the button names none or a generic one (*Submit New
  Entry*), the page title's (*New Issue*).
- **Exports.** Links the crawl saw that offer CSV or tab-separated text (by their text or
  URL); each is fetched once (a GET) to read its columns and rows.

A goal names the record by a new title and sets one to three select fields whose labels
are columns of an export that lists records by that title (an export filtered on a form
field only when the goal sets it to a value the export shows). The gold also sets the
form's other selects that start at a placeholder to their first real option (the
application may require them; the goal leaves them free and never checks them). The check
is a ``record`` criterion per export needed (:mod:`taskloom.tools.evaluate.appstate`): after the episode the
export holds exactly one row with the title, with those values, and the first export
lists exactly one row more than it did when the task was made (nothing else added). The
state the goal was made on must be the state each episode starts from (an application
reset per episode, see :class:`taskloom.tools.environment.appstate.StateFolder`); the
gold replay in a fresh copy of the state verifies it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlparse

import httpx
import numpy as np

from ...evaluate.appstate import column_key, parse_rows
from ...graph.model import KnowledgeGraph, Node
from ...tasks.model import GoldStep, SuccessCriterion, Task

__all__ = ["CreateForm", "Export", "create_forms", "read_exports", "create_tasks", "TITLES"]

_CREATE_VERB = re.compile(r"^(?:create|add|new|file|submit|save|post|register)\b", re.I)
_NOT_COMMIT = re.compile(r"\b(?:preview|cancel|reset|back|search|filter|update|delete|remove|changes?|edit)\b", re.I)
_KEY_LABEL = re.compile(r"^(?:title|summary|subject|name|short description)$", re.I)
_GENERIC_NOUN = re.compile(r"^(?:|entry|record|item|form|data|it)$", re.I)
#: A page title naming what its form creates: "New Issue - Tracker", "Create a contact | CRM".
_TITLE_NOUN = re.compile(r"^\s*(?:new|create|add|file)\s+(?:an?\s+|new\s+)?([a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s*(?:$|[-–—|:])", re.I)
_PLACEHOLDER = re.compile(r"^\s*$|^\(.*\)$|^-+.*-*$|^(?:none|any|all|unset|n/?a|select\b.*|choose\b.*|please\b.*)$", re.I)
#: A link offering an export: named only by the format ("CSV", "Comma-delimited Text", "Download as TSV"), or a URL whose path or a query value is the format.
_EXPORT_NAME = re.compile(r"^\s*(?:download|export)?\s*(?:as\s+|in\s+)?(?:csv|tsv|comma[- ](?:delimited|separated)|tab[- ](?:delimited|separated))(?:\s+(?:text|file|values|export))?\s*$", re.I)
_EXPORT_URL = re.compile(r"(?:\.|=)(?:csv|tsv)(?:$|&)", re.I)
#: Neutral new record titles (none is in the seeded data; a title found in an export is skipped).
TITLES = (
    "Export button ignores the chosen date range", "Profile page shows a stale photo", "Calendar invite has the wrong time zone",
    "Checkout total skips the discount code", "Help link opens an empty page", "Sorting by name puts accents last",
    "Upload progress bar stops at ninety percent", "Password rules are not shown before saving", "Printing a receipt cuts off the footer",
    "Welcome e-mail arrives twice", "Map view forgets the zoom level", "Bulk import drops the last line",
)
_PHRASES = [
    "Create a new {noun} with the {key} “{title}”{fields}.",
    "File {article} {noun} whose {key} is “{title}”{fields}.",
    "Add {article} {noun} with the {key} “{title}”{fields}.",
]


@dataclass
class CreateForm:
    """A form that creates a record: the page it is on, its naming input, its choice fields, the button that commits it, and its selects that start at a placeholder (``defaults``: label → first real option)."""

    form: Node
    page_url: str
    key: Node
    choices: list[Node]
    submit: Node
    noun: str
    defaults: dict[str, Node] = field(default_factory=dict)


@dataclass
class Export:
    """A CSV/TSV export the application offers: its URL, its columns (as :func:`column_key` gives them) and its rows."""

    url: str
    columns: list[str]
    rows: list[dict[str, str]] = field(default_factory=list)


def _label(node: Node) -> str:
    """A field's label (its accessible name) as compared."""
    return column_key(str(node.attrs.get("name") or ""))


def _field_label(node: Node) -> str:
    """A create form field's label as compared; its HTML name when it has none (a form laid out in a table without ``<label>``)."""
    return _label(node) or column_key(str(node.attrs.get("field_name") or ""))


def _pages(node: Node) -> list[str]:
    first = str(node.attrs.get("page_url") or "")
    return list(dict.fromkeys([first, *(str(p) for p in node.attrs.get("pages") or [])])) if first else []


def _blank_page(form: Node, fillers: list[Node]) -> str | None:
    """The first page the form was seen on whose query sets none of its fields (not pre-filled from the URL)."""
    names = {column_key(str(f.attrs.get(a) or "")) for f in fillers for a in ("field_name", "name")} - {""}
    for url in _pages(form):
        if "#" not in url and not {column_key(k) for k, _ in parse_qsl(urlparse(url).query, keep_blank_values=True)} & names:
            return url
    return None


def _noun(kg: KnowledgeGraph, button: str, page_url: str) -> str:
    words = button.split()
    noun = re.sub(r"^(?:a|an|the|new)\s+", "", " ".join(words[1:]).lower())
    if _GENERIC_NOUN.match(noun):
        titles = [str(p.attrs.get("title") or p.text.split("\n", 1)[0]) for p in kg.nodes("page") if p.attrs.get("url") == page_url]
        named = next((m.group(1).lower() for t in titles if (m := _TITLE_NOUN.match(t))), None)
        noun = named or noun or "record"
    return noun


def _options(node: Node) -> list[str]:
    return [str(o) for o in node.attrs.get("options") or [] if not _PLACEHOLDER.match(str(o))]


def create_forms(kg: KnowledgeGraph) -> list[CreateForm]:
    """Forms that create a record (see the module notes), one per page."""
    found: list[CreateForm] = []
    seen: set[str] = set()
    for form in kg.nodes("form"):
        if form.attrs.get("method") != "post":
            continue
        fillers = [kg.node(e.source) for e in kg.edges_into(form.id, "fills")]
        page_url = _blank_page(form, fillers)
        if page_url is None or page_url in seen:
            continue
        fillers = [f for f in fillers if page_url in _pages(f)]  # as the blank form shows them (a pre-filled copy may offer other options)
        buttons = [kg.node(e.source) for e in kg.edges_into(form.id, "controls") if page_url in _pages(kg.node(e.source))]
        submits = [b for b in buttons if b.attrs.get("input_type") in (None, "submit") and b.attrs.get("selector") and not _NOT_COMMIT.search(str(b.attrs.get("name") or ""))]
        submit = next((b for b in submits if _CREATE_VERB.match(str(b.attrs.get("name") or "").strip())), None)
        key = next((f for f in fillers if f.type.value == "input" and f.attrs.get("input_type") in (None, "text") and _KEY_LABEL.match(_field_label(f)) and f.attrs.get("selector")), None)
        choices = [f for f in fillers if f.type.value == "select" and f.attrs.get("selector") and len(_options(f)) >= 2 and _field_label(f)]
        if submit is None or key is None or not choices:
            continue
        seen.add(page_url)
        defaults = {_field_label(f): f for f in fillers if f.type.value == "select" and f.attrs.get("selector") and _field_label(f) and _options(f)
                    and _PLACEHOLDER.match(str((f.attrs.get("options") or [""])[0]))}
        found.append(CreateForm(form=form, page_url=page_url, key=key, choices=choices, submit=submit, noun=_noun(kg, str(submit.attrs.get("name") or ""), page_url), defaults=defaults))
    return found


async def read_exports(kg: KnowledgeGraph, report: dict[str, Any] | None = None, timeout: float = 15.0, limit: int = 8) -> list[Export]:
    """The CSV/TSV exports linked from crawled pages (same host as the crawl), each fetched once; those with a header and rows (the others' reasons in ``report``)."""
    skipped: list[str] = (report if report is not None else {}).setdefault("exports_skipped", [])
    hosts = {urlparse(str(n.attrs["url"])).netloc for n in kg.nodes("page")}
    urls: list[str] = []
    for link in kg.nodes("link"):
        href = str(link.attrs.get("href") or "")
        if href and urlparse(href).netloc in hosts and (_EXPORT_NAME.match(str(link.attrs.get("name") or "")) or _EXPORT_URL.search(urlparse(href).path) or _EXPORT_URL.search(urlparse(href).query)):
            if href not in urls:
                urls.append(href)
    exports: list[Export] = []
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
        for url in sorted(urls, key=lambda u: (len(parse_qsl(urlparse(u).query)), u))[:limit]:  # the least filtered first
            try:
                response = await client.get(url)
            except httpx.HTTPError as exc:
                skipped.append(f"{url}: {type(exc).__name__} {exc}")
                continue
            if response.status_code != 200 or "html" in response.headers.get("content-type", ""):
                skipped.append(f"{url}: HTTP {response.status_code} {response.headers.get('content-type', '')}")
                continue
            rows = parse_rows(response.text)
            if rows:
                exports.append(Export(url=url, columns=list(rows[0]), rows=rows))
            else:
                skipped.append(f"{url}: no rows")
    return exports


def _filters(e: Export) -> set[str]:
    return {column_key(k) for k, _ in parse_qsl(urlparse(e.url).query)}


def _norm(text: str) -> str:
    return " ".join((text or "").split()).lower()


def _may_list(e: Export, key: str, form_labels: set[str], values: dict[str, str] | None = None) -> bool:
    """Whether ``e`` lists records by ``key`` and would list the new one.

    An export filtered on a field of the form (a URL parameter named like it) lists the new
    record only if the goal sets that field to a value the export's rows show (a listing of
    the open issues shows no closed one); one filtered on the key, or on a field the goal
    leaves at its default, is never used. With ``values`` None: whether some goal could use it
    (every such filter is one of its columns). An export of one row is a record's own export
    (``/ticket/1?format=csv``), which never lists a new record.
    """
    if key not in e.columns or len(e.rows) < 2:
        return False
    for name in _filters(e) & {key, *form_labels}:
        if name == key or name not in e.columns:
            return False
        if values is not None and (name not in values or _norm(values[name]) not in {_norm(r.get(name, "")) for r in e.rows}):
            return False
    return True


def _plan_exports(exports: list[Export], key: str, values: dict[str, str], form_labels: set[str]) -> list[Export]:
    """The broadest export that would list the new record by ``key`` (:func:`_may_list`), then others covering the fields it lacks."""
    keyed = sorted((e for e in exports if _may_list(e, key, form_labels, values)), key=lambda e: (-len(e.rows), len(_filters(e)), e.url))
    if not keyed:
        return []
    chosen = [keyed[0]]
    for label in values:
        if not any(label in e.columns for e in chosen):
            extra = next((e for e in keyed if label in e.columns), None)
            if extra is not None:
                chosen.append(extra)
    return chosen


def create_tasks(kg: KnowledgeGraph, exports: list[Export], seed: int, count: int, home: str, make: Any) -> tuple[list[Task], dict[str, Any]]:
    """Up to ``count`` create goals per create form; ``make`` builds the task (the change family's ``_task``)."""
    tasks: list[Task] = []
    report: dict[str, Any] = {"create_forms": 0, "exports": len(exports)}
    taken = {_norm(v) for e in exports for r in e.rows for v in r.values()}
    for plan in create_forms(kg):
        key = _field_label(plan.key)
        form_labels = {_field_label(c) for c in plan.choices} | set(plan.defaults)
        usable = [e for e in exports if _may_list(e, key, form_labels)]
        coverable = [c for c in plan.choices if any(_field_label(c) in e.columns for e in usable)]
        if not coverable:
            report.setdefault("create_forms_without_export", []).append(plan.page_url)
            continue
        report["create_forms"] += 1
        rng = np.random.default_rng([seed, int(hashlib.sha1(f"{kg.id}|{plan.page_url}".encode()).hexdigest()[:8], 16)])
        titles = [t for t in TITLES if t.lower() not in taken]
        made, n = 0, -1
        while made < count and titles:  # a goal no export would show is skipped, and the next title tried
            n += 1
            title = titles[int(rng.integers(len(titles)))]
            titles.remove(title)
            picked = [coverable[int(i)] for i in sorted(rng.choice(len(coverable), size=min(len(coverable), 1 + n % 3), replace=False))]
            values = {_field_label(c): _options(c)[int(rng.integers(len(_options(c))))] for c in picked}
            steps = [GoldStep(action="navigate", text=plan.page_url), GoldStep(action="type", selector=plan.key.attrs["selector"], text=title, node_id=plan.key.id)]
            steps += [GoldStep(action="select_option", selector=c.attrs["selector"], text=values[_field_label(c)], node_id=c.id) for c in picked]
            steps += [GoldStep(action="select_option", selector=d.attrs["selector"], text=_options(d)[0], node_id=d.id) for label, d in plan.defaults.items() if label not in values]
            steps.append(GoldStep(action="click", selector=plan.submit.attrs["selector"], node_id=plan.submit.id))
            success: list[SuccessCriterion] = []
            planned = _plan_exports(exports, key, values, form_labels)
            if not planned:
                continue
            for i, export in enumerate(planned):
                fields = {k: v for k, v in values.items() if k in export.columns}
                check = {"source": export.url, "key": {key: title}, "fields": fields, "count": 1, "total": len(export.rows) + 1 if i == 0 else None}
                success.append(SuccessCriterion(kind="record", value=json.dumps(check, ensure_ascii=False, sort_keys=True)))
            if not all(any(k in json.loads(c.value)["fields"] for c in success) for k in values):
                continue  # a field no export shows could not be checked
            words = [f"{k} “{v}”" for k, v in values.items()]
            listed = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
            phrase = _PHRASES[int(rng.integers(len(_PHRASES)))]
            article = "an" if plan.noun[:1] in "aeiou" else "a"
            instruction = phrase.format(noun=plan.noun, article=article, key=key, title=title, fields=f", {listed}")
            goal = {"kind": "create", "form": plan.page_url, "key": {key: title}, "values": values, "exports": [json.loads(c.value)["source"] for c in success]}
            tasks.append(make(kg, seed, json.dumps(goal, sort_keys=True), instruction, home, steps, success, goal))
            made += 1
    report["create_tasks"] = len(tasks)
    return tasks, report
