"""Document graphs of two real third-party PDFs: countreg.pdf (pscl) and lmer.pdf (lme4)."""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest

from taskloom.tools.graph.ingest.pipeline import build_document_graph
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.settings import Settings

EXPECTED_CAPTIONS = {
    "countreg": {("table", n) for n in "123"} | {("figure", n) for n in "123"},
    "lmer": {("table", str(n)) for n in range(1, 9)} | {("figure", str(n)) for n in range(1, 5)},
}


@pytest.fixture(scope="module")
def graphs(real_pdfs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, KnowledgeGraph]:
    settings = Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing")
    return {name: build_document_graph(path, settings) for name, path in real_pdfs.items()}


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", re.sub(r"^([A-Z]|\d+)(\.\d+)*\.?\s+", "", text).lower())


def _cells(kg: KnowledgeGraph, table_id: str) -> dict[tuple[int, int], str]:
    return {(c.attrs["row"], c.attrs["col"]): c.text for c in kg.nodes("table_cell") if c.id.startswith(table_id + "/")}


def _table(kg: KnowledgeGraph, number: str) -> str:
    return next(n.id for n in kg.nodes("table") if n.attrs.get("number") == number)


@pytest.mark.parametrize("name", ["countreg", "lmer"])
def test_outline_entries_are_headings_with_the_right_level(name: str, graphs: dict[str, KnowledgeGraph], real_pdfs: dict[str, Path]) -> None:
    kg = graphs[name]
    toc = pymupdf.open(real_pdfs[name]).get_toc()
    headings = {(h.attrs["level"], _norm(h.text)) for h in kg.nodes("heading")}
    found = [entry for entry in toc if (entry[0], _norm(entry[1])) in headings]
    assert len(toc) >= 20
    assert len(found) / len(toc) >= 0.9, [e for e in toc if e not in found]


@pytest.mark.parametrize("name", ["countreg", "lmer"])
def test_every_caption_is_linked_to_its_table_or_figure(name: str, graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs[name]
    seen = set()
    for caption in kg.nodes("caption"):
        targets = [v for _, v, k in kg.g.out_edges(caption.id, keys=True) if k == "caption_of"]
        assert len(targets) == 1, caption.text
        target = kg.node(targets[0])
        assert target.type.value == caption.attrs["label"]
        assert target.attrs["number"] == caption.attrs["number"]
        assert not target.attrs.get("inferred"), f"{caption.text[:40]}: no {target.type.value} found on the page"
        seen.add((caption.attrs["label"], caption.attrs["number"]))
    assert seen == EXPECTED_CAPTIONS[name]


@pytest.mark.parametrize("name", ["countreg", "lmer"])
def test_refers_to_points_to_the_numbered_node(name: str, graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs[name]
    kinds = {"tab": "table", "fig": "figure", "sec": "section", "cha": "section", "app": "section", "equ": "formula", "eq.": "formula"}
    edges = list(kg.edges("refers_to"))
    assert len(edges) >= 10
    for edge in edges:
        label = edge.attrs["label"]
        number = re.search(r"([A-Z]{1,7}(?:\.\d+)+|[A-Z]?\d+(?:\.\d+)*[a-z]?|\b[A-Z]\b)\)?$", label).group(1)  # "Appendix A.1" is A.1
        target = kg.node(edge.target)
        assert target.type.value == kinds[label.lower()[:3]], label
        assert target.attrs["number"].rstrip(".") == number, (label, target.text[:60])


def test_lmer_reference_to_table_2_is_not_table_1(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["lmer"]
    source = next(p for p in kg.nodes("paragraph") if p.text.startswith("Table 2 provides several examples"))
    targets = {kg.node(e.target).attrs["number"] for e in kg.edges("refers_to") if e.source == source.id}
    assert targets == {"2"}


def test_lmer_cites_its_bibliography(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["lmer"]
    cited = {kg.node(e.target).text.split()[0].rstrip(",") for e in kg.edges("cites")}
    assert {"Doran", "Bates", "Pinheiro"} <= cited
    assert len(list(kg.nodes("reference"))) == 46  # one node per bibliography entry (counted by hand)


def test_countreg_table_1_cells(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["countreg"]
    cells = _cells(kg, _table(kg, "1"))
    assert max(r for r, _ in cells) == 6 and max(c for _, c in cells) == 3
    assert [cells[(0, c)] for c in range(4)] == ["Type", "Distribution", "Method", "Description"]
    assert cells[(1, 0)] == "GLM" and cells[(1, 2)] == "ML"
    assert cells[(2, 2)] == "quasi"
    assert cells[(2, 3)].startswith("“quasi-Poisson regression”: same mean function, estimated by quasi-ML")
    assert cells[(5, 0)] == "zero-augmented" and cells[(6, 3)] == "zero-inflated NB (ZINB), hurdle NB"
    cell = kg.node(f"{_table(kg, '1')}/r4c1")
    assert cell.text == "NB" and cell.attrs["column_header"] == "Distribution"


def test_lmer_table_2_cells(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["lmer"]
    cells = _cells(kg, _table(kg, "2"))
    assert max(r for r, _ in cells) == 6 and max(c for _, c in cells) == 2
    assert [cells[(0, c)] for c in range(3)] == ["Formula", "Alternative", "Meaning"]
    assert cells[(1, 0)] == "(1 | g)" and cells[(1, 2)] == "Random intercept with fixed mean."
    assert cells[(6, 0)] == "x + (x || g)"
    assert cells[(6, 1)] == "1 + x + (1 | g) + (0 + x | g)"
    assert cells[(3, 2)] == "Intercept varying among g1 and g2 within g1."


def test_section_hierarchy_spans_pages(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["lmer"]
    sections = {s.text: s for s in kg.nodes("section")}
    parent = sections["2.2. Understanding mixed-model formulas"]
    child = sections["Specifying uncorrelated random effects"]
    assert kg.g.has_edge(parent.id, child.id, key="contains")
    assert child.attrs["number"] == "2.2.1"
    content_pages = {kg.node(v).source.page for _, v, k in kg.g.out_edges(parent.id, keys=True) if k == "contains"}
    assert len(content_pages - {None}) >= 2


def test_nodes_record_file_page_and_bbox(graphs: dict[str, KnowledgeGraph], real_pdfs: dict[str, Path]) -> None:
    kg = graphs["countreg"]
    for node in kg.nodes("paragraph", "table", "caption", "heading", "figure", "table_cell"):
        assert node.source.file == str(real_pdfs["countreg"])
        assert node.source.page and 1 <= node.source.page <= 25
        assert node.source.bbox is not None


def test_same_document_gives_the_same_graph(real_pdfs: dict[str, Path], tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path, embedder="hashing")
    first = build_document_graph(real_pdfs["countreg"], settings).to_dict()
    second = build_document_graph(real_pdfs["countreg"], settings).to_dict()
    first["graph"].pop("created_at"), second["graph"].pop("created_at")
    assert first == second


def test_lmer_equation_references_resolve_to_numbered_formulas(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["lmer"]
    to_formulas = [e for e in kg.edges("refers_to") if kg.node_type(e.target) == "formula"]
    assert len(to_formulas) >= 30
    source = next(p for p in kg.nodes("paragraph") if "Equation 14" in p.text)
    targets = {kg.node(e.target).attrs["number"] for e in to_formulas if e.source == source.id}
    assert "14" in targets


def test_no_ligature_or_private_use_delimiter_glyph_reaches_the_graph(graphs: dict[str, KnowledgeGraph]) -> None:
    # lmer's text layer holds 322 "ﬁ" ligatures and 83 pieces of tall Symbol-font delimiters (U+F8EB–U+F8FE).
    bad = re.compile("[\ufb00-\ufb06\uf8eb-\uf8fe]")
    assert not [n.id for kg in graphs.values() for n in kg.nodes() if bad.search(n.text)]


def test_lmer_tables_4_7_and_1_as_printed(graphs: dict[str, KnowledgeGraph]) -> None:
    """Hand-checked against the rendered pages: Table 4 whole; Table 7's wrapped row ("Random-effects Cholesky" / "factor",
    "triangu-" / "lar matrix") is one row; Table 1's "R function" heads only the column it stands flush over."""
    kg = graphs["lmer"]
    four = _cells(kg, _table(kg, "4"))
    rows = [[four[(r, c)] for c in range(3)] for r in range(1, 1 + max(r for r, _ in four))]
    assert rows == [
        ["Xi", "n × pi", "Raw random-effects model matrix"],
        ["Ji", "n × ℓi", "Indicator matrix of grouping factor indices"],
        ["Xij", "pi × 1", "Column vector containing jth row of Xi"],
        ["Jij", "ℓi × 1", "Column vector containing jth row of Ji"],
        ["ii", "n", "Vector of grouping factor indices"],
        ["Zi", "n × qi", "Term-wise random-effects model matrix"],
        ["θ", "m", "Covariance parameters"],
        ["Ti", "pi × pi", "Lower triangular template matrix"],
        ["Λi", "qi × qi", "Term-wise relative covariance factor"],
    ]
    seven = _cells(kg, _table(kg, "7"))
    cholesky = next(r for (r, c), text in seven.items() if c == 0 and text.startswith("Random-effects Cholesky"))
    assert [seven[(cholesky, c)] for c in range(4)] == ["Random-effects Cholesky factor", "L", "Lθ (Equation 18)", "double sparse triangular matrix"]
    assert "factor" not in {text for (r, c), text in seven.items() if c == 0}
    one = next(n for n in kg.nodes("table") if n.attrs.get("number") == "1")
    heads = {c.attrs["col"]: c.attrs.get("column_header") for c in kg.nodes("table_cell") if c.id.startswith(one.id + "/") and not c.attrs.get("header")}
    assert heads[1] is None and heads[2] == "R function"
    three = _cells(kg, _table(kg, "3"))  # "pi+1", the upper entry of a binomial, belongs to the row below "k"
    assert "k" in {text for (r, c), text in three.items() if c == 0}
    five = _cells(kg, _table(kg, "5"))  # "dense" carries a raised footnote mark "a"
    assert "double dense matrix" in five.values() and not any("densea" in text for text in five.values())
    eight = _cells(kg, _table(kg, "8"))  # β̂ (extracted "bβ") is a glyph far taller than its line
    fixef = next(r for (r, c), text in eight.items() if c == 0 and text.startswith("fixef"))
    assert eight[(fixef, 1)].endswith("coefficients, bβ") and eight[(fixef + 1, 1)] == "Mixed-model formula of fitted model."


@pytest.mark.parametrize(("name", "whole", "wrong", "least"), [
    ("countreg", "zero-inflated", "zeroinflated", 5), ("lmer", "log-likelihood", "loglikelihood", 5),
    ("lmer", "lower-triangular", "lowertriangular", 2),  # one of them in Table 7's cell "double sparse lower-triangular matrix"
])  # fmt: skip
def test_a_compound_broken_at_a_line_end_keeps_the_hyphen_the_paper_writes(graphs: dict[str, KnowledgeGraph], name: str, whole: str, wrong: str, least: int) -> None:
    """The paper writes the word hyphenated on other lines, so a line-end break inside it keeps the hyphen."""
    text = "\n".join(n.text for n in graphs[name].nodes()).lower()
    assert text.count(whole) >= least and wrong not in text
