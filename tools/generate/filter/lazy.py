"""Coverage selection that verifies only the candidates it reaches.

Verifying a web or desktop candidate (a second route to its gold, a replay in a fresh
browser or session) costs seconds; picking ``count`` of many costs nothing. Without an LLM,
whether a candidate is kept depends on it alone (its verification), on the near-duplicates
before it (de-duplication keeps the earliest), and on the picks made so far; so the picks are
made first (:func:`~.stages.mmr_picks`) and each candidate is verified only when a pick relies
on it. The tasks kept are the ones verifying every candidate, de-duplicating and then
selecting keeps, for the replays of the candidates the selection reached.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import numpy as np

from ...llm.embedders import Embedder
from ...graph.model import KnowledgeGraph
from ...tasks.model import Task
from .stages import Dropped, GenerationReport, mmr_picks

__all__ = ["Verify", "select_verified"]

#: Verifies one candidate (dropping it with its reason in a report of its own making); True when it is kept.
Verify = Callable[[Task], Awaitable[bool]]


async def select_verified(
    kg: KnowledgeGraph, tasks: list[Task], count: int, verify: Verify, embedder: Embedder, threshold: float, report: GenerationReport
) -> list[Task]:
    """Up to ``count`` verified, de-duplicated tasks chosen by coverage, verifying only the candidates the choice relies on.

    De-duplication is :func:`~.stages.deduplicate`'s without LLM scores: a verified task
    is dropped when an earlier kept one's instruction and answer embed within ``threshold``.
    ``report`` gets the ``dedup`` and ``coverage`` counts of the candidates reached, and
    ``unverified``: how many were never needed.
    """
    vectors = embedder.embed([f"{t.instruction}\n{t.gold_answer or ''}" for t in tasks]) if tasks else np.zeros((0, 1))
    verified: dict[int, bool] = {}
    kept: dict[int, bool] = {}

    async def is_kept(i: int) -> bool:
        if i in kept:
            return kept[i]
        if i not in verified:
            verified[i] = await verify(tasks[i])
        ok = verified[i]
        if ok:
            sims = vectors[:i] @ vectors[i] if i else np.zeros(0)
            for j in np.flatnonzero(sims >= threshold):  # earlier near-duplicates, the earliest first
                if await is_kept(int(j)):
                    report.dropped.append(Dropped(task_id=tasks[i].id, stage="dedup", reason=f"near-duplicate of {tasks[j].id} (cosine {sims[j]:.3f})"))
                    ok = False
                    break
        kept[i] = ok
        return ok

    picking = mmr_picks(kg, tasks, count)
    try:
        asked = next(picking)
        while True:
            asked = picking.send(await is_kept(asked))
    except StopIteration as done:
        chosen: list[int] = done.value
    passed = sum(verified.values())
    report.stage("dedup", passed, sum(kept.values()))
    report.stage("coverage", sum(kept.values()), len(chosen))
    report.unverified = len(tasks) - len(verified)
    return [tasks[i] for i in chosen]
