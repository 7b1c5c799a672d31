"""``taskloom gc``: find and remove what failed or killed writers left in a workspace.

Debris is anything no stored graph or task accounts for:

- ``collection``: a Chroma collection whose graph file is missing (a killed ingest, a full disk);
- ``index``: a Chroma index folder no collection refers to (Chroma leaves them on delete);
- ``screenshots``: a ``graphs/{id}.assets`` folder without ``graphs/{id}.json`` (a killed crawl);
- ``tmp``: a ``.*.tmp`` file of an atomic write that was never renamed (its writer died);
- ``lock``: a lock record left by a process that died while holding it (taking the lock
  clears it, so it is reported as removed even by a dry run).

gc holds the workspace's ``graphs`` and ``tasks`` locks while it looks, so a write in
progress is never taken for debris. Temporary files in folders whose writers take no
lock (runs, reports, cache) count only once they are older than :data:`TMP_MIN_AGE`.

On a full disk gc still frees space: files go first (temporary files, screenshots, index
folders, then each orphan collection's index files), so the database writes that follow
(dropping the collections) find room. Last, the vector store is compacted: the space deleted
vectors left inside Chroma's database goes back to the disk (:mod:`.chroma_file`).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ..errors import TaskloomError
from ..security.lock import Holder, WorkspaceLock
from ..settings import Settings
from ..workspace import Workspace
from . import chroma_file
from .store import GRAPH_ID_RE, GraphStore
from .vectors import VectorStore, collection_name

__all__ = ["Debris", "GcReport", "collect_garbage", "TMP_MIN_AGE"]

#: Seconds after which a temporary file in an unlocked folder is taken as abandoned.
TMP_MIN_AGE = 600.0
_LOCKED_DIRS = ("graphs", "tasks")

Kind = Literal["collection", "index", "screenshots", "tmp", "lock"]


class Debris(BaseModel):
    """One thing gc found."""

    kind: Kind
    target: str = Field(description="Collection name or path.")
    reason: str
    bytes: int = 0
    removed: bool = False


class GcReport(BaseModel):
    """What gc found and removed."""

    workspace: str
    dry_run: bool
    found: int
    removed: int
    freed_bytes: int
    debris: list[Debris]
    vector_free_bytes: int = Field(0, description="Space inside the vector store's database that deleted vectors left unused (before compacting).")
    compacted_bytes: int = Field(0, description="How much the vector store's database file shrank when gc compacted it (0 on a dry run).")
    errors: list[str] = Field(default_factory=list, description="Debris gc could not remove, and why.")


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _died(holder: Holder) -> str:
    return f"record left by pid {holder.pid} ({holder.what}, `{holder.command}`, since {holder.since}), which died holding the lock"


def _owner(stored: set[str]) -> Callable[[str, str | None], bool]:
    """Whether a collection (by name and recorded graph id) belongs to a stored graph."""
    names = {collection_name(g) for g in stored}
    return lambda name, graph_id: graph_id in stored if graph_id is not None else name in names


def _free_orphan_indexes(vectors: VectorStore, stored: set[str], errors: list[str]) -> dict[str, int]:
    """Remove orphan collections' index folders before Chroma starts (it cannot on a full disk); bytes freed by collection id."""
    freed: dict[str, int] = {}
    for collection, folders in chroma_file.orphan_index_dirs(vectors.path / chroma_file.DB_FILE, _owner(stored)).items():
        for folder in folders:
            size = _size(folder)
            try:
                shutil.rmtree(folder)
            except OSError as err:
                errors.append(f"{folder}: {err.strerror or err}")
                continue
            freed[collection] = freed.get(collection, 0) + size
    return freed


def _collections(vectors: VectorStore, stored: set[str], freed: dict[str, int]) -> list[tuple[Debris, list[Path]]]:
    """Collections whose graph is not stored, each with its (remaining) index folders."""
    owned = _owner(stored)
    found = []
    for col in vectors.collections():
        if owned(col.name, col.graph_id):
            continue
        folders = vectors.index_dirs(col.id)
        item = Debris(
            kind="collection",
            target=col.name,
            reason=f"vectors of graph {col.graph_id or '?'} ({f'{col.count} vectors' if col.count >= 0 else 'unreadable'}) whose graph file is missing",
            bytes=freed.get(col.id, 0) + sum(_size(p) for p in folders),
        )
        found.append((item, folders))
    return found


def _drop(vectors: VectorStore, item: Debris, folders: list[Path], errors: list[str]) -> None:
    """Remove an orphan collection: its index files first (they free the disk), then its rows."""
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    try:
        item.removed = vectors.drop(item.target)
    except Exception as err:  # noqa: BLE001 - reported, not hidden
        errors.append(f"collection {item.target}: {err}")


def _paths(ws: Workspace, store: GraphStore, vectors: VectorStore, stored: set[str]) -> list[Debris]:
    found = [
        Debris(kind="index", target=str(p), reason="Chroma index folder no collection refers to", bytes=_size(p))
        for p in vectors.orphan_segment_dirs()
    ]
    for assets in sorted(store.dir.glob("*.assets")):
        graph_id = assets.name[: -len(".assets")]
        if assets.is_dir() and GRAPH_ID_RE.fullmatch(graph_id) and graph_id not in stored:
            found.append(Debris(kind="screenshots", target=str(assets), reason=f"screenshots of graph {graph_id}, which is not stored", bytes=_size(assets)))
    now = time.time()
    for folder, _dirs, files in os.walk(ws.root):
        here = Path(folder)
        if here == ws.chroma or ws.chroma in here.parents:
            continue
        locked = here == ws.root or any(here == ws.root / d or (ws.root / d) in here.parents for d in _LOCKED_DIRS)
        for name in files:
            if not (name.startswith(".") and name.endswith(".tmp")):
                continue
            path = here / name
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            age = now - st.st_mtime
            if locked or age >= TMP_MIN_AGE:
                found.append(Debris(kind="tmp", target=str(path), reason=f"unfinished atomic write, {age:.0f}s old", bytes=st.st_size))
    return found


def _remove(item: Debris, errors: list[str]) -> None:
    path = Path(item.target)
    try:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
        item.removed = True
    except OSError as err:
        errors.append(f"{path}: {err.strerror or err}")


def collect_garbage(settings: Settings, dry_run: bool = False) -> GcReport:
    """Find (and unless ``dry_run``, remove) the debris of failed or killed writers in a workspace.

    Raises :class:`~taskloom.tools.security.lock.WorkspaceBusyError` when a writer holds
    the workspace longer than ``settings.lock_timeout``.
    """
    ws = Workspace(settings.workspace)
    store = GraphStore(ws)
    vectors = VectorStore(ws.chroma)
    errors: list[str] = []
    debris: list[Debris] = []
    what = "gc --dry-run" if dry_run else "gc"
    with WorkspaceLock(ws.root, "graphs", settings.lock_timeout, what) as graphs, WorkspaceLock(ws.root, "tasks", settings.lock_timeout, what) as tasks:
        for held in (graphs, tasks):
            if held.stale is not None:
                debris.append(Debris(kind="lock", target=str(held.path), reason=_died(held.stale) + "; cleared on taking the lock", removed=True))
        stored = {g for g in store.ids() if store.exists(g)}
        freed = {} if dry_run else _free_orphan_indexes(vectors, stored, errors)
        collections = _collections(vectors, stored, freed)
        files = _paths(ws, store, vectors, stored)
        if not dry_run:
            for item in files:  # files first: on a full disk they make room for the database writes below
                _remove(item, errors)
            for item, folders in collections:
                _drop(vectors, item, folders, errors)
        debris += [item for item, _ in collections] + files
        free = vectors.free_bytes()
        compacted = 0
        if not dry_run and free:
            try:
                compacted = vectors.compact()
            except TaskloomError as err:
                errors.append(str(err))
    return GcReport(
        workspace=str(ws.root),
        dry_run=dry_run,
        found=len(debris),
        removed=sum(d.removed for d in debris),
        freed_bytes=sum(d.bytes for d in debris if d.removed) + compacted,
        debris=debris,
        vector_free_bytes=free,
        compacted_bytes=compacted,
        errors=errors,
    )

