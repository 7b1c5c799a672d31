"""Read-only queries over a :class:`~taskloom.tools.graph.model.KnowledgeGraph`.

Plain functions in the networkx style: the graph comes first, results are plain
values (dicts, lists, :class:`Node` / :class:`Edge` models). Every traversal is
deterministic: ties are broken by the insertion order of nodes in ``kg.g``.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Sequence
from itertools import pairwise
from typing import Any, Literal

from taskloom.tools.errors import InputError, NotFoundError
from taskloom.tools.graph.model import Edge, EdgeType, KnowledgeGraph, Node

__all__ = [
    "MAX_HOPS",
    "NoPathError",
    "graph_stats",
    "get_node",
    "neighbors",
    "shortest_path",
    "induced_subgraph",
]

MAX_HOPS = 5
"""Largest ``hops`` that :func:`neighbors` accepts."""

Direction = Literal["out", "in", "both"]
_DIRECTIONS: tuple[str, ...] = ("out", "in", "both")


class NoPathError(NotFoundError):
    """Both nodes exist but no path joins them under the given constraints."""


def graph_stats(kg: KnowledgeGraph) -> dict[str, Any]:
    """Count the nodes, edges, node types, edge types, pages and sources of a graph.

    Returns
    -------
    dict
        ``nodes`` and ``edges`` (totals); ``node_types`` and ``edge_types`` (counts per
        type, keys sorted by name, only types that occur); ``pages`` (number of distinct
        source pages: a ``(file, page)`` pair for document nodes, a URL for web nodes);
        ``sources`` (the graph's sources: ``kg.meta.sources`` in order, then any other
        source file named by a node, in node order).

    Examples
    --------
    >>> from taskloom.tools.graph.model import GraphMeta, Source
    >>> kg = KnowledgeGraph(GraphMeta(id="g", sources=["a.pdf"]))
    >>> kg.add_node(Node(id="p1", type="paragraph", source=Source(file="a.pdf", page=1)))
    >>> kg.add_node(Node(id="h1", type="heading", source=Source(file="a.pdf", page=2)))
    >>> kg.add_edge(Edge(source="h1", target="p1", type="next"))
    >>> s = graph_stats(kg)
    >>> s["nodes"], s["edges"], s["node_types"], s["edge_types"], s["pages"], s["sources"]
    (2, 1, {'heading': 1, 'paragraph': 1}, {'next': 1}, 2, ['a.pdf'])
    """
    node_types: dict[str, int] = {}
    pages: set[tuple[str | None, int] | str] = set()
    sources: list[str] = list(dict.fromkeys(kg.meta.sources))
    for _, data in kg.g.nodes(data=True):
        ntype = str(data.get("type"))
        node_types[ntype] = node_types.get(ntype, 0) + 1
        src = data.get("source") or {}
        if src.get("page") is not None:
            pages.add((src.get("file"), int(src["page"])))
        elif src.get("url"):
            pages.add(str(src["url"]))
        file = src.get("file")
        if file and file not in sources:
            sources.append(file)
    edge_types: dict[str, int] = {}
    for _, _, key in kg.g.edges(keys=True):
        edge_types[str(key)] = edge_types.get(str(key), 0) + 1
    return {
        "nodes": kg.g.number_of_nodes(),
        "edges": kg.g.number_of_edges(),
        "node_types": dict(sorted(node_types.items())),
        "edge_types": dict(sorted(edge_types.items())),
        "pages": len(pages),
        "sources": sources,
    }


def get_node(kg: KnowledgeGraph, node_id: str) -> Node:
    """Return one node by id.

    Raises
    ------
    NotFoundError
        When the graph has no node ``node_id``.

    Examples
    --------
    >>> from taskloom.tools.graph.model import GraphMeta
    >>> kg = KnowledgeGraph(GraphMeta(id="g"))
    >>> kg.add_node(Node(id="p1", type="paragraph", text="Hello"))
    >>> get_node(kg, "p1").text
    'Hello'
    """
    _require_node(kg, node_id)
    return kg.node(node_id)


def neighbors(
    kg: KnowledgeGraph,
    node_id: str,
    hops: int = 1,
    edge_types: Sequence[str] | None = None,
    direction: Direction = "both",
    limit: int = 200,
) -> list[tuple[Node, int]]:
    """Nodes within ``hops`` edges of a node, breadth first, with their distance.

    Parameters
    ----------
    kg : KnowledgeGraph
    node_id : str
        The start node; it is not part of the result.
    hops : int, default 1
        Largest distance, 1 to :data:`MAX_HOPS`.
    edge_types : sequence of str, optional
        Follow only edges of these types (values of :class:`EdgeType`). ``None`` or an
        empty sequence follows every type.
    direction : {"out", "in", "both"}, default "both"
        Follow edges forwards (``out``), backwards (``in``) or either way.
    limit : int, default 200
        Return at most this many nodes (the nearest ones), at least 1.

    Returns
    -------
    list of (Node, int)
        Each reached node with its distance, ordered by distance, then by the insertion
        order of nodes in the graph.

    Raises
    ------
    NotFoundError
        Unknown ``node_id``.
    InputError
        ``hops`` or ``limit`` out of range, unknown edge type or direction.

    Examples
    --------
    >>> from taskloom.tools.graph.model import GraphMeta
    >>> kg = KnowledgeGraph(GraphMeta(id="g"))
    >>> for n in "abc":
    ...     kg.add_node(Node(id=n, type="paragraph"))
    >>> kg.add_edge(Edge(source="a", target="b", type="next"))
    >>> kg.add_edge(Edge(source="b", target="c", type="next"))
    >>> [(n.id, d) for n, d in neighbors(kg, "a", hops=2)]
    [('b', 1), ('c', 2)]
    >>> [(n.id, d) for n, d in neighbors(kg, "b", direction="in")]
    [('a', 1)]
    """
    _require_node(kg, node_id)
    if isinstance(hops, bool) or not isinstance(hops, int) or not 1 <= hops <= MAX_HOPS:
        raise InputError(f"hops must be an integer from 1 to {MAX_HOPS}, got {hops!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InputError(f"limit must be a positive integer, got {limit!r}")
    types = _edge_type_filter(edge_types)
    _check_direction(direction)
    dist = _bfs_distances(kg, [node_id], hops, types, direction)
    del dist[node_id]
    ordered = _order_by_distance(kg, dist)[:limit]
    return [(kg.node(n), dist[n]) for n in ordered]


def shortest_path(
    kg: KnowledgeGraph,
    source: str,
    target: str,
    edge_types: Sequence[str] | None = None,
    directed: bool = False,
) -> list[Edge]:
    """The edges along a shortest path from ``source`` to ``target``.

    Breadth-first search that visits the neighbours of a node in the insertion order
    of nodes in the graph, so among paths of equal length the result is always the
    same one. Between two consecutive path nodes ``u`` then ``v``, the edge reported
    is the first stored ``u -> v`` edge of an allowed type (in insertion order), or,
    for an undirected search when there is none, the first stored ``v -> u`` edge.

    Parameters
    ----------
    kg : KnowledgeGraph
    source, target : str
        Node ids. A node's path to itself is empty.
    edge_types : sequence of str, optional
        Use only edges of these types; ``None`` or empty uses every type.
    directed : bool, default False
        Follow edges only forwards. When false, edges may be walked backwards, but
        each is reported in its real stored direction (``Edge.source`` and
        ``Edge.target`` as stored, not as walked).

    Returns
    -------
    list of Edge
        The path's edges in order; ``len(path)`` is the distance.

    Raises
    ------
    NotFoundError
        Unknown ``source`` or ``target``; :class:`NoPathError` (a subclass) when no
        path exists under the given constraints.
    InputError
        Unknown edge type.

    Examples
    --------
    >>> from taskloom.tools.graph.model import GraphMeta
    >>> kg = KnowledgeGraph(GraphMeta(id="g"))
    >>> for n in "abc":
    ...     kg.add_node(Node(id=n, type="paragraph"))
    >>> kg.add_edge(Edge(source="a", target="b", type="next"))
    >>> kg.add_edge(Edge(source="c", target="b", type="refers_to"))
    >>> [(e.source, e.target, e.type.value) for e in shortest_path(kg, "a", "c")]
    [('a', 'b', 'next'), ('c', 'b', 'refers_to')]
    """
    _require_node(kg, source)
    _require_node(kg, target)
    types = _edge_type_filter(edge_types)
    if source == target:
        return []
    direction: Direction = "out" if directed else "both"
    index = _node_index(kg)
    parent: dict[str, str] = {source: source}
    frontier = [source]
    while frontier and target not in parent:
        nxt: list[str] = []
        for u in frontier:
            for v in sorted(_step(kg, u, types, direction), key=index.__getitem__):
                if v not in parent:
                    parent[v] = u
                    nxt.append(v)
        frontier = nxt
    if target not in parent:
        how = "directed " if directed else ""
        only = f" over edge types {sorted(types)}" if types else ""
        hint = "; try directed=False or fewer edge-type filters" if directed or types else ""
        raise NoPathError(
            f"no {how}path from {source!r} to {target!r}{only} in graph {kg.id!r}{hint}"
        )
    chain = [target]
    while chain[-1] != source:
        chain.append(parent[chain[-1]])
    chain.reverse()
    return [_edge_between(kg, u, v, types, directed) for u, v in pairwise(chain)]


def induced_subgraph(
    kg: KnowledgeGraph, node_ids: Iterable[str], *, id_suffix: str = "sub"
) -> KnowledgeGraph:
    """The subgraph on ``node_ids`` with every edge of ``kg`` between them.

    Parameters
    ----------
    kg : KnowledgeGraph
    node_ids : iterable of str
        Nodes to keep; duplicates are ignored and the order of ``kg`` is kept.
    id_suffix : str, default "sub"
        The new graph's id is ``f"{kg.id}:{id_suffix}"``.

    Returns
    -------
    KnowledgeGraph
        A new graph (attributes are deep copies) whose metadata is a copy of
        ``kg.meta`` with the new id and empty ``stats`` (they described the parent).

    Raises
    ------
    NotFoundError
        An id is not a node of ``kg``.

    Examples
    --------
    >>> from taskloom.tools.graph.model import GraphMeta
    >>> kg = KnowledgeGraph(GraphMeta(id="g"))
    >>> for n in "abc":
    ...     kg.add_node(Node(id=n, type="paragraph"))
    >>> kg.add_edge(Edge(source="a", target="b", type="next"))
    >>> kg.add_edge(Edge(source="b", target="c", type="next"))
    >>> sub = induced_subgraph(kg, ["c", "a"])
    >>> sub.id, list(sub.g), sub.g.number_of_edges()
    ('g:sub', ['a', 'c'], 0)
    """
    wanted = set()
    for nid in node_ids:
        _require_node(kg, nid)
        wanted.add(nid)
    meta = kg.meta.model_copy(deep=True, update={"id": f"{kg.id}:{id_suffix}", "stats": {}})
    sub = KnowledgeGraph(meta)
    ordered = [nid for nid in kg.g if nid in wanted]  # the graph's own order, so the copy's order never depends on the caller's
    for nid in ordered:
        sub.g.add_node(nid, **copy.deepcopy(kg.g.nodes[nid]))
    for u in ordered:  # each kept node's own out-edges: the order of kg.g.edges() restricted, without walking every edge of a large graph
        for v, keyed in kg.g.adj[u].items():
            if v in wanted:
                for key, data in keyed.items():
                    sub.g.add_edge(u, v, key=key, **copy.deepcopy(data))
    return sub


# --- helpers shared with sibling modules (sampling) ---------------------------------


def _require_node(kg: KnowledgeGraph, node_id: str) -> None:
    if node_id not in kg.g:
        raise NotFoundError(
            f"node {node_id!r} is not in graph {kg.id!r}; find node ids with graph_search "
            "(by text) or see what the graph holds with graph_stats"
        )


def _edge_type_filter(edge_types: Sequence[str] | None) -> frozenset[str] | None:
    """Validate edge-type names; ``None`` (or empty) means every type."""
    if edge_types is None:
        return None
    if isinstance(edge_types, str):
        edge_types = [edge_types]
    valid = {t.value for t in EdgeType}
    names = [str(t) for t in edge_types]
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise InputError(
            f"unknown edge type(s) {unknown}; valid edge types are: "
            f"{', '.join(t.value for t in EdgeType)}"
        )
    return frozenset(names) or None


def _check_direction(direction: str) -> None:
    if direction not in _DIRECTIONS:
        raise InputError(f"direction must be one of {list(_DIRECTIONS)}, got {direction!r}")


def _node_index(kg: KnowledgeGraph) -> dict[str, int]:
    return {n: i for i, n in enumerate(kg.g)}


def _step(kg: KnowledgeGraph, u: str, types: frozenset[str] | None, direction: str) -> set[str]:
    """Nodes one allowed edge away from ``u`` (callers sort the result)."""
    out: set[str] = set()
    if direction in ("out", "both"):
        out.update(v for _, v, k in kg.g.out_edges(u, keys=True) if types is None or k in types)
    if direction in ("in", "both"):
        out.update(w for w, _, k in kg.g.in_edges(u, keys=True) if types is None or k in types)
    return out


def _bfs_distances(
    kg: KnowledgeGraph,
    starts: Iterable[str],
    max_hops: int,
    types: frozenset[str] | None = None,
    direction: str = "both",
    within: Collection[str] | None = None,
) -> dict[str, int]:
    """Hop distance from the nearest start node, for nodes at most ``max_hops`` away.

    Start nodes are at distance 0 whatever ``within`` says; other nodes are reached
    (and passed through) only when they are in ``within`` (when given).
    """
    dist: dict[str, int] = {}
    for s in starts:
        dist.setdefault(s, 0)
    frontier = list(dist)
    for d in range(1, max_hops + 1):
        nxt: list[str] = []
        for u in frontier:
            for v in _step(kg, u, types, direction):
                if v not in dist and (within is None or v in within):
                    dist[v] = d
                    nxt.append(v)
        if not nxt:
            break
        frontier = nxt
    return dist


def _order_by_distance(kg: KnowledgeGraph, dist: dict[str, int]) -> list[str]:
    index = _node_index(kg)
    return sorted(dist, key=lambda n: (dist[n], index[n]))


def _edge_between(
    kg: KnowledgeGraph, u: str, v: str, types: frozenset[str] | None, directed: bool
) -> Edge:
    for a, b in ((u, v),) if directed else ((u, v), (v, u)):
        for key, data in (kg.g.get_edge_data(a, b) or {}).items():
            if types is None or key in types:
                return Edge(source=a, target=b, **data)
    raise AssertionError(f"BFS step {u!r} -> {v!r} has no edge")  # unreachable
