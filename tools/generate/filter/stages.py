"""Multi-stage filtering of generated tasks, and coverage selection by MMR.

Stage 1, reachability: the task's evidence (documents) or step targets (web) are
reachable from its start within the hop limit. Stage 2, LLM quality score 1–5 (only
when an LLM is configured; an unparsable score rejects, never passes). Stage 3,
embedding de-duplication, keeping the best-scored task of each cluster. Then
maximal marginal relevance picks a subset that covers node types, edge types,
templates, pages and difficulties.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from ...errors import TaskloomError
from ...graph.model import KnowledgeGraph
from ...llm.client import LLM
from ...llm.templates import render_prompt
from ...llm.embedders import Embedder
from ...tasks.model import Task

__all__ = ["Dropped", "GenerationReport", "QualityScore", "reachable", "filter_reachable", "score_quality", "deduplicate", "mmr_select", "mmr_picks", "task_features", "family"]


class Dropped(BaseModel):
    """A candidate that did not make it, and why."""

    task_id: str
    stage: str
    reason: str


class GenerationReport(BaseModel):
    """Candidates, and what each stage kept and dropped."""

    candidates: int = 0
    kept: int = 0
    stages: dict[str, dict[str, int]] = Field(default_factory=dict, description="stage → {'in': n, 'kept': n}.")
    dropped: list[Dropped] = Field(default_factory=list)
    generator: dict[str, Any] = Field(default_factory=dict, description="What the generator itself reported (per type/pattern).")
    unverified: int = Field(0, description="Candidates never verified: coverage selection had its tasks before it reached them.")

    def stage(self, name: str, before: int, after: int) -> None:
        self.stages[name] = {"in": before, "kept": after}

    def absorb(self, part: GenerationReport) -> None:
        """Add another report's stage counts and drops to this one's (stages run a few candidates at a time)."""
        for name, counts in part.stages.items():
            mine = self.stages.setdefault(name, {"in": 0, "kept": 0})
            mine["in"] += counts["in"]
            mine["kept"] += counts["kept"]
        self.dropped.extend(part.dropped)


class QualityScore(BaseModel):
    """An LLM's 1–5 judgement of a task."""

    clarity: int = Field(ge=1, le=5)
    difficulty_fit: int = Field(ge=1, le=5)
    correctness: int = Field(ge=1, le=5)
    overall: int = Field(ge=1, le=5)
    reason: str = ""


def reachable(kg: KnowledgeGraph, start: str, targets: Sequence[str], max_hops: int) -> list[str]:
    """Targets not reachable from ``start`` within ``max_hops`` (edges in either direction)."""
    if start not in kg:
        return list(targets)
    frontier, seen = {start}, {start}
    for _ in range(max_hops):
        nxt: set[str] = set()
        for node in frontier:
            nxt.update(v for v in kg.g.successors(node) if v not in seen)
            nxt.update(v for v in kg.g.predecessors(node) if v not in seen)
        seen |= nxt
        frontier = nxt
    return [t for t in targets if t not in seen]


def _start_and_targets(kg: KnowledgeGraph, task: Task) -> tuple[str | None, list[str]]:
    if task.kind == "web":
        nodes = [s.node_id for s in task.gold_steps if s.node_id]
        pages = [n.id for n in kg.nodes("page") if n.attrs.get("url") == task.start_url]
        return (pages[0] if pages else None), nodes
    return (task.evidence[0] if task.evidence else None), task.evidence[1:]


def filter_reachable(kg: KnowledgeGraph, tasks: list[Task], max_hops: dict[str, int], report: GenerationReport, default_hops: int = 4) -> list[Task]:
    """Stage 1: keep tasks whose targets are reachable from their start within the template's hop limit."""
    kept = []
    for task in tasks:
        start, targets = _start_and_targets(kg, task)
        hops = max_hops.get(task.provenance.template or "", default_hops)
        missing = [t for t in targets if t not in kg] if start is None else reachable(kg, start, targets, hops)
        if start is None or missing:
            why = "no start node in the graph" if start is None else f"{len(missing)} target(s) beyond {hops} hops: {missing[:3]}"
            report.dropped.append(Dropped(task_id=task.id, stage="reachability", reason=why))
            continue
        task.quality["reachability"] = {"ok": True, "hops": hops}
        kept.append(task)
    report.stage("reachability", len(tasks), len(kept))
    return kept


def _quality_prompt(kg: KnowledgeGraph, task: Task) -> list[dict[str, Any]]:
    evidence = [{"id": nid, "text": kg.node(nid).text[:600]} for nid in task.evidence if nid in kg]
    answer = task.gold_answer or "; ".join(s.canonical or s.action for s in task.gold_steps)
    user = render_prompt("quality_user.j2", difficulty=task.difficulty, type=task.type, instruction=task.instruction, answer=answer, evidence=evidence)
    return [{"role": "system", "content": render_prompt("quality_system.j2")}, {"role": "user", "content": user}]


async def score_quality(kg: KnowledgeGraph, tasks: list[Task], llm: LLM, report: GenerationReport, threshold: int = 3) -> list[Task]:
    """Stage 2: an LLM scores each task 1–5; keep overall ≥ threshold. Unparsable scores reject the task."""
    kept = []
    for task in tasks:
        try:
            completion = await llm.complete(_quality_prompt(kg, task), schema=QualityScore, tag=task.id)
            score = completion.parsed
        except TaskloomError as exc:  # the LLM layer's errors (unavailable, unparsable after retries, transport)
            report.dropped.append(Dropped(task_id=task.id, stage="llm_score", reason=f"no usable score: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"))
            continue
        task.quality["llm_score"] = score.model_dump()
        if score.overall < threshold:
            report.dropped.append(Dropped(task_id=task.id, stage="llm_score", reason=f"overall {score.overall} < {threshold}: {score.reason}"))
            continue
        kept.append(task)
    report.stage("llm_score", len(tasks), len(kept))
    return kept


def _score(task: Task) -> float:
    llm = task.quality.get("llm_score", {})
    return float(llm.get("overall", 0)) if isinstance(llm, dict) else 0.0


def deduplicate(tasks: list[Task], embedder: Embedder, threshold: float, report: GenerationReport) -> list[Task]:
    """Stage 3: cluster tasks whose instruction + answer embeddings have cosine ≥ threshold; keep each cluster's best.

    Best = highest LLM overall score, then earliest in the candidate order.
    """
    if len(tasks) < 2:
        report.stage("dedup", len(tasks), len(tasks))
        return tasks
    texts = [f"{t.instruction}\n{t.gold_answer or ''}" for t in tasks]
    vectors = embedder.embed(texts)
    sims = vectors @ vectors.T
    order = sorted(range(len(tasks)), key=lambda i: (-_score(tasks[i]), i))
    kept_idx: list[int] = []
    for i in order:
        twin = next((j for j in kept_idx if sims[i, j] >= threshold), None)
        if twin is None:
            kept_idx.append(i)
        else:
            report.dropped.append(Dropped(task_id=tasks[i].id, stage="dedup", reason=f"near-duplicate of {tasks[twin].id} (cosine {sims[i, twin]:.3f})"))
    kept = [tasks[i] for i in sorted(kept_idx)]
    report.stage("dedup", len(tasks), len(kept))
    return kept


def task_features(kg: KnowledgeGraph, task: Task) -> set[str]:
    """What a task covers: its type, template, difficulty, evidence node types, path edge types and pages."""
    nodes = task.evidence + [s.node_id for s in task.gold_steps if s.node_id]
    features = {f"type:{task.type}", f"template:{task.provenance.template}", f"difficulty:{task.difficulty}"}
    for node_id in nodes:
        if node_id in kg:
            node = kg.node(node_id)
            features.add(f"node:{node.type.value}")
            page = node.source.page or node.source.url
            if page is not None:
                features.add(f"page:{page}")
    features.update(f"edge:{edge}" for _, edge, _ in task.reasoning_path)
    return features


#: Turns a family gets per round of coverage selection (others: 1). A document's tables hold its
#: exact facts, so table questions get more turns wherever the document has tables.
FAMILY_TURNS = {"template:table_qa": 1.5}
#: Largest share of the selection a family may take: cloze questions (document extraction) at most a tenth.
FAMILY_CAPS = {"template:extraction": 0.10}


def family(task: Task) -> str:
    """The generator family a task came from (an LLM rewrite's ``+llm`` dropped); document tasks by type too."""
    base = task.provenance.generator.removesuffix("+llm")
    return f"{base}:{task.type}" if task.kind == "document" else base


def mmr_select(kg: KnowledgeGraph, tasks: list[Task], count: int, lam: float = 0.6) -> list[Task]:
    """Pick ``count`` tasks by maximal marginal relevance over their coverage features, families in turn.

    Relevance is the LLM overall score scaled to [0, 1] (1 without an LLM);
    similarity is the Jaccard overlap of feature sets. When the tasks come from
    several generator families (document tasks: one per type), each pick goes to
    the family with the fewest picks so far per its turns (:data:`FAMILY_TURNS`;
    ties to the family seen first), so no family crowds out the others while it
    still has candidates; a family in :data:`FAMILY_CAPS` stops at its share
    (the selection may then hold fewer than ``count``). Ties go to the earlier
    candidate, so the selection is deterministic.
    """
    if count >= len(tasks) and (len({family(t) for t in tasks}) < 2 or not any(family(t) in FAMILY_CAPS for t in tasks)):
        return list(tasks)
    picking = mmr_picks(kg, tasks, count, lam)
    try:
        next(picking)
        while True:
            picking.send(True)  # every task may be picked
    except StopIteration as done:
        return [tasks[i] for i in done.value]


def mmr_picks(kg: KnowledgeGraph, tasks: list[Task], count: int, lam: float = 0.6) -> Generator[int, bool, list[int]]:
    """:func:`mmr_select` over the candidates that may be picked, found out only as the picks need them.

    Before a pick relies on candidate ``i``, ``i`` is yielded (once) and the caller sends
    back whether it may be picked (e.g. it was verified and is no near-duplicate). The
    picks are :func:`mmr_select`'s over those candidates; the generator returns their
    indices, sorted. Candidates are asked about in a fixed order: each family's first
    one that may be picked (the family order), then, per pick, the turn's candidates by
    falling marginal relevance (ties to the earlier) until one may be picked.
    """
    known: dict[int, bool] = {}

    def may_pick(i: int) -> Generator[int, bool, bool]:
        if i not in known:
            known[i] = yield i
        return known[i]

    families = [family(t) for t in tasks]
    first: dict[str, int] = {}
    for name in dict.fromkeys(families):
        for i in (j for j, f in enumerate(families) if f == name):
            if (yield from may_pick(i)):
                first[name] = i
                break
    order = sorted(first, key=first.__getitem__)  # families as the pickable candidates show them first
    features = [task_features(kg, t) for t in tasks]
    relevance = np.array([(_score(t) / 5.0) if _score(t) else 1.0 for t in tasks])
    picks = dict.fromkeys(order, 0)
    chosen: list[int] = []
    mixed = len(order) > 1  # caps shape a mix; a selection of one family (asked for alone) is not capped
    caps = {f: int(FAMILY_CAPS[f] * count + 1e-9) for f in order if f in FAMILY_CAPS and mixed}  # a share of what is asked for

    def value(i: int) -> float:
        overlap = max((len(features[i] & features[j]) / len(features[i] | features[j]) for j in chosen), default=0.0)
        return float(lam * relevance[i] - (1 - lam) * overlap)

    while len(chosen) < count:
        for turn in sorted(order, key=lambda f: picks[f] / FAMILY_TURNS.get(f, 1.0)):  # stable: ties to the family seen first
            if picks[turn] >= caps.get(turn, count):
                continue
            ranked = sorted((i for i, f in enumerate(families) if f == turn and i not in chosen), key=lambda i: (-value(i), i))
            best = None
            for i in ranked:
                if (yield from may_pick(i)):
                    best = i
                    break
            if best is not None:
                chosen.append(best)
                picks[turn] += 1
                break
        else:
            break  # no family has a candidate left it may still pick
    return sorted(chosen)
