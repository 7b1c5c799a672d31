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
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ..security.lock import Holder, WorkspaceLock
from ..settings import Settings
from ..workspace import Workspace
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
    errors: list[str] = Field(default_factory=list, description="Debris gc could not remove, and why.")


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _died(holder: Holder) -> str:
    return f"record left by pid {holder.pid} ({holder.what}, `{holder.command}`, since {holder.since}), which died holding the lock"


def _collections(vectors: VectorStore, stored: set[str], dry_run: bool, errors: list[str]) -> list[Debris]:
    names = {collection_name(g) for g in stored}
    found = []
    for col in vectors.collections():
        owned = col.graph_id in stored if col.graph_id is not None else col.name in names
        if owned:
            continue
        item = Debris(
            kind="collection",
            target=col.name,
            reason=f"vectors of graph {col.graph_id or '?'} ({f'{col.count} vectors' if col.count >= 0 else 'unreadable'}) whose graph file is missing",
            bytes=sum(_size(p) for p in vectors.index_dirs(col.id)),
        )
        if not dry_run:
            try:
                item.removed = vectors.drop(col.name)
            except Exception as err:  # noqa: BLE001 - reported, not hidden
                errors.append(f"collection {col.name}: {err}")
        found.append(item)
    return found


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
        debris.extend(_collections(vectors, stored, dry_run, errors))
        for item in _paths(ws, store, vectors, stored):
            if not dry_run:
                _remove(item, errors)
            debris.append(item)
    return GcReport(
        workspace=str(ws.root),
        dry_run=dry_run,
        found=len(debris),
        removed=sum(d.removed for d in debris),
        freed_bytes=sum(d.bytes for d in debris if d.removed),
        debris=debris,
        errors=errors,
    )

