"""Task files: JSON Lines (one task a line, as ``tasks_export`` writes) or a JSON list of tasks.

Every task is checked before any is used, and a problem is reported with the file, the line
the task starts on and the field: ``tasks.jsonl, line 3, field gold_answer: a document task
needs a gold answer (task 'doc-1')``. Beyond the model's own checks, a document task needs a
non-empty ``gold_answer`` and a web task a ``start_url``: without them a run would score
nothing and say nothing.

Examples
--------
>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "tasks.jsonl"
>>> _ = path.write_text('{"id": "doc-1", "kind": "document", "type": "qa", "instruction": "Which?", '
...                     '"provenance": {"graph_id": "g", "generator": "template"}}\\n')
>>> try:
...     read_task_file(path)
... except InputError as exc:
...     print(str(exc).split(", ", 1)[1])
line 1, field gold_answer: a document task needs a gold answer (task 'doc-1'); fix the task or export it again with `taskloom tasks export`
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from .model import Task

__all__ = ["read_task_file", "MAX_REPORTED"]

#: Problems listed in one error (the first of each task, in file order).
MAX_REPORTED = 5
_FIX = "fix the task or export it again with `taskloom tasks export`"


def read_task_file(path: Path) -> list[Task]:
    """The tasks in ``path``; an :class:`InputError` naming the line and field of every bad task (the first few)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not a tasks file: not UTF-8 text (byte {exc.start}); give JSON Lines from `taskloom tasks export`") from None
    except OSError as exc:
        raise InputError(f"tasks file {path} cannot be read ({exc.strerror or exc})") from None
    try:
        rows = _array(text) if text.lstrip().startswith("[") else _lines(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno}); {_FIX}") from None
    tasks: list[Task] = []
    problems: list[str] = []
    for line, row in rows:
        try:
            tasks.append(_task(row))
        except _Bad as bad:
            problems.append(f"{path}, line {line}, {bad}")
    if problems:
        more = f" (and {len(problems) - MAX_REPORTED} more)" if len(problems) > MAX_REPORTED else ""
        raise InputError("; ".join(problems[:MAX_REPORTED]) + more)
    if not tasks:
        raise InputError(f"{path} holds no tasks; export some with `taskloom tasks export`")
    return tasks


class _Bad(Exception):
    """One task's first problem, as ``field NAME: what``."""


def _task(row: Any) -> Task:
    if not isinstance(row, dict):
        raise _Bad(f"field (task): a task is a JSON object, got {type(row).__name__}; {_FIX}")
    shown = f"task {row.get('id')!r}" if isinstance(row.get("id"), str) else "a task without an id"
    try:
        task = Task.model_validate(row)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(task)"
        raise _Bad(f"field {field}: {first['msg'].lower()} ({shown}); {_FIX}") from None
    if task.kind == "document" and not (task.gold_answer or "").strip():
        raise _Bad(f"field gold_answer: a document task needs a gold answer ({shown}); {_FIX}")
    if task.kind == "web" and not (task.start_url or "").strip():
        raise _Bad(f"field start_url: a web task needs a start URL ({shown}); {_FIX}")
    return task


def _lines(text: str) -> list[tuple[int, Any]]:
    """(line number, value) of each non-blank line of JSON Lines."""
    rows = []
    start = 0  # offset of the line in the text, for the error's line and column
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if line.strip():
            try:
                rows.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise json.JSONDecodeError(exc.msg, text, start + exc.pos) from None
        start += len(line)
    return rows


def _array(text: str) -> list[tuple[int, Any]]:
    """(line the element starts on, element) of each element of a JSON array."""
    decoder = json.JSONDecoder()
    rows: list[tuple[int, Any]] = []
    i = _skip(text, text.index("[") + 1)
    if i < len(text) and text[i] == "]":
        return _end(text, i + 1, rows)
    while True:
        value, end = decoder.raw_decode(text, i)
        rows.append((text.count("\n", 0, i) + 1, value))
        i = _skip(text, end)
        if i < len(text) and text[i] == "]":
            return _end(text, i + 1, rows)
        if i >= len(text) or text[i] != ",":
            raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
        i = _skip(text, i + 1)


def _end(text: str, i: int, rows: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    if text[i:].strip():
        raise json.JSONDecodeError("Extra data", text, _skip(text, i))
    return rows


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i
