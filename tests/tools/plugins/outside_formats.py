"""A task generator and an export format from outside Taskloom, one decorated function each."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from taskloom.tools.generate.document.families import document_templates
from taskloom.tools.generate.registry import Candidates, GenerationRequest, generator
from taskloom.tools.tasks.formats import exporter
from taskloom.tools.tasks.model import Task


@generator("verification-only", graph="document")
async def verification_only(request: GenerationRequest) -> Candidates:
    """Only fact-verification tasks, from the built-in template generator."""
    return await document_templates(replace(request, types=["fact_verification"]))


@exporter("ids")
def export_ids(tasks: Sequence[Task]) -> str:
    """One task id per line."""
    return "".join(f"{t.id}\n" for t in tasks)
