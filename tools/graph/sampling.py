"""Subgraph sampling: Graph2Eval Algorithm 1 (document and web mode) and k-hop expansion.

Given a task objective ``g``, :func:`sample_document_subgraph` extracts a local
subgraph ``G_g = (V_g, E_g)`` of a knowledge graph: the relevant nodes, a few hops of
context around them, and every edge of the graph between the chosen nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field

from taskloom.tools.errors import InputError
from taskloom.tools.graph.model import KnowledgeGraph, NodeType
from taskloom.tools.graph.queries import (
    _bfs_distances,
    _edge_type_filter,
    _order_by_distance,
    _require_node,
    induced_subgraph,
)

__all__ = ["SampleSpec", "sample_document_subgraph", "k_hop", "web_seeds", "WEB_SEED_TYPES"]

#: Task seeds of the web mode (Graph2Eval §3.4): operational nodes a task can start from.
WEB_SEED_TYPES = ("button", "form", "search_box", "link")


class SampleSpec(BaseModel):
    """What to sample: the objective's filters, threshold, neighbourhood, cap and seed."""

    objective: str | None = Field(
        None, description="Task objective g (the caller embeds it into objective_vector)."
    )
    node_types: list[str] | None = Field(
        None, description="NodeTypeSet / WebNodeSet: only nodes of these types are sampled."
    )
    struct_types: list[str] | None = Field(
        None, description="StructMatch: node types that match the objective structurally."
    )
    required_edge_types: list[str] | None = Field(
        None,
        description="StructMatch: a matching node needs an incident edge of one of these types.",
    )
    tau: float = Field(
        0.7, ge=-1.0, le=1.0, description="Cosine threshold; a node needs cos > tau."
    )
    k_hops: int = Field(
        1, ge=0, le=5, description="Hops of context added around the matched nodes."
    )
    max_nodes: int = Field(30, ge=1, description="Largest number of nodes in the sample.")
    seed: int = Field(0, ge=0, description="Seed of the tie-breaking permutation.")
    seed_nodes: list[str] | None = Field(
        None, min_length=1, description="Web mode: task-specific seed nodes S_seed(g)."
    )


def sample_document_subgraph(
    kg: KnowledgeGraph,
    spec: SampleSpec,
    objective_vector: np.ndarray | None = None,
    node_vectors: Mapping[str, np.ndarray] | None = None,
) -> KnowledgeGraph:
    """Sample the subgraph relevant to an objective (Graph2Eval, Algorithm 1).

    **Document mode** (``spec.seed_nodes`` is ``None``). The matched nodes are

    ``V_g = {v in NodeTypeSet : cos(h_v, h_g) > tau  or  StructMatch(v, g) = 1}``

    with ``h_g = objective_vector``, ``h_v = node_vectors[v]`` (a node without a vector
    has no cosine and can only match structurally) and ``NodeTypeSet =
    spec.node_types`` (every type when ``None``). The comparison is strict: a cosine
    equal to ``tau`` does not match. ``StructMatch(v, g) = 1`` when the type of ``v`` is
    in ``spec.struct_types`` and, if ``spec.required_edge_types`` is given, ``v`` has at
    least one incident edge (either direction) of a required type. With
    ``struct_types=None`` the type test is skipped (only the edge test applies); with
    both ``None`` nothing matches structurally.

    Then ``V_g`` is expanded by ``spec.k_hops`` hops over edges of every type in
    either direction; the walk stays within NodeTypeSet (it neither adds nor passes
    through nodes of other types).

    **Web mode** (``spec.seed_nodes`` given). ``V_g`` is the seeds plus the nodes
    within ``spec.k_hops`` hops of a seed (walking through any node) whose type is in
    ``spec.node_types`` (the WebNodeSet); seeds are kept whatever their type.
    ``struct_types``, ``required_edge_types`` and ``tau`` are not used (but are
    validated); an objective vector, when given, only orders neighbours for the cap.

    In both modes ``E_g`` is every edge of ``kg`` between two nodes of ``V_g``.

    Choices where the paper is silent
    ---------------------------------
    * **Cap.** At most ``spec.max_nodes`` nodes are kept, best ranked first. Document
      mode ranks nodes with ``cos > tau`` first (highest cosine first), then
      structural matches (highest cosine first, no vector last), then expansion nodes
      (nearest first, then highest cosine). Web mode ranks the seeds first (in the
      given order), then neighbours (nearest first, then highest cosine). Because
      nearer nodes outrank farther ones, every kept expansion node keeps a path to a
      matched node.
    * **Ties** (equal rank) are broken by a permutation of the graph's nodes drawn
      from ``numpy.random.default_rng(spec.seed)``: same graph and seed give the same
      sample; another seed may keep other tied nodes. No global random state and no
      set iteration order is involved.
    * The returned graph lists nodes in ``kg``'s order, not in rank order; its id is
      ``f"{kg.id}:sample"`` and ``meta.stats`` records the mode, the spec and the
      number of matched nodes before the cap.

    Parameters
    ----------
    kg : KnowledgeGraph
    spec : SampleSpec
    objective_vector : numpy.ndarray, optional
        Embedding ``h_g`` of the objective. ``None`` disables cosine matching.
    node_vectors : mapping of str to numpy.ndarray, optional
        Embedding ``h_v`` per node id, same dimension as ``objective_vector``.

    Returns
    -------
    KnowledgeGraph
        ``G_g``; may be empty when nothing matches.

    Raises
    ------
    InputError
        Unknown node or edge type names, mismatched vector dimensions, or a document
        sample with nothing to match (no objective vector and no structural criteria).
    NotFoundError
        A seed node is not in the graph.

    Examples
    --------
    >>> import numpy as np
    >>> from taskloom.tools.graph.model import Edge, GraphMeta, Node
    >>> kg = KnowledgeGraph(GraphMeta(id="doc"))
    >>> for n, t in [("h", "heading"), ("p1", "paragraph"), ("p2", "paragraph"), ("t", "table")]:
    ...     kg.add_node(Node(id=n, type=t))
    >>> kg.add_edge(Edge(source="h", target="p1", type="next"))
    >>> kg.add_edge(Edge(source="p1", target="p2", type="next"))
    >>> kg.add_edge(Edge(source="p2", target="t", type="refers_to"))
    >>> vecs = {"h": np.array([0.0, 1.0]), "p1": np.array([1.0, 0.1]),
    ...         "p2": np.array([0.0, 1.0]), "t": np.array([0.0, 1.0])}
    >>> spec = SampleSpec(node_types=["paragraph", "table"], tau=0.7, k_hops=1)
    >>> sub = sample_document_subgraph(kg, spec, np.array([1.0, 0.0]), vecs)
    >>> list(sub.g), [(u, v) for u, v in sub.g.edges()]
    (['p1', 'p2'], [('p1', 'p2')])
    """
    node_vectors = node_vectors if node_vectors is not None else {}
    allowed = _type_filter(kg, spec.node_types, "node_types")  # None: every node
    struct_nodes = _type_filter(kg, spec.struct_types, "struct_types")
    required = _edge_type_filter(spec.required_edge_types)
    cosines = _cosines(objective_vector, node_vectors, kg)
    if spec.seed_nodes is not None:
        return _sample_web(kg, spec, allowed, cosines)

    if objective_vector is None and struct_nodes is None and required is None:
        raise InputError(
            "nothing to match: give an objective_vector (the embedded objective) or "
            "structural criteria (struct_types and/or required_edge_types)"
        )
    matched: dict[str, tuple[int, float]] = {}  # node -> (tier, cosine)
    for nid in kg.g:
        if allowed is not None and nid not in allowed:
            continue
        cos = cosines.get(nid)
        if cos is not None and cos > spec.tau:
            matched[nid] = (0, cos)
        elif _struct_match(kg, nid, struct_nodes, required):
            matched[nid] = (1, cos if cos is not None else -np.inf)
    dist = _bfs_distances(kg, matched, spec.k_hops, within=allowed)
    order = _node_order(kg, spec.seed)

    def rank(nid: str) -> tuple[int, int, float]:
        if nid in matched:
            tier, score = matched[nid]
            return (tier, 0, -score)
        cos = cosines.get(nid)
        return (2, dist[nid], -cos if cos is not None else np.inf)

    kept = _cap(dist, rank, spec, order)
    return _result(kg, kept, spec, "document", len(dist))


def k_hop(
    kg: KnowledgeGraph,
    node_ids: Sequence[str],
    k: int,
    edge_types: Sequence[str] | None = None,
) -> list[str]:
    """Ids of the nodes within ``k`` hops of any given node, edges walked either way.

    Parameters
    ----------
    kg : KnowledgeGraph
    node_ids : sequence of str
        Start nodes; they are in the result (distance 0).
    k : int
        Largest distance, at least 0.
    edge_types : sequence of str, optional
        Walk only edges of these types; ``None`` or empty walks every type.

    Returns
    -------
    list of str
        Ordered by distance, then by the insertion order of nodes in the graph.

    Raises
    ------
    NotFoundError
        An unknown start node.
    InputError
        Negative ``k`` or an unknown edge type.

    Examples
    --------
    >>> from taskloom.tools.graph.model import Edge, GraphMeta, Node
    >>> kg = KnowledgeGraph(GraphMeta(id="g"))
    >>> for n in "abcd":
    ...     kg.add_node(Node(id=n, type="paragraph"))
    >>> kg.add_edge(Edge(source="a", target="b", type="next"))
    >>> kg.add_edge(Edge(source="c", target="b", type="next"))
    >>> kg.add_edge(Edge(source="c", target="d", type="refers_to"))
    >>> k_hop(kg, ["b"], 1), k_hop(kg, ["b"], 2), k_hop(kg, ["b"], 2, ["next"])
    (['b', 'a', 'c'], ['b', 'a', 'c', 'd'], ['b', 'a', 'c'])
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InputError(f"k must be a non-negative integer, got {k!r}")
    for nid in node_ids:
        _require_node(kg, nid)
    types = _edge_type_filter(edge_types)
    return _order_by_distance(kg, _bfs_distances(kg, node_ids, k, types, "both"))


# --- internals ----------------------------------------------------------------------


def _sample_web(
    kg: KnowledgeGraph,
    spec: SampleSpec,
    allowed: frozenset[str] | None,
    cosines: dict[str, float],
) -> KnowledgeGraph:
    seeds = list(dict.fromkeys(spec.seed_nodes or []))
    for nid in seeds:
        _require_node(kg, nid)
    reached = _bfs_distances(kg, seeds, spec.k_hops)
    dist = {n: d for n, d in reached.items() if d == 0 or allowed is None or n in allowed}
    position = {n: i for i, n in enumerate(seeds)}
    order = _node_order(kg, spec.seed)

    def rank(nid: str) -> tuple[int, int, float]:
        if nid in position:
            return (0, 0, float(position[nid]))
        cos = cosines.get(nid)
        return (1, dist[nid], -cos if cos is not None else np.inf)

    kept = _cap(dist, rank, spec, order)
    return _result(kg, kept, spec, "web", len(dist))


def _type_filter(kg: KnowledgeGraph, types: list[str] | None, field: str) -> frozenset[str] | None:
    """Validate node-type names; the ids of the nodes of those types (``None``: no filter)."""
    if types is None:
        return None
    valid = {t.value for t in NodeType}
    unknown = [t for t in map(str, types) if t not in valid]
    if unknown:
        raise InputError(
            f"unknown node type(s) {unknown} in {field}; valid node types are: "
            f"{', '.join(t.value for t in NodeType)}"
        )
    wanted = set(map(str, types))
    return frozenset(n for n, data in kg.g.nodes(data=True) if str(data.get("type")) in wanted)


def _struct_match(
    kg: KnowledgeGraph,
    nid: str,
    struct_nodes: frozenset[str] | None,
    required: frozenset[str] | None,
) -> bool:
    """StructMatch(v, g): a struct type and, if required, an incident edge of a required type."""
    if struct_nodes is None and required is None:
        return False
    if struct_nodes is not None and nid not in struct_nodes:
        return False
    if required is None:
        return True
    return any(k in required for _, _, k in kg.g.out_edges(nid, keys=True)) or any(
        k in required for _, _, k in kg.g.in_edges(nid, keys=True)
    )


def _cosines(
    objective: np.ndarray | None, vectors: Mapping[str, np.ndarray], kg: KnowledgeGraph
) -> dict[str, float]:
    """Cosine of each node's vector to the objective (zero vectors give 0.0)."""
    if objective is None:
        return {}
    h_g = np.asarray(objective, dtype=np.float64).ravel()
    norm_g = float(np.linalg.norm(h_g))
    out: dict[str, float] = {}
    for nid in kg.g:
        vec = vectors.get(nid)
        if vec is None:
            continue
        h_v = np.asarray(vec, dtype=np.float64).ravel()
        if h_v.shape != h_g.shape:
            raise InputError(
                f"vector of node {nid!r} has dimension {h_v.size}, the objective vector "
                f"{h_g.size}; embed both with the same embedder"
            )
        denom = norm_g * float(np.linalg.norm(h_v))
        if not np.isfinite(denom):
            raise InputError(f"vector of node {nid!r} or the objective vector is not finite")
        out[nid] = float(h_v @ h_g) / denom if denom > 0.0 else 0.0
    return out


def _node_order(kg: KnowledgeGraph, seed: int) -> dict[str, int]:
    """Rank of each node in a permutation of ``kg``'s nodes drawn from ``default_rng(seed)``."""
    perm = np.random.default_rng(seed).permutation(kg.g.number_of_nodes())
    return dict(zip(kg.g, perm.tolist()))


def _cap(
    dist: Mapping[str, int],
    rank: Callable[[str], tuple[int, int, float]],
    spec: SampleSpec,
    order: dict[str, int],
) -> list[str]:
    """The ``spec.max_nodes`` best candidates by rank, ties by the seeded permutation."""
    return sorted(dist, key=lambda n: (rank(n), order[n]))[: spec.max_nodes]


def _result(
    kg: KnowledgeGraph, kept: list[str], spec: SampleSpec, mode: str, candidates: int
) -> KnowledgeGraph:
    sub = induced_subgraph(kg, kept, id_suffix="sample")
    sub.meta.stats = {
        "sampled_from": kg.id,
        "mode": mode,
        "spec": spec.model_dump(mode="json"),
        "candidates": candidates,
        "nodes": sub.g.number_of_nodes(),
        "edges": sub.g.number_of_edges(),
    }
    return sub


def web_seeds(kg: KnowledgeGraph, seed: int = 0, count: int = 1, types: Sequence[str] = WEB_SEED_TYPES) -> list[str]:
    """Pick ``count`` task seed nodes (buttons, forms, search boxes, links) with a seeded RNG.

    Candidates are taken in graph order and chosen with ``numpy.random.default_rng(seed)``,
    so the same graph and seed give the same seeds.

    Raises
    ------
    InputError
        The graph has no node of the seed types.
    """
    candidates = [n.id for n in kg.nodes(*types)]
    if not candidates:
        raise InputError(f"graph {kg.id!r} has no {', '.join(types)} nodes to seed a web sample from")
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(candidates), size=min(count, len(candidates)), replace=False)
    return [candidates[int(i)] for i in sorted(picked)]
