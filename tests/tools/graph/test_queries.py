"""Tests of taskloom.tools.graph.queries on small hand-built graphs."""

from __future__ import annotations

import pytest

from taskloom.tools.errors import InputError, NotFoundError
from taskloom.tools.graph.model import Edge, EdgeType, GraphMeta, KnowledgeGraph, Node, Source
from taskloom.tools.graph.queries import (
    NoPathError,
    get_node,
    graph_stats,
    induced_subgraph,
    neighbors,
    shortest_path,
)


def make_graph(
    nodes: list[tuple[str, str]], edges: list[tuple[str, str, str]], gid: str = "g"
) -> KnowledgeGraph:
    kg = KnowledgeGraph(GraphMeta(id=gid))
    for nid, ntype in nodes:
        kg.add_node(Node(id=nid, type=ntype, text=f"text of {nid}"))
    for u, v, etype in edges:
        kg.add_edge(Edge(source=u, target=v, type=etype))
    return kg


@pytest.fixture
def chain() -> KnowledgeGraph:
    # Insertion order z, y, x, w, v is deliberately not alphabetical.
    #   z -next-> y -next-> x -next-> w ;  v -refers_to-> y
    return make_graph(
        [
            ("z", "paragraph"),
            ("y", "paragraph"),
            ("x", "paragraph"),
            ("w", "table"),
            ("v", "heading"),
        ],
        [("z", "y", "next"), ("y", "x", "next"), ("x", "w", "next"), ("v", "y", "refers_to")],
    )


def ids(result: list[tuple[Node, int]]) -> list[tuple[str, int]]:
    return [(n.id, d) for n, d in result]


# --- graph_stats / get_node ---------------------------------------------------------


def test_graph_stats_counts_types_pages_sources() -> None:
    kg = KnowledgeGraph(GraphMeta(id="g", sources=["b.pdf"]))
    kg.add_node(Node(id="p1", type="paragraph", source=Source(file="a.pdf", page=1)))
    kg.add_node(Node(id="p2", type="paragraph", source=Source(file="a.pdf", page=1)))
    kg.add_node(Node(id="t1", type="table", source=Source(file="a.pdf", page=2)))
    kg.add_node(Node(id="h1", type="heading", source=Source(file="b.pdf", page=1)))
    kg.add_node(Node(id="e1", type="entity"))
    kg.add_edge(Edge(source="p1", target="p2", type="next"))
    kg.add_edge(Edge(source="p2", target="t1", type="next"))
    kg.add_edge(Edge(source="p2", target="t1", type="refers_to"))
    kg.add_edge(Edge(source="p1", target="e1", type="mentions"))
    stats = graph_stats(kg)
    assert stats == {
        "nodes": 5,
        "edges": 4,
        "node_types": {"entity": 1, "heading": 1, "paragraph": 2, "table": 1},
        "edge_types": {"mentions": 1, "next": 2, "refers_to": 1},
        "pages": 3,  # (a.pdf, 1), (a.pdf, 2), (b.pdf, 1)
        "sources": ["b.pdf", "a.pdf"],
    }
    assert list(stats["node_types"]) == sorted(stats["node_types"])


def test_graph_stats_web_pages_and_empty_graph() -> None:
    kg = KnowledgeGraph(GraphMeta(id="w", kind="web"))
    kg.add_node(Node(id="p", type="page", source=Source(url="http://x/a")))
    kg.add_node(Node(id="b", type="button", source=Source(url="http://x/a")))
    kg.add_node(Node(id="q", type="page", source=Source(url="http://x/b")))
    assert graph_stats(kg)["pages"] == 2
    empty = graph_stats(KnowledgeGraph(GraphMeta(id="e")))
    assert empty == {
        "nodes": 0,
        "edges": 0,
        "node_types": {},
        "edge_types": {},
        "pages": 0,
        "sources": [],
    }


def test_get_node_returns_model(chain: KnowledgeGraph) -> None:
    node = get_node(chain, "w")
    assert node.id == "w" and node.type.value == "table" and node.text == "text of w"


def test_get_node_unknown_names_id_and_suggests_tools(chain: KnowledgeGraph) -> None:
    with pytest.raises(NotFoundError) as err:
        get_node(chain, "nope")
    msg = str(err.value)
    assert "'nope'" in msg and "graph_search" in msg and "graph_stats" in msg


# --- neighbors ----------------------------------------------------------------------


def test_neighbors_both_directions_insertion_order(chain: KnowledgeGraph) -> None:
    assert ids(neighbors(chain, "y")) == [("z", 1), ("x", 1), ("v", 1)]
    assert ids(neighbors(chain, "y", hops=2)) == [("z", 1), ("x", 1), ("v", 1), ("w", 2)]


def test_neighbors_distance_is_shortest(chain: KnowledgeGraph) -> None:
    assert ids(neighbors(chain, "z", hops=3)) == [("y", 1), ("x", 2), ("v", 2), ("w", 3)]


def test_neighbors_direction(chain: KnowledgeGraph) -> None:
    assert ids(neighbors(chain, "y", hops=2, direction="out")) == [("x", 1), ("w", 2)]
    assert ids(neighbors(chain, "y", hops=2, direction="in")) == [("z", 1), ("v", 1)]
    assert ids(neighbors(chain, "w", hops=5, direction="out")) == []


def test_neighbors_edge_type_filter(chain: KnowledgeGraph) -> None:
    assert ids(neighbors(chain, "y", hops=3, edge_types=["refers_to"])) == [("v", 1)]
    assert ids(neighbors(chain, "v", hops=3, edge_types=["next"])) == []
    both = neighbors(chain, "v", hops=2, edge_types=[EdgeType.REFERS_TO, EdgeType.NEXT])
    assert ids(both) == [("y", 1), ("z", 2), ("x", 2)]
    assert ids(neighbors(chain, "y", edge_types=[])) == ids(neighbors(chain, "y"))


def test_neighbors_excludes_start_in_cycle() -> None:
    kg = make_graph(
        [("a", "paragraph"), ("b", "paragraph"), ("c", "paragraph")],
        [("a", "b", "next"), ("b", "c", "next"), ("c", "a", "refers_to")],
    )
    assert ids(neighbors(kg, "a", hops=5)) == [("b", 1), ("c", 1)]
    assert ids(neighbors(kg, "a", hops=5, direction="out")) == [("b", 1), ("c", 2)]


def test_neighbors_limit_keeps_nearest(chain: KnowledgeGraph) -> None:
    assert ids(neighbors(chain, "z", hops=3, limit=2)) == [("y", 1), ("x", 2)]


def test_neighbors_returns_nodes(chain: KnowledgeGraph) -> None:
    node, dist = neighbors(chain, "x", direction="out")[0]
    assert isinstance(node, Node) and node.id == "w" and node.type.value == "table" and dist == 1


@pytest.mark.parametrize("hops", [0, 6, -1])
def test_neighbors_hops_out_of_range(chain: KnowledgeGraph, hops: int) -> None:
    with pytest.raises(InputError, match="hops"):
        neighbors(chain, "y", hops=hops)


def test_neighbors_input_errors(chain: KnowledgeGraph) -> None:
    with pytest.raises(InputError) as err:
        neighbors(chain, "y", edge_types=["next", "bogus"])
    assert "bogus" in str(err.value)
    for valid in ("next", "contains", "navigates_to", "filters"):
        assert valid in str(err.value)
    with pytest.raises(InputError, match="direction"):
        neighbors(chain, "y", direction="sideways")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="limit"):
        neighbors(chain, "y", limit=0)
    with pytest.raises(NotFoundError, match="'missing'"):
        neighbors(chain, "missing")


# --- shortest_path ------------------------------------------------------------------


def triples(path: list[Edge]) -> list[tuple[str, str, str]]:
    return [(e.source, e.target, e.type.value) for e in path]


def test_shortest_path_directed(chain: KnowledgeGraph) -> None:
    path = shortest_path(chain, "z", "w", directed=True)
    assert triples(path) == [("z", "y", "next"), ("y", "x", "next"), ("x", "w", "next")]
    assert all(isinstance(e, Edge) for e in path)


def test_shortest_path_undirected_reports_stored_direction(chain: KnowledgeGraph) -> None:
    assert triples(shortest_path(chain, "w", "v")) == [
        ("x", "w", "next"),
        ("y", "x", "next"),
        ("v", "y", "refers_to"),
    ]


def test_shortest_path_no_directed_path(chain: KnowledgeGraph) -> None:
    with pytest.raises(NoPathError) as err:
        shortest_path(chain, "w", "z", directed=True)
    assert isinstance(err.value, NotFoundError)
    assert "'w'" in str(err.value) and "'z'" in str(err.value)


def test_shortest_path_edge_type_filter(chain: KnowledgeGraph) -> None:
    with pytest.raises(NoPathError):
        shortest_path(chain, "z", "v", edge_types=["next"])
    assert triples(shortest_path(chain, "z", "v", edge_types=["next", "refers_to"])) == [
        ("z", "y", "next"),
        ("v", "y", "refers_to"),
    ]


def test_shortest_path_disconnected() -> None:
    kg = make_graph([("a", "paragraph"), ("b", "paragraph")], [])
    with pytest.raises(NoPathError):
        shortest_path(kg, "a", "b")


def test_shortest_path_tie_broken_by_insertion_order() -> None:
    # Two paths of length 2: s-a-t and s-b-t; b was inserted before a.
    kg = make_graph(
        [("s", "paragraph"), ("t", "paragraph"), ("b", "paragraph"), ("a", "paragraph")],
        [("s", "a", "next"), ("a", "t", "next"), ("s", "b", "next"), ("b", "t", "next")],
    )
    assert triples(shortest_path(kg, "s", "t")) == [("s", "b", "next"), ("b", "t", "next")]
    assert triples(shortest_path(kg, "t", "s")) == [("b", "t", "next"), ("s", "b", "next")]


def test_shortest_path_parallel_and_reverse_edges() -> None:
    kg = make_graph(
        [("u", "paragraph"), ("v", "table")],
        [("v", "u", "caption_of"), ("u", "v", "next"), ("u", "v", "refers_to")],
    )
    # Forward edges first, in insertion order.
    assert triples(shortest_path(kg, "u", "v")) == [("u", "v", "next")]
    assert triples(shortest_path(kg, "u", "v", edge_types=["refers_to"])) == [
        ("u", "v", "refers_to")
    ]
    assert triples(shortest_path(kg, "u", "v", edge_types=["caption_of"])) == [
        ("v", "u", "caption_of")
    ]
    with pytest.raises(NoPathError):
        shortest_path(kg, "u", "v", edge_types=["caption_of"], directed=True)


def test_shortest_path_same_node_and_unknown(chain: KnowledgeGraph) -> None:
    assert shortest_path(chain, "x", "x") == []
    with pytest.raises(NotFoundError) as err:
        shortest_path(chain, "x", "ghost")
    assert not isinstance(err.value, NoPathError)
    with pytest.raises(NotFoundError):
        shortest_path(chain, "ghost", "x")
    with pytest.raises(InputError):
        shortest_path(chain, "x", "y", edge_types=["bogus"])


# --- induced_subgraph ---------------------------------------------------------------


def test_induced_subgraph_keeps_order_and_edges() -> None:
    kg = make_graph(
        [("a", "paragraph"), ("b", "paragraph"), ("c", "table"), ("d", "caption")],
        [("a", "b", "next"), ("b", "c", "next"), ("b", "c", "refers_to"), ("d", "c", "caption_of")],
    )
    kg.meta.stats = {"nodes": 4}
    sub = induced_subgraph(kg, ["c", "b", "b", "d"])
    assert list(sub.g) == ["b", "c", "d"]
    assert triples(list(sub.edges())) == [
        ("b", "c", "next"),
        ("b", "c", "refers_to"),
        ("d", "c", "caption_of"),
    ]
    assert sub.id == "g:sub" and sub.meta.stats == {} and kg.meta.stats == {"nodes": 4}
    assert sub.node("c") == kg.node("c")


def test_induced_subgraph_is_a_copy() -> None:
    kg = make_graph([("a", "paragraph"), ("b", "paragraph")], [("a", "b", "next")])
    sub = induced_subgraph(kg, ["a", "b"], id_suffix="x")
    sub.g.nodes["a"]["attrs"]["k"] = 1
    sub.g.add_node("extra", type="paragraph")
    assert kg.node("a").attrs == {} and "extra" not in kg and sub.id == "g:x"


def test_induced_subgraph_unknown_node() -> None:
    kg = make_graph([("a", "paragraph")], [])
    with pytest.raises(NotFoundError, match="'zz'"):
        induced_subgraph(kg, ["a", "zz"])
    assert len(induced_subgraph(kg, [])) == 0
