"""An application's state folder, reset to a pristine copy between episodes.

A web application that keeps state (a tracker, a wiki) serves a *live* folder; a
*pristine* copy of it is kept aside. :meth:`StateFolder.reset` makes the live folder
equal to the pristine one again while the application keeps running: SQLite databases
(known by suffix or header) are restored through SQLite's online backup (the server's open connections see the
restored pages, never a half-copied file), other files are copied over, and files the
application added since are removed. An :class:`~taskloom.tools.environment.manager.EpisodeManager`
with a ``state_reset`` calls it before each episode, so every episode (and every gold
replay) starts from the same state.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from ..looplock import LoopLock

__all__ = ["StateFolder", "StateTurns", "SQLITE_SUFFIXES"]

#: Files restored as SQLite databases (online backup) rather than copied.
SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_SIDE_FILES = ("-journal", "-wal", "-shm")


def _is_sqlite(path: Path) -> bool:
    """A database by its suffix, or by SQLite's header when its name has none (e.g. ``db/db``).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> con = sqlite3.connect(folder / "db"); _ = con.execute("CREATE TABLE t (x)"); con.close()
    >>> _ = (folder / "notes").write_text("SQLite is a database")
    >>> _is_sqlite(folder / "db"), _is_sqlite(folder / "notes")
    (True, False)
    """
    if path.suffix in SQLITE_SUFFIXES:
        return True
    with path.open("rb") as handle:
        return handle.read(16) == b"SQLite format 3\x00"


class StateFolder:
    """A live state folder and the pristine copy it is reset to.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "pristine").mkdir(); _ = (root / "pristine" / "a.txt").write_text("one")
    >>> state = StateFolder.copy_of(root / "pristine", root / "live")
    >>> _ = (state.live / "a.txt").write_text("two"); _ = (state.live / "new.txt").write_text("x")
    >>> _ = state.reset()
    >>> (state.live / "a.txt").read_text(), (state.live / "new.txt").exists()
    ('one', False)
    """

    def __init__(self, pristine: Path, live: Path) -> None:
        self.pristine = pristine
        self.live = live
        self.resets = 0
        self.seconds = 0.0

    @classmethod
    def copy_of(cls, pristine: Path, live: Path) -> StateFolder:
        """A fresh live copy of ``pristine`` at ``live`` (replacing whatever was there)."""
        shutil.rmtree(live, ignore_errors=True)
        shutil.copytree(pristine, live)
        return cls(pristine, live)

    def reset(self) -> float:
        """Make the live folder equal to the pristine copy; the seconds it took."""
        began = time.perf_counter()
        wanted = {p.relative_to(self.pristine) for p in self.pristine.rglob("*")}
        for path in sorted(self.live.rglob("*"), reverse=True):
            rel = path.relative_to(self.live)
            if rel in wanted or any(path.name.endswith(s) and (path.parent / path.name[: -len(s)]).exists() for s in _SIDE_FILES):
                continue
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
        for rel in sorted(wanted):
            source, target = self.pristine / rel, self.live / rel
            if source.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            elif _is_sqlite(source) and target.is_file():
                with sqlite3.connect(source) as src, sqlite3.connect(target, timeout=30) as dst:
                    src.backup(dst)
                dst.close()
                src.close()
            elif not target.is_file() or target.read_bytes() != source.read_bytes():
                shutil.copy2(source, target)
        took = time.perf_counter() - began
        self.resets += 1
        self.seconds += took
        return took


class StateTurns:
    """An application's state as episodes share it: reset before each one, held by one at a time.

    One object per :class:`~taskloom.tools.runtime.Runtime`, shared by every episode manager
    it makes (the harness gives each episode's server its own manager), so two episodes
    never reset or change the application under each other. With no ``reset``, nothing is
    held and episodes run side by side.
    """

    def __init__(self, reset: Callable[[], object] | None = None, wait_s: float = 900.0) -> None:
        self.reset = reset
        self.wait_s = wait_s  # how long an episode waits for the one holding the application
        self.lock = LoopLock()
        self.holder: str | None = None
