"""``semantic_similar`` edges: cosine ≥ τ between embedded content nodes, at most top-k per node."""

from __future__ import annotations

import numpy as np

from ..model import Edge, EdgeType, KnowledgeGraph

__all__ = ["link_similar"]


def link_similar(kg: KnowledgeGraph, ids: list[str], vectors: np.ndarray, tau: float = 0.7, top_k: int = 5) -> int:
    """Link pairs of nodes whose cosine similarity is at least ``tau``.

    Every node proposes its ``top_k`` most similar partners; proposals are accepted
    greedily, most similar first, while both ends have fewer than ``top_k`` edges, so
    no node gets more than ``top_k``. A pair is linked once, from the node earlier
    in reading order, with the cosine as weight.
    Rows of ``vectors`` must be L2-normalised. Returns the number of edges added.

    Notes
    -----
    O(n²) in time and memory for n nodes, done in row blocks of 1,024 to bound memory.
    """
    if len(ids) < 2 or top_k == 0:
        return 0
    n = len(ids)
    proposed: dict[tuple[int, int], float] = {}
    for start in range(0, n, 1024):
        sims = vectors[start : start + 1024] @ vectors.T
        for offset, row in enumerate(sims):
            i = start + offset
            row[i] = -np.inf
            candidates = np.flatnonzero(row >= tau)
            if candidates.size == 0:
                continue
            best = candidates[np.lexsort((candidates, -row[candidates]))][:top_k]
            for j in best:
                proposed[(min(i, int(j)), max(i, int(j)))] = float(row[j])
    degree = [0] * n
    added = 0
    for (i, j), weight in sorted(proposed.items(), key=lambda item: (-item[1], item[0])):
        if degree[i] < top_k and degree[j] < top_k:
            kg.add_edge(Edge(source=ids[i], target=ids[j], type=EdgeType.SEMANTIC_SIMILAR, weight=round(weight, 4)))
            degree[i] += 1
            degree[j] += 1
            added += 1
    return added
