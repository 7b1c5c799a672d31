"""Files that hold gold, written where no agent under test can read them: 0600 files in 0700 folders.

Exports (``tasks export``, ``tasks_export``, Harbor task folders) carry gold answers, and
they are often written outside the workspace (``/tmp/tasks.jsonl``, ``~/exports``), where
an agent running as another user could otherwise read them. :func:`private_dirs` makes the
missing folders of a path one by one with mode 0700 (a folder that already exists is the
user's and is left as it is); :func:`private_write_text` writes a file atomically with mode
0600 (the temp file is made 0600 before anything is written into it).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..workspace import atomic_write_text

__all__ = ["private_dirs", "private_write_text", "FILE_MODE", "DIR_MODE"]

FILE_MODE, DIR_MODE = 0o600, 0o700


def private_dirs(path: Path) -> Path:
    """Make ``path`` and its missing parents, each new one 0700 (whatever the umask); returns ``path``."""
    missing = []
    for folder in [path, *path.parents]:
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue  # made meanwhile by someone else: theirs
        os.chmod(folder, DIR_MODE)  # mkdir's mode is cut by the umask
    return path


def private_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically as a 0600 file, making missing folders 0700."""
    private_dirs(path.parent)
    atomic_write_text(path, text)  # a mkstemp file: 0600 from its creation, renamed into place
    os.chmod(path, FILE_MODE)
