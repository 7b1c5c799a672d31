"""A full disk as a clear error instead of a traceback.

``OSError`` ENOSPC/EDQUOT from Python, and SQLite's "database or disk is full" from
Chroma (which arrives as a chromadb error, not an ``OSError``), become
:class:`DiskFullError` naming what was being written and what to do.
"""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

from ..errors import TaskloomError

__all__ = ["DiskFullError", "StorageError", "disk_full", "storage_error", "LOW_SPACE"]

#: Free bytes below which a vector-store failure is blamed on the disk.
LOW_SPACE = 16 * 1024 * 1024

_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_MARKERS = ("database or disk is full", "no space left on device", "disk quota exceeded")


class DiskFullError(TaskloomError):
    """The disk (or quota) filled up while Taskloom was writing."""


class StorageError(TaskloomError):
    """The vector store failed while Taskloom was writing to it."""


def _message(target: str) -> str:
    return f"disk full while writing {target}; free space and rerun; `taskloom gc` removes partial results"


def _is_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno in _ERRNOS:
        return True
    text = str(exc).lower()
    return type(exc).__module__.split(".")[0] in ("chromadb", "sqlite3") and any(m in text for m in _MARKERS)


def disk_full(exc: BaseException, writing: str | None = None) -> DiskFullError | None:
    """The :class:`DiskFullError` for ``exc`` (or any exception in its cause chain), else None.

    ``writing`` names what was being written when the error does not say (an OSError's
    file name wins; Chroma's errors say "the vector store (chroma) for ``writing``").
    """
    seen: BaseException | None = exc
    depth = 0
    while seen is not None and depth < 20:
        if isinstance(seen, DiskFullError):
            return seen
        if _is_full(seen):
            if isinstance(seen, OSError) and seen.filename:
                target = str(seen.filename)
            elif not isinstance(seen, OSError):
                target = "the vector store (chroma)" + (f" for {writing}" if writing else "")
            else:
                target = writing or "a file"
            return DiskFullError(_message(target))
        seen = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
        depth += 1
    return None


def _chroma_cause(exc: BaseException) -> BaseException | None:
    seen: BaseException | None = exc
    for _ in range(20):
        if seen is None:
            return None
        if type(seen).__module__.split(".")[0] == "chromadb":
            return seen
        seen = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
    return None


def storage_error(exc: BaseException, writing: str, root: Path) -> TaskloomError | None:
    """A clear error for a write into workspace ``root`` that failed with ``exc``, or None (a bug: let it show).

    A full disk becomes :class:`DiskFullError`; so does a Chroma failure while less than
    :data:`LOW_SPACE` bytes are free (Chroma does not always say the disk is full); any
    other Chroma failure becomes :class:`StorageError` with Chroma's own message.
    """
    full = disk_full(exc, writing)
    if full is not None:
        return full
    chroma = _chroma_cause(exc)
    if chroma is None:
        return None
    free = shutil.disk_usage(root).free
    if free < LOW_SPACE:
        return DiskFullError(_message(f"the vector store (chroma) for {writing} ({free // 1024} KiB left)"))
    return StorageError(
        f"the vector store (chroma) failed while writing {writing}: {chroma}; rerun, and if it fails again "
        "run `taskloom gc` to remove partial results"
    )
