"""Document tasks written by an LLM from a serialised subgraph, checked like client-authored ones.

For each candidate a template is drawn and a subgraph sampled for it (the same
draft a calling model would get from ``tasks_draft``); the LLM returns a question,
an answer and the evidence node ids as structured output; the submission checks
(evidence exists, answer grounded, hop limit, not a duplicate) decide whether it is
kept. One LLM call per candidate, plus the client's retries on invalid output.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ...errors import TaskloomError
from ...graph.model import KnowledgeGraph
from ...llm.client import LLM
from ...llm.templates import render_prompt
from ...llm.embedders import Embedder
from ...tasks.model import Task
from .draft import Submission, check_submission, make_draft
from ..filter.stages import Dropped, GenerationReport
from .templates import templates_by_id

__all__ = ["generate_llm_document_tasks"]

def _messages(draft: Any) -> list[dict[str, Any]]:
    payload = {"template": draft.template_id, "task_type": draft.task_type, "nodes": draft.nodes, "edges": draft.edges}
    user = render_prompt("document_task_user.j2", instructions=draft.instructions, subgraph_json=json.dumps(payload, ensure_ascii=False))
    return [{"role": "system", "content": render_prompt("document_task_system.j2")}, {"role": "user", "content": user}]


async def generate_llm_document_tasks(
    kg: KnowledgeGraph,
    llm: LLM,
    embedder: Embedder,
    count: int,
    seed: int,
    types: list[str] | None,
    dedup_threshold: float,
    report: GenerationReport,
) -> list[Task]:
    """Ask the LLM for candidates until ``count`` pass the submission checks (at most ``2 * count`` attempts).

    Asking adaptively, instead of over-generating up front, keeps LLM calls per
    accepted task near one for generation (plus one for the scoring stage).
    """
    templates = [t for t in templates_by_id().values() if not types or t.type in types]
    if not templates:
        return []
    rng = np.random.default_rng(seed)
    kept: list[Task] = []
    attempts = 0
    for i in range(2 * count):
        if len(kept) >= count:
            break
        attempts += 1
        template = templates[int(rng.integers(len(templates)))]
        try:
            draft = make_draft(kg, template.id, seed * 1000 + i)
            completion = await llm.complete(_messages(draft), schema=Submission, tag=f"draft-{template.id}-{i}")
        except TaskloomError as exc:
            report.dropped.append(Dropped(task_id=f"llm-candidate-{i}", stage="llm_generate", reason=str(exc).splitlines()[0]))
            continue
        submission = completion.parsed
        verdict = check_submission(kg, template.id, submission, embedder, kept, dedup_threshold, model=llm.name)
        if verdict.task is None:
            report.dropped.append(Dropped(task_id=f"llm-candidate-{i}", stage="llm_generate", reason="; ".join(verdict.problems)))
            continue
        task = verdict.task.model_copy(update={"id": verdict.task.id.replace("doc-client-", "doc-llm-")})
        task.provenance = task.provenance.model_copy(update={"generator": "llm", "seed": seed})
        task.quality["llm_usage"] = completion.usage.model_dump()
        kept.append(task)
    report.stage("llm_generate", attempts, len(kept))
    return kept
