"""Tasks in other harnesses' formats.

``inspect``: one `inspect-ai <https://inspect.aisi.org.uk>`_ ``Sample`` per line —
``id``, ``input`` (the instruction), ``target`` (the gold answer of a document task;
empty for web and composite tasks, whose success is machine-checked) and ``metadata``
(kind, type, difficulty, start URL, allowed domains, and for web and composite tasks
the success criteria and gold steps, for a scorer to use). Load it with
``inspect_ai.dataset.json_dataset(path)``. Like every export this holds gold data: it
is for the evaluator's side, never for the agent under test.
"""

from __future__ import annotations

from typing import Any, Literal

from .model import Task

__all__ = ["ExportFormat", "to_inspect_sample"]

ExportFormat = Literal["jsonl", "inspect"]


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
