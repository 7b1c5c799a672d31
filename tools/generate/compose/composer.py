"""Composition: long chained tasks (AgentSynth) and task graphs (OmniBench) from a graph's verified web tasks.

The entry point of ``tasks_compose`` and ``taskloom compose``. Both modes start from
the web tasks already generated (and replay-verified) for a graph, so run
``tasks_generate`` first; composites are verified by replay in a real browser, stored
with the other tasks, and export, run and evaluate like any task.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from ...environment.manager import EpisodeManager
from ...errors import InputError
from ...graph.model import KnowledgeGraph
from ...llm.client import LLM
from ...tasks.model import Task
from ...tasks.store import TaskStore
from .chain import FailedProposal, build_chains
from .levels import LevelStats
from .dag import compose_dags

__all__ = ["ComposeMode", "ComposeResult", "compose_tasks"]

ComposeMode = Literal["chain", "dag"]


class ComposeResult(BaseModel):
    """What a composition stored, with its statistics and failures."""

    graph_id: str
    mode: ComposeMode
    task_ids: list[str]
    levels: list[LevelStats] = Field(default_factory=list, description="chain: per-level steps, pages and element types.")
    stats: dict[str, Any] = Field(default_factory=dict)
    failed_proposals: list[FailedProposal] = Field(default_factory=list, description="chain: proposals that did not verify.")
    dropped: list[tuple[str, str]] = Field(default_factory=list, description="(task id, reason) of what was not kept.")


def _seeds(store: TaskStore, kg: KnowledgeGraph) -> list[Task]:
    seeds = [t for t in store.list(kind="web", graph_id=kg.id) if t.gold_steps and t.quality.get("replay", {}).get("ok")]
    if not seeds:
        raise InputError(f"graph {kg.id} has no verified web tasks to compose from; run tasks_generate on it first")
    return seeds


async def compose_tasks(
    store: TaskStore,
    kg: KnowledgeGraph,
    episodes: EpisodeManager,
    mode: ComposeMode = "chain",
    count: int = 3,
    levels: int = 6,
    retries: int = 3,
    capability: str | None = None,
    seed: int = 0,
    llm: LLM | None = None,
) -> ComposeResult:
    """Compose ``count`` chains (each giving its levels 1..k) or ``count`` task DAGs, verify, store them."""
    if not 1 <= count <= 100:
        raise InputError(f"count={count} is out of range; use 1 to 100")
    seeds = _seeds(store, kg)
    if mode == "chain":
        order = np.random.default_rng(seed).permutation(len(seeds))
        chosen = [seeds[int(i)] for i in order[:count]]
        report = await build_chains(chosen, kg, episodes, levels=levels, retries=retries, seed=seed, llm=llm)
        tasks = report.tasks
        result = ComposeResult(
            graph_id=kg.id, mode=mode, task_ids=[t.id for t in tasks], levels=report.levels,
            stats={"chains": len(report.chains), "reached": {c.seed_task: c.reached for c in report.chains}},
            failed_proposals=report.failed_proposals, dropped=[(d.task_id, d.reason) for d in report.dropped],
        )
    elif mode == "dag":
        documents = store.list(kind="document")
        dags = await compose_dags(seeds + documents, count=count, seed=seed, capability=capability, episodes=episodes, llm=llm)
        tasks = dags.tasks
        result = ComposeResult(graph_id=kg.id, mode=mode, task_ids=[t.id for t in tasks], stats=dags.stats, dropped=list(dags.dropped))
    else:
        raise InputError(f"unknown mode {mode!r}; use chain or dag")
    for task in tasks:
        store.save(task)
    return result
