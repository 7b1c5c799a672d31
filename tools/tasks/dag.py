"""Subtask DAGs: depth, width, and topological orders — counted exactly, listed, or sampled uniformly.

A DAG is given as node ids plus ``(a, b)`` edges (``a`` must come before ``b``).
Counting uses dynamic programming over subsets of placed nodes: ``ways(S)`` is the
number of ways to finish when the nodes in ``S`` are already placed, and a node can
be placed next once all its predecessors are in ``S``. Only subsets that are
down-closed (reachable as a prefix) are visited, so chains and narrow DAGs cost far
less than ``2^n``; the worst case (an antichain) is ``2^n`` and is refused beyond
:data:`MAX_EXACT` nodes. Sampling draws each next node with probability
proportional to the number of completions it leaves, so every order is equally likely.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cache

import numpy as np

from ..errors import InputError

__all__ = ["MAX_EXACT", "Dag", "check_dag"]

MAX_EXACT = 26  # nodes; beyond this an antichain would need 2^n states


def check_dag(nodes: Sequence[str], edges: Sequence[tuple[str, str]]) -> None:
    """Raise :class:`InputError` if an edge names an unknown node or the edges form a cycle."""
    Dag(nodes, edges)


class Dag:
    """A directed acyclic graph over subtask ids, in a stable node order."""

    def __init__(self, nodes: Sequence[str], edges: Sequence[tuple[str, str]]) -> None:
        self.nodes = list(dict.fromkeys(nodes))
        index = {n: i for i, n in enumerate(self.nodes)}
        unknown = sorted({n for e in edges for n in e if n not in index})
        if unknown:
            raise InputError(f"DAG edges name unknown subtasks {unknown}")
        self.edges = sorted(set(edges), key=lambda e: (index[e[0]], index[e[1]]))
        self.index = index
        self.preds: list[int] = [0] * len(self.nodes)  # bitmask of predecessors
        self.succs: list[list[int]] = [[] for _ in self.nodes]
        for a, b in self.edges:
            self.preds[index[b]] |= 1 << index[a]
            self.succs[index[a]].append(index[b])
        self._depths = self._compute_depths()

    def _compute_depths(self) -> list[int]:
        depth = [0] * len(self.nodes)
        placed, full = 0, (1 << len(self.nodes)) - 1
        while placed != full:
            ready = [i for i in range(len(self.nodes)) if not placed >> i & 1 and self.preds[i] & ~placed == 0]
            if not ready:
                cycle = [self.nodes[i] for i in range(len(self.nodes)) if not placed >> i & 1]
                raise InputError(f"the subtask edges form a cycle among {cycle}")
            for i in ready:
                parents = [j for j in range(len(self.nodes)) if self.preds[i] >> j & 1]
                depth[i] = 1 + max((depth[j] for j in parents), default=0)
                placed |= 1 << i
        return depth

    # -- shape --------------------------------------------------------------------------

    def depth(self, node: str) -> int:
        """1 for a root, else 1 + the deepest predecessor (longest path from a root, in nodes)."""
        return self._depths[self.index[node]]

    @property
    def height(self) -> int:
        """Hierarchy: the number of levels (longest path, in nodes)."""
        return max(self._depths, default=0)

    @property
    def width(self) -> int:
        """Branch: the largest number of nodes on one depth level."""
        counts: dict[int, int] = {}
        for d in self._depths:
            counts[d] = counts.get(d, 0) + 1
        return max(counts.values(), default=0)

    def predecessors(self, node: str) -> list[str]:
        mask = self.preds[self.index[node]]
        return [n for i, n in enumerate(self.nodes) if mask >> i & 1]

    def successors(self, node: str) -> list[str]:
        return [self.nodes[j] for j in self.succs[self.index[node]]]

    # -- orders ---------------------------------------------------------------------------

    def _ways(self) -> Callable[[int], int]:
        full = (1 << len(self.nodes)) - 1
        preds = self.preds

        @cache
        def ways(placed: int) -> int:
            if placed == full:
                return 1
            return sum(ways(placed | 1 << i) for i in range(len(preds)) if not placed >> i & 1 and preds[i] & ~placed == 0)

        return ways

    def count_orders(self) -> int:
        """The exact number of topological orders."""
        if len(self.nodes) > MAX_EXACT and self.width > 12:
            raise InputError(f"a DAG of {len(self.nodes)} nodes this wide has too many orders to count exactly (limit {MAX_EXACT} nodes)")
        return self._ways()(0)

    def iter_orders(self) -> Iterator[list[str]]:
        """Every topological order, in lexicographic order of node position."""
        n = len(self.nodes)

        def extend(placed: int, prefix: list[int]) -> Iterator[list[str]]:
            if len(prefix) == n:
                yield [self.nodes[i] for i in prefix]
                return
            for i in range(n):
                if not placed >> i & 1 and self.preds[i] & ~placed == 0:
                    yield from extend(placed | 1 << i, [*prefix, i])

        yield from extend(0, [])

    def sample_orders(self, k: int, seed: int = 0) -> list[list[str]]:
        """``k`` topological orders drawn uniformly at random (with replacement), reproducibly."""
        rng = np.random.default_rng(seed)
        ways = self._ways()
        n = len(self.nodes)
        out: list[list[str]] = []
        for _ in range(k):
            placed, order = 0, list[str]()
            while len(order) < n:
                ready = [i for i in range(n) if not placed >> i & 1 and self.preds[i] & ~placed == 0]
                weights = np.array([float(ways(placed | 1 << i)) for i in ready])
                pick = ready[int(rng.choice(len(ready), p=weights / weights.sum()))]
                placed |= 1 << pick
                order.append(self.nodes[pick])
            out.append(order)
        return out

    def orders(self, limit: int = 50, seed: int = 0) -> tuple[list[list[str]], int]:
        """(orders to store, exact count): all orders when at most ``limit``, else ``limit`` distinct uniform samples."""
        count = self.count_orders()
        if count <= limit:
            return list(self.iter_orders()), count
        seen: dict[tuple[str, ...], None] = {}
        draw = 0
        while len(seen) < limit and draw < 50:
            for order in self.sample_orders(limit, seed=seed + draw):
                seen.setdefault(tuple(order), None)
                if len(seen) == limit:
                    break
            draw += 1
        return [list(o) for o in seen], count
