"""Reach a view (family 5): a listing ordered or restricted by a condition, checked on the meaning of its query.

- Sort views come from a listing's ``sorts`` whose field and direction the crawl verified
  (the rows of the loaded view are in that order); a view whose first page shows the same
  records as the listing's default order is skipped (the start would already show it). The
  instruction phrases the order from the field's type (a field with fewer than three distinct
  values groups rather than orders, and is skipped): "from highest to lowest <field>"
  (numbers), "with the most recent <field> first" (dates), "alphabetically by <field>" (text).
- Filter views come from facets: ``filters`` edges with a parameter and value to a crawled
  page that shows a listing, one filter parameter per view (search queries are not views).

Criteria: ``query_has`` with the view's sort or filter parameters on the listing's path (any
route to the same query meaning passes, page and other parameters free); for a sort by a
number or date, also the first record's value as whole words in the main content, when no
record on the start page or the default view shows that value. The gold step navigates to
the verified view URL; the start page is the crawl's shallowest page that does not show it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlparse

from ...evaluate.checks import query_matches
from ...graph.model import KnowledgeGraph, Node
from ...graph.web.urls import listing_key, query_of, query_role, with_query
from ...graph.web.values import sort_key
from ...tasks.model import SuccessCriterion, Task
from ..registry import Candidates, GenerationRequest, generator
from .find import norm_text, task_rng, goal_task, ordinary_pages, start_page, subject_noun
from .phrasing import ID_LABEL, field_phrase

__all__ = ["web_view", "view_tasks", "order_phrase", "VIEW_HOPS"]

#: Hop budget of the reachability filter for a view task.
VIEW_HOPS = 8
#: Query keys that carry a free-text search: a search result is not a view of a listing.
_SEARCH_KEYS = frozenset({"q", "query", "search", "keyword", "keywords", "term", "terms", "text", "k"})
_TRUE = frozenset({"1", "true", "yes", "on", "y"})
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


def _sort_tasks(kg: KnowledgeGraph, seed: int, skipped: Counter[str]) -> list[Task]:
    pages = _page_by_url(kg)
    tasks: list[Task] = []
    for listing in kg.nodes("listing"):
        attrs = listing.attrs
        default_url = str(attrs.get("url") or "")
        default = _records_on(kg, default_url) if default_url in pages else []
        population = [r for r in kg.nodes("record") if listing.id in (r.attrs.get("listings") or [])]
        things = subject_noun(kg, default_url) or "items"
        for sort in attrs.get("sorts") or []:
            field, direction, url = sort.get("field"), sort.get("direction"), str(sort.get("url") or "")
            if not field or direction not in ("asc", "desc") or url not in pages:
                skipped["sort direction not verified"] += 1
                continue
            if ID_LABEL.match(str(field).strip()):
                skipped["sort by a row id"] += 1
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


def _view_start(kg: KnowledgeGraph, view: str) -> Node | None:
    """The shallowest ordinary page that does not already show the view."""
    return start_page(kg, avoid=[str(p.attrs["url"]) for p in ordinary_pages(kg) if query_matches(str(p.attrs["url"]), view)])


def _facets(kg: KnowledgeGraph) -> dict[str, tuple[str, str, str, Node]]:
    """Filter views by view URL: (param, value, label, page), from ``filters`` edges to crawled pages showing a listing."""
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
        if not param or filters != {param: value} or param.lower() in _SEARCH_KEYS:
            continue
        label = str(facet.get("label") or kg.node(source).attrs.get("name") or value).strip()
        view = with_query(listing_key(url), filters)
        found.setdefault(view, (param, value, label, pages[target]))
    return found


def _filter_tasks(kg: KnowledgeGraph, seed: int, skipped: Counter[str]) -> list[Task]:
    tasks: list[Task] = []
    for view, (param, value, label, page) in sorted(_facets(kg).items()):
        start = _view_start(kg, view)
        if start is None:
            skipped["no start page without the view"] += 1
            continue
        base = urlparse(view)._replace(query="").geturl()
        things = subject_noun(kg, base) or "items"
        rng = task_rng(seed, f"filter|{view}")
        if value.lower() in _TRUE:
            template = _FLAG_TEMPLATES[int(rng.integers(len(_FLAG_TEMPLATES)))]
            instruction = template.format(things=things, value=label[:1].lower() + label[1:])
        else:
            template = _FILTER_TEMPLATES[int(rng.integers(len(_FILTER_TEMPLATES)))]
            instruction = template.format(things=things, field=field_phrase(param), value=label)
        task = goal_task(kg, "view-filter", "view", instruction, start, page, [SuccessCriterion(kind="query_has", value=view)], seed)
        task.quality["target"] = {"kind": "filter", "param": param, "value": value}
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
