"""OmniBench's Logical Consistency: the coherency of a subtask sequence against the best topological order.

The paper (OmniEval, §4.1) defines, for a sequence of subtasks :math:`s_1, \\dots, s_m`,

.. math::

    CS = \\sum_{i=1}^{m-1} \\mathbb{I}\\big(\\mathrm{app}(s_i) = \\mathrm{app}(s_{i+1})\\big),
    \\qquad LC = \\frac{CS_{agent}}{CS_{max}},

"for each pair of adjacent subtasks :math:`(s_i, s_{i+1})`, CS increases by 1 if both
belong to the same application", with :math:`CS_{max}` the largest CS over all
topological orders of the task graph. Choices where the paper is open:

- **Application** is :attr:`Subtask.category` (the site section or app), compared after
  collapsing whitespace and case-folding. An empty category is *unknown* and matches
  nothing, not even another empty one: coherence is never credited without evidence.
- **CS_agent** is the CS of the evaluator's completion sequence (completed subtasks in the
  order they completed); subtasks never completed contribute nothing.
- **CS_max = 0** (no two subtasks can ever be adjacent within one application): ``lc`` is
  1.0 when the agent completed at least one subtask (its order is as coherent as any order
  can be) and 0.0 when it completed none. Otherwise ``lc = CS_agent / CS_max``, which lies in
  [0, 1] because a completion sequence is a prefix of some topological order and CS never
  drops when a sequence is extended.

CS_max is computed exactly by dynamic programming over the set of placed subtasks. Two
exchange arguments shrink the state from (set placed, last node) to the set alone; both are
proved by moving one node to the front of an optimal completion and counting the adjacent
pairs that change (the property tests check the result against brute-force enumeration
and against the plain (set, last) DP):

1. *Finish the run.* If an available subtask shares the last subtask's application, placing
   it next is optimal (it gains 1 at the front; removing it from later loses at most 1 net).
   So after a subtask of application ``a`` is placed, every subtask of ``a`` that is or
   becomes available follows at once; the run's result does not depend on which ``a``
   subtask started it, and afterwards no ``a`` subtask is available, so the last
   application no longer matters: the state is the placed set.
2. *Place lone subtasks at once.* A subtask whose application is unknown or shared with no
   other subtask can never score; placing it as soon as it is available is optimal (at a
   state where the last run is finished it cannot split a run).

A transition therefore picks an application with an available subtask and places its whole
run (scoring run length - 1). Only placed sets reachable this way are visited; the number
is bounded by the DAG's down-sets and is refused beyond :data:`MAX_STATES`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import InputError
from ..tasks.dag import Dag

__all__ = ["MAX_STATES", "application", "coherency_score", "max_coherency", "logical_consistency"]

MAX_STATES = 2_000_000  # placed sets visited by the CS_max DP before it gives up


def application(category: str) -> str:
    """The normalised application name of a subtask category ('' = unknown, matches nothing)."""
    return " ".join(category.split()).casefold()


def coherency_score(sequence: Sequence[str], apps: Mapping[str, str]) -> int:
    """CS: the number of adjacent pairs in ``sequence`` whose (known) applications are equal.

    ``apps`` maps subtask id to category; it is normalised with :func:`application`.

    >>> coherency_score(["a", "b", "c", "d"], {"a": "Mail", "b": "mail", "c": "Maps", "d": ""})
    1
    """
    names = [application(apps.get(s, "")) for s in sequence]
    return sum(1 for x, y in zip(names, names[1:]) if x and x == y)


def _app_ids(dag: Dag, apps: Mapping[str, str]) -> list[int]:
    """One integer per node: its application class, or a fresh class when unknown or unshared."""
    names = [application(apps.get(n, "")) for n in dag.nodes]
    counts: dict[str, int] = {}
    for name in names:
        if name:
            counts[name] = counts.get(name, 0) + 1
    classes: dict[str, int] = {}
    out: list[int] = []
    for i, name in enumerate(names):
        if name and counts[name] > 1:
            out.append(classes.setdefault(name, len(classes)))
        else:
            out.append(-1 - i)  # lone: its own negative class
    return out


def max_coherency(dag: Dag, apps: Mapping[str, str]) -> tuple[int, list[str]]:
    """(CS_max, one topological order reaching it), exactly, by DP over placed sets.

    >>> d = Dag(["a", "b", "c"], [("a", "c")])
    >>> max_coherency(d, {"a": "mail", "b": "maps", "c": "mail"})
    (1, ['b', 'a', 'c'])
    """
    n = len(dag.nodes)
    if n == 0:
        return 0, []
    preds = dag.preds
    cls = _app_ids(dag, apps)
    lone = [c < 0 for c in cls]
    full = (1 << n) - 1

    def available(placed: int) -> list[int]:
        return [i for i in range(n) if not placed >> i & 1 and preds[i] & ~placed == 0]

    def place_lone(placed: int, order: list[int]) -> int:
        """Rule 2: place available lone subtasks (and the lone ones they release) in node order."""
        changed = True
        while changed:
            changed = False
            for i in available(placed):
                if lone[i]:
                    placed |= 1 << i
                    order.append(i)
                    changed = True
        return placed

    def run(placed: int, app: int, order: list[int]) -> int:
        """Rule 1: place every subtask of class ``app`` that is or becomes available."""
        changed = True
        while changed:
            changed = False
            for i in available(placed):
                if cls[i] == app:
                    placed |= 1 << i
                    order.append(i)
                    changed = True
        return placed

    best: dict[int, tuple[int, int, int]] = {}  # placed -> (score of the rest, class chosen, next placed)

    def solve(start: int) -> int:
        # iterative post-order DFS, so deep DAGs cannot hit the recursion limit
        stack: list[tuple[int, list[tuple[int, int, int]] | None]] = [(start, None)]
        while stack:
            placed, moves = stack.pop()
            if placed in best:
                continue
            if moves is None:
                if placed == full:
                    best[placed] = (0, 0, full)
                    continue
                apps_here = sorted({cls[i] for i in available(placed)})
                moves = []
                for app in apps_here:
                    scratch: list[int] = []
                    after = place_lone(run(placed, app, scratch), scratch)
                    moves.append((app, len([i for i in scratch if cls[i] == app]) - 1, after))
                stack.append((placed, moves))
                for _, _, after in moves:
                    if after not in best:
                        stack.append((after, None))
                if len(best) + len(stack) > MAX_STATES:
                    raise InputError(
                        f"the best subtask order of this {n}-subtask DAG needs more than {MAX_STATES} states to compute exactly; "
                        "split the task or give its subtasks fewer distinct, interleaved applications"
                    )
            else:
                best[placed] = max(((gain + best[after][0], app, after) for app, gain, after in moves), key=lambda m: m[0])
        return best[start][0]

    order: list[int] = []
    start = place_lone(0, order)
    score = solve(start)
    placed = start
    while placed != full:
        app = best[placed][1]
        placed = place_lone(run(placed, app, order), order)
    return score, [dag.nodes[i] for i in order]


def logical_consistency(cs_agent: int, cs_max: int, completed: int) -> float:
    """LC = CS_agent / CS_max; when CS_max = 0, 1.0 if any subtask was completed, else 0.0."""
    if cs_max == 0:
        return 1.0 if completed > 0 else 0.0
    return cs_agent / cs_max
