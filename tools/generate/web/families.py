"""The web task families as registered generators: meta-path matches around seed nodes (Graph2Eval §3.4)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...graph.sampling import SampleSpec, sample_document_subgraph, web_seeds
from ...tasks.model import Task
from ..metapath.engine import MAX_STARTS, bounded_match
from ..metapath.patterns import patterns_by_priority
from ..registry import Candidates, GenerationRequest, generator
from .paths import task_from_path

__all__ = ["web_metapaths", "SEED_STEPS", "GRAPH_STEPS"]

#: Step budget of one pattern search inside a seed's sampled subgraph (at most 80 nodes).
SEED_STEPS = 20_000
#: Step budget of one pattern search over the whole graph (start nodes capped at MAX_STARTS).
GRAPH_STEPS = 200_000


@generator("web-metapaths", graph="web")
async def web_metapaths(request: GenerationRequest) -> Candidates:
    """Seed-driven meta-path matches (business → general → basic), each a goal task to be replayed.

    Draw task seeds, sample each one's 3-hop subgraph, match the meta-paths inside it;
    whole-graph matches fill in only when the seeds yield too few candidates. Every
    search is bounded (:data:`SEED_STEPS`, :data:`GRAPH_STEPS`, ``MAX_STARTS``): a
    pattern whose search runs out of steps is skipped there, and listed with its steps
    and budget under ``report.generator["skipped_patterns"]``; it never fails generation.
    """
    kg, types, seed, report = request.kg, request.types, request.seed, request.report
    pool = max(request.count * 2, 8)
    rng = np.random.default_rng(seed)
    patterns = [p for p in patterns_by_priority() if not types or p.task_type in types or p.id in types]
    hops = {p.id: max(2, 2 * (len(p.pattern.split("->")) + 1)) for p in patterns}
    tasks: list[Task] = []
    seen: set[str] = set()
    found: dict[str, int] = {}
    skipped: dict[tuple[str, str], dict[str, Any]] = {}

    def add(graph: Any, pattern: Any, limit: int, take: int, scope: str) -> None:
        outcome = bounded_match(graph, pattern.compiled, limit=limit, max_steps=SEED_STEPS if scope == "seed" else GRAPH_STEPS, max_starts=MAX_STARTS)
        if outcome.exceeded:
            entry = skipped.setdefault((pattern.id, scope), {"pattern": pattern.id, "scope": scope, "searches": 0, "steps": 0, "budget": outcome.budget})
            entry["searches"] += 1
            entry["steps"] = max(entry["steps"], outcome.steps)
            entry["reason"] = f"search exceeded its step budget ({outcome.steps} > {outcome.budget}) over {outcome.starts} of {outcome.candidate_starts} start nodes; pattern skipped in this {scope} search"
            return
        matches = outcome.matches
        found[pattern.id] = found.get(pattern.id, 0) + len(matches)
        for index in rng.permutation(len(matches))[:take]:
            task = task_from_path(kg, matches[int(index)].edges, pattern.id, pattern.task_type, seed)
            if task is not None and task.id not in seen:
                seen.add(task.id)
                tasks.append(task)

    seeds = web_seeds(kg, seed, count=max(4, pool // 2))
    for seed_node in seeds:
        sub = sample_document_subgraph(kg, SampleSpec(seed_nodes=[seed_node], k_hops=3, max_nodes=80, seed=seed))
        for pattern in patterns:
            add(sub, pattern, 20, 1, "seed")
        if len(tasks) >= pool:
            break
    from_seeds = len(tasks)
    if len(tasks) < pool:
        per_pattern = max(1, -(-(pool - len(tasks)) // max(1, len(patterns))))  # every replay costs a browser episode
        for pattern in patterns:
            add(kg, pattern, 200, per_pattern, "graph")
    report.generator = {
        "seeds": seeds,
        "from_seeds": from_seeds,
        "from_whole_graph": len(tasks) - from_seeds,
        "matches_per_pattern": found,
        "skipped_patterns": [skipped[k] for k in sorted(skipped)],
    }
    return Candidates(tasks[: max(pool, from_seeds)], hops)
