"""Tests of taskloom.tools.graph.export (JSON and GraphML)."""

from __future__ import annotations

import io
import json

import networkx as nx
import pytest

from taskloom.tools.errors import InputError
from taskloom.tools.graph.export import export_graph
from taskloom.tools.graph.model import Edge, GraphMeta, KnowledgeGraph, Node, Source


@pytest.fixture
def kg() -> KnowledgeGraph:
    kg = KnowledgeGraph(GraphMeta(id="doc1", name="Report", sources=["a.pdf"], stats={"nodes": 4}))
    kg.add_node(
        Node(
            id="h1",
            type="heading",
            text="Intro",
            attrs={"level": 1},
            source=Source(file="a.pdf", page=1, bbox=(10.0, 20.0, 200.0, 40.5)),
        )
    )
    kg.add_node(
        Node(id="p1", type="paragraph", text="See Table 1.", source=Source(file="a.pdf", page=1))
    )
    kg.add_node(Node(id="t1", type="table", text="a | b", attrs={"rows": [["a", "b"]], "n": None}))
    kg.add_node(Node(id="e1", type="entity", text="ACME"))
    kg.add_edge(Edge(source="h1", target="p1", type="next"))
    kg.add_edge(Edge(source="p1", target="t1", type="next", weight=0.5))
    kg.add_edge(Edge(source="p1", target="t1", type="refers_to", attrs={"anchor": "Table 1"}))
    kg.add_edge(Edge(source="p1", target="e1", type="mentions"))
    return kg


def parse(text: str, **kwargs: object) -> nx.Graph:
    return nx.read_graphml(io.BytesIO(text.encode("utf-8")), **kwargs)


def test_json_is_to_dict_and_round_trips(kg: KnowledgeGraph) -> None:
    text = export_graph(kg, "json")
    data = json.loads(text)
    assert data == json.loads(json.dumps(kg.to_dict()))
    back = KnowledgeGraph.from_dict(data)
    assert back.meta == kg.meta
    assert list(back.nodes()) == list(kg.nodes())
    assert list(back.edges()) == list(kg.edges())


def test_graphml_round_trip_counts_and_types(kg: KnowledgeGraph) -> None:
    g = parse(export_graph(kg, "graphml"))
    # Parallel edges (p1 -> t1, next and refers_to) make the reader keep a multigraph.
    assert isinstance(g, nx.MultiDiGraph)
    assert list(g.nodes) == ["h1", "p1", "t1", "e1"]
    assert g.number_of_nodes() == 4 and g.number_of_edges() == 4
    assert {n: d["type"] for n, d in g.nodes(data=True)} == {
        "h1": "heading",
        "p1": "paragraph",
        "t1": "table",
        "e1": "entity",
    }
    assert sorted(g.edges(keys=True)) == [
        ("h1", "p1", "next"),
        ("p1", "e1", "mentions"),
        ("p1", "t1", "next"),
        ("p1", "t1", "refers_to"),
    ]
    assert all(d["type"] == k for _, _, k, d in g.edges(keys=True, data=True))
    assert g.edges["p1", "t1", "next"]["weight"] == 0.5
    assert json.loads(g.edges["p1", "t1", "refers_to"]["attrs"]) == {"anchor": "Table 1"}


def test_graphml_attributes_are_json_strings(kg: KnowledgeGraph) -> None:
    g = parse(export_graph(kg, "graphml"))
    h1 = g.nodes["h1"]
    assert h1["text"] == "Intro"
    assert json.loads(h1["attrs"]) == {"level": 1}
    source = json.loads(h1["source"])
    assert source["file"] == "a.pdf" and source["page"] == 1 and source["url"] is None
    assert source["bbox"] == [10.0, 20.0, 200.0, 40.5]
    assert json.loads(g.nodes["t1"]["attrs"]) == {"rows": [["a", "b"]], "n": None}
    assert g.graph["graph_id"] == "doc1" and g.graph["name"] == "Report"
    assert json.loads(g.graph["sources"]) == ["a.pdf"]
    assert json.loads(g.graph["stats"]) == {"nodes": 4}
    assert g.graph["embedder"] == "null" and g.graph["schema_version"] == 1


def test_graphml_keys_preserved_without_parallel_edges() -> None:
    kg = KnowledgeGraph(GraphMeta(id="small"))
    kg.add_node(Node(id="a", type="paragraph"))
    kg.add_node(Node(id="b", type="paragraph"))
    kg.add_edge(Edge(source="a", target="b", type="next"))
    text = export_graph(kg, "graphml")
    assert list(parse(text, force_multigraph=True).edges(keys=True)) == [("a", "b", "next")]
    assert parse(text).edges["a", "b"]["id"] == "next"  # DiGraph keeps the key as "id"


def test_graphml_mixed_attribute_types_get_one_type() -> None:
    kg = KnowledgeGraph(GraphMeta(id="mixed"))
    for nid in "abc":
        kg.add_node(Node(id=nid, type="paragraph"))
    # Extra attributes written straight to the networkx graph by other code.
    kg.g.nodes["a"]["rank"], kg.g.nodes["b"]["rank"] = 1, "top"
    kg.g.nodes["a"]["score"], kg.g.nodes["b"]["score"] = 1, 2.5
    kg.g.nodes["c"]["flag"] = True
    text = export_graph(kg, "graphml")
    assert text.count('attr.name="rank"') == 1 and text.count('attr.name="score"') == 1
    g = parse(text)
    assert g.nodes["a"]["rank"] == "1" and g.nodes["b"]["rank"] == "top"
    assert g.nodes["a"]["score"] == 1.0 and g.nodes["b"]["score"] == 2.5
    assert g.nodes["c"]["flag"] is True and "rank" not in g.nodes["c"]


def test_graphml_replaces_xml_invalid_characters() -> None:
    kg = KnowledgeGraph(GraphMeta(id="ctl"))
    kg.add_node(Node(id="a", type="paragraph", text="page\x0cbreak\x00", attrs={"raw": "x\x01y"}))
    g = parse(export_graph(kg, "graphml"))
    assert g.nodes["a"]["text"] == "page\ufffdbreak\ufffd"
    # Inside JSON strings control characters are \u-escaped, so they survive.
    assert json.loads(g.nodes["a"]["attrs"]) == {"raw": "x\x01y"}


def test_empty_graph_exports() -> None:
    kg = KnowledgeGraph(GraphMeta(id="empty"))
    assert parse(export_graph(kg, "graphml")).number_of_nodes() == 0
    assert json.loads(export_graph(kg, "json"))["nodes"] == []


def test_unknown_format(kg: KnowledgeGraph) -> None:
    with pytest.raises(InputError) as err:
        export_graph(kg, "csv")  # type: ignore[arg-type]
    assert "'csv'" in str(err.value) and "graphml" in str(err.value) and "json" in str(err.value)
