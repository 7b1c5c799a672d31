"""Tasks in other harnesses' formats: the export format registry (``@exporter("jsonl")``).

An exporter turns a list of tasks into the exported text; another package adds one
through the ``taskloom.exporters`` entry point group.

``jsonl``: one full task per line.

``inspect``: one `inspect-ai <https://inspect.aisi.org.uk>`_ ``Sample`` per line —
``id``, ``input`` (the instruction), ``target`` (the gold answer of a document task;
empty for web and composite tasks, whose success is machine-checked) and ``metadata``
(kind, type, difficulty, start URL, allowed domains, and for web and composite tasks
the success criteria and gold steps, for a scorer to use). Load it with
``inspect_ai.dataset.json_dataset(path)``. Like every export this holds gold data: it
is for the evaluator's side, never for the agent under test.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from ..registry import Registry
from .model import Task

__all__ = ["ExportFormat", "to_inspect_sample", "exporters", "exporter", "export_jsonl", "export_inspect"]

ExportFormat = Literal["jsonl", "inspect"]  # the built-in formats (the MCP tool's choices); plugins add more
Exporter = Callable[[Sequence[Task]], str]
F = TypeVar("F", bound=Exporter)

#: Export formats by name: ``export(tasks) -> text``.
exporters: Registry[str] = Registry("exporter", modules=("taskloom.tools.tasks.formats",), label="export format")


def exporter(name: str) -> Callable[[F], F]:
    """Register an export format ``(tasks) -> text`` under ``name``."""
    return exporters.register(name)


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
