"""Tests of taskloom.tools.graph.sampling (Graph2Eval Algorithm 1, k-hop expansion)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from taskloom.tools.errors import InputError, NotFoundError
from taskloom.tools.graph.model import Edge, GraphMeta, KnowledgeGraph, Node
from taskloom.tools.graph.sampling import SampleSpec, k_hop, sample_document_subgraph

G = np.array([1.0, 0.0])  # the objective vector h_g


def make_graph(
    nodes: list[tuple[str, str]], edges: list[tuple[str, str, str]], gid: str = "doc"
) -> KnowledgeGraph:
    kg = KnowledgeGraph(GraphMeta(id=gid))
    for nid, ntype in nodes:
        kg.add_node(Node(id=nid, type=ntype))
    for u, v, etype in edges:
        kg.add_edge(Edge(source=u, target=v, type=etype))
    return kg


def vec(cos: float) -> np.ndarray:
    """A 2-d vector whose cosine to G is ``cos``."""
    return np.array([cos, np.sqrt(max(0.0, 1.0 - cos * cos))])


@pytest.fixture
def doc() -> KnowledgeGraph:
    #  h1 -next-> p1 -next-> p2 -next-> p3 -next-> p4
    #  p2 -refers_to-> t1 <-caption_of- c1 ;  t2 (no caption) ;  p4 -mentions-> e1
    return make_graph(
        [
            ("h1", "heading"),
            ("p1", "paragraph"),
            ("p2", "paragraph"),
            ("p3", "paragraph"),
            ("p4", "paragraph"),
            ("t1", "table"),
            ("c1", "caption"),
            ("t2", "table"),
            ("e1", "entity"),
        ],
        [
            ("h1", "p1", "next"),
            ("p1", "p2", "next"),
            ("p2", "p3", "next"),
            ("p3", "p4", "next"),
            ("p2", "t1", "refers_to"),
            ("c1", "t1", "caption_of"),
            ("p4", "e1", "mentions"),
        ],
    )


def sample(
    kg: KnowledgeGraph, vectors: dict[str, np.ndarray] | None = None, **spec: object
) -> list[str]:
    sub = sample_document_subgraph(
        kg, SampleSpec(**spec), G if vectors is not None else None, vectors or {}
    )
    return list(sub.g)


# --- document mode: V_g ----------------------------------------------------------------


def test_threshold_is_strict() -> None:
    kg = make_graph([("a", "paragraph"), ("b", "paragraph")], [])
    vectors = {"a": np.array([3.0, 4.0]), "b": np.array([0.0, 1.0])}  # cos(a, G) == 0.6 exactly
    assert sample(kg, vectors, tau=0.6, k_hops=0) == []
    assert sample(kg, vectors, tau=0.59, k_hops=0) == ["a"]
    assert sample(kg, vectors, tau=-1.0, k_hops=0) == ["a", "b"]  # cos(b) = 0 > -1


def test_nodes_without_vectors_do_not_match_by_cosine(doc: KnowledgeGraph) -> None:
    assert sample(doc, {"p3": vec(0.9)}, tau=0.5, k_hops=0) == ["p3"]


def test_node_types_filter(doc: KnowledgeGraph) -> None:
    vectors = {"h1": vec(0.95), "p1": vec(0.9), "t1": vec(0.9)}
    assert sample(doc, vectors, tau=0.5, k_hops=0) == ["h1", "p1", "t1"]
    assert sample(doc, vectors, tau=0.5, k_hops=0, node_types=["paragraph"]) == ["p1"]
    # StructMatch is also restricted to NodeTypeSet.
    assert sample(doc, None, k_hops=0, struct_types=["table"], node_types=["paragraph"]) == []


def test_struct_match_by_type(doc: KnowledgeGraph) -> None:
    assert sample(doc, None, k_hops=0, struct_types=["table"]) == ["t1", "t2"]


def test_struct_match_requires_incident_edge_type(doc: KnowledgeGraph) -> None:
    # t1 has an incoming caption_of edge, t2 has none.
    assert sample(
        doc, None, k_hops=0, struct_types=["table"], required_edge_types=["caption_of"]
    ) == ["t1"]
    # Without struct_types only the edge test applies (either endpoint).
    assert sample(doc, None, k_hops=0, required_edge_types=["caption_of"]) == ["t1", "c1"]
    assert sample(doc, None, k_hops=0, required_edge_types=["cites"]) == []


def test_cosine_or_struct_match(doc: KnowledgeGraph) -> None:
    assert sample(doc, {"p1": vec(0.9)}, tau=0.7, k_hops=0, struct_types=["entity"]) == ["p1", "e1"]


# --- document mode: expansion and cap ----------------------------------------------------


def test_k_hop_expansion(doc: KnowledgeGraph) -> None:
    vectors = {"p2": vec(0.9)}
    assert sample(doc, vectors, k_hops=0) == ["p2"]
    assert sample(doc, vectors, k_hops=1) == ["p1", "p2", "p3", "t1"]
    assert sample(doc, vectors, k_hops=2) == ["h1", "p1", "p2", "p3", "p4", "t1", "c1"]


def test_expansion_stays_within_node_types(doc: KnowledgeGraph) -> None:
    vectors = {"p3": vec(0.9)}
    spec = {"k_hops": 3, "node_types": ["paragraph", "entity"]}
    # t1 is not a paragraph, so c1 (behind it) is unreachable as well as excluded.
    assert sample(doc, vectors, **spec) == ["p1", "p2", "p3", "p4", "e1"]
    kg = make_graph(
        [("p1", "paragraph"), ("h", "heading"), ("p2", "paragraph")],
        [("p1", "h", "next"), ("h", "p2", "next")],
    )
    assert sample(kg, {"p1": vec(0.9)}, k_hops=2, node_types=["paragraph"]) == ["p1"]
    assert sample(kg, {"p1": vec(0.9)}, k_hops=2) == ["p1", "h", "p2"]


def test_sample_edges_are_induced(doc: KnowledgeGraph) -> None:
    sub = sample_document_subgraph(doc, SampleSpec(k_hops=1), G, {"p2": vec(0.9)})
    assert [(e.source, e.target, e.type.value) for e in sub.edges()] == [
        ("p1", "p2", "next"),
        ("p2", "p3", "next"),
        ("p2", "t1", "refers_to"),
    ]
    assert sub.id == "doc:sample"
    assert sub.meta.stats["mode"] == "document" and sub.meta.stats["sampled_from"] == "doc"
    assert sub.meta.stats["candidates"] == 4 and sub.meta.stats["spec"]["k_hops"] == 1
    assert doc.g.number_of_nodes() == 9  # the input is untouched


def test_max_nodes_cap_order(doc: KnowledgeGraph) -> None:
    # Ranks: p3 (cos .95) > t2 (cos .8) > struct match e1 > expansions p2, p4, t1... by distance.
    vectors = {"p3": vec(0.95), "t2": vec(0.8), "p1": vec(0.1)}
    spec = {"tau": 0.5, "k_hops": 2, "struct_types": ["entity"]}
    full = sample(doc, vectors, **spec, max_nodes=30)
    assert full == ["p1", "p2", "p3", "p4", "t1", "t2", "e1"]  # h1, c1 are 3 hops away
    assert sample(doc, vectors, **spec, max_nodes=1) == ["p3"]
    assert sample(doc, vectors, **spec, max_nodes=2) == ["p3", "t2"]
    assert sample(doc, vectors, **spec, max_nodes=3) == ["p3", "t2", "e1"]  # in kg order
    # Distance 1 of p3/e1: p2, p4 (tied, no vectors) come before distance-2 nodes.
    assert sample(doc, vectors, **spec, max_nodes=5) == ["p2", "p3", "p4", "t2", "e1"]
    # Distance 2: p1 has a vector (cos .1) so it beats t1 (no vector).
    assert sample(doc, vectors, **spec, max_nodes=6) == ["p1", "p2", "p3", "p4", "t2", "e1"]


def test_same_seed_same_result_and_seeds_break_ties() -> None:
    kg = make_graph([(f"t{i}", "table") for i in range(12)], [])
    results = {
        seed: sample(kg, None, k_hops=0, struct_types=["table"], max_nodes=3, seed=seed)
        for seed in range(10)
    }
    for seed, result in results.items():
        assert len(result) == 3
        assert sample(kg, None, k_hops=0, struct_types=["table"], max_nodes=3, seed=seed) == result
    assert len({tuple(r) for r in results.values()}) > 1


def test_seed_does_not_override_scores(doc: KnowledgeGraph) -> None:
    vectors = {"p1": vec(0.9), "p2": vec(0.8), "p3": vec(0.75)}
    for seed in range(5):
        assert sample(doc, vectors, k_hops=0, max_nodes=2, seed=seed) == ["p1", "p2"]


# --- web mode ----------------------------------------------------------------------------


@pytest.fixture
def web() -> KnowledgeGraph:
    #  home -contains-> nav -contains-> link1 -navigates_to-> search ;
    #  search -contains-> box -fills-> form ; btn -submits-> form ; form -opens-> toast
    return make_graph(
        [
            ("home", "page"),
            ("nav", "menu"),
            ("link1", "link"),
            ("search", "page"),
            ("box", "search_box"),
            ("form", "form"),
            ("btn", "button"),
            ("toast", "toast"),
        ],
        [
            ("home", "nav", "contains"),
            ("nav", "link1", "contains"),
            ("link1", "search", "navigates_to"),
            ("search", "box", "contains"),
            ("box", "form", "fills"),
            ("btn", "form", "submits"),
            ("form", "toast", "opens"),
        ],
        gid="site",
    )


def test_web_mode_seeds_and_k_hop_neighbors(web: KnowledgeGraph) -> None:
    assert sample(web, None, seed_nodes=["form"], k_hops=1) == ["box", "form", "btn", "toast"]
    assert sample(web, None, seed_nodes=["form"], k_hops=0) == ["form"]
    # Neighbours are filtered by node_types; the walk passes through other types.
    got = sample(web, None, seed_nodes=["form"], k_hops=2, node_types=["page", "button"])
    assert got == ["search", "form", "btn"]  # seed kept although 'form' is not listed
    sub = sample_document_subgraph(web, SampleSpec(seed_nodes=["form"], k_hops=1), None, {})
    assert sub.meta.stats["mode"] == "web" and sub.g.number_of_edges() == 3


def test_web_mode_cap_keeps_seeds_first(web: KnowledgeGraph) -> None:
    spec = {"seed_nodes": ["toast", "home"], "k_hops": 2}
    assert sample(web, None, **spec, max_nodes=1) == ["toast"]  # seeds in the given order
    assert sample(web, None, **spec, max_nodes=2) == ["home", "toast"]
    three = sample(web, None, **spec, max_nodes=3)
    assert set(three) - {"home", "toast"} <= {"nav", "form"}  # a distance-1 node


def test_web_mode_unknown_seed(web: KnowledgeGraph) -> None:
    with pytest.raises(NotFoundError, match="'nowhere'"):
        sample(web, None, seed_nodes=["nowhere"])


# --- errors and spec validation ----------------------------------------------------------


def test_sample_input_errors(doc: KnowledgeGraph) -> None:
    with pytest.raises(InputError, match="nothing to match"):
        sample(doc, None)
    with pytest.raises(InputError, match="bogus"):
        sample(doc, {}, node_types=["bogus"])
    with pytest.raises(InputError, match="struct_types"):
        sample(doc, None, struct_types=["tabel"])
    with pytest.raises(InputError, match="caption_off"):
        sample(doc, None, struct_types=["table"], required_edge_types=["caption_off"])
    with pytest.raises(InputError, match="dimension"):
        sample_document_subgraph(doc, SampleSpec(), G, {"p1": np.ones(3)})
    with pytest.raises(InputError, match="not finite"):
        sample_document_subgraph(doc, SampleSpec(), G, {"p1": np.array([np.nan, 1.0])})


@pytest.mark.parametrize(
    "bad",
    [
        {"k_hops": 6},
        {"k_hops": -1},
        {"max_nodes": 0},
        {"tau": 1.5},
        {"seed_nodes": []},
        {"seed": -1},
    ],
)
def test_spec_validation(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        SampleSpec(**bad)


def test_zero_vectors_have_cosine_zero() -> None:
    kg = make_graph([("a", "paragraph")], [])
    sub = sample_document_subgraph(
        kg, SampleSpec(tau=-0.5), np.zeros(2), {"a": np.array([1.0, 0.0])}
    )
    assert list(sub.g) == ["a"]


# --- k_hop ---------------------------------------------------------------------------------


def test_k_hop_order_and_filters(doc: KnowledgeGraph) -> None:
    assert k_hop(doc, ["p2"], 0) == ["p2"]
    assert k_hop(doc, ["p2"], 1) == ["p2", "p1", "p3", "t1"]
    assert k_hop(doc, ["p2"], 2) == ["p2", "p1", "p3", "t1", "h1", "p4", "c1"]
    assert k_hop(doc, ["p2"], 2, ["next"]) == ["p2", "p1", "p3", "h1", "p4"]
    assert k_hop(doc, ["t1", "p4", "t1"], 1) == ["p4", "t1", "p2", "p3", "c1", "e1"]
    assert k_hop(doc, ["t2"], 4) == ["t2"]


def test_k_hop_errors(doc: KnowledgeGraph) -> None:
    with pytest.raises(InputError):
        k_hop(doc, ["p1"], -1)
    with pytest.raises(InputError, match="bogus"):
        k_hop(doc, ["p1"], 1, ["bogus"])
    with pytest.raises(NotFoundError):
        k_hop(doc, ["ghost"], 1)
