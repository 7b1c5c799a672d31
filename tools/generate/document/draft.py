"""Client-authored tasks: the calling model writes a task from a sampled subgraph; the server checks it.

MCP server-initiated sampling is deprecated in the current protocol (2026-07-28),
so an LLM caller (an IDE assistant, an agent) authors tasks itself: :func:`make_draft`
hands it a subgraph sampled for a template plus the template's instructions and
the submission schema; :func:`check_submission` decides whether what it wrote is a
good task — evidence nodes exist, the answer is grounded in them, they are within
the template's hop limit of each other, and it is not a near-duplicate — and says
exactly why not when it is not.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from ...errors import InputError
from ...graph.model import KnowledgeGraph
from ...graph.sampling import SampleSpec, sample_document_subgraph
from ...llm.embedders import Embedder
from ...tasks.model import Difficulty, Provenance, Task
from ..filter.stages import reachable
from .templates import TaskTemplate, templates_by_id

__all__ = ["Draft", "Submission", "Verdict", "make_draft", "check_submission"]

_WORD = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)?")
_STOP = {"the", "a", "an", "of", "and", "or", "to", "in", "is", "are", "for", "on", "by", "with", "it", "as", "at", "be", "that", "this"}


class Submission(BaseModel):
    """What the calling model submits for a draft."""

    question: str = Field(min_length=8, description="The task instruction / question for the agent.")
    answer: str = Field(min_length=1, description="The gold answer, taken from the evidence.")
    evidence: list[str] = Field(min_length=1, description="Ids of the subgraph nodes the answer is grounded in.")
    difficulty: Difficulty | None = None


class Draft(BaseModel):
    """A sampled subgraph and the instructions for writing one task from it."""

    graph_id: str
    template_id: str
    task_type: str
    instructions: str
    nodes: list[dict[str, Any]]
    edges: list[tuple[str, str, str]]
    submission_schema: dict[str, Any]
    seed: int


class Verdict(BaseModel):
    """Whether a submission was accepted, why not, and the stored task."""

    accepted: bool
    problems: list[str] = Field(default_factory=list)
    task: Task | None = None


def _pick_template(template_id: str | None, seed: int) -> TaskTemplate:
    templates = templates_by_id()
    if template_id is not None:
        if template_id not in templates:
            raise InputError(f"unknown template {template_id!r}; templates: {sorted(templates)}")
        return templates[template_id]
    ids = sorted(templates)
    return templates[ids[int(np.random.default_rng(seed).integers(len(ids)))]]


def make_draft(kg: KnowledgeGraph, template_id: str | None = None, seed: int = 0) -> Draft:
    """Sample a subgraph fit for a template (its node types, seeded) and describe the job."""
    template = _pick_template(template_id, seed)
    types = sorted(set(template.required_node_types) | {"paragraph"})
    candidates = [n.id for n in kg.nodes(*template.required_node_types)]
    if not candidates:
        raise InputError(f"graph {kg.id!r} has no {template.required_node_types} nodes for template {template.id!r}; pick another template")
    anchor = candidates[int(np.random.default_rng(seed).integers(len(candidates)))]
    spec = SampleSpec(node_types=types, seed_nodes=[anchor], k_hops=max(1, template.max_hops), max_nodes=min(template.max_nodes, 25), seed=seed)
    sub = sample_document_subgraph(kg, spec)
    instructions = (
        f"Write one {template.type.replace('_', ' ')} task ({template.difficulty}) from the nodes below. {template.description} "
        "The question must be answerable from these nodes alone; the answer must be copied or computed from their text; "
        "list in `evidence` the ids of every node the answer rests on. Then call tasks_submit with the draft's graph_id and template_id."
    )
    return Draft(
        graph_id=kg.id,
        template_id=template.id,
        task_type=template.type,
        instructions=instructions,
        nodes=[{"id": n.id, "type": n.type.value, "text": n.text[:800]} for n in sub.nodes()],
        edges=[(e.source, e.type.value, e.target) for e in sub.edges()],
        submission_schema=Submission.model_json_schema(),
        seed=seed,
    )


def _content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def check_submission(
    kg: KnowledgeGraph,
    template_id: str,
    submission: Submission,
    embedder: Embedder,
    existing: list[Task],
    dedup_threshold: float,
    model: str = "caller",
) -> Verdict:
    """Check a client-written task; return it (not yet stored) when every check passes."""
    template = _pick_template(template_id, 0)
    problems: list[str] = []
    missing = [n for n in submission.evidence if n not in kg]
    if missing:
        problems.append(f"evidence ids not in graph {kg.id!r}: {missing}")
    present = [n for n in submission.evidence if n in kg]
    text = " ".join(kg.node(n).text for n in present).lower()
    words = _content_words(submission.answer)
    if present and words:
        grounded = [w for w in words if w in text]
        if len(grounded) / len(words) < 0.8:
            problems.append(f"the answer is not grounded in the evidence: {sorted(set(words) - set(grounded))[:8]} do not occur in it")
    elif present:
        problems.append("the answer has no content words to check against the evidence")
    if len(present) > 1:
        far = reachable(kg, present[0], present[1:], max(template.max_hops, 1) + 1)
        if far:
            problems.append(f"evidence {far} is more than {template.max_hops + 1} hops from {present[0]}")
    if not problems and existing:
        vectors = embedder.embed([f"{submission.question}\n{submission.answer}"] + [f"{t.instruction}\n{t.gold_answer or ''}" for t in existing])
        sims = vectors[1:] @ vectors[0]
        best = int(np.argmax(sims))
        if sims[best] >= dedup_threshold:
            problems.append(f"near-duplicate of task {existing[best].id} (cosine {sims[best]:.3f})")
    if problems:
        return Verdict(accepted=False, problems=problems)
    digest = hashlib.sha1(f"{kg.id}|{template.id}|{submission.question}|{sorted(present)}".encode()).hexdigest()[:12]
    task = Task(
        id=f"doc-client-{digest}",
        kind="document",
        type=template.type,
        difficulty=submission.difficulty or template.difficulty,
        instruction=submission.question,
        gold_answer=submission.answer,
        evidence=present,
        metrics=template.metrics,
        provenance=Provenance(graph_id=kg.id, template=template.id, generator="client", model=model, seed=0),
        quality={"submission_checks": "passed"},
    )
    return Verdict(accepted=True, task=task)
