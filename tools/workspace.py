"""The workspace directory and crash-safe file writes.

Every write is atomic (temp file in the same directory, fsync, rename) or an
fsynced JSONL append, so a crash never leaves a half-written file.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["Workspace", "atomic_write_text", "atomic_write_chunks", "atomic_write_json", "append_jsonl"]

SUBDIRS = ("graphs", "chroma", "tasks", "runs", "cache", "reports")


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the new one, never a mix."""
    atomic_write_chunks(path, [text])


def atomic_write_chunks(path: Path, chunks: Iterable[str], buffer: int = 65536, before_replace: Callable[[], object] | None = None) -> None:
    """Write the concatenated ``chunks`` atomically, joining at most ``buffer`` of them at a time (large files, small memory).

    ``before_replace`` runs once the file is written in full and before it takes ``path``'s place; if it
    fails, the written file is removed (its space given back) and ``path`` is left as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            pieces: list[str] = []
            for piece in chunks:
                pieces.append(piece)
                if len(pieces) >= buffer:
                    fh.write("".join(pieces))
                    pieces.clear()
            fh.write("".join(pieces))
            fh.flush()
            os.fsync(fh.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_json(path: Path, data: Any) -> None:
    """Atomically write ``data`` as UTF-8 JSON."""
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1, sort_keys=False))


def append_jsonl(path: Path, record: Any) -> None:
    """Append one JSON line and fsync it before returning."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def _private(root: Path) -> None:
    """Make ``root`` 0700 if this user owns it and it is not already (someone else's folder is left as it is)."""
    info = root.stat()
    if info.st_uid == os.geteuid() and info.st_mode & 0o077:
        root.chmod(0o700)


class Workspace:
    """Paths of one workspace; creates its sub-directories on first use.

    The root is kept at mode 0700 (when this user owns it): tasks hold gold answers, and
    agents under test run as another user (see ``taskloom.tools.security.sandbox``).
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()
        for name in SUBDIRS:
            (self.root / name).mkdir(parents=True, exist_ok=True)
        _private(self.root)

    @property
    def graphs(self) -> Path:
        return self.root / "graphs"

    @property
    def chroma(self) -> Path:
        return self.root / "chroma"

    @property
    def tasks(self) -> Path:
        return self.root / "tasks"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def reports(self) -> Path:
        return self.root / "reports"
