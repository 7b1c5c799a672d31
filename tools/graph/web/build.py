"""CrawlResult → web knowledge graph.

Ids are global and stable: a page's id hashes its normalised URL; an element's
hashes its type, selector, accessible name and target — not the page — so the same
header link on every page is one node contained by each page, and a re-crawl of the
same site yields the same ids.
"""

from __future__ import annotations

import hashlib

from ..model import Edge, EdgeType, GraphMeta, KnowledgeGraph, Node, NodeType, Source
from .crawl import CrawlResult, PageCapture, normalize_url
from .extract import ElementInfo, classify_element

__all__ = ["build_web_graph", "page_id", "element_id"]

_FIELDS = {"input", "search_box", "select", "checkbox", "filter"}


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def page_id(url: str) -> str:
    """Id of the page node for a normalised URL."""
    return f"page:{_digest(url)}"


_CONTAINERS = {"region", "modal", "form", "menu", "pagination", "toast"}


def element_id(kind: str, info: ElementInfo) -> str:
    """Id of an element node, independent of the page it was seen on.

    Controls and content items are identified by type, selector, accessible name and
    link target; containers (regions, forms, dialogs, menus…) by type, selector and
    aria-label only, since their text changes with what they contain.
    """
    key: tuple[str, ...]
    if kind in _CONTAINERS:
        key = (kind, info.selector, info.aria_label or "")
    else:
        key = (kind, info.selector, info.name, info.href or "")
    return f"{kind}:{_digest('|'.join(key))}"


class _WebBuilder:
    def __init__(self, result: CrawlResult, meta: GraphMeta) -> None:
        self.result = result
        self.kg = KnowledgeGraph(meta)
        self.pages = {p.url: page_id(p.url) for p in result.pages}

    def edge(self, source: str, target: str, kind: EdgeType, **attrs: object) -> None:
        if source != target and source in self.kg and target in self.kg and not self.kg.g.has_edge(source, target, key=kind.value):
            self.kg.add_edge(Edge(source=source, target=target, type=kind, attrs=dict(attrs)))

    def page_of(self, url: str | None) -> str | None:
        if not url:
            return None
        normal = normalize_url(url)
        normal = self.result.aliases.get(normal, normal)
        return self.pages.get(normal)

    def add_page(self, page: PageCapture) -> None:
        pid = self.pages[page.url]
        attrs = {"url": page.url, "title": page.title, "depth": page.depth, "dom_hash": page.dom_hash, "screenshot": page.screenshot, "marks_screenshot": page.marks_screenshot}
        self.kg.add_node(Node(id=pid, type=NodeType.PAGE, text=f"{page.title}\n{page.text[:2000]}".strip(), attrs=attrs, source=Source(url=page.url)))

    def add_elements(self, page: PageCapture) -> dict[str, str]:
        """Add the page's element nodes; returns selector → node id for this page."""
        ids: dict[str, str] = {}
        for info in page.elements:
            kind = classify_element(info)
            if kind is None:
                continue
            node_id = element_id(kind, info)
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
            }
            text = (info.text or info.name) if kind in ("business_data", "toast", "modal", "region") else (info.name or info.text)
            source = Source(url=page.url, selector=info.selector)
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
        result_lists = [ids[e.selector] for e in page.elements if e.role == "result_list" and e.selector in ids]
        for info in page.elements:
            node_id = ids.get(info.selector)
            if node_id is None:
                continue
            kind = self.kg.node_type(node_id)
            container = next((ids[s] for s in (info.dialog, info.list_item_of, info.region) if s and s in ids and ids[s] != node_id), None)
            self.edge(container or pid, node_id, EdgeType.CONTAINS)
            if info.form and info.form in ids:
                form = ids[info.form]
                if kind in _FIELDS:
                    self.edge(node_id, form, EdgeType.FILLS)
                elif kind == "button":
                    self.edge(node_id, form, EdgeType.CONTROLS)
            for target in info.controls:
                if target in ids:
                    self.edge(node_id, ids[target], EdgeType.OPENS if kind == "tab" else EdgeType.CONTROLS)
            if kind == "filter":
                for target in result_lists:
                    self.edge(node_id, target, EdgeType.FILTERS)
            if kind == "link" and (linked := self.page_of(info.href)):
                self.edge(node_id, linked, EdgeType.NAVIGATES_TO)
            if kind == "form" and (submitted := self.page_of(info.action)):
                self.edge(node_id, submitted, EdgeType.SUBMITS)
        for effect in page.clicks:
            trigger = ids.get(effect.trigger)
            if trigger is None:
                continue
            for opened in effect.opened:
                if opened in ids:
                    self.edge(trigger, ids[opened], EdgeType.OPENS, verified="click")
            if reached := self.page_of(effect.navigated_to):
                self.edge(trigger, reached, EdgeType.NAVIGATES_TO, verified="click")


def build_web_graph(result: CrawlResult, meta: GraphMeta) -> KnowledgeGraph:
    """Pages, elements and their edges (contains, navigates_to, controls, fills, opens, filters, submits)."""
    builder = _WebBuilder(result, meta)
    for page in result.pages:
        builder.add_page(page)
    per_page = [(page, builder.add_elements(page)) for page in result.pages]
    for page, ids in per_page:
        builder.link_page(page, ids)
    builder.kg.meta.stats.update(pages=len(result.pages), blocked=len(result.blocked), skipped=len(result.skipped))
    return builder.kg
