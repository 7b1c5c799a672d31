"""Tests of taskloom.tools.graph.store: JSON graph files in a workspace."""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx
import pytest

from taskloom.tools.errors import InputError, NotFoundError, TaskloomError
from taskloom.tools.graph import store as store_mod
from taskloom.tools.graph.model import (
    Edge,
    EdgeType,
    GraphMeta,
    KnowledgeGraph,
    Node,
    NodeType,
    Source,
)
from taskloom.tools.graph.store import CorruptGraphError, GraphStore, make_graph_id
from taskloom.tools.workspace import Workspace


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    store_mod._clear_cache()


@pytest.fixture
def gs(tmp_path: Path) -> GraphStore:
    return GraphStore(Workspace(tmp_path / "ws"))


def build(
    graph_id: str, created_at: str = "2024-01-01T00:00:00+00:00", n: int = 3
) -> KnowledgeGraph:
    meta = GraphMeta(id=graph_id, name=f"Doc {graph_id}", sources=["a.pdf"], embedder="hashing",
                     embedding_dim=8, created_at=created_at, stats={"pages": 2})
    kg = KnowledgeGraph(meta)
    src = Source(file="a.pdf", page=1, bbox=(0, 1, 2, 3))
    kg.add_node(Node(id="doc", type=NodeType.DOCUMENT, text="Title"))
    for i in range(n):
        kg.add_node(Node(id=f"p{i}", type=NodeType.PARAGRAPH, text=f"para {i} — ünïcode",
                         attrs={"i": i, "tags": ["x"]}, source=src))
        kg.add_edge(Edge(source="doc", target=f"p{i}", type=EdgeType.CONTAINS))
        if i:
            kg.add_edge(Edge(source=f"p{i - 1}", target=f"p{i}", type=EdgeType.NEXT, weight=0.5))
            kg.add_edge(Edge(source=f"p{i - 1}", target=f"p{i}",
                             type=EdgeType.SEMANTIC_SIMILAR, weight=0.9))
    return kg


def test_round_trip(gs: GraphStore) -> None:
    kg = build("g1")
    path = gs.save(kg)
    assert path == gs.workspace.graphs / "g1.json"
    back = gs.load("g1")
    assert back.meta == kg.meta
    assert list(back.nodes()) == list(kg.nodes())
    assert list(back.edges()) == list(kg.edges())
    assert back.node("p1").source.bbox == (0, 1, 2, 3)


def test_cache_shared_and_invalidated(gs: GraphStore) -> None:
    gs.save(build("g1"))
    a, b = gs.load("g1"), gs.load("g1")
    assert a is b
    assert nx.is_frozen(a.g)
    with pytest.raises(nx.NetworkXError):
        a.add_node(Node(id="zz", type=NodeType.CHUNK))
    mine = gs.load("g1", mutable=True)
    assert mine is not a and not nx.is_frozen(mine.g)
    mine.add_node(Node(id="zz", type=NodeType.CHUNK))
    gs.save(mine)
    again = gs.load("g1")
    assert again is not a and "zz" in again


def test_cache_sees_external_rewrite(gs: GraphStore) -> None:
    gs.save(build("g1", n=2))
    assert len(gs.load("g1")) == 3
    other = GraphStore(Workspace(gs.workspace.root))
    other.save(build("g1", n=5))
    assert len(gs.load("g1")) == 6


def test_list_sorted_by_created_at_then_id(gs: GraphStore) -> None:
    gs.save(build("b", created_at="2024-01-02T00:00:00+00:00"))
    gs.save(build("a", created_at="2024-01-02T00:00:00+00:00"))
    gs.save(build("z", created_at="2023-12-31T00:00:00+00:00"))
    metas = gs.list()
    assert [m.id for m in metas] == ["z", "a", "b"]
    assert metas[0] == build("z", created_at="2023-12-31T00:00:00+00:00").meta
    gs.save(build("z", created_at="2025-01-01T00:00:00+00:00"))  # rewrite updates listing
    assert [m.id for m in gs.list()] == ["a", "b", "z"]


def test_list_reads_non_save_layout_and_skips_corrupt(gs: GraphStore) -> None:
    import json

    kg = build("odd")
    data = kg.to_dict()
    reordered = {"nodes": data["nodes"], "edges": data["edges"], "graph": data["graph"],
                 "directed": True, "multigraph": True}
    (gs.workspace.graphs / "odd.json").write_text(json.dumps(reordered), encoding="utf-8")
    (gs.workspace.graphs / "bad.json").write_text("{not json", encoding="utf-8")
    assert [m.id for m in gs.list()] == ["odd"]
    assert gs.load("odd").meta == kg.meta


def test_exists_and_delete(gs: GraphStore) -> None:
    gs.save(build("g1"))
    assert gs.exists("g1") and not gs.exists("g2")
    gs.load("g1")
    gs.delete("g1")
    assert not gs.exists("g1")
    assert gs.list() == []
    with pytest.raises(NotFoundError):
        gs.load("g1")
    with pytest.raises(NotFoundError):
        gs.delete("g1")


def test_unknown_id_message(gs: GraphStore) -> None:
    for i in range(12):
        gs.save(build(f"g{i:02d}"))
    with pytest.raises(NotFoundError) as info:
        gs.load("nope")
    msg = str(info.value)
    assert "'nope'" in msg and "graph_list" in msg
    assert "g00" in msg and "g09" in msg and "g10" not in msg and "12 in all" in msg


def test_unknown_id_empty_store(gs: GraphStore) -> None:
    with pytest.raises(NotFoundError, match="none"):
        gs.load("x")


@pytest.mark.parametrize(
    "bad", ["../etc/passwd", "a/b", "", ".hidden", "-x", "a" * 129, "a b", "é"]
)
def test_bad_id_rejected(gs: GraphStore, bad: str) -> None:
    with pytest.raises(InputError):
        gs.load(bad)
    with pytest.raises(InputError):
        gs.exists(bad)
    with pytest.raises(InputError):
        gs.save(KnowledgeGraph(GraphMeta(id=bad)))


@pytest.mark.parametrize("text", ["{not json", '["a list"]', '{"graph": {"id": 5}}', "\xff\xfe"])
def test_corrupt_file(gs: GraphStore, text: str) -> None:
    path = gs.workspace.graphs / "broken.json"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(CorruptGraphError) as info:
        gs.load("broken")
    assert isinstance(info.value, TaskloomError)
    assert str(path) in str(info.value)


def test_atomic_no_temp_files(gs: GraphStore) -> None:
    for i in range(3):
        gs.save(build("g1", n=i + 1))
    assert sorted(os.listdir(gs.workspace.graphs)) == ["g1.json"]


def test_failed_save_keeps_old_file(gs: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    gs.save(build("g1", n=2))

    def boom(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        gs.save(build("g1", n=5))
    monkeypatch.undo()
    assert sorted(os.listdir(gs.workspace.graphs)) == ["g1.json"]
    assert len(gs.load("g1")) == 3


def test_make_graph_id() -> None:
    sha = "0123456789abcdef" * 4
    gid = make_graph_id("Annual Report 2024 (final).PDF", sha)
    assert gid == "annual-report-2024-final-pdf-01234567"
    assert make_graph_id("Annual Report 2024 (final).PDF", sha) == gid
    assert make_graph_id("Annual Report 2024 (final).PDF", "f" * 64) != gid
    assert make_graph_id("Café résumé", sha).startswith("cafe-resume-")
    assert make_graph_id("!!!", sha) == "graph-01234567"
    long = make_graph_id("x" * 100, sha)
    assert long == "x" * 40 + "-01234567"
    assert store_mod.GRAPH_ID_RE.fullmatch(make_graph_id("---a--" * 20, sha))
    with pytest.raises(InputError):
        make_graph_id("a", "not-hex")


def test_edges_into_and_from_list_what_a_scan_of_every_edge_lists_in_its_order() -> None:
    """``edges_into``/``edges_from`` read a node's own edges; the order is :meth:`edges`' (by source node), also after
    edges arrive in another order than their sources, and after a node is added and another removed."""
    kg = build("g1", n=0)
    for nid in ("form", "a", "b", "c"):
        kg.add_node(Node(id=nid, type=NodeType.PARAGRAPH, text=nid))
    for source in ("c", "a", "b"):  # edges into "form" arrive in another order than their source nodes
        kg.add_edge(Edge(source=source, target="form", type=EdgeType.REFERS_TO))
    kg.add_edge(Edge(source="b", target="form", type=EdgeType.CONTAINS))
    kg.add_edge(Edge(source="form", target="c", type=EdgeType.CONTAINS))
    kg.add_edge(Edge(source="form", target="a", type=EdgeType.CONTAINS))

    def scanned(target: str, *types: EdgeType) -> list[tuple[str, str, str]]:
        return [(e.source, e.target, e.type.value) for e in kg.edges(*types) if e.target == target]

    def read(edges: list[Edge]) -> list[tuple[str, str, str]]:
        return [(e.source, e.target, e.type.value) for e in edges]

    assert read(kg.edges_into("form", EdgeType.REFERS_TO)) == scanned("form", EdgeType.REFERS_TO) == [
        ("a", "form", "refers_to"), ("b", "form", "refers_to"), ("c", "form", "refers_to")]
    assert read(kg.edges_into("form")) == scanned("form")
    assert read(kg.edges_from("form", EdgeType.CONTAINS)) == [(e.source, e.target, e.type.value) for e in kg.edges(EdgeType.CONTAINS) if e.source == "form"]
    kg.add_node(Node(id="d", type=NodeType.PARAGRAPH, text="d"))
    kg.add_edge(Edge(source="d", target="form", type=EdgeType.REFERS_TO))
    kg.g.remove_node("b")
    assert read(kg.edges_into("form", EdgeType.REFERS_TO)) == scanned("form", EdgeType.REFERS_TO) == [
        ("a", "form", "refers_to"), ("c", "form", "refers_to"), ("d", "form", "refers_to")]
