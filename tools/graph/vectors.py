"""Node embeddings in Chroma: one cosine collection per graph.

Embedded by default (a ``PersistentClient`` in the workspace); with a server URL
(``TASKLOOM_CHROMA_URL``) a ``chromadb.HttpClient`` to ``chroma run``, where each
workspace's collection names carry a prefix of its own (kept in ``chroma/workspace-id``),
so workspaces sharing one server never see each other's graphs.

Chroma is imported and its client created on first use, so importing this module
is cheap. Each collection records the embedder that filled it; writing or querying
with another embedder (or dimension) is refused with :class:`EmbedderError`.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
import secrets
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import numpy as np
from pydantic import BaseModel, Field

from ..errors import EmbedderError, InputError, NotFoundError, TaskloomError
from . import chroma_file
from .chroma_file import DB_FILE

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

__all__ = ["VectorStore", "VectorStoreUnavailable", "CollectionInfo", "collection_name", "parse_chroma_url"]

log = logging.getLogger(__name__)

DEFAULT_MAX_BATCH = 5000
#: Largest difference per component between a vector written and the one Chroma gives back for it
#: (a cosine collection stores vectors re-normalised: a unit vector comes back a few 1e-8 off).
_SAME_VECTOR = 1e-6
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,61}[A-Za-z0-9]$")
_UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_WORKSPACE_ID_FILE = "workspace-id"
_F = TypeVar("_F", bound=Callable[..., Any])


class VectorStoreUnavailable(TaskloomError):
    """The Chroma server named by ``TASKLOOM_CHROMA_URL`` cannot be reached."""


class CollectionInfo(BaseModel):
    """One Chroma collection: its name, the graph it belongs to, how many vectors it holds."""

    name: str
    id: str
    graph_id: str | None
    count: int = Field(description="Vectors stored; -1 when Chroma cannot count them.")


def collection_name(graph_id: str, prefix: str = "") -> str:
    """Chroma collection name of ``graph_id``: ``{prefix}g_{id}``, or a slug plus a hash when needed.

    Names stay within the strictest Chroma rules (3-63 characters of ``[A-Za-z0-9._-]``,
    alphanumeric at both ends, no ``..``); distinct ids give distinct names. ``prefix``
    (a workspace's, on a shared server) starts with a letter or digit and is at most 20 characters.
    """
    direct = f"{prefix}g_{graph_id}"
    if _NAME_RE.fullmatch(direct) and ".." not in direct:
        return direct
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", graph_id)[: 40 - len(prefix)]
    digest = hashlib.sha256(graph_id.encode("utf-8")).hexdigest()[:16]
    return f"{prefix}g_{slug}-h{digest}"


def parse_chroma_url(url: str) -> tuple[str, int, bool]:
    """(host, port, ssl) of a Chroma server URL such as ``http://127.0.0.1:8765``.

    >>> parse_chroma_url("http://127.0.0.1:8765")
    ('127.0.0.1', 8765, False)
    >>> parse_chroma_url("https://chroma.example.org")
    ('chroma.example.org', 443, True)
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise InputError(f"TASKLOOM_CHROMA_URL={url!r} is not a URL ({exc}); use e.g. http://127.0.0.1:8765") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") or parts.query:
        raise InputError(f"TASKLOOM_CHROMA_URL={url!r} is not an http(s)://host:port URL of a Chroma server; use e.g. http://127.0.0.1:8765")
    ssl = parts.scheme == "https"
    return parts.hostname, port or (443 if ssl else 80), ssl


def _start_hint(url: str) -> str:
    try:
        host, port, _ = parse_chroma_url(url)
    except InputError:
        host, port = "127.0.0.1", 8000
    return f"start one with `chroma run --path DIR --host {host} --port {port}`, or unset TASKLOOM_CHROMA_URL to use the workspace's embedded store"


def _workspace_id(directory: Path) -> str:
    """This workspace's collection-name prefix on a shared server: random, made once, kept in ``directory``."""
    path = directory / _WORKSPACE_ID_FILE
    try:
        return _valid_id(path.read_text(encoding="ascii").strip(), path)
    except FileNotFoundError:
        pass
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{_WORKSPACE_ID_FILE}.{secrets.token_hex(4)}.tmp"
    tmp.write_text("w" + secrets.token_hex(6) + "\n", encoding="ascii")
    try:
        os.link(tmp, path)  # atomic and exclusive: of two processes racing, one id wins
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return _valid_id(path.read_text(encoding="ascii").strip(), path)


def _valid_id(value: str, path: Path) -> str:
    if not re.fullmatch(r"[a-z0-9][a-z0-9]{2,18}", value):
        raise InputError(f"{path} holds {value!r}, not a workspace id (letters and digits, 3-19); delete the file to make a new one")
    return value


def _as_matrix(embeddings: Any, what: str) -> np.ndarray:
    arr = np.asarray(embeddings, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise InputError(f"{what} must be a 2-D array (n, dim) with dim > 0, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{what} contain NaN or infinite values")
    return arr


def _reaching(method: _F) -> _F:
    """Turn a lost connection to the Chroma server during ``method`` into :class:`VectorStoreUnavailable`."""

    @functools.wraps(method)
    def wrapper(self: VectorStore, *args: Any, **kwargs: Any) -> Any:
        with self._guard():
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class VectorStore:
    """Embeddings of graph nodes in Chroma: a ``PersistentClient`` at ``path``, or a server at ``url``.

    Parameters
    ----------
    path
        Directory of the Chroma database (usually ``Workspace.chroma``); with a server,
        only the workspace id (the prefix of this workspace's collection names) is kept there.
    url
        ``http(s)://host:port`` of a ``chroma run`` server (``settings.chroma_url``);
        ``None`` for the embedded database.
    """

    def __init__(self, path: Path, url: str | None = None) -> None:
        self.path = Path(path)
        self.url = url.strip() if url and url.strip() else None
        self._server = parse_chroma_url(self.url) if self.url else None
        self._client: ClientAPI | None = None
        self._prefix: str | None = None
        self._lock = threading.Lock()

    @property
    def remote(self) -> bool:
        """Whether the vectors live on a Chroma server rather than in the workspace."""
        return self._server is not None

    @property
    def prefix(self) -> str:
        """Prefix of this workspace's collection names: ``""`` embedded, ``"{workspace id}_"`` on a server."""
        if self._prefix is None:
            self._prefix = f"{_workspace_id(self.path)}_" if self.remote else ""
        return self._prefix

    def name(self, graph_id: str) -> str:
        """The collection name of ``graph_id`` in this store."""
        return collection_name(graph_id, self.prefix)

    @property
    def client(self) -> ClientAPI:
        """The Chroma client, created on first use (a server is checked to answer)."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = self._connect()
        return self._client

    def _connect(self) -> ClientAPI:
        os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
        import chromadb
        import chromadb.config

        settings = chromadb.config.Settings(anonymized_telemetry=False, allow_reset=False)
        if self._server is None:
            self.path.mkdir(parents=True, exist_ok=True)
            chroma_file.create(self.path / DB_FILE)
            return chromadb.PersistentClient(path=str(self.path), settings=settings)
        host, port, ssl = self._server
        try:
            client = chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings)
            client.heartbeat()
        except (ValueError, OSError) as exc:  # chromadb reports a refused connection as ValueError
            raise VectorStoreUnavailable(f"no Chroma server answers at {self.url} ({exc}); {_start_hint(self.url or '')}") from None
        return client

    @contextmanager
    def _guard(self) -> Iterator[None]:
        if self._server is None:
            yield
            return
        import httpx

        try:
            yield
        except httpx.TransportError as exc:
            raise VectorStoreUnavailable(f"lost the Chroma server at {self.url} ({type(exc).__name__}: {exc}); {_start_hint(self.url or '')}") from None

    @_reaching
    def max_batch_size(self) -> int:
        """Most records Chroma accepts in one call."""
        getter = getattr(self.client, "get_max_batch_size", None)
        return int(getter()) if callable(getter) else DEFAULT_MAX_BATCH

    def _collection(self, graph_id: str) -> Collection | None:
        from chromadb.errors import NotFoundError as ChromaNotFound

        try:
            col = self.client.get_collection(self.name(graph_id), embedding_function=None)
        except ChromaNotFound:
            return None
        owner = (col.metadata or {}).get("graph_id")
        if owner is not None and owner != graph_id:
            raise InputError(f"collection {col.name} belongs to graph {owner!r}, not {graph_id!r}")
        return col

    def _require(self, graph_id: str) -> Collection:
        col = self._collection(graph_id)
        if col is None:
            raise NotFoundError(
                f"graph {graph_id!r} has no stored embeddings; ingest it (again) to embed its nodes"
            )
        return col

    @staticmethod
    def _check(col: Collection, graph_id: str, dim: int, embedder_name: str | None) -> None:
        meta = col.metadata or {}
        have_name, have_dim = meta.get("embedder"), meta.get("dim")
        if (embedder_name is not None and have_name is not None and embedder_name != have_name) or (
            have_dim is not None and int(have_dim) != dim
        ):
            raise EmbedderError(
                f"graph {graph_id!r} was embedded with {have_name!r} ({have_dim}-d), but got "
                f"{embedder_name or 'an embedding'!r} ({dim}-d); re-ingest the graph with the new "
                f"embedder or query it with {have_name!r}"
            )

    @_reaching
    def has(self, graph_id: str) -> bool:
        """Whether ``graph_id`` has a collection."""
        return self._collection(graph_id) is not None

    @_reaching
    def upsert(
        self,
        graph_id: str,
        ids: Sequence[str],
        embeddings: np.ndarray,
        texts: Sequence[str] | None,
        node_types: Sequence[str],
        embedder_name: str,
        embedder_variant: str | None,
    ) -> int:
        """Insert or replace the vectors of nodes ``ids``; return how many were written.

        Creates the collection on first use, recording the embedder name, variant and
        dimension; later upserts must use the same embedder name and dimension. ``texts``
        are stored as Chroma documents when given; ingestion passes None (the graph file
        holds every node's text, and storing it again takes half the upsert's time).
        """
        mat = _as_matrix(embeddings, "embeddings")
        n, dim = mat.shape
        if not (len(ids) == n == len(node_types)) or (texts is not None and len(texts) != n):
            raise InputError(
                f"upsert needs one id, node type (and text, when given) per embedding row: got {len(ids)} ids, "
                f"{n} rows, {'no' if texts is None else len(texts)} texts, {len(node_types)} types"
            )
        if len(set(ids)) != n:
            raise InputError("upsert ids must be unique")
        col = self._collection(graph_id)
        created = col is None
        if col is None:
            meta: dict[str, Any] = {"workspace": self.prefix.rstrip("_")} if self.remote else {}
            col = self.client.get_or_create_collection(
                self.name(graph_id),
                embedding_function=None,
                metadata={
                    **meta,
                    "hnsw:space": "cosine",
                    "graph_id": graph_id,
                    "embedder": embedder_name,
                    "embedder_variant": embedder_variant or "",
                    "dim": int(dim),
                },
            )
        self._check(col, graph_id, dim, embedder_name)
        step = self.max_batch_size()
        write = col.add if created else col.upsert  # a new collection holds none of the ids: add skips the look-up
        for lo in range(0, n, step):
            hi = min(lo + step, n)
            write(
                ids=[str(i) for i in ids[lo:hi]],
                embeddings=mat[lo:hi],
                documents=None if texts is None else [str(t) for t in texts[lo:hi]],
                metadatas=[{"type": str(t)} for t in node_types[lo:hi]],
            )
        return n

    @_reaching
    def replace(
        self,
        graph_id: str,
        ids: Sequence[str],
        embeddings: np.ndarray,
        node_types: Sequence[str],
        embedder_name: str,
        embedder_variant: str | None,
    ) -> int:
        """Make the collection of ``graph_id`` hold exactly these vectors (no documents); return how many were written.

        A collection that already holds them — the same ids and node types, from the same
        embedder and variant, and the same vectors as Chroma stores them (re-normalised for
        cosine, which moves a last bit: compared to within :data:`_SAME_VECTOR`), as when an
        unchanged document is ingested again — is kept as it is (0 written): reading the
        vectors back costs a fraction of rebuilding the index. Otherwise the collection is
        dropped and written anew.
        """
        mat = _as_matrix(embeddings, "embeddings")
        col = self._collection(graph_id)
        if col is not None:
            if self._holds(col, ids, mat, node_types, embedder_name, embedder_variant):
                return 0
            self.drop(col.name)
        return self.upsert(graph_id, ids, mat, None, node_types, embedder_name, embedder_variant)

    def _holds(
        self, col: Collection, ids: Sequence[str], mat: np.ndarray, node_types: Sequence[str], embedder_name: str, embedder_variant: str | None
    ) -> bool:
        """Whether ``col`` holds exactly these ids, types and vectors, written by this embedder and variant."""
        meta = col.metadata or {}
        n, dim = mat.shape
        if (meta.get("embedder"), meta.get("embedder_variant"), meta.get("dim")) != (embedder_name, embedder_variant or "", dim):
            return False
        wanted = [str(i) for i in ids]
        row = {node_id: k for k, node_id in enumerate(wanted)}
        if not (len(wanted) == n == len(node_types) == len(row)) or col.count() != n:
            return False
        step = self.max_batch_size()
        for lo in range(0, n, step):
            res = col.get(ids=wanted[lo : lo + step], include=["embeddings", "metadatas"])
            got, embs, metas = res["ids"], res["embeddings"], res["metadatas"]
            if len(got) != len(wanted[lo : lo + step]) or embs is None or metas is None:
                return False
            rows = [row[str(i)] for i in got]
            stored = np.asarray(embs, dtype=np.float32).reshape(len(got), -1)
            if stored.shape[1] != dim or not np.allclose(stored, mat[rows], rtol=0, atol=_SAME_VECTOR):
                return False
            if any((m or {}).get("type") != str(node_types[r]) for m, r in zip(metas, rows)):
                return False
        return True

    @_reaching
    def query(
        self,
        graph_id: str,
        embedding: np.ndarray,
        k: int,
        node_types: Sequence[str] | None = None,
        *,
        embedder_name: str | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` nodes nearest to ``embedding`` as (node id, cosine similarity), best first.

        Parameters
        ----------
        graph_id
            Graph whose vectors to search.
        embedding
            Query vector, shape ``(dim,)`` or ``(1, dim)``.
        k
            Number of results; capped at the number of stored vectors.
        node_types
            Only nodes of these types, when given.
        embedder_name
            Embedder of ``embedding``; checked against the collection when given.
        """
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        vec = _as_matrix(embedding, "query embedding")
        if vec.shape[0] != 1:
            raise InputError(f"query takes one embedding, got {vec.shape[0]}")
        col = self._require(graph_id)
        self._check(col, graph_id, vec.shape[1], embedder_name)
        n = min(k, col.count())
        if n == 0:
            return []
        where: dict[str, Any] | None = None
        if node_types:
            types = sorted({str(t) for t in node_types})
            where = {"type": types[0]} if len(types) == 1 else {"type": {"$in": types}}
        res = col.query(query_embeddings=vec, n_results=n, where=where, include=["distances"])
        ids = res["ids"][0] if res["ids"] else []
        distances = res.get("distances")
        dists = distances[0] if distances else []
        return [(str(i), float(1.0 - float(d))) for i, d in zip(ids, dists)]

    @_reaching
    def get_embeddings(
        self, graph_id: str, ids: Sequence[str] | None = None
    ) -> dict[str, np.ndarray]:
        """Stored vectors by node id (all when ``ids`` is None; unknown ids are left out)."""
        col = self._require(graph_id)
        step = self.max_batch_size()
        out: dict[str, np.ndarray] = {}

        def take(res: Any) -> int:
            got = res["ids"]
            embs = res["embeddings"]
            if embs is not None and len(got):
                mat = np.asarray(embs, dtype=np.float32).reshape(len(got), -1)
                out.update({str(i): mat[j] for j, i in enumerate(got)})
            return len(got)

        if ids is None:
            offset = 0
            while take(col.get(limit=step, offset=offset, include=["embeddings"])) == step:
                offset += step
        else:
            wanted = [str(i) for i in ids]
            for lo in range(0, len(wanted), step):
                take(col.get(ids=wanted[lo : lo + step], include=["embeddings"]))
        return out

    @_reaching
    def collection_info(self, graph_id: str) -> dict[str, Any]:
        """Count, embedder, variant and dimension of the vectors of ``graph_id``."""
        col = self._require(graph_id)
        meta = col.metadata or {}
        dim = meta.get("dim")
        return {
            "graph_id": graph_id,
            "collection": col.name,
            "count": col.count(),
            "embedder": meta.get("embedder"),
            "variant": meta.get("embedder_variant"),
            "dim": int(dim) if dim is not None else None,
        }

    @_reaching
    def delete(self, graph_id: str) -> bool:
        """Drop the collection of ``graph_id`` and its index files; return whether there was one."""
        if self._collection(graph_id) is None:
            return False
        return self.drop(self.name(graph_id))

    @_reaching
    def drop(self, name: str) -> bool:
        """Drop the collection called ``name`` and remove its index folders; return whether it existed.

        Chroma leaves a deleted collection's HNSW folder on disk; it is removed here, and the
        rows' space is given back to the disk (embedded store only, see :mod:`.chroma_file`).
        On a server, only this workspace's collections can be dropped.
        """
        from chromadb.errors import NotFoundError as ChromaNotFound

        if not name.startswith(self.prefix):
            raise InputError(f"collection {name} is not one of this workspace's (their names start with {self.prefix!r})")
        try:
            col = self.client.get_collection(name, embedding_function=None)
        except ChromaNotFound:
            return False
        segments = self._segment_ids(str(col.id))
        try:
            self.client.delete_collection(name)
        except ChromaNotFound:
            return False
        remaining = self._segment_ids()
        if segments is not None and remaining is not None:
            for seg in segments - remaining:
                shutil.rmtree(self.path / seg, ignore_errors=True)
        if not self.remote:
            try:
                chroma_file.compact(self.path / DB_FILE, full=False)  # cheap: cuts free pages off the end
            except chroma_file.VectorStoreFull as err:
                log.warning("%s; the vectors are deleted, their space comes back with `taskloom gc`", err)
        return True

    def free_bytes(self) -> int:
        """Bytes inside the embedded database that deleted vectors left unused (0 on a server)."""
        return 0 if self.remote else chroma_file.free_bytes(self.path / DB_FILE)

    def compact(self) -> int:
        """Give the space deleted vectors left inside the embedded database back to the disk (see :mod:`.chroma_file`); bytes freed."""
        return 0 if self.remote else chroma_file.compact(self.path / DB_FILE)

    @_reaching
    def collections(self, count: bool = True) -> list[CollectionInfo]:
        """Every collection of this workspace, with the graph it belongs to (when recorded).

        Embedded, that is every collection in the database; on a server, those whose name
        carries this workspace's prefix. ``count=False`` skips counting vectors (``count`` is
        then -1): after a failed write in this process (a full disk), Chroma's count can block for good.
        """
        from chromadb.errors import ChromaError

        out = []
        for col in self.client.list_collections():
            if not col.name.startswith(self.prefix):
                continue
            meta = col.metadata or {}
            owner = meta.get("graph_id")
            try:
                vectors = col.count() if count else -1
            except ChromaError:
                vectors = -1  # unreadable (e.g. its log cannot be applied on a full disk); it can still be dropped
            out.append(CollectionInfo(name=col.name, id=str(col.id), graph_id=str(owner) if owner is not None else None, count=vectors))
        return sorted(out, key=lambda c: c.name)

    def orphan_segment_dirs(self) -> list[Path]:
        """Index folders under the database that no collection refers to (left by deletes and crashes)."""
        if self.remote or not (self.path / DB_FILE).is_file():
            return []
        used = self._segment_ids()
        if used is None:
            return []  # cannot tell which folders are in use: keep them all
        return sorted(p for p in self.path.iterdir() if p.is_dir() and _UUID_RE.fullmatch(p.name) and p.name not in used)

    def index_dirs(self, collection_id: str) -> list[Path]:
        """The index folders of one collection that exist on disk (none on a server)."""
        return sorted(p for seg in self._segment_ids(collection_id) or () if (p := self.path / seg).is_dir())

    def _segment_ids(self, collection_id: str | None = None) -> set[str] | None:
        """Ids of the segments of one collection (or of all), read from Chroma's SQLite file; None when unreadable or remote."""
        if self.remote:
            return None
        self.client  # noqa: B018 - make sure the database exists and is migrated
        try:
            with closing(sqlite3.connect(self.path / DB_FILE, timeout=10)) as db:
                if collection_id is None:
                    rows = db.execute("SELECT id FROM segments").fetchall()
                else:
                    rows = db.execute("SELECT id FROM segments WHERE collection = ?", (collection_id,)).fetchall()
        except sqlite3.Error as err:
            log.warning("cannot read Chroma's segment table in %s (%s); leaving index folders alone", self.path, err)
            return None
        return {str(r[0]) for r in rows}
