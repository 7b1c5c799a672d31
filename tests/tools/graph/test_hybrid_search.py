"""Hybrid search: BM25 (bm25s) fused with embeddings by a weighted sum of normalised scores, on a real ingested document."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskloom.tools.errors import InputError
from taskloom.tools.graph.lexical import VECTOR_WEIGHT, LexicalIndex, fuse, terms
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings

GUIDE = Path(__file__).resolve().parents[3] / "examples" / "documents" / "field-guide.md"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> tuple[GraphService, str]:
    svc = GraphService(Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing"))
    return svc, svc.ingest_document(GUIDE).graph_id


def _first(hits: list, needle: str) -> int | None:  # type: ignore[type-arg]
    return next((i for i, h in enumerate(hits, start=1) if needle.lower() in h.text.lower()), None)


def test_exact_terms_are_found_by_bm25_and_survive_fusion(service: tuple[GraphService, str]) -> None:
    svc, graph = service
    query = "insurance and access agreement with the building owner"
    lexical = svc.search(graph, query, 5, mode="lexical")
    hybrid = svc.search(graph, query, 5, mode="hybrid")
    assert _first(lexical, "one-page agreement") == 1
    assert _first(hybrid, "one-page agreement") is not None and _first(hybrid, "one-page agreement") <= 2
    top = hybrid[0]
    assert top.lexical_rank is not None and 0 < top.score <= 1  # a weighted sum of two scores normalised to [0, 1]
    assert [h.score for h in hybrid] == sorted((h.score for h in hybrid), reverse=True)
    if top.lexical_rank == 1 and top.vector_rank == 1:
        assert top.score == pytest.approx(1.0)
    assert all(h.vector_rank is not None and h.lexical_rank is None for h in svc.search(graph, query, 5, mode="vector"))


def test_modes_types_and_bad_input(service: tuple[GraphService, str]) -> None:
    svc, graph = service
    only = svc.search(graph, "planning the station", 10, ["heading"], mode="lexical")
    assert only and all(h.type == "heading" for h in only)
    assert svc.search(graph, "the of and", 5, mode="lexical") == []  # stop words only: no lexical match, no error
    with pytest.raises(InputError, match="search mode"):
        svc.search(graph, "rain", 5, mode="fuzzy")  # type: ignore[arg-type]
    default = svc.search(graph, "rain gauge", 5)
    assert default == svc.search(graph, "rain gauge", 5, mode="hybrid")  # the settings default is hybrid


def test_terms_fusion_and_index_basics() -> None:
    assert terms("Gauges, funnels and the rain-gauge's batteries") == terms("gauge funnel rain gauge battery")  # stems; stop words, "'s" gone
    assert len(terms("Gauges, funnels and the rain-gauge's batteries")) == 5 and terms("lme4 R2") == ["lme4", "r2"]
    b_fused = VECTOR_WEIGHT * 0.6 / 0.8 + (1 - VECTOR_WEIGHT)  # vector over its best, lexical min-max
    assert fuse([("a", 0.8), ("b", 0.6)], [("b", 9.0), ("c", 1.0)], k=3) == [("b", pytest.approx(b_fused)), ("a", pytest.approx(VECTOR_WEIGHT)), ("c", 0.0)]
    longer = fuse([("a", 0.8), ("b", 0.6), ("d", 0.1)], [("b", 9.0), ("c", 1.0)], k=3)  # another last vector hit (HNSW's tail) ...
    assert longer == [("b", pytest.approx(b_fused)), ("a", pytest.approx(VECTOR_WEIGHT)), ("d", pytest.approx(VECTOR_WEIGHT / 8))]  # ... moves no other score
    assert fuse([("a", -0.2)], [], k=1) == [("a", 0.0)]  # a negative cosine counts as 0
    assert [i for i, _ in fuse([("a", 0.8), ("b", 0.6)], [("b", 9.0), ("a", 8.9), ("c", 1.0)], k=3)] == ["a", "b", "c"]  # close in one list, far in the other
    assert fuse([], [], k=3) == []
    index = LexicalIndex(["p1", "p2", "h1"], ["the rain gauge overflowed", "wind vane bearings", "Rain gauge"], ["paragraph", "paragraph", "heading"])
    hits = index.query("gauges for rain", 5)
    assert {i for i, _ in hits} == {"p1", "h1"} and all(score > 0 for _, score in hits)
    assert index.query("rain", 5, ["heading"]) == [("h1", index.query("rain", 5, ["heading"])[0][1])]
    assert LexicalIndex([], [], []).query("rain", 5) == []


def test_a_passage_is_found_by_its_section_title() -> None:
    from taskloom.tools.graph.ingest.blocks import Block, ParsedDocument
    from taskloom.tools.graph.ingest.builder import build_graph
    from taskloom.tools.graph.model import GraphMeta, NodeType

    doc = ParsedDocument(path="x.md", format="markdown", blocks=[
        Block(kind="heading", text="Calibrating the anemometer", level=1),
        Block(kind="paragraph", text="Spin the cups by hand and compare the reading with the reference device."),
        Block(kind="heading", text="Cleaning", level=1),
        Block(kind="paragraph", text="Wipe the cups with a damp cloth every month."),
    ])  # fmt: skip
    kg = build_graph(doc, GraphMeta(id="t", source="x.md"))
    index = LexicalIndex.of_graph(kg, [NodeType.PARAGRAPH])
    hits = index.query("anemometer calibration", 5)
    assert [kg.node(i).text for i, _ in hits] == ["Spin the cups by hand and compare the reading with the reference device."]


def test_hits_are_distinct_passages_never_contents_lines(tmp_path: Path) -> None:
    """On a real PDF (xtableGallery: a contents page, chunks over paragraphs): no hit repeats passages already shown,
    no contents entry is a hit, and in hybrid mode only exact terms bring up a heading or a line of R code."""
    from taskloom.tools.graph.model import NodeType

    pdf = Path(__file__).resolve().parents[2] / "data" / "cache" / "xtableGallery.pdf"
    svc = GraphService(Settings(workspace=tmp_path, embedder="hashing"))
    graph = svc.ingest_document(pdf).graph_id
    kg = svc.load(graph)
    assert any(". . . ." in n.text and n.type == NodeType.PARAGRAPH for n in kg.nodes())  # the contents page is there to leave out
    for query in ("gallery of tables data frame", "longtable spanning several pages", "xtable print options"):
        for mode in ("vector", "lexical", "hybrid"):
            hits = svc.search(graph, query, 20, mode=mode)
            assert hits and not any(". . . ." in h.text for h in hits), (query, mode)
            shown: set[str] = set()
            for hit in hits:
                node = kg.node(hit.node_id)
                covers = set(node.attrs.get("members") or [node.id]) if node.type == NodeType.CHUNK else {node.id}
                assert not covers <= shown, f"{hit.node_id} repeats passages already shown for {query!r} ({mode})"
                shown |= covers
            if mode == "hybrid":  # labels and code come up by their exact terms only
                assert all(h.lexical_rank is not None for h in hits if h.type in ("heading", "entity") or kg.node(h.node_id).attrs.get("code"))
