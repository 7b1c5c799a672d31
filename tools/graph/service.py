"""GraphService: the graph capability as one object — what the CLI, the MCP tools and library users call."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

import numpy as np
from pydantic import BaseModel, Field

from ..errors import EmbedderError, InputError
from ..environment.browser import BrowserPool
from ..llm.embedders import Embedder, make_embedder
from ..settings import Settings
from ..workspace import Workspace, atomic_write_text
from .export import export_graph
from .ingest.fetch import fetch_document, is_url
from .ingest.pipeline import IngestReport, ProgressFn, ingest_document
from .model import Edge, GraphMeta, KnowledgeGraph, Node, NodeType
from .queries import get_node, graph_stats, neighbors, shortest_path
from .sampling import SampleSpec, sample_document_subgraph, web_seeds
from .web.crawl import CrawlOptions
from .web.pipeline import WebIngestReport, ingest_website
from .store import GraphStore
from .vectors import VectorStore

__all__ = ["GraphService", "SearchHit", "NeighborHit", "write_export"]


class SearchHit(BaseModel):
    """One semantic-search result."""

    node_id: str
    type: str
    score: float = Field(description="Cosine similarity to the query.")
    text: str
    page: int | None = None


class NeighborHit(BaseModel):
    """A node reached from another, with its distance in hops."""

    node_id: str
    type: str
    distance: int
    text: str


def _snippet(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class GraphService:
    """Ingest, store, query and sample knowledge graphs in one workspace."""

    def __init__(self, settings: Settings, browsers: BrowserPool | None = None) -> None:
        self.settings = settings
        self.browsers = browsers or BrowserPool(settings.chromium)
        self.workspace = Workspace(settings.workspace)
        self.store = GraphStore(self.workspace)
        self.vectors = VectorStore(self.workspace.chroma)
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()

    @property
    def embedder(self) -> Embedder:
        """The configured embedder, loaded on first use."""
        with self._lock:
            if self._embedder is None:
                self._embedder = make_embedder(self.settings)
            return self._embedder

    def ingest_document(self, source: str | Path, name: str | None = None, progress: ProgressFn | None = None) -> IngestReport:
        """Parse, build, embed and store one document (PDF, HTML, Markdown, text), given by path or http(s) URL."""
        if isinstance(source, str) and is_url(source):
            path = fetch_document(source, self.workspace.cache)
            name = name or Path(urlparse(source).path).stem or urlparse(source).netloc
            return ingest_document(path, self.settings, self.store, self.vectors, self.embedder, name, progress, origin=source)
        return ingest_document(Path(source), self.settings, self.store, self.vectors, self.embedder, name, progress)

    async def ingest_website(
        self,
        start_url: str,
        max_pages: int = 30,
        max_depth: int = 3,
        allowed_domains: list[str] | None = None,
        contexts: int = 1,
        name: str | None = None,
        progress: ProgressFn | None = None,
    ) -> WebIngestReport:
        """Crawl a website in a real browser (inside its allowed domains) into a web graph."""
        options = CrawlOptions(
            start_url=start_url,
            max_pages=max_pages,
            max_depth=max_depth,
            allowed_domains=allowed_domains,
            delay=self.settings.crawl_delay,
            page_timeout=self.settings.page_timeout,
            contexts=contexts,
        )
        return await ingest_website(options, self.settings, self.store, self.vectors, self.embedder, self.browsers, name, progress)

    def list_graphs(self) -> list[GraphMeta]:
        return self.store.list()

    def load(self, graph_id: str) -> KnowledgeGraph:
        return self.store.load(graph_id)

    def stats(self, graph_id: str) -> dict[str, object]:
        kg = self.load(graph_id)
        return {"graph_id": kg.id, "name": kg.meta.name, "embedder": kg.meta.embedder, **graph_stats(kg)}

    def _query_vector(self, kg: KnowledgeGraph, text: str) -> np.ndarray:
        if kg.meta.embedder and kg.meta.embedder != self.embedder.name:
            raise EmbedderError(
                f"graph {kg.id!r} was embedded with {kg.meta.embedder!r} but this server uses "
                f"{self.embedder.name!r}; set TASKLOOM_EMBEDDER to match or re-ingest the document"
            )
        return self.embedder.embed([text])[0]

    def search(self, graph_id: str, query: str, k: int = 10, node_types: Sequence[str] | None = None) -> list[SearchHit]:
        """Nodes whose embedded text is closest to ``query``."""
        if not query.strip():
            raise InputError("query is empty; pass some words to search for")
        if not 1 <= k <= 100:
            raise InputError(f"k={k} is out of range; use 1 to 100")
        kg = self.load(graph_id)
        _check_node_types(node_types)
        hits = self.vectors.query(kg.id, self._query_vector(kg, query), k, list(node_types) if node_types else None)
        out = []
        for node_id, score in hits:
            if node_id in kg:
                node = kg.node(node_id)
                out.append(SearchHit(node_id=node_id, type=node.type.value, score=round(score, 4), text=_snippet(node.text), page=node.source.page))
        return out

    def node(self, graph_id: str, node_id: str) -> Node:
        return get_node(self.load(graph_id), node_id)

    def neighbors(
        self,
        graph_id: str,
        node_id: str,
        hops: int = 1,
        edge_types: Sequence[str] | None = None,
        direction: Literal["out", "in", "both"] = "both",
        limit: int = 50,
    ) -> list[NeighborHit]:
        found = neighbors(self.load(graph_id), node_id, hops, edge_types, direction, limit)
        return [NeighborHit(node_id=n.id, type=n.type.value, distance=d, text=_snippet(n.text, 200)) for n, d in found]

    def path(self, graph_id: str, source: str, target: str, edge_types: Sequence[str] | None = None, directed: bool = False) -> list[Edge]:
        return shortest_path(self.load(graph_id), source, target, edge_types, directed)

    def sample(self, graph_id: str, spec: SampleSpec) -> KnowledgeGraph:
        """Graph2Eval Algorithm 1 on a stored graph (embeds the objective when one is given)."""
        kg = self.load(graph_id)
        _check_node_types(spec.node_types)
        _check_node_types(spec.struct_types)
        if spec.objective is not None and not spec.objective.strip():
            raise InputError("objective is blank; pass some words, or leave it out and sample by structure")
        if kg.meta.kind == "web" and not spec.seed_nodes and not spec.objective and not spec.struct_types:
            spec = spec.model_copy(update={"seed_nodes": web_seeds(kg, spec.seed)})
        objective = self._query_vector(kg, spec.objective) if spec.objective else None
        vectors = self.vectors.get_embeddings(kg.id) if objective is not None and self.vectors.has(kg.id) else {}
        return sample_document_subgraph(kg, spec, objective, vectors)

    def default_hops(self, graph_id: str) -> int:
        """k of the k-hop expansion when none is given: 2 for websites (seed-driven), 1 for documents."""
        return 2 if self.load(graph_id).meta.kind == "web" else 1

    def export(self, graph_id: str, fmt: Literal["json", "graphml"] = "json") -> str:
        return export_graph(self.load(graph_id), fmt)

    def delete(self, graph_id: str) -> None:
        """Delete a graph and its vectors."""
        self.store.delete(graph_id)
        self.vectors.delete(graph_id)


def write_export(target: Path, content: str) -> None:
    """Write an export atomically, turning file-system errors into a clear InputError."""
    try:
        atomic_write_text(target, content)
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror or exc}; pass a path in a writable directory") from None


def _check_node_types(types: Sequence[str] | None) -> None:
    valid = {t.value for t in NodeType}
    unknown = [t for t in types or [] if t not in valid]
    if unknown:
        raise InputError(f"unknown node type(s) {unknown}; valid types: {sorted(valid)}")

