"""The web task families as registered generators: meta-path matches around seed nodes (Graph2Eval §3.4)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...graph.sampling import SampleSpec, sample_document_subgraph, web_seeds
from ...tasks.model import Task
from ..metapath.engine import match
from ..metapath.patterns import patterns_by_priority
from ..registry import Candidates, GenerationRequest, generator
from .paths import task_from_path

__all__ = ["web_metapaths"]


@generator("web-metapaths", graph="web", default=True)
async def web_metapaths(request: GenerationRequest) -> Candidates:
    """Seed-driven meta-path matches (business → general → basic), each a goal task to be replayed.

    Draw task seeds, sample each one's 3-hop subgraph, match the meta-paths inside it;
    whole-graph matches fill in only when the seeds yield too few candidates.
    """
    kg, types, seed, report = request.kg, request.types, request.seed, request.report
    pool = max(request.count * 2, 8)
    rng = np.random.default_rng(seed)
    patterns = [p for p in patterns_by_priority() if not types or p.task_type in types or p.id in types]
    hops = {p.id: max(2, 2 * (len(p.pattern.split("->")) + 1)) for p in patterns}
    tasks: list[Task] = []
    seen: set[str] = set()
    found: dict[str, int] = {}

    def add(graph: Any, pattern: Any, limit: int, take: int) -> None:
        matches = match(graph, pattern.pattern, limit=limit)
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
            add(sub, pattern, 20, 1)
        if len(tasks) >= pool:
            break
    from_seeds = len(tasks)
    if len(tasks) < pool:
        per_pattern = max(1, -(-(pool - len(tasks)) // max(1, len(patterns))))  # every replay costs a browser episode
        for pattern in patterns:
            add(kg, pattern, 200, per_pattern)
    report.generator = {"seeds": seeds, "from_seeds": from_seeds, "from_whole_graph": len(tasks) - from_seeds, "matches_per_pattern": found}
    return Candidates(tasks[: max(pool, from_seeds)], hops)
