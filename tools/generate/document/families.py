"""The document task families as registered generators: templates (no LLM) and LLM-written drafts."""

from __future__ import annotations

from ...errors import InputError
from ..filter.stages import Dropped
from ..registry import Candidates, GenerationRequest, generator
from .generator import generate_document_tasks
from .llm import generate_llm_document_tasks
from .templates import templates_by_id

__all__ = ["document_templates", "document_llm"]


@generator("document-templates", graph="document", llm=False, default=True)
async def document_templates(request: GenerationRequest) -> Candidates:
    """The 12 Graph2Eval templates filled from the graph, deterministically per seed (no LLM)."""
    pool = max(request.count * 4, 20)
    per_type = max(2, -(-pool // len(request.types or range(12))))  # generate_document_tasks counts per type
    tasks, generator_report = generate_document_tasks(request.kg, request.types, per_type, request.seed, request.difficulty)
    request.report.generator = generator_report
    for gone in generator_report["ambiguous_dropped"]:  # ill-posed or repeated questions, with the reason
        request.report.dropped.append(Dropped(task_id=gone["task_id"], stage="unique_question", reason=gone["reason"]))
    return Candidates(tasks, {tid: t.max_hops for tid, t in templates_by_id().items()})


@generator("document-llm", graph="document", llm=True, default=True)
async def document_llm(request: GenerationRequest) -> Candidates:
    """An LLM writes each task from a sampled subgraph and a template's instructions; each is checked as submitted."""
    if request.llm is None:
        raise InputError("task generator document-llm needs an LLM: set TASKLOOM_LLM_BACKEND=openai, TASKLOOM_LLM_BASE_URL and TASKLOOM_LLM_MODEL")
    tasks = await generate_llm_document_tasks(
        request.kg, request.llm, request.embedder, request.count, request.seed, request.types, request.settings.dedup_threshold, request.report
    )
    return Candidates(tasks, {tid: t.max_hops + 1 for tid, t in templates_by_id().items()})
