"""Merging canonical actions into consensus nodes: normalised Levenshtein similarity ≥ θ, two passes, union–find.

``sim(a, b) = 1 − Levenshtein(a, b) / max(|a|, |b|)`` on canonical strings (the paper's formula;
two empty strings have similarity 1). Actions merge when ``sim ≥ θ``; merging is the transitive
closure (single linkage), computed with a union–find.

How it stays fast and order-independent:

1. **Exact duplicates collapse first**: the work is over *distinct* canonical strings (a dict).
2. **Blocking**: only strings in the same block are compared. The block is the action name plus,
   for element actions, the lower-cased element (``click``/``hover`` by role, ``type``/``select``
   by field name) and, for ``navigate``, the URL's host. This is also a semantic guard: with long
   strings a ``hover`` and a ``click`` on the same target can be ≥ 0.9 similar, and the paper's
   rule alone would merge them.
3. **Length bound**: within a block strings are sorted by (length, text) and a pair is skipped
   when the shorter is below θ times the longer (then the distance alone exceeds the bound).
4. **Bounded distance**: ``rapidfuzz``'s C++ Levenshtein with the largest distance that could still
   reach θ as its score cut-off (:func:`max_distance`, an integer, so the θ boundary is exact).

Passes: the **step-based pass** compares strings that occur at the same step index (0-based action
position); the **cross-step pass** then compares every remaining pair of the block, skipping pairs
already compared and pairs already in one set. With ``cross_step=False`` the merge keys are
``(step, string)`` and only the first pass runs, so every node belongs to one step (a layered DAG).

Determinism: the partition (connected components) does not depend on the order of unions, and the
sets of ``networkx.utils.UnionFind`` are keyed by their smallest member (:func:`sorted_groups`);
representatives, ids and all output are chosen by sorting, never by input order.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from networkx.utils import UnionFind
from rapidfuzz.distance import Levenshtein

from .fields import DEFAULT_PIXEL_TOLERANCE, field_paths
from .model import AgentTrajectory, MergeStats

__all__ = ["levenshtein", "similarity", "max_distance", "block_key", "sorted_groups", "MergeResult", "merge_actions", "merge_fields", "naive_merge"]

Key = Any  # a canonical string, or (step, string) without cross-step merging


def levenshtein(a: str, b: str, max_dist: int | None = None) -> int:
    """Edit distance (insert, delete, substitute, each cost 1); ``max_dist + 1`` once it exceeds ``max_dist``.

    ``rapidfuzz``'s C++ Levenshtein, with ``max_dist`` as its score cut-off.

    >>> levenshtein("kitten", "sitting")
    3
    >>> levenshtein("kitten", "sitting", max_dist=1)
    2
    """
    return int(Levenshtein.distance(a, b, score_cutoff=max_dist))


def similarity(a: str, b: str) -> float:
    """``1 − Levenshtein(a, b) / max(|a|, |b|)``; 1.0 for two empty strings (``rapidfuzz``'s normalised similarity).

    >>> round(similarity("type(text='dune')", "type(text='dnue')"), 4)
    0.8824
    """
    return float(Levenshtein.normalized_similarity(a, b))


def max_distance(longest: int, theta: float) -> int:
    """The largest distance ``d`` with ``1 − d / longest ≥ theta`` (−1 if none), computed with the same float rule as :func:`similarity`."""
    if longest == 0:
        return 0 if theta <= 1.0 else -1
    d = max(int((1.0 - theta) * longest), 0)
    while d + 1 <= longest and 1.0 - (d + 1) / longest >= theta:
        d += 1
    while d >= 0 and 1.0 - d / longest < theta:
        d -= 1
    return d


def block_key(name: str, args: dict[str, Any]) -> str:
    """The comparison block of an action: name, plus element (element actions) or host (navigate)."""
    if name == "navigate":
        url = str(args.get("url", ""))
        host = urlsplit(url if "://" in url else "//" + url).hostname or ""
        return f"navigate|{host.lower()}"
    element = args.get("element")
    if element is not None:
        return f"{name}|{' '.join(str(element).lower().split())}"
    return name


def sorted_groups(uf: UnionFind[Any]) -> dict[Any, list[Any]]:
    """The sets of ``uf`` keyed by their smallest member, each sorted, in key order (independent of the unions' order).

    >>> uf = UnionFind("abcde")
    >>> uf.union("d", "c"); uf.union("b", "a"); uf.union("c", "b")
    >>> sorted_groups(uf)
    {'a': ['a', 'b', 'c', 'd'], 'e': ['e']}
    """
    return {members[0]: members for members in sorted((sorted(s) for s in uf.to_sets()), key=lambda m: m[0])}


@dataclass
class MergeResult:
    """Which merge key went to which cluster; ``cluster_of(step, text)`` answers for an occurrence.

    Field-mode results (:func:`merge_fields`) carry ``paths`` instead: every trajectory's
    clusters, one per action; :meth:`paths_of` answers for both modes.
    """

    cross_step: bool
    root: dict[Any, Any]
    members: dict[Any, list[Any]]
    occurrences: Counter[Any]
    stats: MergeStats
    labels: dict[Any, str] = field(default_factory=dict)
    paths: list[list[Any]] | None = None
    texts: Counter[tuple[Any, str, str]] | None = None  # (cluster, text, action name) -> occurrences, when the merge counted them


    def cluster_of(self, step: int, text: str) -> Any:
        return self.root[text if self.cross_step else (step, text)]

    def paths_of(self, trajectories: Sequence[AgentTrajectory]) -> list[list[Any]]:
        """The cluster of every action of every trajectory (in the order merged)."""
        if self.paths is not None:
            return self.paths
        return [[self.cluster_of(step, act.text) for step, act in enumerate(t.actions)] for t in trajectories]


def _text(key: Key) -> str:
    return key if isinstance(key, str) else key[1]


def _scan(items: Sequence[Key], theta: float, uf: UnionFind, seen: set[tuple[Any, Any]], skip_joined: bool) -> tuple[int, int]:
    """Compare the pairs of ``items`` (sorted by length, text) that the length bound allows; (comparisons, unions)."""
    comparisons = unions = 0
    texts = [_text(k) for k in items]
    lengths = [len(t) for t in texts]
    bounds: dict[int, int] = {}
    n = len(items)
    for i in range(n):
        li = lengths[i]
        for j in range(i + 1, n):
            lj = lengths[j]
            bound = bounds.get(lj)
            if bound is None:
                bound = bounds[lj] = max_distance(lj, theta)
            if lj - li > bound:  # sorted by length: every later string is at least as long
                break
            a, b = items[i], items[j]
            pair = (a, b) if a < b else (b, a)
            if pair in seen:
                continue
            seen.add(pair)
            if skip_joined and uf[a] == uf[b]:
                continue
            comparisons += 1
            if Levenshtein.distance(texts[i], texts[j], score_cutoff=bound) <= bound and uf[a] != uf[b]:
                uf.union(a, b)
                unions += 1
    return comparisons, unions


def _by_length(keys: Iterable[Key]) -> list[Key]:
    return sorted(keys, key=lambda k: (len(_text(k)), _text(k), k if isinstance(k, str) else k[0]))


def merge_actions(trajectories: Sequence[AgentTrajectory], theta: float = 0.9, *, cross_step: bool = True) -> MergeResult:
    """Cluster the actions of ``trajectories`` (see the module notes); the result is independent of their order."""
    occurrences: Counter[Key] = Counter()
    blocks: dict[Key, str] = {}
    at_step: dict[tuple[str, int], set[Key]] = defaultdict(set)
    total = 0
    for traj in trajectories:
        for step, act in enumerate(traj.actions):
            key: Key = act.text if cross_step else (step, act.text)
            occurrences[key] += 1
            total += 1
            if key not in blocks:
                blocks[key] = block_key(act.name, act.args)
            at_step[(blocks[key], step)].add(key)
    uf = UnionFind(occurrences)
    seen: set[tuple[Any, Any]] = set()
    comparisons = step_merges = cross_merges = 0
    for group in sorted(at_step):
        c, u = _scan(_by_length(at_step[group]), theta, uf, seen, skip_joined=False)
        comparisons += c
        step_merges += u
    by_block: dict[str, list[Key]] = defaultdict(list)
    for key, block in blocks.items():
        by_block[block].append(key)
    if cross_step:
        for block in sorted(by_block):
            c, u = _scan(_by_length(by_block[block]), theta, uf, seen, skip_joined=True)
            comparisons += c
            cross_merges += u
    members = sorted_groups(uf)
    root = {k: r for r, ks in members.items() for k in ks}
    labels = {r: min(ks, key=lambda k: (-occurrences[k], _text(k))) for r, ks in members.items()}
    stats = MergeStats(
        mode="string",
        theta=theta,
        cross_step=cross_step,
        actions=total,
        distinct=len(occurrences),
        blocks=len(by_block),
        comparisons=comparisons,
        step_merges=step_merges,
        cross_step_merges=cross_merges,
        nodes=len(members),
    )
    return MergeResult(cross_step, root, members, occurrences, stats, {r: _text(k) for r, k in labels.items()})


def merge_fields(trajectories: Sequence[AgentTrajectory], pixel_tolerance: float = DEFAULT_PIXEL_TOLERANCE) -> MergeResult:
    """Cluster the actions of ``trajectories`` by their typed fields (see :mod:`.fields`); independent of their order."""
    paths, occurrences = field_paths(trajectories, pixel_tolerance)
    counted = count_texts(trajectories, paths)
    texts: dict[Any, Counter[str]] = defaultdict(Counter)
    for (key, text, _), n in counted.items():
        texts[key][text] += n
    members = {key: sorted(texts[key]) for key in sorted(occurrences, key=repr)}
    labels = {key: min(c, key=lambda t: (-c[t], t)) for key, c in texts.items()}
    stats = MergeStats(
        mode="fields", theta=1.0, cross_step=True, pixel_tolerance=pixel_tolerance, actions=sum(occurrences.values()),
        distinct=sum(len(c) for c in texts.values()), blocks=len({k[0] for k in occurrences}), comparisons=0, step_merges=0,
        cross_step_merges=0, nodes=len(occurrences),
    )  # fmt: skip
    return MergeResult(True, {k: k for k in occurrences}, members, occurrences, stats, labels, paths, counted)


def count_texts(trajectories: Sequence[AgentTrajectory], paths: Sequence[Sequence[Any]]) -> Counter[tuple[Any, str, str]]:
    """How often each (cluster, action text, action name) occurs; ``paths`` holds every action's cluster."""
    counted: Counter[tuple[Any, str, str]] = Counter()
    for traj, path in zip(trajectories, paths):
        acts = traj.actions
        counted.update(zip(path, [a.text for a in acts], [a.name for a in acts]))
    return counted


def naive_merge(texts: Sequence[str], theta: float = 0.9) -> dict[int, int]:
    """The paper's direct method, for benchmarks: every pair of occurrences, full edit distance, union–find.

    Returns the cluster root (smallest index) of every position of ``texts``.
    """
    uf = UnionFind(range(len(texts)))
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            if similarity(texts[i], texts[j]) >= theta:
                uf.union(i, j)
    return {i: root for root, members in sorted_groups(uf).items() for i in members}
