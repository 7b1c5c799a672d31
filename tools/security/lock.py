"""Workspace write locks: one ``flock`` per lock file under ``{workspace}/.locks/``.

Writers of one workspace (ingest, crawl, graph delete, task writes, gc) hold a lock
while they change it; readers never take one. ``flock`` is released by the kernel
when its holder dies, so a killed process never blocks the next writer. Whoever holds
a lock writes who it is (pid, command, what, since) into the file and empties it on
release: a lock file that is free but not empty was left by a process that died.

Locks are per open file, so two threads of one process exclude each other too.
They are not re-entrant: do not take a lock you already hold.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
import time
from datetime import datetime, UTC
from pathlib import Path
from types import TracebackType
from typing import Literal

import anyio
from pydantic import BaseModel, ValidationError

from ..errors import TaskloomError

__all__ = ["WorkspaceBusyError", "Holder", "WorkspaceLock", "LockName", "lock_dir", "read_holder"]

LockName = Literal["graphs", "tasks"]
_POLL = 0.1


class WorkspaceBusyError(TaskloomError):
    """Another writer holds the workspace lock longer than the caller may wait."""


class Holder(BaseModel):
    """Who holds (or held) a lock."""

    pid: int
    command: str
    what: str
    since: str


def lock_dir(root: Path) -> Path:
    """Folder of a workspace's lock files."""
    return Path(root) / ".locks"


def _parse_holder(raw: str) -> Holder | None:
    if not raw.strip():
        return None
    try:
        return Holder.model_validate_json(raw)
    except ValidationError:
        return Holder(pid=0, command="?", what=f"unreadable holder record {raw[:80]!r}", since="?")


def read_holder(path: Path) -> Holder | None:
    """The holder recorded in lock file ``path`` (None when empty or missing)."""
    try:
        return _parse_holder(Path(path).read_text(encoding="utf-8", errors="replace"))
    except FileNotFoundError:
        return None


def _command() -> str:
    argv = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else ["python"]
    text = " ".join(argv)
    return text if len(text) <= 200 else text[:199] + "…"


class WorkspaceLock:
    """An exclusive lock on one part of a workspace, taken with ``with`` or ``async with``.

    Parameters
    ----------
    root
        The workspace directory.
    name
        Which lock: ``graphs`` (graphs, vectors, screenshots) or ``tasks`` (the task store).
    timeout
        Seconds to wait for another holder before :class:`WorkspaceBusyError` (0: do not wait).
    what
        What the holder is doing, shown to whoever has to wait (e.g. ``ingest report.pdf``).
    """

    def __init__(self, root: Path, name: LockName = "graphs", timeout: float = 30.0, what: str = "write") -> None:
        self.path = lock_dir(root) / f"{name}.lock"
        self.timeout = timeout
        self.what = what
        self.stale: Holder | None = None
        self._fd: int | None = None

    # -- acquiring ------------------------------------------------------------

    def _try(self) -> bool:
        """One attempt; True when this object now holds the lock."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return False
            raise
        try:
            same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the file was removed (by gc) between open and flock: lock the new one
            os.close(fd)
            return False
        self._fd = fd
        self.stale = _parse_holder(os.pread(fd, 65536, 0).decode("utf-8", errors="replace"))
        record = Holder(pid=os.getpid(), command=_command(), what=self.what, since=datetime.now(UTC).isoformat(timespec="seconds"))
        os.ftruncate(fd, 0)
        try:
            os.pwrite(fd, record.model_dump_json().encode(), 0)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            # a full disk: the lock is held all the same (flock), only who holds it goes unrecorded (gc must still run)
        return True

    def _busy(self) -> WorkspaceBusyError:
        holder = read_holder(self.path)
        who = f"{holder.what} (pid {holder.pid}, `{holder.command}`) since {holder.since}" if holder else "another process"
        return WorkspaceBusyError(
            f"workspace busy: {who} holds {self.path}; waited {self.timeout:g}s to {self.what} — "
            "wait for it to finish or retry (TASKLOOM_LOCK_TIMEOUT sets how long to wait)"
        )

    def acquire(self) -> WorkspaceLock:
        """Take the lock, waiting up to ``timeout`` seconds."""
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is already held by this object")
        deadline = time.monotonic() + self.timeout
        while not self._try():
            if time.monotonic() >= deadline:
                raise self._busy()
            time.sleep(_POLL)
        return self

    async def acquire_async(self) -> WorkspaceLock:
        """Take the lock without blocking the event loop, waiting up to ``timeout`` seconds."""
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is already held by this object")
        deadline = time.monotonic() + self.timeout
        while not self._try():
            if time.monotonic() >= deadline:
                raise self._busy()
            await anyio.sleep(_POLL)
        return self

    def release(self) -> None:
        """Empty the holder record and let go (a no-op when not held)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    # -- context managers -----------------------------------------------------

    def __enter__(self) -> WorkspaceLock:
        return self.acquire()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()

    async def __aenter__(self) -> WorkspaceLock:
        return await self.acquire_async()

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()

