"""CrawlResult → web knowledge graph.

Ids are stable across re-crawls. A page's id hashes its normalised URL (an app state's
URL carries the state). Links are global — their id hashes type, selector, accessible
name and target, so the same header link on every page is one node contained by each
page. Everything else (forms, fields, buttons, dialogs, menus, tabs, regions, toasts,
pagination, filters) is page-scoped: its id hashes type, page URL and DOM selector, so
one form on five pages is five form nodes and a field only fills the form around it.
Listing roles (pagination, sort orders, facets, filter forms, toasts) come from
:func:`annotate.annotate`. A page node's text is the page's title and the start of its text; the
sentences of a longer page's whole text are kept as hashes (:mod:`.fulltext`).
"""

from __future__ import annotations

import hashlib
from urllib.parse import urlparse

from ..model import Edge, EdgeType, GraphMeta, KnowledgeGraph, Node, NodeType, Source
from .annotate import annotate
from .capture import CrawlResult, PageCapture, normalize_url
from .extract import ElementInfo, classify_element
from .frontier import RESOURCE_EXTENSIONS
from .fulltext import text_hashes
from .records import add_records

__all__ = ["build_web_graph", "page_id", "element_id", "PAGE_TEXT_CHARS"]

#: Characters of a page's text its node stores; a longer page also stores ``text_chars`` and ``text_hashes``
#: (hashed sentence pieces of the whole text, see :mod:`.fulltext`).
PAGE_TEXT_CHARS = 2000

_FIELDS = {"input", "search_box", "select", "checkbox", "filter"}


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def page_id(url: str) -> str:
    """Id of the page node for a normalised URL."""
    return f"page:{_digest(url)}"


_CONTAINERS = {"region", "modal", "form", "menu", "pagination", "toast"}
#: Kinds whose nodes are global (one node however many pages show them); all others are per page.
_GLOBAL = {"link", "business_data"}


def element_id(kind: str, info: ElementInfo, page_url: str = "") -> str:
    """Id of an element node.

    Links and content items: type, selector, accessible name and link target (shared by
    every page that shows them). Everything else: type, page URL and selector, since a form
    or dialog on one page is not the one on another.
    """
    key: tuple[str, ...]
    if kind in _GLOBAL:
        key = (kind, info.selector, info.name, info.href or "")
    else:
        key = (kind, page_url, info.selector)
    return f"{kind}:{_digest('|'.join(key))}"


class _WebBuilder:
    def __init__(self, result: CrawlResult, meta: GraphMeta) -> None:
        self.result = result
        self.kg = KnowledgeGraph(meta)
        self.pages = {p.url: page_id(p.url) for p in result.pages}
        self.annotated: dict[str, list[ElementInfo]] = {}

    def edge(self, source: str, target: str, kind: EdgeType, **attrs: object) -> None:
        if source != target and source in self.kg and target in self.kg and not self.kg.g.has_edge(source, target, key=kind.value):
            self.kg.add_edge(Edge(source=source, target=target, type=kind, attrs=dict(attrs)))

    def page_of(self, url: str | None) -> str | None:
        if not url:
            return None
        normal = normalize_url(url)
        normal = self.result.aliases.get(normal, normal)
        return self.pages.get(normal)

    def submitted_page(self, url: str | None) -> str | None:
        """The page a form submission reaches: the exact URL's, else the crawled page on the same path with the fewest parameters."""
        if exact := self.page_of(url):
            return exact
        if not url:
            return None
        want = urlparse(normalize_url(url))
        same = sorted((len(p.query), u) for u in self.pages if (p := urlparse(u)) and (p.scheme, p.netloc, p.path) == (want.scheme, want.netloc, want.path) and not p.fragment)
        return self.pages[same[0][1]] if same else None

    def elements(self, page: PageCapture) -> list[ElementInfo]:
        if page.url not in self.annotated:
            opened = [s for effect in page.clicks for s in effect.opened]
            self.annotated[page.url] = annotate(page.elements, page.url, opened)
        return self.annotated[page.url]

    def add_page(self, page: PageCapture) -> None:
        pid = self.pages[page.url]
        attrs: dict[str, object] = {"url": page.url, "title": page.title, "depth": page.depth, "dom_hash": page.dom_hash, "screenshot": page.screenshot, "marks_screenshot": page.marks_screenshot}
        attrs.update({k: v for k, v in (("screenshot_error", page.screenshot_error), ("state_error", page.state_error)) if v})
        truncated = page.elements_truncated
        if truncated:
            attrs["elements_truncated"] = truncated
        if page.state is not None:
            attrs.update(state=page.state.key, base_url=page.state.base_url, route=page.state.route, via=[a.model_dump() for a in page.state.via])
        if len(page.text) > PAGE_TEXT_CHARS:  # the node holds the start; the whole text's sentences are kept as hashes
            attrs.update(text_chars=len(page.text), text_hashes=text_hashes(page.text))
        text = f"{page.title}\n{page.text[:PAGE_TEXT_CHARS]}".strip()
        self.kg.add_node(Node(id=pid, type=NodeType.PAGE, text=text, attrs=attrs, source=Source(url=page.url)))

    def add_elements(self, page: PageCapture) -> dict[str, str]:
        """Add the page's element nodes; returns selector → node id for this page."""
        ids: dict[str, str] = {}
        for info in self.elements(page):
            kind = classify_element(info)
            if kind is None:
                continue
            node_id = element_id(kind, info, page.url)
            ids[info.selector] = node_id
            if node_id in self.kg:
                pages = self.kg.g.nodes[node_id]["attrs"].setdefault("pages", [])
                if page.url not in pages:
                    pages.append(page.url)
                continue
            attrs = {
                "role": info.role,
                "name": info.name,
                "selector": info.selector,
                "bbox": list(info.bbox),
                "page_url": page.url,
                "pages": [page.url],
                "visible": info.visible,
                "href": info.href,
                "input_type": info.input_type,
                "field_name": info.field_name,
                "options": info.options or None,
                "action": info.action,
                "method": info.method if kind == "form" else None,
                "live": info.live,
                "new_tab": True if info.href and (info.target or "").lower() == "_blank" else None,
                "pagination": info.pagination,
                "sort": info.sort,
                **(info.facet or {}),
            }
            text = (info.text or info.name) if kind in ("business_data", "toast", "modal", "region") else (info.name or info.text)
            source = Source(url=page.url, selector=info.selector, dom_path=info.selector)
            self.kg.add_node(Node(id=node_id, type=kind, text=text, attrs={k: v for k, v in attrs.items() if v not in (None, "")}, source=source))
            for label in info.options:
                option = f"option:{_digest(node_id + '|' + label)}"
                if option not in self.kg:
                    self.kg.add_node(Node(id=option, type=NodeType.OPTION, text=label, attrs={"select": node_id}, source=source))
                self.edge(node_id, option, EdgeType.CONTAINS)
        return ids

    def link_page(self, page: PageCapture, ids: dict[str, str]) -> None:
        pid = self.pages[page.url]
        marks = {label: ids[sel] for label, sel in page.marks.items() if sel in ids}
        self.kg.g.nodes[pid]["attrs"]["marks"] = marks
        elements = self.elements(page)
        result_lists = [ids[e.selector] for e in elements if e.role == "result_list" and e.selector in ids]
        for info in elements:
            node_id = ids.get(info.selector)
            if node_id is None:
                continue
            kind = self.kg.node_type(node_id)
            container = next((ids[s] for s in (info.dialog, info.list_item_of, info.region) if s and s in ids and ids[s] != node_id), None)
            self.edge(container or pid, node_id, EdgeType.CONTAINS)
            if info.form and info.form in ids:
                form = ids[info.form]
                if kind in _FIELDS and not info.facet:
                    self.edge(node_id, form, EdgeType.FILLS)
                elif kind == "button":
                    self.edge(node_id, form, EdgeType.CONTROLS)
            for target in info.controls:
                if target in ids:
                    self.edge(node_id, ids[target], EdgeType.OPENS if kind == "tab" else EdgeType.CONTROLS)
            linked = self.page_of(info.href) if info.href else None
            if kind == "filter" and not info.facet:
                for target in result_lists:
                    self.edge(node_id, target, EdgeType.FILTERS)
            if info.facet and linked:
                self.edge(node_id, linked, EdgeType.FILTERS, **info.facet)
            if info.pagination and linked:
                self.edge(node_id, linked, EdgeType.PAGINATES, **info.pagination)
            if info.sort:  # a sort variant is a view of this page's listing: the crawl may not load it as a page
                self.edge(node_id, linked or pid, EdgeType.SORTS, url=info.href, **info.sort)
            if kind in ("link", "filter") and linked:
                self.edge(node_id, linked, EdgeType.NAVIGATES_TO, **({"new_tab": True} if (info.target or "").lower() == "_blank" else {}))
            if kind == "form":
                submitted = self.submitted_page(info.action or info.submit_url)
                if submitted:
                    self.edge(node_id, submitted, EdgeType.SUBMITS, method=info.method, implicit=not info.has_submit)
        for effect in page.clicks:
            trigger = ids.get(effect.trigger)
            if trigger is None:
                continue
            for opened in effect.opened:
                if opened in ids:
                    self.edge(trigger, ids[opened], EdgeType.OPENS, verified="click")
            if reached := self.page_of(effect.navigated_to):
                self.edge(trigger, reached, EdgeType.NAVIGATES_TO, verified="click")
        if page.state is not None and (base := self.page_of(page.state.base_url)):
            self.edge(base, pid, EdgeType.TRANSITIONS, via=[a.model_dump() for a in page.state.via], route=page.state.route)


def build_web_graph(result: CrawlResult, meta: GraphMeta) -> KnowledgeGraph:
    """Pages (and app states), elements, records and their edges (contains, navigates_to, controls, fills, opens, filters, submits, paginates, sorts, transitions)."""
    builder = _WebBuilder(result, meta)
    for page in result.pages:
        builder.add_page(page)
    per_page = [(page, builder.add_elements(page)) for page in result.pages]
    for page, ids in per_page:
        builder.link_page(page, ids)
    add_records(builder.kg, result, dict(builder.pages))
    builder.kg.meta.stats.update(pages=len(result.pages), blocked=len(result.blocked), skipped=len(result.skipped), unvisited=unvisited(result))
    return builder.kg


#: Why a URL the crawl knew was not loaded, when its page may hold text no crawled page shows.
_UNSEEN_REASONS = frozenset({"budget", "depth", "template_cap", "timeout"})
#: At most this many unvisited URLs are kept in the graph's stats.
MAX_UNVISITED = 5000


def unvisited(result: CrawlResult) -> list[str]:
    """Pages the crawl linked to but never loaded (budget, depth, a template's cap, a timeout), documents only, sorted."""
    urls = (u for u, skip in result.skipped.items() if skip.reason in _UNSEEN_REASONS)
    return sorted(u for u in urls if urlparse(u).path.rsplit(".", 1)[-1].lower() not in RESOURCE_EXTENSIONS or "." not in urlparse(u).path.rsplit("/", 1)[-1])[:MAX_UNVISITED]
