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

__all__ = ["fisher_exact", "pass_at_k", "pass_hat_k", "pass_ks", "MAX_PASS_K"]

MAX_PASS_K = 16  #: the largest k of pass@k and pass^k reported

_RELATIVE = 1 + 1e-7  # tables this close in probability to the observed one count as "as extreme" (floating point ties)


@lru_cache(maxsize=65_536)
def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of the table ``[[a, b], [c, d]]`` (e.g. rows: with / without a step; columns: success / failure).

    The hypergeometric probabilities are walked outwards from the mode by their ratio
    ``p(x+1)/p(x)``, relative to the mode, until they are negligible next to the observed one, so a
    table of 10,000 runs costs a few hundred multiplications and never overflows a float. A p-value
    below about 1e-300 reads 0.0.

    >>> round(fisher_exact(0, 4, 4, 0), 4), fisher_exact(1, 1, 1, 1), fisher_exact(0, 5000, 5000, 0)
    (0.0286, 1.0, 0.0)
    """
    if min(a, b, c, d) < 0:
        raise ValueError(f"a contingency table holds counts, got {(a, b, c, d)}")
    row, col, n = a + b, a + c, a + b + c + d
    if n == 0:
        return 1.0
    low, high = max(0, row + col - n), min(row, col)
    mode = min(high, max(low, (row + 1) * (col + 1) // (n + 2)))
    observed = math.exp(_log_weight(a, row, col, n) - _log_weight(mode, row, col, n))  # relative to the mode's weight
    if observed == 0.0:
        return 0.0
    cutoff, tie = observed * 1e-17, observed * _RELATIVE
    total = extreme = 0.0
    for step in (1, -1):  # the mode's upper side (mode included), then its lower side
        x, w = (mode, 1.0) if step == 1 else (mode - 1, _ratio(mode, -1, row, col, n))
        while low <= x <= high and w > cutoff:
            total += w
            if w <= tie:
                extreme += w
            w *= _ratio(x, step, row, col, n)
            x += step
    return min(1.0, extreme / total)


def _log_weight(x: int, row: int, col: int, n: int) -> float:
    """log of C(col, x) · C(n − col, row − x), the hypergeometric weight of ``x`` up to a constant."""
    lg = math.lgamma
    return -(lg(x + 1) + lg(col - x + 1) + lg(row - x + 1) + lg(n - col - row + x + 1))


def _ratio(x: int, step: int, row: int, col: int, n: int) -> float:
    """p(x + step) / p(x); 0.0 past either end of the support."""
    if step == 1:
        den = (x + 1) * (n - col - row + x + 1)
        return (col - x) * (row - x) / den if den and col > x and row > x else 0.0
    den = (col - x + 1) * (row - x + 1)
    return x * (n - col - row + x) / den if den and x > 0 else 0.0


def pass_ks(runs: int) -> range:
    """The k reported for ``runs`` runs: 1 … runs, at most :data:`MAX_PASS_K` (a thousand runs need no pass@1000)."""
    return range(1, min(runs, MAX_PASS_K) + 1)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` runs drawn from ``n`` (``c`` successful) succeeds.

    Computed as ``1 − ∏ (n−c−i)/(n−i)`` over i < k, in floats, so large n cost k multiplications.

    >>> pass_at_k(8, 1, 1), pass_at_k(8, 1, 8), round(pass_at_k(8, 2, 4), 4)
    (0.125, 1.0, 0.7857)
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    return 1.0 - _draws_all(n, n - c, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all ``k`` runs drawn from ``n`` (``c`` successful) succeed.

    >>> pass_hat_k(8, 8, 8), pass_hat_k(8, 7, 8), round(pass_hat_k(8, 6, 2), 4)
    (1.0, 0.0, 0.5357)
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass^k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    return _draws_all(n, c, k)


def _draws_all(n: int, m: int, k: int) -> float:
    """C(m, k) / C(n, k): the chance that k draws without replacement from n all fall among m."""
    p = 1.0
    for i in range(k):
        p *= (m - i) / (n - i)
        if p <= 0.0:
            return 0.0
    return p
