"""Reach a view (family 5): a listing ordered or restricted by a condition, checked on the meaning of its query.

- Sort views come from a listing's ``sorts`` whose field and direction the crawl verified
  (the rows of the loaded view are in that order); a view whose first page shows the same
  records as the listing's default order is skipped (the start would already show it). The
  instruction phrases the order from the field's type (a field with fewer than three distinct
  values groups rather than orders, and is skipped): "from highest to lowest <field>"
  (numbers), "with the most recent <field> first" (dates), "alphabetically by <field>" (text).
- Filter views come from facets: ``filters`` edges with a parameter and value to a crawled
  page that shows a listing, one filter parameter per view, that restrict the records by a
  field's value: the page's records all show that value in the field the parameter names,
  or they are fewer than, and all among, the records of the complete listing without it.

A view is a sort by a field or a restriction by a field's value, said in words. Never a view:
pagination (page, offset, cursor and "next" parameters, a link named "Next page" or a page
number), facet toggles and display parameters (their roles come from ``urls.query_role``: a
framework's underscore parameters such as ``_facet`` or ``_size`` only change the display), a
parameter whose value names a column rather than a value (``facet=country``), an export
format (``csv``, ``json`` …), a search query, or a sort whose query names no field (a bare
direction toggle such as ``dir=desc``). Records are called by what they are (``find.subject_noun``).

Criteria: ``query_has`` with the view's sort or filter parameters on the listing's path (any
route to the same query meaning passes, page and other parameters free); for a sort by a
number or date, also the first record's value as whole words in the main content, when no
record on the start page or the default view shows that value. The gold step navigates to
the verified view URL; the start page is the crawl's shallowest page that does not show it.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any
from urllib.parse import urlparse

from ...evaluate.checks import query_matches
from ...graph.model import KnowledgeGraph, Node
from ...graph.web.annotate import link_direction
from ...graph.web.urls import SEARCH_KEYS, listing_key, query_of, query_role, with_query
from ...graph.web.values import sort_key
from ...tasks.model import SuccessCriterion, Task
from ..registry import Candidates, GenerationRequest, generator
from .find import norm_text, task_rng, goal_task, ordinary_pages, start_page, subject_noun
from .phrasing import ID_LABEL, field_phrase

__all__ = ["web_view", "view_tasks", "order_phrase", "VIEW_HOPS"]

#: Hop budget of the reachability filter for a view task.
VIEW_HOPS = 8
_TRUE = frozenset({"1", "true", "yes", "on", "y"})
#: Values that name an export or file format: a link to one is a download, not a view.
_FORMATS = frozenset("csv tsv json jsonl ndjson xml rss atom xls xlsx ods pdf txt yaml yml sql sqlite db zip".split())
#: Values that name a sort direction, not a field.
_DIRECTIONS = frozenset("asc desc ascending descending up down true false".split())
#: A sort by a field with fewer distinct values (yes/no, two categories) groups rather than orders: not a view goal.
_MIN_DISTINCT = 3


def order_phrase(field: str, kind: str, direction: str) -> str:
    """The order in words, from the field's value type.

    >>> order_phrase("Body Mass (g)", "number", "desc"), order_phrase("Date Egg", "date", "asc"), order_phrase("Island", "text", "asc")
    ('from highest to lowest body mass', 'with the earliest date egg first', 'alphabetically by island')
    """
    name = field_phrase(field)
    if kind == "number":
        return f"from lowest to highest {name}" if direction == "asc" else f"from highest to lowest {name}"
    if kind == "date":
        return f"with the earliest {name} first" if direction == "asc" else f"with the most recent {name} first"
    return f"alphabetically by {name}" if direction == "asc" else f"in reverse alphabetical order of {name}"


_SORT_TEMPLATES = (
    "Show the {things} sorted {order}.",
    "List the {things} {order}.",
    "I want to see the {things} ordered {order}.",
    "Display the {things} {order}.",
    "Arrange the list of {things} {order}.",
)
_FILTER_TEMPLATES = (
    "List the {things} whose {field} is {value}.",
    "Show only the {things} with {field} {value}.",
    "Narrow the {things} down to those with {field} {value}.",
    "Bring up the list of {things} where the {field} is {value}.",
)
_FLAG_TEMPLATES = (
    "Show only the {things} that are {value}.",
    "List just the {things} that are {value}.",
    "Narrow the {things} down to those that are {value}.",
)


def _page_by_url(kg: KnowledgeGraph) -> dict[str, Node]:
    return {str(p.attrs["url"]): p for p in kg.nodes("page")}


def _records_on(kg: KnowledgeGraph, url: str) -> list[Node]:
    return [r for r in kg.nodes("record") if url in (r.attrs.get("pages") or [])]


def _field_kind(records: list[Node], label: str) -> str | None:
    kinds = Counter(str((r.attrs.get("fields") or {}).get(label, {}).get("type")) for r in records)
    kinds.pop("missing", None)
    kinds.pop("None", None)
    return kinds.most_common(1)[0][0] if kinds else None


def _raw_values(records: list[Node]) -> set[str]:
    return {norm_text(str(f.get("raw") or "")) for r in records for f in (r.attrs.get("fields") or {}).values()}


def _first_value(records: list[Node], label: str, direction: str) -> str | None:
    """The raw value of ``label`` that leads the view: the least (asc) or greatest (desc) one present."""
    keyed = [
        (k, str(r.attrs["fields"][label]["raw"])) for r in records if (k := sort_key((r.attrs.get("fields") or {}).get(label))) is not None
    ]
    if not keyed:
        return None
    kinds = Counter(k[0] for k, _ in keyed).most_common(1)[0][0]
    same = [(k, raw) for k, raw in keyed if k[0] == kinds]
    return (min(same) if direction == "asc" else max(same))[1]


#: A view of records the site never names (a form's picker popup, say) would read “sort the items”: which items?
_UNNAMED = "the listing's records have no name: the instruction would only say “items”"


def _sort_tasks(kg: KnowledgeGraph, seed: int, skipped: Counter[str]) -> list[Task]:
    pages = _page_by_url(kg)
    tasks: list[Task] = []
    narrower = _narrowed_listings(kg)
    for listing in kg.nodes("listing"):
        attrs = listing.attrs
        default_url = str(attrs.get("url") or "")
        if listing.id in narrower and attrs.get("sorts"):
            skipped["a sort of a narrowed listing (the instruction would name only the order)"] += len(attrs.get("sorts") or [])
            continue
        default = _records_on(kg, default_url) if default_url in pages else []
        population = [r for r in kg.nodes("record") if listing.id in (r.attrs.get("listings") or [])]
        things = subject_noun(kg, default_url)
        if things is None and attrs.get("sorts"):
            skipped[_UNNAMED] += len(attrs.get("sorts") or [])
            continue
        for sort in attrs.get("sorts") or []:
            field, direction, url = sort.get("field"), sort.get("direction"), str(sort.get("url") or "")
            if not field or direction not in ("asc", "desc") or url not in pages:
                skipped["sort direction not verified"] += 1
                continue
            if ID_LABEL.match(str(field).strip()):
                skipped["sort by a row id"] += 1
                continue
            if not _names_field(url):
                skipped["a direction toggle naming no field, not a view"] += 1
                continue
            shown = _records_on(kg, url)
            if (
                not shown
                or (default and [r.id for r in shown] == [r.id for r in default])
                or {r.id for r in shown} == {r.id for r in default}
            ):
                skipped["sort view shows the default order"] += 1
                continue
            if len({norm_text(str((r.attrs.get("fields") or {}).get(str(field), {}).get("raw") or "")) for r in population} - {""}) < _MIN_DISTINCT:
                skipped["sort by a field with few values"] += 1
                continue
            kind = _field_kind(population, str(field)) or "text"
            view = with_query(url, {k: v for k, v in query_of(url).items() if query_role(k) in ("sort", "filter")})
            start = _view_start(kg, view)
            if start is None:
                skipped["no start page without the view"] += 1
                continue
            success = [SuccessCriterion(kind="query_has", value=view)]
            first = _first_value(shown, str(field), str(direction)) if kind in ("number", "date") else None
            if first and norm_text(first) not in _raw_values(_records_on(kg, str(start.attrs["url"])) + default):
                success.append(SuccessCriterion(kind="text_present", value=first, scope="main", whole_words=True))
            rng = task_rng(seed, f"sort|{view}")
            template = _SORT_TEMPLATES[int(rng.integers(len(_SORT_TEMPLATES)))]
            instruction = template.format(things=things, order=order_phrase(str(field), kind, str(direction)))
            task = goal_task(kg, "view-sort", "view", instruction, start, pages[url], success, seed)
            task.quality["target"] = {"kind": "sort", "field": field, "direction": direction, "first": first}
            tasks.append(task)
    return tasks


def _narrowed_listings(kg: KnowledgeGraph) -> set[str]:
    """Ids of listings whose URL adds filter parameters to another listing's on the same path (a filter, export or toggle of it)."""
    by_path: dict[str, list[tuple[str, dict[str, str]]]] = {}
    for node in kg.nodes("listing"):
        url = str(node.attrs.get("url") or "")
        filters = {k: v for k, v in query_of(url).items() if query_role(k) == "filter"}
        by_path.setdefault(urlparse(url)._replace(query="").geturl(), []).append((node.id, filters))
    out: set[str] = set()
    for members in by_path.values():
        for lid, filters in members:
            if any(len(other) < len(filters) and other.items() <= filters.items() for _, other in members):
                out.add(lid)
    return out


def _names_field(url: str) -> bool:
    """Whether the URL's sort parameters name what to sort by (``sort=title``, ``ordering=-3``), not only a direction (``dir=desc``)."""
    return any(query_role(k) == "sort" and v.strip().lstrip("+-").lower() not in _DIRECTIONS | {""} for k, v in query_of(url).items())


def _view_start(kg: KnowledgeGraph, view: str) -> Node | None:
    """The shallowest ordinary page that does not already show the view."""
    return start_page(kg, avoid=[str(p.attrs["url"]) for p in ordinary_pages(kg) if query_matches(str(p.attrs["url"]), view)])


def _facets(kg: KnowledgeGraph, skipped: Counter[str]) -> dict[str, tuple[str, str, str, Node]]:
    """Filter views by view URL: (param, value, label, page), from ``filters`` edges to crawled pages showing a listing.

    A link that pages the listing (its element is pagination, or its name says next, previous or a
    page number), a search, or a link to an export format is never one.
    """
    pages = {p.id: p for p in kg.nodes("page")}
    listing_pages = {u for u, v, d in kg.g.edges(data=True) if d.get("type") == "shows" and kg.node_type(v) == "listing"}
    found: dict[str, tuple[str, str, str, Node]] = {}
    for source, target, data in sorted(kg.g.edges(data=True), key=lambda e: (str(e[0]), str(e[1]))):
        if data.get("type") != "filters" or target not in pages or target not in listing_pages:
            continue
        facet: dict[str, Any] = data.get("attrs") or {}
        param, value = str(facet.get("param") or ""), str(facet.get("value") or "")
        url = str(pages[target].attrs["url"])
        filters = {k: v for k, v in query_of(url).items() if query_role(k) == "filter"}
        if not param or filters != {param: value}:
            continue  # the page shows another restriction than the link's, or none (a page, order or display parameter)
        element = kg.node(source).attrs
        label = str(facet.get("label") or element.get("name") or value).strip()
        if param.lower().lstrip("_") in SEARCH_KEYS:
            skipped["a search, not a view"] += 1
        elif element.get("pagination") or link_direction(label, element.get("rel")) or re.fullmatch(r"[\d\s.,…]+", label):
            skipped["a pagination link, not a view"] += 1
        elif _format_word(value) or _format_word(label) or _format_word(urlparse(url).path.rsplit(".", 1)[-1]):
            skipped["an export format, not a view"] += 1
        else:
            view = with_query(listing_key(url), filters)
            kept = found.get(view)
            if kept is None or _plainness(url) < _plainness(str(kept[3].attrs["url"])):
                found[view] = (param, value, label, pages[target])  # the plainest page of the view (no facet toggles) is its gold
    return found


def _plainness(url: str) -> tuple[int, str]:
    """Fewer query parameters first, then the URL: the page a view's gold step navigates to."""
    return len(query_of(url)), url


def _format_word(text: str) -> bool:
    return text.strip().lower().lstrip(".") in _FORMATS


def _norm_name(text: str) -> str:
    """A label or value compared loosely: words of letters and digits, lower case ("Science Fiction" = "science-fiction")."""
    return " ".join(re.findall(r"[a-z0-9]+", field_phrase(text).casefold()))


def _field_of(records: list[Node], param: str) -> str | None:
    """The records' field a query parameter names ("genre" → "Genre", "country__exact" → "country"), if any."""
    wanted = _norm_name(re.split(r"__|\[", param.lstrip("_"))[0])
    labels = sorted({lb for r in records for lb in (r.attrs.get("fields") or {})})
    return next((lb for lb in labels if _norm_name(lb) == wanted), None) if wanted else None


def _listing_of(kg: KnowledgeGraph, url: str) -> Node | None:
    key = listing_key(url)
    return next((n for n in sorted(kg.nodes("listing"), key=lambda n: -int(n.attrs.get("records") or 0)) if n.attrs.get("url") == key), None)


def _restriction(kg: KnowledgeGraph, param: str, value: str, label: str, page: Node) -> tuple[str | None, str | None]:
    """(field the view restricts, why not): the page's records that show the field the parameter names all show the value
    there, or they are fewer than, and all among, the records of the complete listing without the parameter."""
    url = str(page.attrs["url"])
    shown = _records_on(kg, url)
    if not shown:
        return None, "the filtered page shows no records"
    field = _field_of(shown, param)
    if field is not None:
        wanted = {_norm_name(value), _norm_name(label)}
        present = [f for r in shown if (f := (r.attrs.get("fields") or {}).get(field)) and f.get("type") != "missing"]
        values = {_norm_name(str(f.get("raw") or "")) for f in present}
        if values and values <= wanted:  # a record that does not show the field (seen in a listing without that column) cannot disprove it
            return field, None
    columns = {_norm_name(str(c)) for n in kg.nodes("listing") for c in n.attrs.get("columns") or []}
    if _norm_name(value) in columns | {_norm_name(lb) for r in shown for lb in (r.attrs.get("fields") or {})}:
        return None, "the value names a column, not a value (a toggle)"
    if field is not None:
        return None, f"the records shown do not all have {field} = {label}"
    base = _listing_of(kg, with_query(url, {k: v for k, v in query_of(url).items() if k != param}))
    if base is None or not base.attrs.get("complete"):
        return None, "no complete listing without the filter to compare with"
    population = {r.id for r in kg.nodes("record") if base.id in (r.attrs.get("listings") or [])}
    mine = {r.id for r in shown}
    if mine < population:
        return param, None
    return None, "the filtered page does not show fewer of the listing's records"


def _filter_tasks(kg: KnowledgeGraph, seed: int, skipped: Counter[str]) -> list[Task]:
    tasks: list[Task] = []
    for view, (param, value, label, page) in sorted(_facets(kg, skipped).items()):
        field, why = _restriction(kg, param, value, label, page)
        if field is None:
            skipped[f"not a restriction by a field's value: {why}"] += 1
            continue
        start = _view_start(kg, view)
        if start is None:
            skipped["no start page without the view"] += 1
            continue
        base = urlparse(view)._replace(query="").geturl()
        things = subject_noun(kg, base)
        if things is None:
            skipped[_UNNAMED] += 1
            continue
        rng = task_rng(seed, f"filter|{view}")
        if value.lower() in _TRUE:
            template = _FLAG_TEMPLATES[int(rng.integers(len(_FLAG_TEMPLATES)))]
            instruction = template.format(things=things, value=label[:1].lower() + label[1:])
        else:
            template = _FILTER_TEMPLATES[int(rng.integers(len(_FILTER_TEMPLATES)))]
            instruction = template.format(things=things, field=field_phrase(re.split(r"__|\[", field.lstrip("_"))[0]), value=label)
        task = goal_task(kg, "view-filter", "view", instruction, start, page, [SuccessCriterion(kind="query_has", value=view)], seed)
        task.quality["target"] = {"kind": "filter", "param": param, "value": value, "field": field}
        tasks.append(task)
    return tasks


def view_tasks(kg: KnowledgeGraph, seed: int, limit: int) -> tuple[list[Task], dict[str, Any]]:
    """Sort and filter view tasks (at most ``limit`` of each), and counts of what was skipped and why."""
    skipped: Counter[str] = Counter()
    sorts, filters = _sort_tasks(kg, seed, skipped), _filter_tasks(kg, seed, skipped)
    order = task_rng(seed, "views")
    picked = [sorts[int(i)] for i in order.permutation(len(sorts))[:limit]] + [
        filters[int(i)] for i in order.permutation(len(filters))[:limit]
    ]
    return picked, {"sort_views": len(sorts), "filter_views": len(filters), "skipped": dict(skipped)}


@generator("web-view", graph="web")
async def web_view(request: GenerationRequest) -> Candidates:
    """Reach-a-view tasks: a listing in a verified sort order, or narrowed by one facet."""
    tasks, details = view_tasks(request.kg, request.seed, max(request.count * 2, 8))
    if request.types:
        tasks = [t for t in tasks if t.type in request.types]
    request.report.generator = details
    return Candidates(tasks, {"view-sort": VIEW_HOPS, "view-filter": VIEW_HOPS})
