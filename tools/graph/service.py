"""GraphService: the graph capability as one object — what the CLI, the MCP tools and library users call."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from ..errors import EmbedderError, InputError, TaskloomError
from ..security.disk import storage_error
from ..security.lock import WorkspaceLock
from ..browser import BrowserPool, EnvironmentUnavailable
from ..llm.embedders import Embedder, make_embedder
from ..settings import Settings
from ..workspace import Workspace, atomic_write_text
from .export import export_graph
from .facts import FactsResult, graph_facts
from .ingest.fetch import fetch_document, is_url
from .ingest.pipeline import EMBEDDED_TYPES, IngestReport, ProgressFn, prepare_document, store_document
from .lexical import LexicalIndex, fuse
from .model import Edge, GraphMeta, KnowledgeGraph, Node, NodeType
from .queries import get_node, graph_stats, neighbors, shortest_path
from .sampling import SampleSpec, sample_document_subgraph, web_seeds
from .web.capture import CrawlOptions
from .web.pipeline import WEB_EMBEDDED_TYPES, CrawlJob, Crawled, WebIngestReport, ingest_website, store_crawl, website_graph_id
from .store import GraphStore, validate_graph_id
from .vectors import VectorStore

__all__ = ["GraphService", "SearchHit", "SearchMode", "NeighborHit", "write_export"]

log = logging.getLogger(__name__)
#: Matches each ranking contributes to a hybrid search before fusion.
FUSION_DEPTH = 50
#: Graphs whose BM25 index is kept in memory.
LEXICAL_CACHE = 8


SearchMode = Literal["hybrid", "vector", "lexical"]


class SearchHit(BaseModel):
    """One search result."""

    node_id: str
    type: str
    score: float = Field(description="hybrid: the reciprocal-rank-fusion score; vector: cosine similarity; lexical: BM25 score.")
    text: str
    page: int | None = None
    vector_rank: int | None = Field(None, description="Rank among the embedding matches (1 = nearest), when it is among them.")
    lexical_rank: int | None = Field(None, description="Rank among the BM25 matches, when it is among them.")


class NeighborHit(BaseModel):
    """A node reached from another, with its distance in hops."""

    node_id: str
    type: str
    distance: int
    text: str


#: Short labels (titles, names) that a question's embedding lies close to whatever they name; in hybrid search
#: only their exact terms (BM25) bring them up (bench/search.py: hybrid MRR 0.735 -> 0.744). So does code (an R call,
#: a program's output): its embedding lies close to any question naming the same functions, and the passage that
#: answers in words is elsewhere (0.769 -> 0.774, and 0.608 -> 0.629 on the 40 held-out questions; none ranked worse).
_LABEL_TYPES = frozenset({NodeType.HEADING, NodeType.ENTITY})


def _by_terms_only(node: Node) -> bool:
    """Whether hybrid search takes ``node`` from BM25 only: a label, or code."""
    return node.type in _LABEL_TYPES or bool(node.attrs.get("code"))
#: A contents or index entry: dot leaders, then a page number ("2.1 Data frame . . . . 3"); a listing, not a passage.
_CONTENTS_LINE = re.compile(r"(?:\.\s?){4,}\s*\d+\b")


class SiteIngest(BaseModel):
    """One site of :meth:`GraphService.ingest_websites`: its report, or why it was not stored; where it was crawled."""

    start_url: str
    graph_id: str
    report: WebIngestReport | None = None
    error: str | None = None
    crawled_on: dict[str, Any] = Field(default_factory=dict, description="host and pid of the process that crawled it (and node, on Ray).")


def _covers(node: Node) -> set[str]:
    """The passages a hit shows: a chunk's member nodes, or the node itself."""
    members = node.attrs.get("members") if node.type == NodeType.CHUNK else None
    return {str(m) for m in members} if members else {node.id}


def _snippet(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class GraphService:
    """Ingest, store, query and sample knowledge graphs in one workspace.

    Built by :class:`taskloom.tools.runtime.Runtime`, which hands it the process's
    browser pool (crawling needs one; the runtime closes it) and its embedder loader.
    Without a ``browsers`` pool it ingests, queries and samples but cannot crawl; without
    an ``embedder`` loader it loads the configured embedder itself on first use.
    """

    def __init__(self, settings: Settings, browsers: BrowserPool | None = None, embedder: Callable[[], Embedder] | None = None) -> None:
        self.settings = settings
        self.browsers = browsers
        self.workspace = Workspace(settings.workspace)
        self.store = GraphStore(self.workspace)
        self.vectors = VectorStore(self.workspace.chroma, settings.chroma_url)
        self._load_embedder = embedder
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()
        self._lexical_indexes: dict[str, tuple[tuple[object, ...], LexicalIndex]] = {}

    @property
    def embedder(self) -> Embedder:
        """The configured embedder, loaded on first use."""
        with self._lock:
            if self._embedder is None:
                self._embedder = self._load_embedder() if self._load_embedder is not None else make_embedder(self.settings)
            return self._embedder

    def write_lock(self, what: str) -> WorkspaceLock:
        """The workspace's graph lock, held by every writer of graphs, vectors and screenshots."""
        return WorkspaceLock(self.workspace.root, "graphs", self.settings.lock_timeout, what)

    def ingest_document(self, source: str | Path, name: str | None = None, progress: ProgressFn | None = None) -> IngestReport:
        """Parse, build, embed and store one document (PDF, HTML, Markdown, text), given by path or http(s) URL.

        Fetching, parsing and embedding need no lock; the workspace lock is held only
        while the vectors and the graph file are written, so concurrent ingests wait for
        each other's writes, not for each other's parsing. A failure removes the vectors
        it had written for a graph that was not stored.
        """
        origin: str | None = None
        if isinstance(source, str) and is_url(source):
            origin = source
            path = fetch_document(source, self.workspace.cache, self.settings.fetch_timeout, self.settings.fetch_max_bytes)
            name = name or Path(urlparse(source).path).stem or urlparse(source).netloc
        else:
            path = Path(source)
        prepared = prepare_document(path, self.settings, self.embedder, name, progress, origin)
        with self.write_lock(f"ingest {origin or path}"):
            before: set[str] | None = None
            try:
                before = self._collection_names()
                return store_document(prepared, self.store, self.vectors, self.embedder)
            except BaseException as exc:
                self._discard_partial(before)
                clear = storage_error(exc, f"the graph of {origin or path}", self.workspace.root)
                if clear is not None:
                    raise clear from exc
                raise

    def crawl_options(
        self, start_url: str, max_pages: int = 30, max_depth: int = 3, allowed_domains: list[str] | None = None, contexts: int = 2, **tuning: Any
    ) -> CrawlOptions:
        """Validated crawl options with this workspace's delay and page timeout; ``tuning``: further :class:`CrawlOptions` fields."""
        try:
            return CrawlOptions(
                start_url=start_url,
                max_pages=max_pages,
                max_depth=max_depth,
                allowed_domains=allowed_domains,
                delay=self.settings.crawl_delay,
                page_timeout=self.settings.page_timeout,
                contexts=contexts,
                **tuning,
            )
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise InputError(f"bad crawl options ({problems}); see CrawlOptions for the fields and their ranges") from None

    async def ingest_website(
        self,
        start_url: str,
        max_pages: int = 30,
        max_depth: int = 3,
        allowed_domains: list[str] | None = None,
        contexts: int = 2,
        name: str | None = None,
        progress: ProgressFn | None = None,
        **tuning: Any,
    ) -> WebIngestReport:
        """Crawl a website in a real browser (inside its allowed domains) into a web graph.

        ``tuning``: further :class:`CrawlOptions` fields (``template_cap``, ``listing_cap``,
        ``max_states``, ``click_budget``, timeouts…), validated there.

        Holds the workspace lock for the whole crawl; a failure removes the screenshots
        and vectors of a graph that was not stored before.
        """
        if self.browsers is None:
            raise EnvironmentUnavailable("this graph service has no browser pool to crawl with; build it through taskloom.tools.runtime.Runtime")
        browsers = self.browsers
        options = self.crawl_options(start_url, max_pages, max_depth, allowed_domains, contexts, **tuning)
        async with self.write_lock(f"crawl {start_url}"):
            graph_id = website_graph_id(options, name)
            with self._undone_on_failure(graph_id, start_url):
                report = await ingest_website(options, self.settings, self.store, self.vectors, self.embedder, browsers, name, progress)
            return report

    async def ingest_websites(self, sites: list[CrawlOptions], crawl_all: Callable[[list[CrawlJob]], list[Crawled]], progress: ProgressFn | None = None) -> list[SiteIngest]:
        """Crawl several sites through ``crawl_all`` (elsewhere: each in a browser of its own, see :func:`crawl_job`), then store each graph here.

        Holds the workspace lock throughout; the crawls write only their graphs'
        screenshots (so the workspace must be the same path wherever they run). A site
        whose crawl or storing fails is reported with its error; the others are stored.
        """
        jobs = [CrawlJob(options=o, screenshots=self.store.assets_dir(website_graph_id(o)) / "pages", chromium=self.settings.chromium, login=self.settings.site_login) for o in sites]
        async with self.write_lock(f"crawl {len(sites)} sites"):
            existed = {job.options.start_url: self.store.exists(website_graph_id(job.options)) for job in jobs}
            crawls = await asyncio.to_thread(crawl_all, jobs)
            done: list[SiteIngest] = []
            for i, (job, crawled) in enumerate(zip(jobs, crawls, strict=True)):
                graph_id = website_graph_id(job.options)
                outcome = SiteIngest(start_url=job.options.start_url, graph_id=graph_id, error=crawled.error, crawled_on=crawled.model_dump(include={"host", "pid", "node"}, exclude_none=True))
                if crawled.result is None:
                    if not existed[outcome.start_url]:
                        self._discard_assets(graph_id)
                else:
                    try:
                        with self._undone_on_failure(graph_id, outcome.start_url):
                            outcome.report = store_crawl(crawled.result, graph_id, self.settings, self.store, self.vectors, self.embedder, crawled=crawled.seconds)
                    except TaskloomError as exc:
                        outcome.error = str(exc)
                done.append(outcome)
                if progress is not None:
                    progress(i + 1, len(jobs), f"stored {outcome.start_url}")
            return done

    @contextlib.contextmanager
    def _undone_on_failure(self, graph_id: str, start_url: str) -> Iterator[None]:
        """Under the write lock: if the block fails, remove the screenshots and vectors of a graph that was not stored before."""
        existed = self.store.exists(graph_id)
        before: set[str] | None = None
        try:
            before = self._collection_names()
            yield
        except BaseException as exc:
            if not existed and not self.store.exists(graph_id):
                self._discard_assets(graph_id)
            self._discard_partial(before)
            clear = storage_error(exc, f"the graph of {start_url}", self.workspace.root)
            if clear is not None:
                raise clear from exc
            raise

    def _collection_names(self) -> set[str]:
        return {c.name for c in self.vectors.collections(count=False)}

    def _discard_partial(self, before: set[str] | None) -> None:
        """After a failed write: drop collections created since ``before`` whose graph was not stored.

        Runs under the write lock, so no other writer's collection can be caught. A
        cleanup that fails itself (a full disk) is logged and left to ``taskloom gc``.
        """
        if before is None:
            return  # failed before anything was written
        try:
            for col in self.vectors.collections(count=False):
                if col.name not in before and (col.graph_id is None or not self.store.exists(col.graph_id)):
                    self.vectors.drop(col.name)
        except Exception as err:  # noqa: BLE001 - never hide the error that caused the cleanup
            log.warning("could not remove the partial vectors of a failed ingest (%s); `taskloom gc` removes them", err)

    def _discard_assets(self, graph_id: str) -> None:
        assets = self.store.assets_dir(graph_id)
        try:
            shutil.rmtree(assets)
        except FileNotFoundError:
            return
        except OSError as err:
            log.warning("could not remove the screenshots of a failed crawl at %s (%s); `taskloom gc` removes them", assets, err)

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

    def _lexical(self, kg: KnowledgeGraph) -> LexicalIndex:
        """The graph's BM25 index, built on first use and rebuilt when the graph changed."""
        version = (kg.meta.created_at, len(kg), kg.g.number_of_edges())
        with self._lock:
            cached = self._lexical_indexes.get(kg.id)
        if cached is not None and cached[0] == version:
            return cached[1]
        index = LexicalIndex.of_graph(kg, WEB_EMBEDDED_TYPES if kg.meta.kind == "web" else EMBEDDED_TYPES)
        with self._lock:
            self._lexical_indexes[kg.id] = (version, index)
            while len(self._lexical_indexes) > LEXICAL_CACHE:
                self._lexical_indexes.pop(next(iter(self._lexical_indexes)))
        return index

    def search(self, graph_id: str, query: str, k: int = 10, node_types: Sequence[str] | None = None, mode: SearchMode | None = None) -> list[SearchHit]:
        """Nodes that match ``query``: by meaning, by exact terms, or both fused (``mode``, default ``settings.search_mode``)."""
        if not query.strip():
            raise InputError("query is empty; pass some words to search for")
        if not 1 <= k <= 100:
            raise InputError(f"k={k} is out of range; use 1 to 100")
        mode = mode or self.settings.search_mode
        if mode not in ("hybrid", "vector", "lexical"):
            raise InputError(f"search mode {mode!r} is not one of hybrid, vector, lexical")
        kg = self.load(graph_id)
        _check_node_types(node_types)
        types = list(node_types) if node_types else None
        depth = max(FUSION_DEPTH, 2 * k)  # room for identical texts (a chunk repeating its paragraph) left out below
        vector = self.vectors.query(kg.id, self._query_vector(kg, query), depth, types) if mode != "lexical" else []
        lexical = self._lexical(kg).query(query, depth, types) if mode != "vector" else []
        vector_rank = {node_id: r for r, (node_id, _) in enumerate(vector, start=1)}
        lexical_rank = {node_id: r for r, (node_id, _) in enumerate(lexical, start=1)}
        if mode == "hybrid":
            passages = [(i, s) for i, s in vector if i in kg and not _by_terms_only(kg.node(i))]
            ranked = fuse(passages, lexical, k=depth)
        else:
            ranked = vector or lexical
        out: list[SearchHit] = []
        seen: set[str] = set()
        shown: set[str] = set()  # the passages the hits so far cover (a chunk covers its members)
        for node_id, score in ranked:
            if node_id not in kg or len(out) == k:
                continue
            node = kg.node(node_id)
            same = " ".join(node.text.split()).casefold()
            covers = _covers(node)
            if same in seen or covers <= shown or _CONTENTS_LINE.search(node.text):  # identical text, or passages every one of which is already shown: not a new hit
                continue
            seen.add(same)
            shown |= covers
            out.append(SearchHit(
                node_id=node_id, type=node.type.value, score=round(score, 4 if mode != "hybrid" else 6), text=_snippet(node.text),
                page=node.source.page, vector_rank=vector_rank.get(node_id), lexical_rank=lexical_rank.get(node_id),
            ))  # fmt: skip
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

    def facts(
        self,
        graph_id: str,
        listing: str | None = None,
        where: dict[str, str] | None = None,
        query: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> FactsResult:
        """The records of a web graph (filtered by listing, field values and text) and its listings with their completeness."""
        return graph_facts(self.load(graph_id), listing, where, query, limit, offset)

    def default_hops(self, graph_id: str) -> int:
        """k of the k-hop expansion when none is given: 2 for websites (seed-driven), 1 for documents."""
        return 2 if self.load(graph_id).meta.kind == "web" else 1

    def export(self, graph_id: str, fmt: Literal["json", "graphml"] = "json") -> str:
        return export_graph(self.load(graph_id), fmt)

    def delete(self, graph_id: str) -> None:
        """Delete a graph, its vectors and its screenshots — each even when the others are gone.

        Raises NotFoundError only when none of the three exists.
        """
        validate_graph_id(graph_id)
        with self.write_lock(f"delete graph {graph_id}"):
            had_file = self.store.exists(graph_id)
            if had_file:
                self.store.delete(graph_id)
            had_vectors = self.vectors.delete(graph_id)
            assets = self.store.assets_dir(graph_id)
            had_assets = assets.exists()
            if had_assets:
                shutil.rmtree(assets)
            if not (had_file or had_vectors or had_assets):
                self.store.delete(graph_id)  # raises NotFoundError listing the known ids


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

