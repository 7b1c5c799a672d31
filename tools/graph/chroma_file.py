"""Upkeep of the embedded Chroma database file: deleted vectors give their space back to the disk.

SQLite keeps the pages of deleted rows inside the file, so without upkeep ``chroma.sqlite3``
never shrinks after a graph is deleted (or a failed ingest dropped). Taskloom creates the file
in SQLite's incremental auto-vacuum mode (:func:`create`): free pages are then cut off its end
cheaply, with little journal, so even a nearly full disk can take them back (:func:`compact`).
A file made before (mode ``NONE``) is converted by one ``VACUUM`` when ``taskloom gc`` runs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from ..errors import TaskloomError

__all__ = ["DB_FILE", "VectorStoreFull", "create", "compact", "free_bytes", "orphan_index_dirs"]

DB_FILE = "chroma.sqlite3"
#: SQLite's ``auto_vacuum`` value for incremental mode.
INCREMENTAL = 2


class VectorStoreFull(TaskloomError):
    """The embedded vector store could not be compacted (the disk is too full even for that)."""


def create(db: Path) -> None:
    """Create Chroma's database file (when missing) in incremental auto-vacuum mode."""
    if db.exists():
        return
    with closing(sqlite3.connect(db, isolation_level=None)) as con:
        con.execute(f"PRAGMA auto_vacuum = {INCREMENTAL}")
        con.execute("CREATE TABLE IF NOT EXISTS taskloom_created (x)")  # writes the header that keeps the mode
        con.execute("DROP TABLE taskloom_created")


def _pragmas(db: Path, *names: str) -> list[int] | None:
    """Integer pragmas of ``db``; None when it is absent or unreadable."""
    if not db.is_file():
        return None
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)) as con:
            return [int(con.execute(f"PRAGMA {name}").fetchone()[0]) for name in names]
    except sqlite3.Error:
        return None


def free_bytes(db: Path) -> int:
    """Bytes of ``db`` that deleted rows left unused."""
    found = _pragmas(db, "page_size", "freelist_count")
    return found[0] * found[1] if found else 0


def orphan_index_dirs(db: Path, owned: Callable[[str, str | None], bool]) -> dict[str, list[Path]]:
    """Index folders of the collections ``owned(name, graph_id)`` refuses, by collection id, read without starting Chroma.

    A read-only look at the file needs no free space, and Chroma itself cannot start on a full
    disk: removing these folders first (they hold most of a collection's bytes) makes room.
    """
    if not db.is_file():
        return {}
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)) as con:
            rows = con.execute(
                "SELECT c.id, c.name, m.str_value FROM collections c "
                "LEFT JOIN collection_metadata m ON m.collection_id = c.id AND m.key = 'graph_id'"
            ).fetchall()
            segments = con.execute("SELECT id, collection FROM segments").fetchall()
    except sqlite3.Error:
        return {}  # an older or unreadable schema: Chroma lists them once it starts
    orphans = {str(cid) for cid, name, graph_id in rows if not owned(str(name), None if graph_id is None else str(graph_id))}
    found: dict[str, list[Path]] = {}
    for seg, cid in segments:
        folder = db.parent / str(seg)
        if str(cid) in orphans and folder.is_dir():
            found.setdefault(str(cid), []).append(folder)
    return found


def compact(db: Path, full: bool = True) -> int:
    """Give ``db``'s unused pages back to the disk; the bytes the file shrank.

    In incremental mode the free pages are cut off the end; otherwise, with ``full``, one
    ``VACUUM`` (its temporary copy in memory, its journal needing about the live size free)
    rewrites the file and switches it to incremental mode. Raises :class:`VectorStoreFull`
    when SQLite cannot (a disk too full even for that): the file is left as it was.
    """
    found = _pragmas(db, "auto_vacuum", "freelist_count", "page_count", "page_size")
    if not found or not found[1] or (found[0] != INCREMENTAL and not full):
        return 0
    mode, free, pages, size = found
    before = db.stat().st_size
    try:
        with closing(sqlite3.connect(db, timeout=30, isolation_level=None)) as con:
            con.execute("PRAGMA temp_store = MEMORY")
            if mode == INCREMENTAL:
                con.executescript("PRAGMA incremental_vacuum;")  # run to the end (a plain execute frees one page)
            else:
                con.execute(f"PRAGMA auto_vacuum = {INCREMENTAL}")
                con.execute("VACUUM")
    except sqlite3.Error as err:
        need = (pages - free) * size if mode != INCREMENTAL else 64 * size
        raise VectorStoreFull(f"could not compact {db} ({err}); free about {need >> 10} KiB and run `taskloom gc` again") from None
    return before - db.stat().st_size
