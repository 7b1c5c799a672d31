"""The knowledge-graph data model: typed nodes and edges over a networkx MultiDiGraph.

A :class:`KnowledgeGraph` holds data only; algorithms over it are plain functions
in sibling modules (``queries``, ``sampling``, …) that take the graph first.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any
from collections.abc import Iterator

import networkx as nx
from pydantic import BaseModel, Field

__all__ = [
    "SCHEMA_VERSION",
    "NodeType",
    "EdgeType",
    "Source",
    "Node",
    "Edge",
    "GraphMeta",
    "KnowledgeGraph",
]

SCHEMA_VERSION = 1


class NodeType(StrEnum):
    """Node types of documents and websites (DESIGN.md)."""

    DOCUMENT = "document"
    SECTION = "section"
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST = "list"
    TABLE = "table"
    TABLE_CELL = "table_cell"
    FIGURE = "figure"
    CAPTION = "caption"
    FORMULA = "formula"
    FOOTNOTE = "footnote"
    REFERENCE = "reference"
    ENTITY = "entity"
    CHUNK = "chunk"
    PAGE = "page"
    LINK = "link"
    BUTTON = "button"
    INPUT = "input"
    SEARCH_BOX = "search_box"
    SELECT = "select"
    OPTION = "option"
    CHECKBOX = "checkbox"
    FORM = "form"
    MODAL = "modal"
    TOAST = "toast"
    TAB = "tab"
    MENU = "menu"
    PAGINATION = "pagination"
    FILTER = "filter"
    BUSINESS_DATA = "business_data"
    REGION = "region"
    RECORD = "record"
    LISTING = "listing"


class EdgeType(StrEnum):
    """Edge types: text relations, then web relations (DESIGN.md)."""

    NEXT = "next"
    CONTAINS = "contains"
    SEMANTIC_SIMILAR = "semantic_similar"
    REFERS_TO = "refers_to"
    CAPTION_OF = "caption_of"
    MENTIONS = "mentions"
    CITES = "cites"
    NAVIGATES_TO = "navigates_to"
    CONTROLS = "controls"
    FILLS = "fills"
    OPENS = "opens"
    SUBMITS = "submits"
    FILTERS = "filters"
    PAGINATES = "paginates"
    SORTS = "sorts"
    SHOWS = "shows"
    DETAILS = "details"
    TRANSITIONS = "transitions"


class Source(BaseModel):
    """Where a node came from: a file position or a web element."""

    file: str | None = Field(None, description="Path of the source document.")
    page: int | None = Field(None, description="1-based page number (PDF).")
    bbox: tuple[float, float, float, float] | None = Field(None, description="x0, y0, x1, y1 in PDF points.")
    url: str | None = Field(None, description="Page URL (web).")
    selector: str | None = Field(None, description="CSS selector or XPath (web).")
    dom_path: str | None = Field(None, description="DOM path (web).")


class Node(BaseModel):
    """One graph node."""

    id: str
    type: NodeType
    text: str = ""
    attrs: dict[str, Any] = Field(default_factory=dict)
    source: Source = Field(default_factory=Source)


class Edge(BaseModel):
    """One directed, typed edge."""

    source: str
    target: str
    type: EdgeType
    weight: float = 1.0
    attrs: dict[str, Any] = Field(default_factory=dict)


class GraphMeta(BaseModel):
    """Metadata of a graph, stored beside its nodes and edges."""

    schema_version: int = SCHEMA_VERSION
    id: str
    name: str = ""
    kind: str = Field("document", description="'document' or 'web'.")
    sources: list[str] = Field(default_factory=list)
    embedder: str | None = None
    embedding_dim: int | None = None
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    stats: dict[str, Any] = Field(default_factory=dict)


class KnowledgeGraph:
    """A typed ``networkx.MultiDiGraph`` plus :class:`GraphMeta`.

    Node attributes are the fields of :class:`Node`; edge keys are the edge type, so
    there is at most one edge of each type between two nodes.

    Examples
    --------
    >>> kg = KnowledgeGraph(GraphMeta(id="g"))
    >>> kg.add_node(Node(id="a", type=NodeType.PARAGRAPH, text="x"))
    >>> kg.add_node(Node(id="b", type=NodeType.PARAGRAPH, text="y"))
    >>> kg.add_edge(Edge(source="a", target="b", type=EdgeType.NEXT))
    >>> [e.type.value for e in kg.edges()]
    ['next']
    """

    def __init__(self, meta: GraphMeta, graph: nx.MultiDiGraph | None = None) -> None:
        self.meta = meta
        self.g: nx.MultiDiGraph = graph if graph is not None else nx.MultiDiGraph()
        self._positions: dict[str, int] | None = None  # node id -> insertion rank, for edges_into

    @property
    def id(self) -> str:
        return self.meta.id

    def __len__(self) -> int:
        return self.g.number_of_nodes()

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.g

    def add_node(self, node: Node) -> None:
        if node.id not in self.g:
            self._positions = None
        self.g.add_node(node.id, **node.model_dump(exclude={"id"}, mode="json"))

    def add_edge(self, edge: Edge) -> None:
        if edge.source not in self.g or edge.target not in self.g:
            raise KeyError(f"edge {edge.source} -> {edge.target} names a missing node")
        data = edge.model_dump(exclude={"source", "target"}, mode="json")
        self.g.add_edge(edge.source, edge.target, key=edge.type.value, **data)

    def node(self, node_id: str) -> Node:
        data = self.g.nodes[node_id]
        return Node(id=node_id, **data)

    def nodes(self, *types: NodeType | str) -> Iterator[Node]:
        """Nodes in insertion order, optionally only of the given types."""
        wanted = {str(t) for t in types}
        for nid, data in self.g.nodes(data=True):
            if not wanted or data["type"] in wanted:
                yield Node(id=nid, **data)

    def edges(self, *types: EdgeType | str) -> Iterator[Edge]:
        """Edges in insertion order, optionally only of the given types."""
        wanted = {str(t) for t in types}
        for u, v, data in self.g.edges(data=True):
            if not wanted or data["type"] in wanted:
                yield Edge(source=u, target=v, **data)

    def edges_into(self, node_id: str, *types: EdgeType | str) -> list[Edge]:
        """The edges into ``node_id`` (optionally of the given types), in the order :meth:`edges` lists them; without a scan of every edge."""
        wanted = {str(t) for t in types}
        found = [(u, data) for u, _, data in self.g.in_edges(node_id, data=True) if not wanted or data["type"] in wanted]
        if self._positions is None or any(u not in self._positions for u, _ in found):
            self._positions = {n: i for i, n in enumerate(self.g)}
        ranks = self._positions
        return [Edge(source=u, target=node_id, **data) for u, data in sorted(found, key=lambda pair: ranks[pair[0]])]

    def edges_from(self, node_id: str, *types: EdgeType | str) -> list[Edge]:
        """The edges out of ``node_id`` (optionally of the given types), in the order :meth:`edges` lists them."""
        wanted = {str(t) for t in types}
        return [Edge(source=node_id, target=v, **data) for _, v, data in self.g.out_edges(node_id, data=True) if not wanted or data["type"] in wanted]

    def node_type(self, node_id: str) -> str:
        return str(self.g.nodes[node_id]["type"])

    def to_dict(self) -> dict[str, Any]:
        """Node-link JSON with the metadata under ``graph``."""
        data = nx.node_link_data(self.g, edges="edges")
        data["graph"] = self.meta.model_dump(mode="json")
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KnowledgeGraph:
        meta = GraphMeta.model_validate(data.get("graph", {}))
        g = nx.node_link_graph(data, directed=True, multigraph=True, edges="edges")
        g.graph = {}
        return cls(meta, g)
