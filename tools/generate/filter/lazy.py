"""Coverage selection that verifies only the candidates it reaches.

Verifying a web or desktop candidate (a second route to its gold, a replay in a fresh
browser or session) costs seconds; picking ``count`` of many costs nothing. Without an LLM,
whether a candidate is kept depends on it alone (its verification), on the near-duplicates
before it (de-duplication keeps the earliest), and on the picks made so far; so the picks are
made first (:func:`~.stages.mmr_picks`) and each candidate is verified only when a pick relies
on it. The tasks kept are the ones verifying every candidate, de-duplicating and then
selecting keeps, for the replays of the candidates the selection reached.

With ``ahead`` > 0, while a candidate is verified the next ones the selection would ask
about were it kept are verified beside it (a browser waits on pages most of the time). A
guess that turns out unneeded is discarded: its report is never absorbed and it counts as
unverified, so the tasks and the report are those of verifying one at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import numpy as np

from ...llm.embedders import Embedder
from ...graph.model import KnowledgeGraph
from ...tasks.model import Task
from .stages import Dropped, GenerationReport, mmr_picks

__all__ = ["Verify", "select_verified"]

#: Verifies one candidate: whether it is kept, and a report of its own (its stage counts, or its drop and the reason).
Verify = Callable[[Task], Awaitable[tuple[bool, GenerationReport]]]


async def select_verified(
    kg: KnowledgeGraph, tasks: list[Task], count: int, verify: Verify, embedder: Embedder, threshold: float, report: GenerationReport, ahead: int = 0
) -> list[Task]:
    """Up to ``count`` verified, de-duplicated tasks chosen by coverage, verifying only the candidates the choice relies on.

    De-duplication is :func:`~.stages.deduplicate`'s without LLM scores: a verified task
    is dropped when an earlier kept one's instruction and answer embed within ``threshold``.
    ``report`` gets the verifications' reports, the ``dedup`` and ``coverage`` counts of the
    candidates reached, and ``unverified``: how many were never needed. ``ahead``: guesses
    verified beside the one needed (see the module docstring).
    """
    vectors = embedder.embed([f"{t.instruction}\n{t.gold_answer or ''}" for t in tasks]) if tasks else np.zeros((0, 1))
    verified: dict[int, bool] = {}
    kept: dict[int, bool] = {}
    running: dict[int, asyncio.Future[tuple[bool, GenerationReport]]] = {}

    def start(i: int) -> asyncio.Future[tuple[bool, GenerationReport]]:
        if i not in running:
            running[i] = asyncio.ensure_future(verify(tasks[i]))
        return running[i]

    async def verified_ok(i: int) -> bool:
        if i not in verified:
            job = start(i)
            for guess in _guesses(kg, tasks, count, {**kept, i: True}, ahead):
                if guess not in verified:
                    start(guess)
            ok, part = await job
            report.absorb(part)
            verified[i] = ok
        return verified[i]

    async def is_kept(i: int) -> bool:
        if i in kept:
            return kept[i]
        ok = await verified_ok(i)
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
    finally:
        unneeded = [job for i, job in running.items() if i not in verified]
        await asyncio.gather(*unneeded, return_exceptions=True)  # guesses in flight finish (a replay is not cut off); their verdicts are discarded
    passed = sum(verified.values())
    report.stage("dedup", passed, sum(kept.values()))
    report.stage("coverage", sum(kept.values()), len(chosen))
    report.unverified = len(tasks) - len(verified)
    return [tasks[i] for i in chosen]


def _guesses(kg: KnowledgeGraph, tasks: list[Task], count: int, known: dict[int, bool], ahead: int) -> list[int]:
    """The next ``ahead`` candidates the selection would ask about, were each of them kept (the selection replayed on ``known``)."""
    guesses: list[int] = []
    known = dict(known)
    while len(guesses) < ahead:
        picking = mmr_picks(kg, tasks, count)
        try:
            asked = next(picking)
            while asked in known:
                asked = picking.send(known[asked])
        except StopIteration:
            break
        guesses.append(asked)
        known[asked] = True
    return guesses
