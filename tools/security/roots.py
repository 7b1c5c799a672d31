"""Allowed roots: the only directories whose files a tool or command may read or write.

Every path a caller names goes through :class:`Roots` before anything opens it:
the text is checked (no NUL byte, not empty, not over-long), ``~`` is expanded,
symlinks are resolved, and the real path must lie inside one of the roots (the
workspace, the roots the user configured with ``--allow-root``, and, for an MCP
client over stdio that advertises them, the client's roots; see :mod:`.mcp`). Then the kind of thing is
checked: a regular file to read, a folder to walk, a file to write that must not
exist unless overwriting was asked for. Every refusal is an
:class:`~taskloom.tools.errors.InputError` or
:class:`~taskloom.tools.errors.NotFoundError` that names the argument, the reason
and what to do.

Examples
--------
>>> import tempfile, pathlib
>>> base = pathlib.Path(tempfile.mkdtemp()).resolve()
>>> roots = Roots([base])
>>> roots.contains(base / "a" / "b.txt")
True
>>> roots.contains(pathlib.Path("/etc/passwd"))
False
>>> roots.writable_file(str(base / "out.json"), "path") == base / "out.json"
True
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..errors import InputError, NotFoundError

__all__ = ["Roots", "OutsideRoots", "check_path_text", "roots_from_uris", "MAX_PATH_CHARS", "MAX_WALK_ENTRIES", "MAX_WALK_DEPTH"]

MAX_PATH_CHARS = 4096  # Linux PATH_MAX
MAX_NAME_CHARS = 255  # Linux NAME_MAX, per component
MAX_WALK_ENTRIES = 200_000  # a folder walk visits at most this many entries
MAX_WALK_DEPTH = 32


def check_path_text(text: str, argument: str) -> str:
    """``text`` if it can name a file, else an InputError naming ``argument``.

    >>> try:
    ...     check_path_text("a\\x00b", "path")
    ... except InputError as exc:
    ...     print(exc)
    path contains a NUL byte; give a plain file path
    """
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{argument} is empty; give a file path")
    if "\x00" in text:
        raise InputError(f"{argument} contains a NUL byte; give a plain file path")
    if len(text) > MAX_PATH_CHARS:
        raise InputError(f"{argument} is {len(text)} characters long; paths are at most {MAX_PATH_CHARS}")
    long = next((part for part in text.split("/") if len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_CHARS), None)
    if long is not None:
        raise InputError(f"{argument} has a name of {len(long)} characters ({long[:40]!r}…); file names are at most {MAX_NAME_CHARS} bytes")
    return text


class OutsideRoots(InputError):
    """A path that resolves outside every allowed root."""


class Roots:
    """A set of allowed directories (real paths, symlinks resolved)."""

    def __init__(self, roots: Iterable[Path | str]) -> None:
        resolved: list[Path] = []
        for root in roots:
            real = Path(root).expanduser().resolve()
            if real not in resolved:
                resolved.append(real)
        if not resolved:
            raise InputError("no allowed roots: give the workspace or --allow-root DIR")
        self.roots: tuple[Path, ...] = tuple(resolved)

    def __repr__(self) -> str:
        return f"Roots({[str(r) for r in self.roots]})"

    def with_roots(self, extra: Iterable[Path | str]) -> Roots:
        """These roots plus ``extra`` (e.g. an MCP client's advertised roots)."""
        return Roots([*self.roots, *extra])

    def describe(self) -> str:
        return ", ".join(str(r) for r in self.roots)

    def contains(self, real: Path) -> bool:
        """True when the (already resolved) path is one of the roots or under one."""
        return any(real == root or real.is_relative_to(root) for root in self.roots)

    def resolve(self, text: str | Path, argument: str) -> Path:
        """The real path of ``text`` (``~`` expanded, symlinks resolved) if it lies inside a root."""
        raw = check_path_text(str(text), argument)
        try:
            real = Path(raw).expanduser().resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop, an unreadable parent
            raise InputError(f"{argument} {raw!r} cannot be resolved ({exc.__class__.__name__}: {exc}); give a plain path") from None
        if not self.contains(real):
            shown = raw if str(real) == raw else f"{raw} (really {real})"
            raise OutsideRoots(
                f"{argument} {shown} is outside the allowed roots ({self.describe()}); use a path inside one of them, "
                "or allow its folder with --allow-root DIR (or TASKLOOM_ALLOW_ROOTS='[\"DIR\"]', a JSON list)"
            )
        return real

    def readable_file(self, text: str | Path, argument: str) -> Path:
        """An existing regular file inside the roots."""
        real = self.resolve(text, argument)
        mode = _mode(real, argument)
        if stat.S_ISDIR(mode):
            raise InputError(f"{argument} {real} is a folder; give a file inside it")
        if not stat.S_ISREG(mode):
            raise InputError(f"{argument} {real} is not a regular file (a device, FIFO or socket); give a file")
        return real

    def readable(self, text: str | Path, argument: str) -> Path:
        """An existing regular file or folder inside the roots."""
        real = self.resolve(text, argument)
        mode = _mode(real, argument)
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            raise InputError(f"{argument} {real} is not a regular file or folder (a device, FIFO or socket)")
        return real

    def writable_file(self, text: str | Path, argument: str, overwrite: bool = False) -> Path:
        """A file path to write inside the roots; an existing file only when ``overwrite``."""
        real = self.resolve(text, argument)
        if real.is_dir():
            raise InputError(f"{argument} {real} is a folder; give a file name inside it")
        if real.exists() and not overwrite:
            raise InputError(f"{argument} {real} already exists; choose another name or pass overwrite=true (--overwrite)")
        if real.exists() and not real.is_file():
            raise InputError(f"{argument} {real} is not a regular file; give a file name")
        return real

    def walk(self, folder: Path, name: str, limit: int = MAX_WALK_ENTRIES, depth: int = MAX_WALK_DEPTH) -> Iterator[Path]:
        """Files called ``name`` (a glob such as ``*.json`` works too) under ``folder`` (sorted, symlinks not followed), at most ``limit`` entries visited.

        A walk that would visit more entries or go deeper raises an InputError: name a
        smaller folder instead.
        """
        if not self.contains(folder.resolve()):
            raise OutsideRoots(f"folder {folder} is outside the allowed roots ({self.describe()})")
        seen = 0
        todo: list[tuple[Path, int]] = [(folder, 0)]
        found: list[Path] = []
        while todo:
            current, level = todo.pop()
            try:
                entries = sorted(os.scandir(current), key=lambda e: e.name)
            except OSError:
                continue  # unreadable sub-folder: skipped, as find(1) would report and go on
            for entry in entries:
                seen += 1
                if seen > limit:
                    raise InputError(f"folder {folder} holds more than {limit} entries; name a smaller folder (e.g. one run's episodes)")
                if entry.is_dir(follow_symlinks=False):
                    if level + 1 > depth:
                        raise InputError(f"folder {folder} is nested deeper than {depth} levels; name a folder closer to the files")
                    todo.append((Path(entry.path), level + 1))
                elif (entry.name == name or fnmatch.fnmatchcase(entry.name, name)) and entry.is_file(follow_symlinks=False):
                    found.append(Path(entry.path))
        yield from sorted(found)


def _mode(real: Path, argument: str) -> int:
    try:
        return os.stat(real).st_mode
    except FileNotFoundError:
        raise NotFoundError(f"{argument} {real} does not exist; check the path") from None
    except PermissionError:
        raise InputError(f"{argument} {real} cannot be read (permission denied)") from None
    except OSError as exc:
        raise InputError(f"{argument} {real} cannot be read ({exc.strerror or exc})") from None


def roots_from_uris(uris: Sequence[str]) -> list[Path]:
    """Local folders from an MCP client's advertised ``file://`` roots (others are ignored)."""
    folders: list[Path] = []
    for uri in uris:
        parsed = urlparse(str(uri))
        if parsed.scheme == "file" and parsed.path and "\x00" not in parsed.path:
            folders.append(Path(unquote(parsed.path)))
    return folders
