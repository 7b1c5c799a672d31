"""Meta-path matching: find the concrete graph paths that have a pattern's shape.

The pattern language (grammar, quantifiers, slots, predicates) is defined and parsed
in :mod:`taskloom.tools.generate.metapath.syntax`; this module re-exports it and adds
the backtracking matcher.

Examples
--------
>>> p = compile_pattern("Button($open) -[opens]-> Toast|Modal($dialog)")
>>> p.head.types, p.body[0].node.types, p.body[0].node.slot
(('button',), ('toast', 'modal'), 'dialog')
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import networkx as nx
from pydantic import BaseModel, Field

from ...errors import InputError, NotFoundError
from ...graph.model import KnowledgeGraph
from .syntax import (
    MAX_REPEAT,
    MAX_STARTS,
    MAX_STEPS,
    EdgeTerm,
    Match,
    NodeTerm,
    Pattern,
    Predicate,
    Repeat,
    Step,
    compile_pattern,
    normalize_type_name,
    parse_pattern,
)

__all__ = [
    "MAX_REPEAT",
    "MAX_STARTS",
    "MAX_STEPS",
    "SearchBudgetExceeded",
    "SearchOutcome",
    "bounded_match",
    "start_nodes",
    "Predicate",
    "NodeTerm",
    "EdgeTerm",
    "Step",
    "Repeat",
    "Pattern",
    "Match",
    "parse_pattern",
    "compile_pattern",
    "normalize_type_name",
    "match",
    "iter_matches",
]


# --------------------------------------------------------------------------- matching


class SearchBudgetExceeded(InputError):
    """A meta-path search used more edge expansions than its step budget allowed."""

    def __init__(self, pattern: str, steps: int, budget: int) -> None:
        super().__init__(
            f"meta-path {pattern!r} exceeded {budget} search steps ({steps} counted); "
            "narrow it with node types, a start node, a lower limit or tighter quantifiers"
        )
        self.pattern, self.steps, self.budget = pattern, steps, budget


class SearchOutcome(BaseModel):
    """What one budgeted search found, and what it cost (see :func:`bounded_match`)."""

    matches: list[Match] = Field(default_factory=list)
    steps: int = Field(0, description="Edge expansions counted.")
    budget: int | None = Field(None, description="The step budget; None = unbounded.")
    exceeded: bool = Field(False, description="The budget ran out: matches holds only what was found before.")
    starts: int = Field(0, description="Start nodes searched from.")
    candidate_starts: int = Field(0, description="Nodes that fit the pattern's first term (before the start cap).")


def _value_matches(value: Any, pred: Predicate) -> bool:
    if isinstance(value, (list, tuple, set)):
        return any(_value_matches(v, pred) for v in value)
    have, want = str(value).casefold(), pred.value.casefold()
    return want in have if pred.op.endswith("~") else have == want


def _node_ok(g: nx.MultiDiGraph, node: str, term: NodeTerm) -> bool:
    data = g.nodes[node]
    if term.types is not None and str(data.get("type")) not in term.types:
        return False
    for pred in term.predicates:
        attrs = data.get("attrs") or {}
        value = attrs.get(pred.key, data.get(pred.key)) if isinstance(attrs, dict) else data.get(pred.key)
        negated = pred.op.startswith("!")
        if value is None:
            if not negated:
                return False
            continue
        if _value_matches(value, pred) == negated:
            return False
    return True


class _Search:
    def __init__(self, g: nx.MultiDiGraph, max_steps: int | None, pattern: Pattern) -> None:
        self.g = g
        self.nodes: list[str] = []
        self.edges: list[tuple[str, str, str]] = []
        self.slots: list[tuple[str, str]] = []
        self.visited: set[str] = set()
        self.steps = 0
        self.max_steps = max_steps
        self.pattern = pattern

    def neighbours(self, node: str, edge: EdgeTerm) -> Iterator[tuple[str, tuple[str, str, str]]]:
        adjacency = self.g.succ[node] if edge.direction == "out" else self.g.pred[node]
        for other, keys in adjacency.items():
            for key in sorted(keys):
                if edge.types is None or key in edge.types:
                    self.steps += 1
                    if self.max_steps is not None and self.steps > self.max_steps:
                        raise SearchBudgetExceeded(self.pattern.text, self.steps, self.max_steps)
                    yield other, ((node, key, other) if edge.direction == "out" else (other, key, node))

    def enter(self, node: str, term: NodeTerm) -> None:
        self.nodes.append(node)
        self.visited.add(node)
        if term.slot:
            self.slots.append((term.slot, node))

    def leave(self, term: NodeTerm) -> None:
        self.visited.discard(self.nodes.pop())
        if term.slot:
            self.slots.pop()

    def snapshot(self) -> Match:
        return Match(nodes=list(self.nodes), edges=list(self.edges), slots=dict(self.slots))

    def seq(self, items: tuple[Step | Repeat, ...], i: int, cur: str, done: Callable[[str], Iterator[None]]) -> Iterator[None]:
        if i == len(items):
            yield from done(cur)
            return
        item = items[i]
        if isinstance(item, Step):
            for other, edge in self.neighbours(cur, item.edge):
                if other in self.visited or not _node_ok(self.g, other, item.node):
                    continue
                self.edges.append(edge)
                self.enter(other, item.node)
                yield from self.seq(items, i + 1, other, done)
                self.leave(item.node)
                self.edges.pop()
        else:
            yield from self.repeat(item, 0, cur, lambda node: self.seq(items, i + 1, node, done))

    def repeat(self, rep: Repeat, count: int, cur: str, done: Callable[[str], Iterator[None]]) -> Iterator[None]:
        if count >= rep.min:
            yield from done(cur)
        if count >= rep.max:
            return
        depth = len(self.nodes)

        def again(node: str) -> Iterator[None]:
            # An iteration that consumed nothing may only count towards the minimum.
            if len(self.nodes) > depth or count < rep.min:
                yield from self.repeat(rep, count + 1, node, done)

        yield from self.seq(rep.items, 0, cur, again)


def start_nodes(kg: KnowledgeGraph, pattern: str | Pattern, max_starts: int | None = None) -> tuple[list[str], int]:
    """The nodes a search starts from, and how many fit the pattern's first term.

    Candidates are the nodes that fit the head term, in graph insertion order; above
    ``max_starts`` an evenly spaced subset (first one included) is kept, so a capped
    search still samples the whole graph, deterministically.
    """
    compiled = compile_pattern(pattern) if isinstance(pattern, str) else pattern
    fits = [n for n in kg.g.nodes if _node_ok(kg.g, n, compiled.head)]
    if max_starts is None or len(fits) <= max_starts:
        return fits, len(fits)
    if max_starts < 1:
        return [], len(fits)
    return [fits[i * len(fits) // max_starts] for i in range(max_starts)], len(fits)


def iter_matches(
    kg: KnowledgeGraph, pattern: str | Pattern, start: str | None = None, max_steps: int | None = MAX_STEPS, max_starts: int | None = None
) -> Iterator[Match]:
    """Lazily yield the distinct matches of ``pattern`` in ``kg`` in deterministic order.

    Raises :class:`SearchBudgetExceeded` once ``max_steps`` edge expansions are spent;
    ``max_starts`` caps the start nodes (see :func:`start_nodes`).
    """
    yield from _run(kg, pattern, start, max_steps, max_starts, None)


def _run(
    kg: KnowledgeGraph, pattern: str | Pattern, start: str | None, max_steps: int | None, max_starts: int | None, outcome: SearchOutcome | None
) -> Iterator[Match]:
    compiled = compile_pattern(pattern) if isinstance(pattern, str) else pattern
    g = kg.g
    if start is not None and start not in g:
        raise NotFoundError(f"no node {start!r} in graph {kg.id!r} to start the meta-path from")
    search = _Search(g, max_steps, compiled)
    seen: set[tuple[Any, ...]] = set()
    found: list[Match] = []

    def done(_: str) -> Iterator[None]:
        key = (tuple(search.nodes), tuple(search.edges), tuple(sorted(dict(search.slots).items())))
        if key not in seen:
            seen.add(key)
            found.append(search.snapshot())
            yield None

    if start is not None:
        starts, total = ([start], 1) if _node_ok(g, start, compiled.head) else ([], 0)
    else:
        starts, total = start_nodes(kg, compiled, max_starts)
    if outcome is not None:
        outcome.candidate_starts = total
    try:
        for node in starts:
            if outcome is not None:
                outcome.starts += 1
            search.enter(node, compiled.head)
            for _ in search.seq(compiled.body, 0, node, done):
                yield found.pop()
            search.leave(compiled.head)
    finally:
        if outcome is not None:
            outcome.steps = search.steps


def match(
    kg: KnowledgeGraph,
    pattern: str | Pattern,
    start: str | None = None,
    limit: int = 100,
    max_steps: int | None = MAX_STEPS,
    max_starts: int | None = None,
) -> list[Match]:
    """Up to ``limit`` paths of ``kg`` with the shape of ``pattern``.

    ``start`` pins the first node (it must exist). Order is deterministic: start
    nodes and neighbours in graph insertion order, parallel edge types sorted, fewer
    repetitions first. ``max_steps`` bounds the work (edge expansions); exceeding it
    raises :class:`SearchBudgetExceeded` (an :class:`InputError`) rather than silently
    returning a partial answer; :func:`bounded_match` reports it instead.
    """
    if limit < 1:
        raise InputError(f"limit must be at least 1, got {limit}")
    results: list[Match] = []
    for found in iter_matches(kg, pattern, start, max_steps, max_starts):
        results.append(found)
        if len(results) >= limit:
            break
    return results


def bounded_match(
    kg: KnowledgeGraph,
    pattern: str | Pattern,
    limit: int = 100,
    max_steps: int = MAX_STEPS,
    max_starts: int | None = MAX_STARTS,
    start: str | None = None,
) -> SearchOutcome:
    """Like :func:`match`, but never raises on the budget: a search that runs out says so in its outcome.

    Generation calls this for every shipped pattern, so no pattern can make it fail:
    ``outcome.exceeded`` tells the caller to skip (and report) the pattern.
    """
    if limit < 1:
        raise InputError(f"limit must be at least 1, got {limit}")
    outcome = SearchOutcome(budget=max_steps)
    try:
        for found in _run(kg, pattern, start, max_steps, max_starts, outcome):
            outcome.matches.append(found)
            if len(outcome.matches) >= limit:
                break
    except SearchBudgetExceeded:
        outcome.exceeded = True
    return outcome
