"""Composition: long chained tasks (AgentSynth) and task graphs (OmniBench) from a web graph.

The entry point of ``tasks_compose`` and ``taskloom compose``. Four modes:

* ``chain`` and ``dag`` (the defaults) let *values flow* over the site's records
  (:mod:`.flowcompose`): each subtask consumes what an earlier one produced (a field value,
  a set of records), and the instruction states only the final deliverable, so the agent
  must discover the intermediate values. They need a listing the crawl saw completely; without
  one that carries a value alone, two whole tables may (:mod:`.crossflow`: a field they share
  joins them, or their counts meet in one subtraction).
* ``walk`` and ``pages`` compose the graph's verified web tasks along click paths
  (:mod:`.chain`) and shared pages (:mod:`.dag`); run ``tasks_generate`` first. They work
  on any site, but their steps do not feed each other.

Composites are verified by replay in a real browser, stored with the other tasks, and
export, run and evaluate like any task.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from ...environment.manager import EpisodeManager
from ...errors import InputError
from ...graph.model import KnowledgeGraph
from ...llm.client import LLM
from ...tasks.dag import Dag
from ...tasks.model import Task
from ...tasks.store import TaskStore
from .chain import FailedProposal, build_chains
from .levels import LevelStats, level_stats
from .crossflow import compose_count_graphs, compose_join_chains
from .flowcompose import ChainStop, compose_value_chains, compose_value_graphs
from .listchain import compose_list_chains, compose_list_graphs
from .statechain import compose_state_chains
from .stategraph import compose_state_graphs
from .dag import compose_dags

__all__ = ["ComposeMode", "ComposeResult", "compose_tasks", "measured_difficulty"]

ComposeMode = Literal["chain", "dag", "walk", "pages"]


class ComposeResult(BaseModel):
    """What a composition stored, with its statistics and failures."""

    graph_id: str
    mode: ComposeMode
    task_ids: list[str]
    levels: list[LevelStats] = Field(default_factory=list, description="chain: per-level steps, pages and element types.")
    stats: dict[str, Any] = Field(default_factory=dict)
    failed_proposals: list[FailedProposal] = Field(default_factory=list, description="walk: proposals that did not verify.")
    chains: list[ChainStop] = Field(default_factory=list, description="chain: per chain, the levels verified and why it stopped.")
    dropped: list[tuple[str, str]] = Field(default_factory=list, description="(task id, reason) of what was not kept.")
    reason: str | None = Field(None, description="Why nothing could be composed, when nothing was.")


def _seeds(store: TaskStore, kg: KnowledgeGraph) -> list[Task]:
    """Verified web tasks with an end state to build on (a question's answer would be lost in a click-path composite)."""
    seeds = [t for t in store.list(kind="web", graph_id=kg.id) if t.gold_steps and t.quality.get("replay", {}).get("ok") and not t.gold_answer]
    if not seeds:
        raise InputError(f"graph {kg.id} has no verified web tasks with an end state (questions do not chain along click paths) to compose from; run tasks_generate on it first")
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
    """Compose ``count`` chains (each giving its levels 1..k) or ``count`` task DAGs (see the module docstring), verify, store them."""
    if not 1 <= count <= 100:
        raise InputError(f"count={count} is out of range; use 1 to 100")
    if mode in ("chain", "dag"):
        flow = await (compose_value_chains(kg, episodes, count, levels, seed) if mode == "chain" else compose_value_graphs(kg, episodes, count, seed, llm, capability))
        if not flow.tasks and not flow.chains:  # no listing carries a value alone: two tables may (a join, two counts)
            cross = await (compose_join_chains(kg, episodes, count, levels, seed) if mode == "chain" else compose_count_graphs(kg, episodes, count, seed, llm, capability))
            flow.tasks, flow.chains, flow.dropped = cross.tasks, cross.chains, flow.dropped + cross.dropped
            flow.reason = None if cross.tasks else f"{flow.reason}; across tables: {cross.reason}" if cross.reason else flow.reason
        changes = [t for t in store.list(kind="web", graph_id=kg.id) if t.quality.get("change", {}).get("kind")]
        if changes:  # an application's change goals: chains and task graphs over its state as well
            state = await (compose_state_chains(kg, changes, episodes, count, levels, seed) if mode == "chain" else compose_state_graphs(kg, changes, episodes, count, seed))
            flow.tasks += state.tasks
            flow.chains += state.chains
            flow.dropped += state.dropped
            flow.reason = None if flow.tasks else "; ".join(filter(None, (flow.reason, state.reason)))
        if any(t.quality["change"]["kind"] == "list" and t.quality.get("replay", {}).get("ok") for t in changes):  # a list app's state
            listed = await (compose_list_chains(kg, episodes, count, levels, seed) if mode == "chain" else compose_list_graphs(kg, episodes, count, seed))
            flow.tasks += listed.tasks
            flow.chains += listed.chains
            flow.dropped += listed.dropped
            flow.reason = None if flow.tasks else "; ".join(filter(None, (flow.reason, listed.reason)))
        tasks = flow.tasks
        result = ComposeResult(
            graph_id=kg.id, mode=mode, task_ids=[t.id for t in tasks], levels=flow_levels(tasks), chains=flow.chains, dropped=flow.dropped, reason=flow.reason,
            stats={"chains": len(flow.chains), "reached": {c.chain: c.reached for c in flow.chains}} if mode == "chain" else _graph_stats(tasks),
        )
    elif mode == "walk":
        seeds = _seeds(store, kg)
        order = np.random.default_rng(seed).permutation(len(seeds))
        chosen = [seeds[int(i)] for i in order[:count]]
        report = await build_chains(chosen, kg, episodes, levels=levels, retries=retries, seed=seed, llm=llm)
        tasks = report.tasks
        result = ComposeResult(
            graph_id=kg.id, mode=mode, task_ids=[t.id for t in tasks], levels=report.levels,
            stats={"chains": len(report.chains), "reached": {c.seed_task: c.reached for c in report.chains}},
            failed_proposals=report.failed_proposals, dropped=[(d.task_id, d.reason) for d in report.dropped],
        )
    elif mode == "pages":
        seeds = _seeds(store, kg)
        documents = store.list(kind="document")
        dags = await compose_dags(seeds + documents, count=count, seed=seed, capability=capability, episodes=episodes, llm=llm)
        tasks = dags.tasks
        result = ComposeResult(graph_id=kg.id, mode=mode, task_ids=[t.id for t in tasks], stats=dags.stats, dropped=list(dags.dropped))
    else:
        raise InputError(f"unknown mode {mode!r}; use chain, dag, walk or pages")
    for task in tasks:
        if task.subtasks:
            task.quality["difficulty"] = measured_difficulty(task)
        store.save(task)
    return result


def measured_difficulty(task: Task) -> dict[str, int]:
    """What makes a composite hard, measured on it: distinct pages its gold visits (the start page too), values the
    agent must carry from one subtask to another (the DAG's edges), and branching (most subtasks open at once)."""
    nodes = [s.id for s in task.subtasks]
    return {
        "pages": len({s.text for s in task.gold_steps if s.action == "navigate"} | {task.start_url}),
        "carried": len(task.dag),
        "branching": Dag(nodes, task.dag).width if nodes else 0,
    }


def flow_levels(tasks: list[Task]) -> list[LevelStats]:
    """Per-level statistics of value-flow chains: gold steps, distinct pages, and element types (navigations only: 1)."""
    rows = [(t.level, len(t.gold_steps), len({s.text for s in t.gold_steps} | {t.start_url}), 1) for t in tasks if t.level]
    return level_stats(rows)


def _graph_stats(tasks: list[Task]) -> dict[str, Any]:
    branching = [t for t in tasks if len(t.subtasks) >= 3]
    return {
        "graphs": len(tasks),
        "subtasks": {str(n): sum(len(t.subtasks) == n for t in tasks) for n in sorted({len(t.subtasks) for t in tasks})},
        "with_two_or_more_orders": sum((t.order_count or 0) >= 2 for t in branching),
    }
