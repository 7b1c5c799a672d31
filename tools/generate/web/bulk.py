"""Change every record that meets a condition (issue 33): bulk goals on an application's edit form.

Read from what the crawl observed, never from a site's names (the record page, its edit
form and the list export are an :class:`~.edit.EditForm`'s):

- **The whole table.** A bulk goal is only made when the exports are shown to list every
  record: their id column holds every id from 1 to the number of rows, each once, and the
  record page of the next id is not found (HTTP 4xx). Two shapes are tried: the plan's list
  export, widened when its URL names its columns in one comma-separated parameter (the
  form's selects appended, kept only when the answer has the new columns and the same ids);
  and a *family* of export links the crawl saw that differ only in the value of one
  parameter named like a select of the form (one export per milestone, say), whose rows
  together are the whole table. A family's export lists every record with its value; an
  option of the select no link of the family showed gets its export by the family's own URL
  with that value (a crawl cut short by its page budget may have missed its link).
- **Condition.** One or two values of the form's selects, as the exports show them
  (a family's field counts as one), matched by 2 to 4 records; a two-value condition
  that picks the same records as one of its values alone is not used.
- **Change.** A choice field of the form (a select with real options) that is not in the
  condition, shown by the export and not one of its URL's parameters (so no changed record
  leaves the export), set to an option that none of those records has and that the export
  shows for some record (so it is written as the export writes it).

The instruction states the outcome (“Every ticket whose component is “Login” and priority
“blocker” should get the milestone “Release 1.1”.”; a status set to a closing value reads
as closing). The gold opens each record's page, shows the form when it is folded, chooses
the option and commits. The check is a ``record`` criterion on the export holding the
condition's records: exactly N rows meet the condition's columns, each with the new value,
the row count as it was, every other row as it was; each other export of a family must be
entirely as it was. A record missed, one outside the condition changed, or one moved out of
the condition fails. Every goal is replayed in a fresh copy of the state before it is kept.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlparse, urlunparse

import httpx
import numpy as np

from ...evaluate.appstate import column_key, parse_rows, rows_digest
from ...graph.model import KnowledgeGraph, Node
from ...tasks.model import GoldStep, SuccessCriterion, Task
from .create import Export, _field_label, _options
from .edit import EditForm, _id_column, _is_export

__all__ = ["Bulk", "Part", "bulk_candidates", "ids_complete", "bulk_tasks"]

_WORD = re.compile(r"^[a-z][a-z_]*$")  # a field named by a plain word (not ``@note``): one an export may show as a column
_CLOSING_FIELD = re.compile(r"^(?:status|state)$", re.I)
_CLOSING_VALUE = re.compile(r"^(?:closed?|resolved|done|finished|completed?)$", re.I)
_PHRASES = (
    "Every {noun} whose {condition} should get the {target} “{value}”.",
    "Give every {noun} whose {condition} the {target} “{value}”.",
    "The {target} of every {noun} whose {condition} should become “{value}”.",
)
_CLOSING = "Close every {noun} whose {condition}: its {target} should become “{value}”."


@dataclass(frozen=True)
class Bulk:
    """A bulk change: the records meeting ``condition`` (column → value as shown) get ``target`` = ``value``; ``ids`` are theirs."""

    condition: tuple[tuple[str, str], ...]
    target: str
    value: str
    ids: tuple[str, ...]


@dataclass
class Part:
    """One export of a whole table: the records it lists (all, or those whose ``field`` is ``value``) and its id column."""

    export: Export
    id_column: str
    field: str | None = None
    value: str | None = None


def _norm(text: str) -> str:
    return " ".join((text or "").split()).lower()


def _holds(cell: str, value: str) -> bool:
    """Whether ``cell`` is ``value`` or lists it among others (``a;b``, ``a, b``)."""
    return _norm(cell) == _norm(value) or _norm(value) in {_norm(x) for x in re.split(r"[;,]", cell)}


def ids_complete(ids: list[str]) -> bool:
    """Whether ``ids`` are exactly the whole numbers 1 to ``len(ids)``, each once.

    >>> ids_complete(["3", "1", "2"]), ids_complete(["1", "3"]), ids_complete(["1", "1"]), ids_complete([])
    (True, False, False, False)
    """
    return bool(ids) and all(i.isdigit() for i in ids) and sorted(int(i) for i in ids) == list(range(1, len(ids) + 1))


def bulk_candidates(rows: list[dict[str, str]], id_column: str, conditional: list[str], targets: dict[str, list[str]],
                    shown: dict[str, set[str]], fixed: dict[str, str] | None = None, low: int = 2, high: int = 4) -> list[Bulk]:
    """Every bulk change the rows allow (see the module notes), in a stable order.

    ``conditional``: the columns a condition may use; ``targets``: the choice fields a goal
    may set, with their options; ``shown``: the values (normalised) each target column shows
    anywhere in the table; ``fixed``: the value every row has already (a family's field),
    part of each condition.

    >>> rows = [{"id": str(i), "c": c, "p": p} for i, (c, p) in enumerate(["ab", "ab", "ax", "bx", "bb", "by", "bb"], 1)]
    >>> found = bulk_candidates(rows, "id", ["c", "p"], {"p": ["a", "b", "x", "y"]}, {"p": {"a", "b", "x", "y"}})
    >>> [(dict(b.condition), b.value, b.ids) for b in found]
    [({'c': 'b'}, 'a', ('4', '5', '6', '7')), ({'c': 'a'}, 'a', ('1', '2', '3')), ({'c': 'a'}, 'y', ('1', '2', '3'))]
    >>> [(dict(b.condition), b.target, b.value) for b in bulk_candidates(rows, "id", ["p"], {"c": ["a", "b", "z"]}, {"c": {"a", "b", "z"}}, {"m": "1"})]
    [({'m': '1', 'p': 'b'}, 'c', 'z'), ({'m': '1', 'p': 'x'}, 'c', 'z')]

    A value that another record holds among others (``kiosk;print``) is no condition: “whose k is kiosk” would name it too.

    >>> rows = [{"id": "1", "k": "kiosk", "p": "x"}, {"id": "2", "k": "kiosk", "p": "x"}, {"id": "3", "k": "kiosk;print", "p": "y"}, {"id": "4", "k": "mail", "p": "y"}, {"id": "5", "k": "mail", "p": "y"}]
    >>> [(dict(b.condition), b.value) for b in bulk_candidates(rows + [{"id": "6", "k": "kiosk;print", "p": "y"}], "id", ["k"], {"p": ["x", "y"]}, {"p": {"x", "y"}})]
    [({'k': 'mail'}, 'x')]
    """
    fixed = fixed or {}
    free = [c for c in conditional if c not in fixed]
    found: list[Bulk] = []
    groups: dict[tuple[tuple[str, str], ...], list[dict[str, str]]] = {}
    for size in range(0 if fixed else 1, 3 - len(fixed)):
        for columns in itertools.combinations(free, size):
            for row in rows:
                values = tuple(row.get(c, "").strip() for c in columns)
                if all(v and len(re.split(r"[;,]", v)) == 1 for v in values):  # one value each, not a list
                    groups.setdefault(tuple(zip(columns, values)), []).append(row)
    for condition, matched in groups.items():
        if not low <= len(matched) <= high:
            continue
        if len(condition) == 2 and any(len(groups.get((pair,), [])) == len(matched) for pair in condition):
            continue  # the same records as one of its values alone
        if sum(all(_holds(r.get(c, ""), v) for c, v in condition) for r in rows) != len(matched):
            continue  # other records hold the value among others
        for target, options in targets.items():
            if target in dict(condition) or target in fixed:
                continue
            have = {_norm(r.get(target, "")) for r in matched}
            for option in options:
                if _norm(option) not in have and _norm(option) in shown.get(target, set()):
                    found.append(Bulk(tuple(fixed.items()) + condition, target, option, tuple(r[id_column] for r in matched)))
    return sorted(found, key=lambda b: (-len(b.ids), [(k, _norm(v)) for k, v in b.condition], b.target, _norm(b.value)))


async def _fetch(client: httpx.AsyncClient, url: str) -> list[dict[str, str]]:
    try:
        response = await client.get(url)
    except httpx.HTTPError:
        return []
    return parse_rows(response.text) if response.status_code == 200 and "html" not in response.headers.get("content-type", "") else []


def _widened(url: str, columns: list[str], extra: list[str]) -> str | None:
    """``url`` with ``extra`` added to the one parameter that lists the export's columns (comma-separated); None when there is none.

    >>> _widened("http://h/i?@columns=id,title&x=1", ["id", "title"], ["priority"])
    'http://h/i?%40columns=id%2Ctitle%2Cpriority&x=1'
    """
    parts = urlparse(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    hits = [i for i, (_, v) in enumerate(pairs) if "," in v and {column_key(c) for c in v.split(",")} == set(columns)]
    add = [e for e in extra if column_key(e) not in columns]
    if len(hits) != 1 or not add:
        return None
    name, value = pairs[hits[0]]
    pairs[hits[0]] = (name, ",".join([value, *add]))
    return urlunparse(parts._replace(query=urlencode(pairs)))


def _families(kg: KnowledgeGraph, labels: set[str]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Export links that differ only in the value of one parameter named like a select of the form: (its label, [(value, url)])."""
    hosts = {urlparse(str(n.attrs["url"])).netloc for n in kg.nodes("page")}
    urls = sorted({str(n.attrs["href"]) for n in kg.nodes("link") if n.attrs.get("href") and _is_export(n) and urlparse(str(n.attrs["href"])).netloc in hosts})
    groups: dict[tuple[str, str, tuple[tuple[str, str], ...]], dict[str, str]] = {}
    for url in urls:
        parts = urlparse(url)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        names = [k for k, _ in pairs]
        for k, v in pairs:
            if column_key(k) in labels and names.count(k) == 1 and v:
                rest = tuple(sorted((a, b) for a, b in pairs if a != k))
                groups.setdefault((parts.path, column_key(k), rest), {})[v] = url
    found = [(label, sorted(values.items())) for (_, label, _), values in groups.items() if len(values) >= 2]
    return sorted(found, key=lambda f: (-len(f[1]), f[1][0][1]))


def _completed(label: str, members: list[tuple[str, str]], options: list[str]) -> list[tuple[str, str]]:
    """The family's (value, url) pairs with one more per option no member has: the first member's URL with that value in the family's parameter.

    >>> _completed("milestone", [("1.0", "http://h/q?milestone=1.0&format=csv")], ["1.0", "Some day"])
    [('1.0', 'http://h/q?milestone=1.0&format=csv'), ('Some day', 'http://h/q?milestone=Some+day&format=csv')]
    """
    have = {_norm(v) for v, _ in members}
    parts = urlparse(members[0][1])
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    more = [(o, urlunparse(parts._replace(query=urlencode([(k, o if column_key(k) == label else v) for k, v in pairs])))) for o in options if _norm(o) not in have]
    return sorted(members + more)


async def _absent(client: httpx.AsyncClient, plan: EditForm, record_id: int) -> bool:
    try:
        response = await client.get(plan.page_template.replace("{id}", str(record_id)))
    except httpx.HTTPError:
        return False
    return 400 <= response.status_code < 500


def _same_records(rows: list[dict[str, str]], id_column: str, plan: EditForm) -> bool:
    """Whether ``rows`` name records by the plan's ids: every id the plan's listing also has names the same record there."""
    known = {r[plan.id_column]: _norm(r.get(plan.key, "")) for r in plan.listing.rows}
    common = [r for r in rows if r.get(id_column) in known]
    return bool(common) and all(_norm(r.get(plan.key, "")) == known[r[id_column]] for r in common)


async def _whole_table(client: httpx.AsyncClient, kg: KnowledgeGraph, plan: EditForm, named: dict[str, Node], report: dict[str, Any]) -> list[Part] | None:
    """Exports shown to list every record (see the module notes), or None with the reasons in ``report``; ``named``: the form's fields by label."""
    selects = {label: f for label, f in named.items() if f.type.value == "select"}
    why: list[str] = report.setdefault("bulk_not_whole", [])

    async def proven(parts: list[Part]) -> bool:
        ids = [r[p.id_column] for p in parts for r in p.export.rows]
        name = " + ".join(p.export.url for p in parts)
        if not ids_complete(ids):
            why.append(f"{name}: its ids are not 1 to {len(ids)} each once")
        elif not await _absent(client, plan, len(ids) + 1):
            why.append(f"{name}: the page of record {len(ids) + 1} exists")
        else:
            return True
        return False

    wide = _widened(plan.listing.url, plan.listing.columns, [str(f.attrs.get("field_name") or label) for label, f in named.items() if label != plan.key])
    rows = await _fetch(client, wide) if wide is not None else []
    same = bool(rows) and {r.get(plan.id_column) for r in rows} == {r.get(plan.id_column) for r in plan.listing.rows}
    if wide is not None and not same:
        why.append(f"{wide}: the widened export does not list the same records")
    whole = [Part(Export(str(wide), list(rows[0]), rows), plan.id_column)] if same else [Part(plan.listing, plan.id_column)]
    if await proven(whole):  # the widened export has the plan's listing's ids: one proof for both
        return whole
    for label, members in _families(kg, set(selects))[:3]:
        options = _options(selects[label])
        if not all(_norm(v) in {_norm(o) for o in options} for v, _ in members):
            continue
        members = _completed(label, members, options)
        parts: list[Part] = []
        for value, url in members:
            rows = await _fetch(client, url)
            if not rows:
                continue  # no record has this value, or the export failed: the whole-table proof below holds or fails either way
            id_column = _id_column(Export(url, list(rows[0]), rows), plan.key)
            if id_column is None or not _same_records(rows, id_column, plan) or any(_norm(r.get(label, value)) != _norm(value) for r in rows):
                break  # not the plan's records, or a row whose field is not the export's value
            parts.append(Part(Export(url, list(rows[0]), rows), id_column, label, value))
        else:
            if await proven(parts):
                return parts
    return None


def _criterion(value: dict[str, Any]) -> SuccessCriterion:
    return SuccessCriterion(kind="record", value=json.dumps(value, ensure_ascii=False, sort_keys=True))


def _checks(parts: list[Part], main: Part, bulk: Bulk) -> list[SuccessCriterion]:
    """The export holding the records: N rows meet the condition with the new value, all else as it was; each other part as it was."""
    key = {k: v for k, v in bulk.condition if k != main.field}
    rows = main.export.rows
    found = [_criterion({"source": main.export.url, "key": key, "fields": {bulk.target: bulk.value}, "count": len(bulk.ids), "total": len(rows), "others": rows_digest(rows, key)})]
    for part in parts:
        if part is not main:  # no record has an empty id: every row of the export is checked as it was
            none = {part.id_column: ""}
            found.append(_criterion({"source": part.export.url, "key": none, "fields": {}, "count": 0, "total": len(part.export.rows), "others": rows_digest(part.export.rows, none)}))
    return found


def _instruction(noun: str, bulk: Bulk, phrase: int) -> str:
    """The goal in words, in the ``phrase``-th wording (a closing value of a status reads as closing).

    >>> _instruction("issue", Bulk((("assignedto", "agnes"), ("priority", "bug")), "status", "resolved", ("1", "2")), 0)
    'Close every issue whose assignedto is “agnes” and priority “bug”: its status should become “resolved”.'
    >>> _instruction("ticket", Bulk((("component", "Login"),), "milestone", "1.1", ("1", "2")), 4)
    'Give every ticket whose component is “Login” the milestone “1.1”.'
    """
    (first, value), *more = bulk.condition
    condition = " and ".join([f"{first} is “{value}”", *(f"{k} “{v}”" for k, v in more)])
    closing = _CLOSING_FIELD.match(bulk.target) and _CLOSING_VALUE.match(bulk.value.strip())
    wording = _CLOSING if closing else _PHRASES[phrase % len(_PHRASES)]
    return wording.format(noun=noun, condition=condition, target=bulk.target, value=bulk.value)


async def bulk_tasks(kg: KnowledgeGraph, plan: EditForm, seed: int, count: int, home: str, make: Any, report: dict[str, Any]) -> list[Task]:
    """Up to ``count`` bulk goals on ``plan``'s records (see the module notes), starting at ``home``; ``make`` builds the task."""
    rng = np.random.default_rng([seed, int(hashlib.sha1(f"{kg.id}|{urlparse(plan.page_template).path}|bulk".encode()).hexdigest()[:8], 16)])
    fillers = [kg.node(e.source) for e in kg.edges_into(plan.form.id, "fills")]
    named = {_field_label(f): f for f in fillers if f.type.value in ("select", "input") and _WORD.match(_field_label(f))}
    choices = {_field_label(c): c for c in plan.choices}
    async with httpx.AsyncClient(timeout=15.0, follow_redirects=False) as client:
        parts = await _whole_table(client, kg, plan, named, report)
    report.setdefault("bulk_tasks", 0)
    if parts is None:
        return []
    shown: dict[str, set[str]] = {}
    for part in parts:
        for row in part.export.rows:
            for column, value in row.items():
                shown.setdefault(column, set()).add(_norm(value))
    found: list[tuple[Part, Bulk]] = []
    for part in parts:
        filters = {column_key(k) for k, _ in parse_qsl(urlparse(part.export.url).query)}
        conditional = [c for c in part.export.columns if c in named and c not in (plan.key, part.id_column)]
        targets = {label: _options(c) for label, c in choices.items() if label in part.export.columns and label not in filters}
        fixed = {part.field: part.value} if part.field and part.value else None
        found += [(part, b) for b in bulk_candidates(part.export.rows, part.id_column, conditional, targets, shown, fixed)]
    order = [found[int(i)] for i in rng.permutation(len(found))]
    picked: list[tuple[Part, Bulk]] = []
    for part, bulk in order:  # distinct conditions first, then distinct changes
        if len(picked) < count and all(b.condition != bulk.condition for _, b in picked):
            picked.append((part, bulk))
    for part, bulk in order:
        if len(picked) < count and all((b.condition, b.target) != (bulk.condition, bulk.target) for _, b in picked):
            picked.append((part, bulk))
    fields = {label: {"selector": str(c.attrs["selector"]), "node_id": c.id, "options": _options(c)} for label, c in choices.items()}
    tasks: list[Task] = []
    first = int(rng.integers(len(_PHRASES)))
    for n, (part, bulk) in enumerate(picked):  # each goal worded differently
        choice = choices[bulk.target]
        steps: list[GoldStep] = []
        records = []
        for record_id in sorted(bulk.ids, key=int):
            url = plan.page_template.replace("{id}", record_id)
            records.append(url)
            steps.append(GoldStep(action="navigate", text=url))
            if plan.reveal is not None:
                steps.append(GoldStep(action="click", selector=str(plan.reveal.attrs["selector"]), node_id=plan.reveal.id))
            steps.append(GoldStep(action="select_option", selector=str(choice.attrs["selector"]), text=bulk.value, node_id=choice.id))
            steps.append(GoldStep(action="click", selector=str(plan.submit.attrs["selector"]), node_id=plan.submit.id))
        before = {r[part.id_column]: r.get(bulk.target, "") for r in part.export.rows if r[part.id_column] in bulk.ids}
        goal = {"kind": "bulk", "noun": plan.noun, "condition": dict(bulk.condition), "values": {bulk.target: bulk.value}, "ids": sorted(bulk.ids, key=int),
                "records": records, "before": before, "listing": part.export.url, "exports": [p.export.url for p in parts], "fields": fields}
        tasks.append(make(kg, seed, json.dumps(goal, sort_keys=True), _instruction(plan.noun, bulk, first + n), home, steps, _checks(parts, part, bulk), goal))
    report["bulk_tasks"] += len(tasks)
    report["bulk_candidates"] = report.get("bulk_candidates", 0) + len(found)
    return tasks
