"""Statistics behind the consensus labels and the run figures: Fisher's exact test, pass@k and pass^k.

* :func:`fisher_exact` is the two-sided Fisher exact test of a 2×2 table, computed exactly from the
  hypergeometric distribution with :func:`math.comb` (the p-value sums the probabilities of every
  table with the same margins that is no more likely than the observed one, as R and SciPy do).
* :func:`pass_at_k` is the unbiased estimate of "at least one of k runs succeeds" from n runs with c
  successes, ``1 − C(n−c, k) / C(n, k)`` (Chen et al. 2021); :func:`pass_hat_k` is "all k runs
  succeed", ``C(c, k) / C(n, k)`` (τ-bench's pass^k).
"""

from __future__ import annotations

import math
from functools import lru_cache

__all__ = ["fisher_exact", "pass_at_k", "pass_hat_k"]

_RELATIVE = 1 + 1e-7  # tables this close in probability to the observed one count as "as extreme" (floating point ties)


@lru_cache(maxsize=65_536)
def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of the table ``[[a, b], [c, d]]`` (e.g. rows: with / without a step; columns: success / failure).

    >>> round(fisher_exact(0, 4, 4, 0), 4), fisher_exact(1, 1, 1, 1)
    (0.0286, 1.0)
    """
    if min(a, b, c, d) < 0:
        raise ValueError(f"a contingency table holds counts, got {(a, b, c, d)}")
    row, col, n = a + b, a + c, a + b + c + d
    if n == 0:
        return 1.0
    total = math.comb(n, row)
    low, high = max(0, row + col - n), min(row, col)
    weights = {x: math.comb(col, x) * math.comb(n - col, row - x) for x in range(low, high + 1)}
    observed = weights[a]
    extreme = sum(w for w in weights.values() if w <= observed * _RELATIVE)
    return min(1.0, extreme / total)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` runs drawn from ``n`` (``c`` successful) succeeds.

    >>> pass_at_k(8, 1, 1), pass_at_k(8, 1, 8), round(pass_at_k(8, 2, 4), 4)
    (0.125, 1.0, 0.7857)
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all ``k`` runs drawn from ``n`` (``c`` successful) succeed.

    >>> pass_hat_k(8, 8, 8), pass_hat_k(8, 7, 8), round(pass_hat_k(8, 6, 2), 4)
    (1.0, 0.0, 0.5357)
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass^k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    return math.comb(c, k) / math.comb(n, k)
