"""Embed a graph's text nodes into its vector collection, and link similar ones.

Embedding is most of an ingestion's time, so the model sees every word once and no more:

* every distinct text is embedded once (texts compared with whitespace collapsed, which
  the tokenizer ignores anyway, and without dot leaders, which cost a word piece a dot and
  were a seventh of R-exts.pdf's word pieces);
* a text longer than :data:`EMBED_MAX_TOKENS` MiniLM word pieces is split at word boundaries
  into about equal pieces, and its vector is the mean of theirs, weighted by length;
* code, formulas, tables and references (exact terms, which BM25 finds) are embedded from
  their first :data:`EXACT_MAX_TOKENS` word pieces only;
* a chunk (which repeats its paragraphs' text) takes the mean of the pieces of its members
  that it covers, weighted by the characters covered, with a fifth of its section title's
  vector mixed in, instead of being embedded again;
* vectors are kept per workspace (``cache/embeddings.sqlite3``) by the hash of the embedder
  and the exact input, so re-ingesting unchanged text embeds nothing.

MiniLM's vectors do not depend on the batch a text is embedded in, so cached and freshly
computed vectors are bitwise the same, and the same inputs always give the same vectors.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from ..llm.embedders import Embedder, MiniLMEmbedder
from ..settings import Settings
from .ingest.similarity import link_similar
from .model import KnowledgeGraph, Node, NodeType
from .vectors import VectorStore

__all__ = ["prepare_vectors", "store_vectors", "GraphVectors", "embed_nodes", "embed_inputs", "type_counts", "EmbedReport", "EmbeddingCache", "Splitter", "InputPlan", "plan_inputs", "splitter_for", "EMBED_MAX_TOKENS"]

log = logging.getLogger(__name__)

ProgressFn = Callable[[float, float, str], None]

#: Most MiniLM word pieces (with [CLS] and [SEP]) in one model input; longer texts are split into
#: about equal pieces of at most this many, at word boundaries. Chosen with bench/search.py
#: among 128, 192 and 256 (bench/README.md): the one at least as good as embedding every node on every number.
EMBED_MAX_TOKENS: int = 192
#: Code, formulas, tables and references are exact terms (BM25's job): their vector is made from their first
#: EXACT_MAX_TOKENS word pieces only. Measured with bench/search.py: better vector and hybrid MRR and recall
#: than embedding them whole (long code and tables of numbers drew unrelated questions), and fewer word pieces.
EXACT_TYPES = frozenset({NodeType.FORMULA, NodeType.TABLE, NodeType.REFERENCE})
EXACT_MAX_TOKENS: int | None = 32
#: Node types whose vector is derived from their members' (``attrs["members"]``) when all have text.
DERIVED_TYPES = frozenset({NodeType.CHUNK})
#: Share of a derived chunk's vector taken from its section's title (measured with bench/search.py:
#: 0.1 and 0.2 beat 0 on every number, 0.3 does worse; BM25 indexes section titles with chunks too).
SECTION_WEIGHT = 0.2
#: Inputs per embedder call (the embedder batches inside): the first call embeds :data:`_SLICE_FIRST`, each
#: next one as many characters as took about :data:`_SLICE_SECONDS` before (at most twice as many texts, between
#: :data:`_SLICE_MIN` and :data:`_SLICE_MAX`), so progress moves every two seconds or so whatever the model's speed.
_SLICE_FIRST, _SLICE_MIN, _SLICE_MAX = 32, 16, 1024
_SLICE_SECONDS = 2.0
_CACHE_FILE = "embeddings.sqlite3"
#: The cache writes nothing on a disk with less free space than this: it must never take the last of it.
_CACHE_MIN_FREE = 64 * 1024 * 1024

Span = tuple[int, int]
#: Dot leaders of contents and index lines (". . . . 45"): a word piece per dot, and no meaning.
_LEADER = re.compile(r"(?:\.\s?){4,}|(?:…\s?){2,}")


class EmbedReport(BaseModel):
    """What embedding a graph did."""

    nodes: int = Field(0, description="Nodes given a vector (stored in the vector collection).")
    texts: int = Field(0, description="Distinct texts those vectors needed (chunks are derived from their members).")
    inputs: int = Field(0, description="Distinct model inputs those texts make (long texts are split into pieces).")
    cached: int = Field(0, description="Inputs whose vector came from the workspace's cache.")
    computed: int = Field(0, description="Inputs the embedder embedded.")
    derived: int = Field(0, description="Nodes whose vector is the mean of their members'.")
    split: int = Field(0, description="Texts longer than one model input.")
    seconds: dict[str, float] = Field(default_factory=dict, description="embed (texts), link (semantic_similar), store (vector upsert).")


def _norm(text: str) -> str:
    """The text a node's vector is made from: dot leaders dropped, whitespace collapsed."""
    return " ".join(_LEADER.sub(" ", text).split())


class Splitter:
    """Splits texts into pieces of at most ``max_tokens`` MiniLM word pieces (with [CLS] and [SEP]).

    Pieces are about equal in length and end at word boundaries, so each piece tokenises
    to exactly its share of the text's word pieces.
    """

    def __init__(self, max_tokens: int) -> None:
        from tokenizers import Tokenizer

        from ..llm.embedders import _TOKENIZER_PATH

        if max_tokens < 3:
            raise ValueError(f"max_tokens must be at least 3, got {max_tokens}")
        self.max_tokens = max_tokens
        self._tok = Tokenizer.from_file(str(_TOKENIZER_PATH))
        self._tok.no_padding()
        self._tok.no_truncation()

    def spans(self, texts: Sequence[str], head: int | None = None) -> list[list[Span]]:
        """Character spans of the pieces of each text (one span, the whole text, when it fits).

        ``head``: instead, one span of the text's first ``head`` word pieces (with [CLS] and [SEP]), at a word boundary.
        """
        room = (head or self.max_tokens) - 2
        out: list[list[Span]] = [[(0, len(t))] for t in texts]
        # A word piece covers at least one character: shorter texts need no tokenising.
        long = [i for i, t in enumerate(texts) if len(t) > room]
        for lo in range(0, len(long), 2000):  # encodings are large: a slice at a time
            part = long[lo : lo + 2000]
            for i, enc in zip(part, self._tok.encode_batch([texts[i] for i in part])):
                if len(enc.ids) - 2 > room:
                    out[i] = _pieces(len(enc.ids) - 2, enc.word_ids, enc.offsets, room, head is not None)
        return out


def _pieces(n: int, words: list[int | None], offsets: list[tuple[int, int]], room: int, head: bool) -> list[Span]:
    """Spans of about equal parts of ``n`` word pieces, each at most ``room``, or of the first part only
    (``head``, then ``room`` long); ``words`` and ``offsets`` include [CLS] and [SEP]."""
    size = room if head else -(-n // -(-n // room))  # n split into equal parts of at most `room`
    pieces: list[Span] = []
    first = 1
    while first <= n and not (head and pieces):
        stop = min(first + size, n + 1)  # first word piece of the next part
        if stop <= n:
            back = stop
            while back > first + 1 and words[back] == words[back - 1]:
                back -= 1
            if words[back] != words[back - 1]:
                stop = back  # at a word boundary (a word longer than a part is split inside)
        pieces.append((offsets[first][0], offsets[stop - 1][1]))
        first = stop
    return pieces


class EmbeddingCache:
    """Vectors by the sha256 of (embedder name, variant, exact input text), in one SQLite file.

    Parameters
    ----------
    path
        The SQLite file (usually ``<workspace>/cache/embeddings.sqlite3``).

    A cache that cannot be read or written (a full disk, a corrupt file) is logged once and
    left out from then on: embedding then simply costs what it would without it. Nothing is
    written while the disk has less than 64 MiB free. Inside ``with cache:`` one connection
    serves every call; outside, each call opens its own.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._broken = False
        self._held: sqlite3.Connection | None = None

    def __enter__(self) -> EmbeddingCache:
        with self._lock:
            if self._held is None and not self._broken:
                try:
                    self._held = self._connect()
                except sqlite3.Error as err:
                    self._fail("unreadable", err)
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            if self._held is not None:
                self._held.close()
                self._held = None

    def _fail(self, what: str, err: sqlite3.Error) -> None:
        self._broken = True
        log.warning("embedding cache %s is %s (%s); embedding without it (delete the file to start a new one)", self.path, what, err)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        if self._held is not None:
            yield self._held
            return
        with closing(self._connect()) as db:
            yield db

    @classmethod
    def of_workspace(cls, workspace: Path) -> EmbeddingCache:
        """The cache of the workspace at ``workspace``."""
        return cls(Path(workspace).expanduser().resolve() / "cache" / _CACHE_FILE)

    @staticmethod
    def key(embedder: Embedder, text: str) -> bytes:
        """The cache key of ``text`` embedded by ``embedder``."""
        return hashlib.sha256(f"{embedder.name}\0{embedder.variant}\0{embedder.dim}\0{text}".encode()).digest()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        db.execute("PRAGMA page_size=8192")  # a new file only: 1.7 kB a 384-d vector (4 kB pages waste a third)
        db.execute("PRAGMA synchronous=NORMAL")  # rollback journal: a failed write leaves no grown log behind
        db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")
        return db

    def get(self, keys: Sequence[bytes], dim: int) -> dict[bytes, np.ndarray]:
        """The cached vectors of ``keys`` (those of another length are ignored)."""
        found: dict[bytes, np.ndarray] = {}
        if not keys or self._broken:
            return found
        try:
            with self._lock, self._db() as db:
                for lo in range(0, len(keys), 500):
                    part = keys[lo : lo + 500]
                    rows = db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))})", part)
                    for key, blob in rows:
                        if len(blob) == 4 * dim:
                            found[bytes(key)] = np.frombuffer(blob, dtype=np.float32)
        except sqlite3.Error as err:
            self._fail("unreadable", err)
            return {}
        return found

    def put(self, items: Iterable[tuple[bytes, np.ndarray]]) -> None:
        """Store vectors by key (existing keys are kept)."""
        rows = [(key, np.ascontiguousarray(vec, dtype=np.float32).tobytes()) for key, vec in items]
        if not rows or self._broken:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if shutil.disk_usage(self.path.parent).free < _CACHE_MIN_FREE:
            self._broken = True
            log.info("less than %d MiB free for the embedding cache %s; not caching this ingestion", _CACHE_MIN_FREE >> 20, self.path)
            return
        try:
            with self._lock, self._db() as db, db:
                db.executemany("INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)", rows)
        except sqlite3.Error as err:
            self._fail("not writable", err)

    def __len__(self) -> int:
        if not self.path.exists():
            return 0
        with self._lock, self._db() as db:
            return int(db.execute("SELECT count(*) FROM vectors").fetchone()[0])


_splitters: dict[int, Splitter] = {}
_splitters_lock = threading.Lock()


def splitter_for(embedder: Embedder, max_tokens: int | None = None) -> Splitter | None:
    """The input splitter for ``embedder``: MiniLM's word pieces; none for other embedders."""
    limit = max_tokens or EMBED_MAX_TOKENS
    if not isinstance(embedder, MiniLMEmbedder):
        return None
    with _splitters_lock:
        if limit not in _splitters:
            _splitters[limit] = Splitter(limit)
        return _splitters[limit]


def _overlaps(text: str, members: Sequence[str]) -> list[Span]:
    """The span of each member's text that ``text`` covers, ``text`` being a window over the members joined by spaces."""
    parts = [_norm(m) for m in members]
    full, window = " ".join(parts), _norm(text)
    start = full.find(window)
    if start < 0:
        return [(0, len(p)) for p in parts]
    end, pos, spans = start + len(window), 0, []
    for part in parts:
        spans.append((max(0, start - pos), max(0, min(len(part), end - pos))))
        pos += len(part) + 1
    return spans


def _derivations(kg: KnowledgeGraph, nodes: Sequence[Node]) -> dict[int, list[tuple[str, Span]]]:
    """Nodes (by index) whose vector is derived from their members': each member's id and covered span.

    Members must be embedded nodes of other types (a chunk's paragraphs and lists).
    """
    data = kg.g.nodes
    has_text = {n.id for n in nodes if n.type not in DERIVED_TYPES}
    out: dict[int, list[tuple[str, Span]]] = {}
    for i, node in enumerate(nodes):
        members = node.attrs.get("members") if node.type in DERIVED_TYPES else None
        if not members or not all(m in has_text for m in members):
            continue
        spans = _overlaps(node.text, [data[m]["text"] for m in members])
        if any(b > a for a, b in spans):
            out[i] = [(m, span) for m, span in zip(members, spans) if span[1] > span[0]]
    return out


def embed_inputs(texts: Sequence[str], embedder: Embedder, cache: EmbeddingCache | None, progress: ProgressFn | None = None) -> tuple[np.ndarray, int]:
    """Unit vectors of distinct model inputs, read from ``cache`` when there; and how many came from it.

    ``progress(done, total, message)`` counts the inputs embedded (those not in the cache): once
    before the first embedder call, then after each call, about every :data:`_SLICE_SECONDS`.
    """
    matrix = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    keys = [EmbeddingCache.key(embedder, t) for t in texts]
    found = cache.get(keys, embedder.dim) if cache is not None else {}
    todo = []
    for i, key in enumerate(keys):
        if key in found:
            matrix[i] = found[key]
        else:
            todo.append(i)
    todo.sort(key=lambda i: len(texts[i]))
    if progress and todo:
        progress(0, len(todo), f"embedding {len(todo)} texts ({len(found)} cached)")
    lo, size = 0, _SLICE_FIRST
    while lo < len(todo):
        idx = todo[lo : lo + size]
        clock = time.perf_counter()
        matrix[idx] = embedder.embed([texts[i] for i in idx])
        took = time.perf_counter() - clock
        if cache is not None:
            cache.put((keys[i], matrix[i]) for i in idx)
        lo += len(idx)
        if progress:
            progress(lo, len(todo), f"embedded {lo}/{len(todo)} texts ({len(found)} cached)")
        size = _next_slice([len(texts[i]) for i in idx], took, [len(texts[i]) for i in todo[lo : lo + 2 * len(idx)]])
    return matrix, len(texts) - len(todo)


def _next_slice(done: list[int], seconds: float, coming: list[int]) -> int:
    """How many of the ``coming`` texts (their lengths; at most twice as many as were ``done``) to embed next.

    As many as take about :data:`_SLICE_SECONDS` at the pace the ``done`` texts took (characters per second;
    texts come shortest first, so the next ones are longer), between :data:`_SLICE_MIN` and :data:`_SLICE_MAX`.
    """
    budget = sum(done) * _SLICE_SECONDS / seconds if seconds > 0 else float("inf")
    n, used = 0, 0
    for length in coming:
        if used + length > budget and n >= _SLICE_MIN:
            break
        n, used = n + 1, used + length
    return max(_SLICE_MIN, min(_SLICE_MAX, n))


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / max(float(np.linalg.norm(x)), 1e-12)).astype(np.float32)


def _mean(vectors: np.ndarray, spans: Sequence[Span], within: Span) -> np.ndarray:
    """The unit mean of piece ``vectors``, each weighted by the characters of its span inside ``within``."""
    weights = np.array([max(0, min(b, within[1]) - max(a, within[0])) for a, b in spans], dtype=np.float64)
    if not weights.any():
        weights = np.ones(len(spans))  # a window between two pieces (only whitespace): all of them
    return _unit(weights @ vectors.astype(np.float64))


class InputPlan(NamedTuple):
    """Which model inputs make which node vectors (see :func:`plan_inputs`)."""

    nodes: list[Node]
    derived: dict[int, list[tuple[str, Span]]]
    texts: dict[str, int]
    spans: list[list[Span]]
    inputs: list[str]
    rows: list[list[int]]
    norms: dict[str, str]
    """Node id → the text its vector is made from (:func:`_norm`), for the nodes and the members of derived ones."""


def _exact(node: Node) -> bool:
    return node.type in EXACT_TYPES or bool(node.attrs.get("code"))


def plan_inputs(kg: KnowledgeGraph, types: Iterable[NodeType], splitter: Splitter | None) -> InputPlan:
    """The nodes of ``types`` with text, the distinct texts their vectors need, and those texts' distinct pieces."""
    nodes = [n for n in kg.nodes(*types) if n.text.strip()]
    derived = _derivations(kg, nodes)
    norms = {n.id: _norm(n.text) for n in nodes}
    texts: dict[str, int] = {}
    for i, node in enumerate(nodes):
        if i not in derived:
            texts.setdefault(norms[node.id], len(texts))
    for parts in derived.values():
        for member, _ in parts:
            if member not in norms:
                norms[member] = _norm(kg.g.nodes[member]["text"])
            texts.setdefault(norms[member], len(texts))
    distinct = list(texts)
    spans = splitter.spans(distinct) if splitter else [[(0, len(t))] for t in distinct]
    if splitter is not None and EXACT_MAX_TOKENS:
        exact = {norms[n.id] for n in nodes if _exact(n)} - {norms[n.id] for n in nodes if not _exact(n)}
        which = [texts[t] for t in exact if t in texts]
        for i, head in zip(which, splitter.spans([distinct[i] for i in which], head=EXACT_MAX_TOKENS)):
            spans[i] = head
    inputs: dict[str, int] = {}
    rows = [[inputs.setdefault(text[a:b], len(inputs)) for a, b in text_spans] for text, text_spans in zip(distinct, spans)]
    return InputPlan(nodes, derived, texts, spans, list(inputs), rows, norms)


def embed_nodes(
    kg: KnowledgeGraph,
    embedder: Embedder,
    types: Iterable[NodeType],
    cache: EmbeddingCache | None = None,
    progress: ProgressFn | None = None,
    max_tokens: int | None = None,
) -> tuple[list[Node], np.ndarray, EmbedReport]:
    """The nodes of ``types`` that have text, their unit vectors (one row each) and what it took.

    ``progress(done, total, message)`` counts nodes (``total``: all of them).

    Each distinct text is split into model inputs of at most ``max_tokens`` word pieces
    (MiniLM; default :data:`EMBED_MAX_TOKENS`), every distinct input embedded once (or read
    from ``cache``), and the text's vector is the mean of its pieces', weighted by length.
    Nodes of :data:`DERIVED_TYPES` whose members all have text take the mean of the pieces
    of their members they cover, weighted by the characters covered, mixed with their
    section title's vector (:data:`SECTION_WEIGHT`) when that title is embedded too.
    """
    clock = time.perf_counter()
    plan = plan_inputs(kg, types, splitter_for(embedder, max_tokens))
    n = len(plan.nodes)

    def report_nodes(done: float, total: float, message: str) -> None:  # progress in nodes, the unit callers count
        if progress is not None:
            progress(min(n - 1, round(n * done / total)) if done < total else n, n, message)

    vectors, cached = embed_inputs(plan.inputs, embedder, cache, report_nodes)
    if progress is not None and n and cached == len(plan.inputs):
        progress(n, n, f"embedded {n} nodes ({cached} texts, all from the cache)")

    def text_vector(t: int) -> np.ndarray:
        rows, spans = plan.rows[t], plan.spans[t]
        return vectors[rows[0]] if len(rows) == 1 else _mean(vectors[rows], spans, (0, spans[-1][1]))

    matrix = np.zeros((len(plan.nodes), embedder.dim), dtype=np.float32)
    for i, node in enumerate(plan.nodes):
        parts = plan.derived.get(i)
        if parts is None:
            matrix[i] = text_vector(plan.texts[plan.norms[node.id]])
            continue
        total = np.zeros(embedder.dim, dtype=np.float64)
        for member, within in parts:
            t = plan.texts[plan.norms[member]]
            total += (within[1] - within[0]) * _mean(vectors[plan.rows[t]], plan.spans[t], within)
        section = str(node.attrs.get("section", ""))
        title = None
        if section in kg:
            if section not in plan.norms:
                plan.norms[section] = _norm(kg.g.nodes[section]["text"])
            title = plan.texts.get(plan.norms[section])
        if title is not None and SECTION_WEIGHT:
            total = (1 - SECTION_WEIGHT) * _unit(total) + SECTION_WEIGHT * text_vector(title)
        matrix[i] = _unit(total)
    report = EmbedReport(
        nodes=len(plan.nodes), texts=len(plan.texts), inputs=len(plan.inputs), cached=cached, computed=len(plan.inputs) - cached,
        derived=len(plan.derived), split=sum(len(s) > 1 for s in plan.spans), seconds={"embed": time.perf_counter() - clock},
    )  # fmt: skip
    return plan.nodes, matrix, report


class GraphVectors(NamedTuple):
    """A graph's node vectors, computed and not yet stored (see :func:`prepare_vectors`)."""

    nodes: list[Node]
    matrix: np.ndarray
    variant: str


def prepare_vectors(
    kg: KnowledgeGraph,
    settings: Settings,
    embedder: Embedder,
    types: Iterable[NodeType],
    similarity_types: Iterable[NodeType] = (),
    progress: ProgressFn | None = None,
    report: EmbedReport | None = None,
) -> GraphVectors:
    """Embed nodes of ``types`` that have text and link similar ones; nothing is written to the vector store.

    Nodes of ``similarity_types`` (prose with at least 8 words) also get
    ``semantic_similar`` edges. Vectors are cached in the workspace of ``settings``;
    ``report`` (when given) is filled in with what embedding took. Needs no workspace
    lock: :func:`store_vectors` writes the result.
    """
    with EmbeddingCache.of_workspace(settings.workspace) as cache:
        nodes, matrix, done = embed_nodes(kg, embedder, types, cache, progress)
    clock = time.perf_counter()
    similar_types = set(similarity_types)
    similar = [i for i, n in enumerate(nodes) if n.type in similar_types and not n.attrs.get("code") and len(n.text.split()) >= 8]
    if similar:
        link_similar(kg, [nodes[i].id for i in similar], matrix[similar], settings.similarity_threshold, settings.similarity_top_k)
    done.seconds["link"] = time.perf_counter() - clock
    kg.meta.embedder, kg.meta.embedding_dim = embedder.name, embedder.dim
    if report is not None:
        for name, value in done:
            setattr(report, name, value)
    split = splitter_for(embedder)
    variant = f"{embedder.variant}; inputs of at most {split.max_tokens} word pieces" if split else embedder.variant
    return GraphVectors(nodes, matrix, variant)


def store_vectors(kg: KnowledgeGraph, prepared: GraphVectors, vectors: VectorStore, embedder: Embedder, report: EmbedReport | None = None) -> int:
    """Replace the graph's vectors with ``prepared`` (the write, under the workspace lock); return how many."""
    clock = time.perf_counter()
    if prepared.nodes:
        vectors.replace(kg.id, [n.id for n in prepared.nodes], prepared.matrix, [n.type.value for n in prepared.nodes], embedder.name, prepared.variant)
    else:
        vectors.delete(kg.id)
    if report is not None:
        report.seconds["store"] = time.perf_counter() - clock
    return len(prepared.nodes)


def type_counts(kg: KnowledgeGraph) -> tuple[dict[str, int], dict[str, int]]:
    """Node counts and edge counts by type, sorted by name."""
    nodes: dict[str, int] = {}
    edges: dict[str, int] = {}
    for _, data in kg.g.nodes(data=True):
        nodes[data["type"]] = nodes.get(data["type"], 0) + 1
    for _, _, key in kg.g.edges(keys=True):
        edges[key] = edges.get(key, 0) + 1
    return dict(sorted(nodes.items())), dict(sorted(edges.items()))
