"""Graph building and linking on the bundled Markdown field guide, and the pure helpers behind them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from taskloom.tools.graph.ingest.builder import chunk_texts
from taskloom.tools.graph.ingest.entities import extract_entities
from taskloom.tools.graph.ingest.pipeline import build_document_graph
from taskloom.tools.graph.ingest.similarity import link_similar
from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph, Node
from taskloom.tools.settings import Settings

GUIDE = Path(__file__).resolve().parents[3] / "examples" / "documents"


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeGraph:
    settings = Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing")
    return build_document_graph(GUIDE / "field-guide.md", settings)


def _section(kg: KnowledgeGraph, number: str) -> Node:
    return next(s for s in kg.nodes("section") if s.attrs.get("number") == number)


def test_sections_nest_by_level(guide: KnowledgeGraph) -> None:
    root = next(guide.nodes("document"))
    top = [v for _, v, k in guide.g.out_edges(root.id, keys=True) if k == "contains" and guide.node_type(v) == "section"]
    assert [guide.node(s).attrs["number"] for s in top if guide.node(s).attrs.get("number")] == ["1", "2", "3", "4", "5"]
    assert guide.g.has_edge(_section(guide, "2").id, _section(guide, "2.1").id, key="contains")
    assert not guide.g.has_edge(_section(guide, "1").id, _section(guide, "2.1").id, key="contains")


def test_next_edges_form_one_reading_chain(guide: KnowledgeGraph) -> None:
    nexts = list(guide.edges("next"))
    sources = [e.source for e in nexts]
    targets = [e.target for e in nexts]
    assert len(set(sources)) == len(sources) and len(set(targets)) == len(targets)
    starts = set(sources) - set(targets)
    assert len(starts) == 1


def test_references_resolve_to_the_numbered_node(guide: KnowledgeGraph) -> None:
    by_label: dict[str, set[str]] = {}
    for edge in guide.edges("refers_to"):
        by_label.setdefault(edge.attrs["label"], set()).add(edge.target)
    assert by_label["Table 1"] == {next(t.id for t in guide.nodes("table"))}
    assert by_label["Section 2.1"] == {_section(guide, "2.1").id}
    assert by_label["Figure 1"] == {next(f.id for f in guide.nodes("figure"))}


def test_captions_point_to_their_table_and_figure(guide: KnowledgeGraph) -> None:
    pairs = {(guide.node(e.source).attrs["label"], guide.node_type(e.target)) for e in guide.edges("caption_of")}
    assert pairs == {("table", "table"), ("figure", "figure")}


def test_bibliography_list_becomes_cited_reference_nodes(guide: KnowledgeGraph) -> None:
    references = {r.id: r.text.split(",")[0] for r in guide.nodes("reference")}
    assert sorted(references.values()) == ["Bell", "Okafor", "Smith"]
    cited = {references[e.target] for e in guide.edges("cites")}
    assert cited == {"Bell", "Okafor", "Smith"}
    smith_citers = [e.source for e in guide.edges("cites") if references[e.target] == "Smith"]
    assert any("(Smith 2019)" in guide.node(s).text for s in smith_citers)


def test_table_cells_know_their_headers(guide: KnowledgeGraph) -> None:
    cells = [c for c in guide.nodes("table_cell") if not c.attrs["header"] and c.attrs["col"] != 0]
    assert cells and all(c.attrs.get("column_header") and c.attrs.get("row_header") for c in cells)


def test_chunks_cover_section_prose(guide: KnowledgeGraph) -> None:
    chunks = list(guide.nodes("chunk"))
    assert chunks
    for chunk in chunks:
        members = [guide.node(m) for m in chunk.attrs["members"]]
        assert members and all(m.type.value in ("paragraph", "list") for m in members)
        assert members[0].text.split()[-1] in chunk.text or chunk.text.split()[0] in members[0].text


def test_entities_are_linked_by_mentions(guide: KnowledgeGraph) -> None:
    entities = {e.text: e for e in guide.nodes("entity")}
    assert entities, "expected rule-based entities"
    for entity in entities.values():
        assert any(k == "mentions" for _, _, k in guide.g.in_edges(entity.id, keys=True))


def test_extract_entities_kinds() -> None:
    found = extract_entities("The WMO guidance says 2.5 mm per hour; Harbourside Weather Volunteers met the WMO.")
    assert ("acronym", "WMO") in found
    assert ("quantity", "2.5 mm") in found
    assert ("name", "Harbourside Weather Volunteers") in found
    assert not any(surface.startswith("The ") for _, surface in found)


def test_chunk_texts_overlap_and_members() -> None:
    prose = [("p1", "alpha beta gamma delta"), ("p2", "epsilon zeta eta theta")]
    chunks = chunk_texts(prose, size=24, overlap=6)
    assert [text for text, _ in chunks][0] == "alpha beta gamma delta"
    assert all(len(text) <= 24 for text, _ in chunks)
    assert chunks[-1][1] == ["p2"]
    assert any(members == ["p1", "p2"] for _, members in chunks)
    joined = " ".join(text for text, _ in chunks)
    assert all(word in joined for word in "alpha beta gamma delta epsilon zeta eta theta".split())


def test_chunks_are_cut_where_paragraphs_are_when_one_is_near() -> None:
    """A window ends at a paragraph's end in its second half and the next begins at a paragraph in the overlap:
    no window starts mid-paragraph when a paragraph starts close by, and none repeats only what the last one held."""
    paragraphs = [
        ("p1", "Tiles stand for cells. Their areas follow the counts of the table."),
        ("p2", "Shading marks the residuals. Blue is above the model and red below."),
        ("p3", "Labels may overlap on small plots. Abbreviate the level names then."),
        ("p4", "Spacing between tiles grows with each split of the variables here."),
    ]
    chunks = chunk_texts(paragraphs, size=150, overlap=80)
    texts = [text for text, _ in chunks]
    starts = {text for _, text in paragraphs}
    assert texts[0] == f"{paragraphs[0][1]} {paragraphs[1][1]}"  # cut at the end of p2, not at the 150th character's word
    assert all(any(text.startswith(p) or p.startswith(text) for p in starts) for text in texts)  # each begins with a paragraph
    assert [members for _, members in chunks] == [["p1", "p2"], ["p2", "p3"], ["p3", "p4"]]
    assert chunk_texts(paragraphs, size=150, overlap=80) == chunks


def test_link_similar_respects_threshold_and_cap() -> None:
    kg = KnowledgeGraph(GraphMeta(id="g"))
    ids = [f"p{i}" for i in range(5)]
    for node_id in ids:
        kg.add_node(Node(id=node_id, type="paragraph", text=node_id))
    base = np.array([1.0, 0.0, 0.0])
    vectors = np.array([base, base, base, base, [0.0, 1.0, 0.0]], dtype=np.float32)
    added = link_similar(kg, ids, vectors, tau=0.7, top_k=2)
    degree = {i: 0 for i in ids}
    for edge in kg.edges("semantic_similar"):
        degree[edge.source] += 1
        degree[edge.target] += 1
        assert edge.weight == pytest.approx(1.0)
    assert added == len(list(kg.edges("semantic_similar"))) > 0
    assert max(degree.values()) <= 2
    assert degree["p4"] == 0


def test_same_markdown_same_graph(tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path, embedder="hashing")
    a = build_document_graph(GUIDE / "field-guide.md", settings).to_dict()
    b = build_document_graph(GUIDE / "field-guide.md", settings).to_dict()
    a["graph"].pop("created_at"), b["graph"].pop("created_at")
    assert a == b
