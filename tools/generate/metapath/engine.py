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

from ...errors import InputError, NotFoundError
from ...graph.model import KnowledgeGraph
from .syntax import (
    MAX_REPEAT,
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
    "MAX_STEPS",
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
                        raise InputError(
                            f"meta-path {self.pattern.text!r} exceeded {self.max_steps} search steps; "
                            "narrow it with node types, a start node, a lower limit or tighter quantifiers"
                        )
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


def iter_matches(
    kg: KnowledgeGraph, pattern: str | Pattern, start: str | None = None, max_steps: int | None = MAX_STEPS
) -> Iterator[Match]:
    """Lazily yield the distinct matches of ``pattern`` in ``kg`` in deterministic order."""
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

    starts = [start] if start is not None else list(g.nodes)
    for node in starts:
        if not _node_ok(g, node, compiled.head):
            continue
        search.enter(node, compiled.head)
        for _ in search.seq(compiled.body, 0, node, done):
            yield found.pop()
        search.leave(compiled.head)


def match(
    kg: KnowledgeGraph, pattern: str | Pattern, start: str | None = None, limit: int = 100, max_steps: int | None = MAX_STEPS
) -> list[Match]:
    """Up to ``limit`` paths of ``kg`` with the shape of ``pattern``.

    ``start`` pins the first node (it must exist). Order is deterministic: start
    nodes and neighbours in graph insertion order, parallel edge types sorted, fewer
    repetitions first. ``max_steps`` bounds the work (edge expansions); exceeding it
    raises :class:`InputError` rather than silently returning a partial answer.
    """
    if limit < 1:
        raise InputError(f"limit must be at least 1, got {limit}")
    results: list[Match] = []
    for found in iter_matches(kg, pattern, start, max_steps):
        results.append(found)
        if len(results) >= limit:
            break
    return results
