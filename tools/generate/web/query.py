"""Query consoles (change state, "fill and submit a form"): make the site show exactly the records that meet conditions.

A *query console* is a form whose text box the site itself pre-fills with a statement
that selects a whole table (``SELECT * FROM "penguins"``): database browsers offer one
when they have no filter controls, and it is the only route to a filtered view there.
The table is tied to a listing the crawl saw completely (the table's name is a segment
of the listing's URL path), and the listing's column headers are the table's columns.

A goal names a group of records by conditions (one or two categories and a threshold on
a measure) that 2 to :data:`MAX_MATCHES` records meet, and asks the site to show them
with all their fields and no others. The check is the outcome on the page, never the
statement typed: every matching record's *key* (a value no other record of the listing
has) is in the main content as whole words, and the keys of the near misses (records
that fail one condition only) are not. So any correct statement passes, typed in any
console of the site or sent in its URL, and a too-broad or a wrong one fails. Every
goal is probed in a fresh browser before it is kept (:func:`probe_query`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np
from playwright.async_api import Error as PlaywrightError

from ...browser.pool import BrowserPool
from ...graph.model import KnowledgeGraph, Node
from ...tasks.model import GoldStep, Provenance, SuccessCriterion, Task
from .compare import Cond, ListingGroups, holds
from .lookup import ListingData, is_meta_listing, listing_data, start_page, unique_key
from .phrasing import plural

__all__ = ["QueryConsole", "query_consoles", "query_goal", "query_sql", "probe_query", "query_tasks", "MAX_MATCHES"]

#: A goal names at most this many records, so each can be checked on the page.
MAX_MATCHES = 5
_NEAR_MISSES = 6
_TEMPLATE = "web-change"
_PREFILL = re.compile(r"""^\s*select\s+\*\s+from\s+(?:"([^"]+)"|`([^`]+)`|\[([^\]]+)\]|([A-Za-z_]\w*))\s*;?\s*$""", re.I)
_PHRASES = (
    "Get the site to list exactly the {group}, with all their fields.",
    "Query the data so that the page shows every field of the {group}, and of no other {noun}.",
    "Make the site display the full records of just the {group}.",
)
_MAIN_TEXT_JS = "() => (document.querySelector('main, [role=main]') || document.body).innerText"


@dataclass
class QueryConsole:
    """A form that runs a statement over ``table``, whose rows the listing ``data`` shows."""

    page_url: str
    box: Node
    submit: Node
    table: str
    data: ListingData


def _table_of(text: str) -> str | None:
    match = _PREFILL.match(text or "")
    return next((g for g in match.groups() if g), None) if match else None


def _listing_for(table: str, listings: list[ListingData]) -> ListingData | None:
    """The complete content listing whose URL path has the table's name as a segment (the largest, if several)."""
    fits = [
        d for d in listings
        if d.node.attrs.get("complete") and not is_meta_listing(d) and table in [unquote(s) for s in urlparse(str(d.node.attrs.get("url"))).path.split("/")]
    ]
    return max(fits, key=lambda d: (len(d.records), d.node.id), default=None)


def query_consoles(kg: KnowledgeGraph, skipped: list[dict[str, str]] | None = None) -> list[QueryConsole]:
    """Every query console of the graph (one per table; pages, not app states), in page order.

    A console whose table has no listing the crawl saw completely is left out, with the reason appended to ``skipped``.
    """
    listings = listing_data(kg)
    consoles: dict[str, QueryConsole] = {}
    for form in sorted(kg.nodes("form"), key=lambda n: str(n.attrs.get("page_url"))):
        page_url = str(form.attrs.get("page_url") or "")
        if not page_url or "#" in page_url or form.attrs.get("visible") is False:
            continue
        boxes = [kg.node(e.source) for e in kg.edges_into(form.id, "fills")]
        box = next((b for b in boxes if b.type.value == "input" and _table_of(b.text) and b.attrs.get("selector")), None)
        buttons = [kg.node(e.source) for e in kg.edges_into(form.id, "controls")]
        # The form's own action: a submit button that sends no name of its own (named ones export, explain, ...).
        submit = next((b for b in buttons if b.attrs.get("input_type") == "submit" and not b.attrs.get("field_name") and b.attrs.get("selector")), None)
        if box is None or submit is None:
            continue
        table = str(_table_of(box.text))
        data = _listing_for(table, listings)
        if data is None and skipped is not None and not any(s["table"] == table for s in skipped):
            seen = [d for d in listings if table in [unquote(p) for p in urlparse(str(d.node.attrs.get("url"))).path.split("/")] and not is_meta_listing(d)]
            why = "; ".join(f"{d.node.attrs.get('url')}: {d.node.attrs.get('completeness') or 'not seen completely'}" for d in seen[:2]) or "no listing of it was crawled"
            skipped.append({"console": page_url, "table": table, "reason": f"no listing of table {table!r} was seen completely, so the records a statement selects cannot be known ({why})"})
        if data is not None and table not in consoles:
            consoles[table] = QueryConsole(page_url, box, submit, table, data)
    return list(consoles.values())


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(int(value)) if float(value).is_integer() else repr(float(value))
    return "'" + str(value).replace("'", "''") + "'"


def query_sql(console: QueryConsole, conds: list[Cond]) -> str:
    """The statement the gold types: every column of the table, the conditions ANDed."""
    where = " AND ".join(f"{_ident(label)} {'=' if op == 'eq' else '>' if op == 'gt' else '<'} {_literal(value)}" for label, op, value in conds)
    return f"SELECT * FROM {_ident(console.table)} WHERE {where}"


def _threshold(low: float, high: float) -> float | int | None:
    """A round number strictly between two values (the fewest significant digits that fit)."""
    for digits in range(1, 6):
        value = float(f"{(low + high) / 2:.{digits}g}")
        if low < value < high:
            return int(value) if value.is_integer() else value
    return None


def query_goal(rng: np.random.Generator, groups: ListingGroups) -> list[Cond] | None:
    """Conditions (categories, then a threshold on a measure) that 2 to MAX_MATCHES records meet, or None."""
    if not groups.categories or not groups.measures:
        return None
    labels = [groups.categories[int(i)] for i in rng.permutation(len(groups.categories))[: int(rng.integers(1, 3))]]
    conds: list[Cond] = [(lb, "eq", sorted(groups.data.stats[lb].values)[int(rng.integers(len(groups.data.stats[lb].values)))]) for lb in labels]
    measure = groups.measures[int(rng.integers(len(groups.measures)))]
    pool = [float(r.attrs["fields"][measure]["value"]) for r in groups.matching(conds) if r.attrs["fields"].get(measure, {}).get("type") == "number"]
    values = sorted(set(pool))
    if len(values) < MAX_MATCHES + 2:
        return None
    keep = int(rng.integers(2, MAX_MATCHES + 1))
    op = "gt" if rng.random() < 0.5 else "lt"
    low, high = (values[-keep - 1], values[-keep]) if op == "gt" else (values[keep - 1], values[keep])
    threshold = _threshold(low, high)
    if threshold is None:
        return None
    conds.append((measure, op, threshold))
    return conds if 2 <= len(groups.matching(conds)) <= MAX_MATCHES else None


def _near_misses(groups: ListingGroups, conds: list[Cond]) -> list[Node]:
    """Records failing exactly one condition, the same number for each condition (those nearest the threshold first).

    So leaving out any one condition shows records the check rejects.
    """
    label, _, threshold = conds[-1]

    def distance(record: Node) -> float:
        value = record.attrs["fields"].get(label, {}).get("value")
        return abs(float(value) - float(threshold)) if isinstance(value, (int, float)) else float("inf")

    per = max(1, _NEAR_MISSES // len(conds))
    out: list[Node] = []
    for cond in conds:
        misses = [r for r in groups.data.records if not holds(r, cond) and all(holds(r, c) for c in conds if c is not cond)]
        out += [r for r in sorted(misses, key=lambda r: (distance(r), r.id)) if unique_key(groups.data, r, {c[0] for c in conds})][:per]
    return out


def _criteria(groups: ListingGroups, conds: list[Cond]) -> list[SuccessCriterion] | None:
    avoid = {c[0] for c in conds}
    wanted = [unique_key(groups.data, r, avoid) for r in groups.matching(conds)]
    if not wanted or any(k is None for k in wanted):
        return None
    misses = _near_misses(groups, conds)
    if {c for c in conds if any(not holds(r, c) for r in misses)} != set(conds):
        return None  # some condition has no near miss: leaving it out would go unnoticed
    unwanted = [str(unique_key(groups.data, r, avoid)) for r in misses]
    return [SuccessCriterion(kind="text_present", value=str(k), scope="main", whole_words=True) for k in wanted] + [
        SuccessCriterion(kind="text_absent", value=k, scope="main", whole_words=True) for k in unwanted
    ]


def _steps(console: QueryConsole, sql: str) -> list[GoldStep]:
    return [
        GoldStep(action="navigate", text=console.page_url),
        GoldStep(action="type", selector=str(console.box.attrs["selector"]), text=sql, node_id=console.box.id),
        GoldStep(action="click", selector=str(console.submit.attrs["selector"]), node_id=console.submit.id),
    ]


def _shows(text: str, value: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(" ".join(value.split())) + r"(?!\w)", " ".join(text.split()), re.I) is not None


async def probe_query(pool: BrowserPool, steps: list[GoldStep], criteria: list[SuccessCriterion]) -> bool:
    """Whether the gold statement, run in a fresh browser, shows every wanted key and none of the others."""
    guarded = await pool.new_context()
    try:
        page = await guarded.context.new_page()
        await page.goto(steps[0].text or "", wait_until="load")
        await page.locator(steps[1].selector or "").first.fill(steps[1].text or "", timeout=3_000)
        await page.locator(steps[2].selector or "").first.click(timeout=3_000)
        await page.wait_for_load_state("load")
        text = str(await page.evaluate(_MAIN_TEXT_JS))
    except PlaywrightError:
        return False
    finally:
        await guarded.context.close()
    return all(_shows(text, c.value) == (c.kind == "text_present") for c in criteria)


async def query_tasks(kg: KnowledgeGraph, seed: int, count: int, pool: BrowserPool, report: dict[str, Any]) -> list[Task]:
    """Up to ``count`` query-console goals per console, each probed in a fresh browser."""
    start = start_page(kg)
    skipped: list[dict[str, str]] = report.setdefault("skipped", [])
    consoles = query_consoles(kg, skipped)
    report["query_consoles"] = [c.page_url for c in consoles]
    if start is None:
        return []
    tasks: list[Task] = []
    for console in consoles:
        groups = ListingGroups(console.data)
        rng = np.random.default_rng([seed, int(hashlib.sha1(f"{kg.id}|{console.table}".encode()).hexdigest()[:8], 16)])
        made: list[Task] = []
        for _ in range(count * 8):
            if len(made) >= count:
                break
            conds = query_goal(rng, groups)
            criteria = None if conds is None else _criteria(groups, conds)
            if conds is None or criteria is None:
                continue
            steps = _steps(console, query_sql(console, conds))
            key = f"{kg.id}|query|{console.table}|{conds}"
            if any(t.quality["change"]["key"] == key for t in made):
                continue
            if not await probe_query(pool, steps, criteria):
                report.setdefault("query_probes_failed", []).append(steps[1].text)
                continue
            noun = plural(console.data.noun)
            instruction = _PHRASES[int(rng.integers(len(_PHRASES)))].format(group=groups.group(conds), noun=noun)
            goal = {"kind": "query", "key": key, "table": console.table, "conditions": [list(c) for c in conds], "records": [r.id for r in groups.matching(conds)]}
            made.append(
                Task(
                    id=f"web-{hashlib.sha1(key.encode()).hexdigest()[:12]}",
                    kind="web",
                    type="change",
                    difficulty="hard",
                    instruction=instruction,
                    start_url=str(start.attrs["url"]),
                    allowed_domains=list(kg.meta.stats.get("allowed_domains") or [urlparse(str(start.attrs["url"])).hostname or ""]),
                    gold_steps=steps,
                    success=criteria,
                    evidence=[console.data.node.id, *goal["records"]],
                    provenance=Provenance(graph_id=kg.id, template=_TEMPLATE, generator=_TEMPLATE, model="none", seed=seed),
                    quality={"change": goal},
                )
            )
        if not made:
            skipped.append({"console": console.page_url, "table": console.table, "reason": f"no group of 2 to {MAX_MATCHES} records that conditions on the shown fields single out, and that the site then shows, was found"})
        tasks += made
    return tasks
