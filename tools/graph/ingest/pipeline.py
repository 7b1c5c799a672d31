"""Ingest one document: detect its format, parse (the :mod:`.registry` parser for it), build the graph, link, embed, store.

The graph file is written last, after its vectors: a graph that is listed is
complete, and an ingestion interrupted half-way is simply run again. Everything but
those two writes (:func:`prepare_document`) needs no workspace lock, so concurrent
ingests parse and embed side by side and take turns only to write (:func:`store_document`).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, Field

from ...errors import DocumentError, InputError, NotFoundError
from ...llm.embedders import Embedder
from ...settings import Settings
from ..embedding import EmbedReport, GraphVectors, prepare_vectors, store_vectors, type_counts
from ..model import GraphMeta, KnowledgeGraph, NodeType
from ..store import GraphStore, make_graph_id
from ..vectors import VectorStore
from .blocks import ParsedDocument
from .builder import build_graph
from .entities import link_entities
from .floats import place_floats
from .links import link_citations, link_references
from .registry import parsers

__all__ = ["IngestReport", "PreparedDocument", "build_document_graph", "prepare_document", "store_document", "ingest_document", "detect_format", "EMBEDDED_TYPES", "SIMILARITY_TYPES"]

ProgressFn = Callable[[float, float, str], None]

#: Node types whose text is embedded into the vector store.
EMBEDDED_TYPES = (
    NodeType.HEADING, NodeType.PARAGRAPH, NodeType.LIST, NodeType.TABLE, NodeType.FIGURE,
    NodeType.CAPTION, NodeType.FORMULA, NodeType.FOOTNOTE, NodeType.REFERENCE, NodeType.CHUNK,
    NodeType.ENTITY,
)
#: Node types linked by ``semantic_similar`` (prose blocks; chunks would only echo their paragraphs).
SIMILARITY_TYPES = (NodeType.PARAGRAPH, NodeType.LIST, NodeType.TABLE, NodeType.CAPTION, NodeType.FOOTNOTE)


class IngestReport(BaseModel):
    """What an ingestion produced."""

    graph_id: str
    name: str
    format: str
    pages: int
    nodes: int
    edges: int
    embedded: int
    node_types: dict[str, int] = Field(default_factory=dict)
    edge_types: dict[str, int] = Field(default_factory=dict)
    seconds: dict[str, float] = Field(default_factory=dict, description="Time per phase.")
    embedding: EmbedReport = Field(default_factory=EmbedReport, description="Texts embedded, read from the cache and derived.")


def detect_format(path: Path) -> str:
    """The registered format of a file ('pdf', 'html', 'markdown', 'text', …): a parser's magic bytes,
    then its suffixes, then a sniff of the text; plain text otherwise."""
    with open(path, "rb") as fh:
        head = fh.read(1024)
    entries = parsers.entries()
    suffix = path.suffix.lower()
    for entry in entries:
        if any(head.startswith(m) for m in entry.meta.get("magic", ())):
            return entry.name
    for entry in entries:
        if suffix in entry.meta.get("suffixes", ()):
            return entry.name
    if b"\x00" in head:
        raise DocumentError(f"{path} is a binary file Taskloom cannot read; pass a file of a registered format ({', '.join(parsers.names())})")
    lowered = head.lstrip().lower()
    for entry in entries:
        if any(lowered.startswith(m) for m in entry.meta.get("sniff", ())):
            return entry.name
    return "text"


def _parse(path: Path, fmt: str, settings: Settings, progress: ProgressFn | None) -> ParsedDocument:
    entry = parsers.get(fmt)
    options = {"progress": progress, "max_pages": settings.max_pages}
    parsed: ParsedDocument = entry.factory(path, **{k: v for k, v in options.items() if entry.accepts(k)})
    if progress and not entry.accepts("progress"):
        progress(1, 1, "parsed")
    return parsed


def build_document_graph(
    path: Path,
    settings: Settings,
    name: str | None = None,
    progress: ProgressFn | None = None,
    timings: dict[str, float] | None = None,
) -> KnowledgeGraph:
    """Parse a document and build its linked graph (structure, references, citations, entities).

    Everything but embedding; ``timings`` (when given) receives seconds per phase.
    """
    path = Path(path).expanduser().resolve()
    if not path.exists():
        raise NotFoundError(f"no file at {path}; check the path (relative paths are resolved from {Path.cwd()})")
    if not path.is_file():
        raise InputError(f"{path} is a directory; pass one document file")
    timings = timings if timings is not None else {}
    clock = time.perf_counter()
    fmt = detect_format(path)
    parsed = _parse(path, fmt, settings, progress)
    if not any(block.text or block.cells for block in parsed.blocks):
        raise DocumentError(f"{path} contains no text to build a graph from; check that it is the right file and not empty")
    timings["parse"] = time.perf_counter() - clock

    clock = time.perf_counter()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    graph_id = make_graph_id(name or path.stem, digest)
    meta = GraphMeta(id=graph_id, name=name or parsed.title or path.name, kind="document", sources=[str(path.resolve())])
    kg = build_graph(parsed, meta, settings.chunk_chars, settings.chunk_overlap)
    link_references(kg)
    place_floats(kg)
    link_citations(kg)
    link_entities(kg)
    kg.meta.stats.update(format=fmt, pages=parsed.pages, sha256=digest)
    timings["build"] = time.perf_counter() - clock
    return kg


class PreparedDocument(NamedTuple):
    """A document's graph and vectors, built and embedded but not stored (see :func:`prepare_document`)."""

    kg: KnowledgeGraph
    vectors: GraphVectors
    timings: dict[str, float]
    embedding: EmbedReport


def prepare_document(
    path: Path,
    settings: Settings,
    embedder: Embedder,
    name: str | None = None,
    progress: ProgressFn | None = None,
    origin: str | None = None,
) -> PreparedDocument:
    """Parse ``path``, build its graph and embed it: all the slow work, none of it written to the workspace.

    ``origin`` (a URL the file was fetched from) is recorded as the graph's source.
    """
    timings: dict[str, float] = {}
    kg = build_document_graph(path, settings, name, progress, timings)
    if origin:
        kg.meta.sources = [origin]
    clock = time.perf_counter()
    embedding = EmbedReport()
    prepared = prepare_vectors(kg, settings, embedder, EMBEDDED_TYPES, SIMILARITY_TYPES, progress, embedding)
    timings["embed"] = time.perf_counter() - clock
    return PreparedDocument(kg, prepared, timings, embedding)


def store_document(prepared: PreparedDocument, store: GraphStore, vectors: VectorStore, embedder: Embedder) -> IngestReport:
    """Write a prepared document's graph file and vectors (the part that needs the workspace lock).

    The graph file is written first under a temporary name, then the vectors, then the file takes its
    place: a disk that fills up frees the file's space, so the failed ingest's vectors can be dropped.
    """
    kg, timings, embedding = prepared.kg, prepared.timings, prepared.embedding
    clock = time.perf_counter()
    embedded = len(prepared.vectors.nodes)
    kg.meta.stats.update(embedded=embedded, nodes=len(kg), edges=kg.g.number_of_edges())
    store.save(kg, before_replace=lambda: store_vectors(kg, prepared.vectors, vectors, embedder, embedding))
    timings["store"] = time.perf_counter() - clock
    embedding.seconds = {k: round(v, 3) for k, v in embedding.seconds.items()}
    counts = type_counts(kg)
    return IngestReport(
        graph_id=kg.id,
        name=kg.meta.name,
        format=kg.meta.stats["format"],
        pages=kg.meta.stats["pages"],
        nodes=len(kg),
        edges=kg.g.number_of_edges(),
        embedded=embedded,
        node_types=counts[0],
        edge_types=counts[1],
        seconds={k: round(v, 3) for k, v in timings.items()},
        embedding=embedding,
    )


def ingest_document(
    path: Path,
    settings: Settings,
    store: GraphStore,
    vectors: VectorStore,
    embedder: Embedder,
    name: str | None = None,
    progress: ProgressFn | None = None,
    origin: str | None = None,
) -> IngestReport:
    """Parse ``path`` into a knowledge graph, embed it, and store both (:func:`prepare_document`, then :func:`store_document`).

    The graph id is derived from the name and the file's content hash, so ingesting
    the same file again replaces its graph instead of duplicating it. ``origin`` (a
    URL the file was fetched from) is recorded as the graph's source.
    """
    return store_document(prepare_document(path, settings, embedder, name, progress, origin), store, vectors, embedder)
