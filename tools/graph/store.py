"""Graphs on disk: one node-link JSON file per graph under ``{workspace}/graphs``.

Loads are cached in-process, keyed by the file's (path, mtime_ns, size), so the
many tool calls that read the same graph parse it once.
"""

from __future__ import annotations

import builtins

import json
import logging
import os
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import networkx as nx

from ..errors import InputError, NotFoundError, TaskloomError
from ..workspace import Workspace, atomic_write_chunks
from .model import GraphMeta, KnowledgeGraph

__all__ = ["GraphStore", "CorruptGraphError", "make_graph_id", "validate_graph_id", "GRAPH_ID_RE"]

log = logging.getLogger(__name__)

GRAPH_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_CACHE_MAX = 8
_META_PROBE_BYTES = 1 << 20
# A file written by ``save`` opens with these keys, then "graph" (the metadata).
_PREFIX_RE = re.compile(
    r'\s*\{\s*(?:"(?:directed|multigraph)"\s*:\s*(?:true|false)\s*,\s*)*"graph"\s*:\s*'
)

_FileKey = tuple[str, int, int]
_lock = threading.Lock()
_graph_cache: OrderedDict[str, tuple[_FileKey, KnowledgeGraph]] = OrderedDict()
_meta_cache: dict[str, tuple[_FileKey, GraphMeta]] = {}


class CorruptGraphError(TaskloomError):
    """A graph file exists but cannot be parsed as a Taskloom graph."""


def validate_graph_id(graph_id: str) -> str:
    """Return ``graph_id`` if it is a safe file stem, else raise :class:`InputError`."""
    if not isinstance(graph_id, str) or not GRAPH_ID_RE.fullmatch(graph_id):
        raise InputError(
            f"invalid graph id {graph_id!r}: use 1-128 characters from A-Z a-z 0-9 _ . -, "
            "starting with a letter or digit (call graph_list to see the ids)"
        )
    return graph_id


def make_graph_id(name: str, content_sha256: str) -> str:
    """A readable, stable graph id: ``{slug of name}-{first 8 hex of the sha}``.

    Examples
    --------
    >>> make_graph_id("Annual Report 2024.pdf", "ABCDEF0123456789")
    'annual-report-2024-pdf-abcdef01'
    """
    sha = content_sha256.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{8,}", sha):
        raise InputError(f"content_sha256 must be a hex digest, got {content_sha256!r}")
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:40].rstrip("-")
    return f"{slug or 'graph'}-{sha[:8]}"


def _corrupt(path: Path, err: Exception) -> CorruptGraphError:
    return CorruptGraphError(
        f"graph file {path} is corrupt and cannot be read ({type(err).__name__}: {err}); "
        "delete it with graph_delete and ingest the source again"
    )


def _read(path: Path, cached: bool = False) -> tuple[_FileKey, bytes | KnowledgeGraph]:
    """The cache key of ``path`` and its bytes, or its cached graph when ``cached``.

    Stat and read use one open file, so the key always describes the bytes returned.
    """
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        key: _FileKey = (str(path), st.st_mtime_ns, st.st_size)
        if cached:
            with _lock:
                hit = _graph_cache.get(key[0])
                if hit is not None and hit[0] == key:
                    _graph_cache.move_to_end(key[0])
                    return key, hit[1]
        return key, fh.read()


def _parse(path: Path, raw: bytes) -> KnowledgeGraph:
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict):
            raise ValueError("top-level JSON value is not an object")
        return KnowledgeGraph.from_dict(data)
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, nx.NetworkXError) as err:
        raise _corrupt(path, err) from err


def _write_json(path: Path, data: dict[str, Any], before_replace: Callable[[], object] | None = None) -> None:
    """Atomically write the node-link dict ``data`` as JSON, one line per node and per edge, encoded piece by piece.

    One ``json.dumps`` of the whole graph joins millions of small strings into one (a graph of
    2,400 pages took 300 MB more that way, at the end of an ingestion, when memory peaks), and an
    indented or streamed encoding runs in pure Python (5 s of a 40-page crawl's 33). Each list
    item is encoded on its own by the C encoder; the file reads back as the same JSON.
    """
    atomic_write_chunks(path, _json_pieces(data), before_replace=before_replace)


def _json_pieces(data: dict[str, Any]) -> Iterator[str]:
    r"""``data`` as JSON text in pieces: top-level keys in order, each list one item per line.

    >>> "".join(_json_pieces({"graph": {"id": "g"}, "nodes": [{"id": "a"}, {"id": "b"}], "edges": []}))
    '{"graph": {"id": "g"},\n"nodes": [\n{"id": "a"},\n{"id": "b"}\n],\n"edges": [\n\n]}\n'
    """
    yield "{"
    for index, (key, value) in enumerate(data.items()):
        yield ("" if index == 0 else ",\n") + json.dumps(key) + ": "
        if isinstance(value, list):
            yield "[\n"
            for position, item in enumerate(value):
                yield ("" if position == 0 else ",\n") + json.dumps(item, ensure_ascii=False)
            yield "\n]"
        else:
            yield json.dumps(value, ensure_ascii=False)
    yield "}\n"


def _probe_meta(path: Path) -> tuple[_FileKey, GraphMeta]:
    """Metadata of a graph file, parsing only its head when it has the ``save`` layout."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        key: _FileKey = (str(path), st.st_mtime_ns, st.st_size)
        head = fh.read(_META_PROBE_BYTES)
    text = head.decode("utf-8", errors="replace")
    m = _PREFIX_RE.match(text)
    if m:
        try:
            obj, _ = json.JSONDecoder().raw_decode(text, m.end())
        except json.JSONDecodeError:
            obj = None  # metadata longer than the probe, or corrupt: read it all
        if isinstance(obj, dict):
            try:
                return key, GraphMeta.model_validate(obj)
            except ValueError as err:
                raise _corrupt(path, err) from err
    key, raw = _read(path)
    assert isinstance(raw, bytes)
    return key, _parse(path, raw).meta


class GraphStore:
    """Saves, loads, lists and deletes the graphs of one :class:`Workspace`.

    Parameters
    ----------
    workspace
        The workspace whose ``graphs`` directory holds the files.
    """

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.dir = workspace.graphs

    def path(self, graph_id: str) -> Path:
        """File of ``graph_id`` (validated; the file need not exist)."""
        return self.dir / f"{validate_graph_id(graph_id)}.json"

    def assets_dir(self, graph_id: str) -> Path:
        """Folder of a graph's files besides its JSON (a web graph's screenshots)."""
        return self.dir / f"{validate_graph_id(graph_id)}.assets"

    def exists(self, graph_id: str) -> bool:
        """Whether a graph with this id is stored."""
        return self.path(graph_id).is_file()

    def save(self, kg: KnowledgeGraph, before_replace: Callable[[], object] | None = None) -> Path:
        """Write ``kg`` atomically to ``graphs/{kg.id}.json`` and return the path.

        ``before_replace`` runs when the file is written in full, before it replaces the old one (the
        vectors, written last so that a full disk leaves a graph file to delete, not vectors to drop).
        """
        path = self.path(kg.id)
        for stale in path.parent.glob(f".{path.name}.*.tmp"):  # a killed writer's file (writers of a graph hold the workspace lock)
            stale.unlink(missing_ok=True)
        _write_json(path, kg.to_dict(), before_replace)
        with _lock:
            _graph_cache.pop(str(path), None)
            _meta_cache.pop(str(path), None)
        return path

    def load(self, graph_id: str, *, mutable: bool = False) -> KnowledgeGraph:
        """The stored graph ``graph_id``.

        Parameters
        ----------
        graph_id
            Id of a stored graph.
        mutable
            False (default): a cached instance shared by all callers in this process;
            its networkx graph is frozen, so treat it as read-only. True: a private
            instance parsed from disk, free to modify and :meth:`save`.

        Raises
        ------
        NotFoundError
            No such graph; the message lists known ids.
        CorruptGraphError
            The file cannot be parsed.
        """
        path = self.path(graph_id)
        try:
            key, got = _read(path, cached=not mutable)
        except FileNotFoundError:
            raise self._not_found(graph_id) from None
        if isinstance(got, KnowledgeGraph):
            return got
        kg = _parse(path, got)
        if mutable:
            return kg
        nx.freeze(kg.g)
        with _lock:
            _graph_cache[key[0]] = (key, kg)
            _graph_cache.move_to_end(key[0])
            while len(_graph_cache) > _CACHE_MAX:
                _graph_cache.popitem(last=False)
        return kg

    def list(self) -> list[GraphMeta]:
        """Metadata of every stored graph, sorted by ``created_at`` then id.

        Unreadable files are skipped with a logged warning, so one corrupt file does
        not hide the others; :meth:`load` reports it.
        """
        metas: list[GraphMeta] = []
        seen: set[str] = set()
        for path in self.dir.glob("*.json"):
            if not GRAPH_ID_RE.fullmatch(path.stem):
                continue
            meta = self._meta(path)
            if meta is not None:
                metas.append(meta)
                seen.add(str(path))
        with _lock:
            for stale in [p for p in _meta_cache if Path(p).parent == self.dir and p not in seen]:
                del _meta_cache[stale]
        return sorted(metas, key=lambda m: (m.created_at, m.id))

    def ids(self) -> builtins.list[str]:
        """Ids of the stored graphs (file stems), sorted."""
        return sorted(p.stem for p in self.dir.glob("*.json") if GRAPH_ID_RE.fullmatch(p.stem))

    def delete(self, graph_id: str) -> None:
        """Remove the file of ``graph_id``; :class:`NotFoundError` if there is none."""
        path = self.path(graph_id)
        try:
            path.unlink()
        except FileNotFoundError:
            raise self._not_found(graph_id) from None
        with _lock:
            _graph_cache.pop(str(path), None)
            _meta_cache.pop(str(path), None)

    def _meta(self, path: Path) -> GraphMeta | None:
        try:
            st = path.stat()
        except FileNotFoundError:
            return None  # deleted while listing
        key: _FileKey = (str(path), st.st_mtime_ns, st.st_size)
        with _lock:
            hit = _meta_cache.get(key[0])
            if hit is not None and hit[0] == key:
                return hit[1].model_copy(deep=True)
            cached = _graph_cache.get(key[0])
            if cached is not None and cached[0] == key:
                return cached[1].meta.model_copy(deep=True)
        try:
            key, meta = _probe_meta(path)
        except FileNotFoundError:
            return None
        except CorruptGraphError as err:
            log.warning("skipping graph file: %s", err)
            return None
        with _lock:
            _meta_cache[key[0]] = (key, meta)
        return meta.model_copy(deep=True)

    def _not_found(self, graph_id: str) -> NotFoundError:
        known = self.ids()
        shown = ", ".join(known[:10]) + (f", … ({len(known)} in all)" if len(known) > 10 else "")
        return NotFoundError(
            f"no graph with id {graph_id!r}; known ids: {shown or 'none'}. "
            "List them with graph_list (MCP) or `taskloom graph list` (CLI)."
        )


def _clear_cache() -> None:
    """Forget every cached graph and metadata (for tests)."""
    with _lock:
        _graph_cache.clear()
        _meta_cache.clear()

