"""Tasks in other harnesses' formats: the export format registry (``@exporter("jsonl")``).

Two kinds of exporter share one registry. A text exporter (``@exporter(name)``) turns a
list of tasks into the exported text: ``(tasks) -> str``. A directory exporter
(``@exporter(name, output="directory")``) writes a folder tree:
``(tasks, out, context) -> BaseModel`` (a report of what it wrote), where ``context``
(:class:`ExportContext`) carries what tasks alone do not hold (the source documents).
:func:`export_text` and :func:`export_directory` call either kind by name and refuse the
other with a message saying how to use it. Another package adds a format through the
``taskloom.exporters`` entry point group.

``jsonl``: one full task per line.

``inspect``: one `inspect-ai <https://inspect.aisi.org.uk>`_ ``Sample`` per line —
``id``, ``input`` (the instruction), ``target`` (the gold answer of a document task;
empty for web and composite tasks, whose success is machine-checked) and ``metadata``
(kind, type, difficulty, start URL, allowed domains, and for web and composite tasks
the success criteria and gold steps, for a scorer to use). Load it with
``inspect_ai.dataset.json_dataset(path)``. Like every export this holds gold data: it
is for the evaluator's side, never for the agent under test.

``harbor`` (a directory): one Harbor task directory per task (see :mod:`.harbor`), with
the gold only under ``tests/`` and ``solution/``, which Harbor hides from the agent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from ..errors import InputError
from ..registry import Registry
from .harbor import write_harbor_tasks
from .model import Task

__all__ = [
    "ExportFormat",
    "ExportContext",
    "to_inspect_sample",
    "exporters",
    "exporter",
    "is_directory_format",
    "export_text",
    "export_directory",
    "export_jsonl",
    "export_inspect",
    "export_harbor",
]

ExportFormat = Literal["jsonl", "inspect", "harbor"]  # the built-in formats (the MCP tool's choices); plugins add more
F = TypeVar("F", bound=Callable[..., Any])


class ExportContext(BaseModel):
    """What a directory exporter needs besides the tasks."""

    documents: dict[str, Path] = Field(default_factory=dict, description="Document graph id → its source file (copied into task environments).")
    overwrite: bool = Field(False, description="Replace task folders that already exist.")
    agent_timeout_s: float = Field(600.0, gt=0, description="Seconds an agent may work on one task (where the format records it).")

#: Export formats by name: ``export(tasks) -> text``.
exporters: Registry[str] = Registry("exporter", modules=("taskloom.tools.tasks.formats",), label="export format")


def exporter(name: str, output: Literal["text", "directory"] = "text") -> Callable[[F], F]:
    """Register an export format under ``name``: ``(tasks) -> text``, or ``(tasks, out, context) -> report`` for ``output="directory"``."""
    return exporters.register(name, output=output)


def is_directory_format(name: str) -> bool:
    """True when the format ``name`` writes a folder tree rather than text."""
    return bool(exporters.get(name).meta.get("output") == "directory")


def export_text(name: str, tasks: Sequence[Task]) -> str:
    """The tasks as text in format ``name``; a directory format is refused with how to use it."""
    if is_directory_format(name):
        raise InputError(f"export format {name!r} writes a folder, not text; give an output folder (--out DIR, or out_dir in tasks_export)")
    text: str = exporters.get(name).factory(tasks)
    return text


def export_directory(name: str, tasks: Sequence[Task], out: Path, context: ExportContext | None = None) -> BaseModel:
    """Write the tasks under ``out`` in directory format ``name``; return its report. A text format is refused."""
    if not is_directory_format(name):
        raise InputError(f"export format {name!r} writes text, not a folder; give an output file (-o FILE) instead of a folder")
    report: BaseModel = exporters.get(name).factory(tasks, out, context or ExportContext())
    return report


def _lines(rows: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


@exporter("jsonl")
def export_jsonl(tasks: Sequence[Task]) -> str:
    """Full tasks (gold included), one JSON object per line; what ``--tasks FILE`` reads back."""
    return _lines([t.model_dump(mode="json") for t in tasks])


@exporter("inspect")
def export_inspect(tasks: Sequence[Task]) -> str:
    """inspect-ai Samples (id, input, target, metadata), one per line, for ``json_dataset``."""
    return _lines([to_inspect_sample(t) for t in tasks])


@exporter("harbor", output="directory")
def export_harbor(tasks: Sequence[Task], out: Path, context: ExportContext) -> BaseModel:
    """Harbor task directories (instruction.md, task.toml, environment/, tests/, solution/), one per task."""
    return write_harbor_tasks(tasks, out, context.documents, context.overwrite, context.agent_timeout_s)


def to_inspect_sample(task: Task) -> dict[str, Any]:
    """One task as an inspect-ai ``Sample`` record."""
    metadata: dict[str, Any] = {"kind": task.kind, "type": task.type, "difficulty": task.difficulty, "graph_id": task.provenance.graph_id}
    if task.start_url:
        metadata.update(start_url=task.start_url, allowed_domains=task.allowed_domains)
    if task.kind != "document":
        metadata["success"] = [c.model_dump(mode="json") for c in task.success]
        metadata["gold_steps"] = [s.model_dump(mode="json", exclude_none=True) for s in task.gold_steps]
    if task.kind == "composite":
        metadata.update(level=task.level, dag=task.dag, complexity=task.complexity, capabilities=task.capabilities)
    if task.kind == "document":
        metadata.update(answer_kind=task.answer_kind, evidence=task.evidence, metrics=task.metrics)
    return {"id": task.id, "input": task.instruction, "target": task.gold_answer or "", "metadata": metadata}
