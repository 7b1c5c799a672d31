"""Tables of the long vignettes added for issue 36, cell by cell against truth read off the pages by hand.

crq.pdf (r-cran-quantreg) sets seven booktabs tables, some with spanning headers ("Intercept",
"Slope") over three columns each and group labels ("Portnoy", "Peng-Huang", …) on rows of their
own; strucplot.pdf (r-cran-vcd) a ruled grid with "R" spanning "base", "vcd" and "iplots";
sandwich-CL.pdf (r-cran-sandwich) a booktabs table of code with rules between groups;
adjcurve.pdf (r-cran-survival) a small table with a vertical rule. Truth below was read off the
rendered pages; the graph is ingest's (``build_document_graph``: everything but the embedding).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pymupdf
import pytest

from taskloom.tools.generate.document.index import _Index
from taskloom.tools.graph.ingest.pdf_layout import caption_of
from taskloom.tools.graph.ingest.pdf_text import TextBlock, TextLine
from taskloom.tools.graph.ingest.pipeline import build_document_graph
from taskloom.tools.graph.model import KnowledgeGraph, Node
from taskloom.tools.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / "tests" / "data" / "cache"
PAGES = {"crq": 26, "strucplot": 48, "sandwich-CL": 36, "adjcurve": 26, "survival": 98, "clm_article": 46}


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, KnowledgeGraph]:
    if not all((CACHE / f"{n}.pdf").is_file() for n in PAGES):
        subprocess.run(["bash", str(ROOT / "tests" / "data" / "fetch-pdfs.sh")], check=True)
    settings = Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing")
    return {n: build_document_graph(CACHE / f"{n}.pdf", settings) for n in ("crq", "strucplot", "sandwich-CL", "adjcurve", "clm_article")}


def _table(kg: KnowledgeGraph, number: str) -> Node:
    found = [t for t in kg.nodes("table") if t.attrs.get("number") == number and not t.attrs.get("inferred")]
    assert len(found) == 1, f"{len(found)} tables numbered {number}"
    return found[0]


def _cells(kg: KnowledgeGraph, table: Node) -> list[Node]:
    return [c for c in kg.nodes("table_cell") if c.id.startswith(f"{table.id}/")]


def _rows(kg: KnowledgeGraph, table: Node) -> list[list[str]]:
    """The table's body rows (no header cells) as lists of cell texts, column 0 first."""
    body: dict[int, dict[int, str]] = {}
    for c in _cells(kg, table):
        if not c.attrs.get("header"):
            body.setdefault(c.attrs["row"], {})[c.attrs["col"]] = c.text
    width = 1 + max(col for row in body.values() for col in row)
    return [[body[r].get(col, "") for col in range(width)] for r in sorted(body)]


def _fold_accent(text: str) -> str:
    """TeX's \\hat{G} extracts as a spacing circumflex before the letter; read it as the letter with the accent."""
    return text.replace("ˆG", "Ĝ")


def test_the_long_vignettes_are_fetched_whole() -> None:
    if not all((CACHE / f"{n}.pdf").is_file() for n in PAGES):
        subprocess.run(["bash", str(ROOT / "tests" / "data" / "fetch-pdfs.sh")], check=True)
    for name, pages in PAGES.items():
        path = CACHE / f"{name}.pdf"
        assert path.read_bytes()[:5] == b"%PDF-", name
        with pymupdf.open(path) as pdf:
            assert pdf.page_count == pages, name


def test_a_booktabs_table_of_code_cell_by_cell(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["sandwich-CL"]
    table = _table(kg, "1")
    assert table.source.page == 22
    heads = {c.attrs["col"]: c.text for c in _cells(kg, table) if c.attrs.get("header")}
    assert heads == {0: "Label", 1: "Model", 2: "Object", 3: "Variance-covariance matrix"}
    lm = [(f"CL-{k}", "(g)lm", "m", f'vcovCL(m, cluster = id, type = "HC{k}")') for k in range(4)]
    truth = lm + [
        ("PL", "(g)lm", "m", "vcovPL(m, cluster = id, adjust = FALSE)"),
        ("PC", "(g)lm", "m", "vcovPC(m, cluster = id, order.by = round)"),
        ("standard", "(g)lm", "m", "vcov(m)"),
        ("basic", "(g)lm", "m", "sandwich(m)"),
        ("random", "(g)lmer", "m_re", "vcov(m_re)"),
        ("gee", "geeglm", "m_gee", "m_gee$geese$vbeta"),
    ]
    assert [tuple(r) for r in _rows(kg, table)] == truth
    cell = next(c for c in _cells(kg, table) if c.text == "vcov(m_re)")
    assert cell.attrs["column_header"] == "Variance-covariance matrix" and cell.attrs["row_header"] == "random"


def test_a_ruled_table_of_estimates_cell_by_cell(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["crq"]
    table = _table(kg, "1")
    assert table.source.page == 16
    heads = {c.attrs["col"]: _fold_accent(c.text) for c in _cells(kg, table) if c.attrs.get("header") and c.text}
    assert heads == {1: "median", 2: "Kaplan-Meier", 3: "Nelson-Aalen", 4: "Powell", 5: "Leurgans Ĝ", 6: "Leurgans G"}
    assert _rows(kg, table) == [
        ["n = 50", "1.602", "1.972", "2.040", "2.037", "2.234", "2.945"],
        ["n = 200", "1.581", "1.924", "1.930", "2.110", "2.136", "2.507"],
        ["n = 500", "1.666", "2.016", "2.023", "2.187", "2.215", "2.742"],
        ["n = 1000", "1.556", "1.813", "1.816", "2.001", "2.018", "2.569"],
        ["n = ∞", "1.571", "1.839", "1.839", "2.017", "2.017", "2.463"],
    ]


def test_every_numbered_table_of_crq_is_found_on_its_page(graphs: dict[str, KnowledgeGraph]) -> None:
    pages = {t.attrs["number"]: t.source.page for t in graphs["crq"].nodes("table") if not t.attrs.get("inferred")}
    assert pages == {"1": 16, "2": 19, "3": 20, "4": 21, "5": 22, "6": 23, "7": 23}


#: crq.pdf Table 2 (page 19): estimator (a group label on a row of its own) → sample size → six values under
#: "Intercept" and "Slope", each spanning Bias, MAE and RMSE.
CRQ_TABLE_2 = {
    "Portnoy": {
        "n = 100": ("-0.0032", "0.0638", "0.0988", "0.0025", "0.0702", "0.1063"),
        "n = 400": ("-0.0066", "0.0406", "0.0578", "0.0036", "0.0391", "0.0588"),
        "n = 1000": ("-0.0022", "0.0219", "0.0321", "0.0006", "0.0228", "0.0344"),
    },
    "Peng-Huang": {
        "n = 100": ("0.0005", "0.0631", "0.0986", "0.0092", "0.0727", "0.1073"),
        "n = 400": ("-0.0007", "0.0393", "0.0575", "0.0074", "0.0389", "0.0598"),
        "n = 1000": ("0.0014", "0.0215", "0.0324", "0.0019", "0.0226", "0.0347"),
    },
    "Powell": {
        "n = 100": ("-0.0014", "0.0694", "0.1039", "0.0068", "0.0827", "0.1252"),
        "n = 400": ("-0.0066", "0.0429", "0.0622", "0.0098", "0.0475", "0.0734"),
        "n = 1000": ("-0.0008", "0.0224", "0.0339", "0.0013", "0.0264", "0.0396"),
    },
    "GMLE": {
        "n = 100": ("0.0013", "0.0528", "0.0784", "-0.0001", "0.0517", "0.0780"),
        "n = 400": ("-0.0039", "0.0307", "0.0442", "0.0031", "0.0264", "0.0417"),
        "n = 1000": ("0.0003", "0.0172", "0.0248", "-0.0001", "0.0165", "0.0242"),
    },
}
CRQ_COLUMNS = ("Intercept Bias", "Intercept MAE", "Intercept RMSE", "Slope Bias", "Slope MAE", "Slope RMSE")


def test_group_labels_and_spanning_headers_address_every_value(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["crq"]
    table = _table(kg, "2")
    values = [c for c in _cells(kg, table) if not c.attrs.get("header") and c.attrs["col"] > 0 and c.text]
    assert len(values) == 4 * 3 * 6
    for group, rows in CRQ_TABLE_2.items():
        for n, row in rows.items():
            for column, value in zip(CRQ_COLUMNS, row, strict=True):
                hits = [
                    c
                    for c in values
                    if c.attrs.get("column_header") == column
                    and group in str(c.attrs.get("row_header", "")) + " " + str(c.attrs.get("group", ""))
                    and str(c.attrs.get("row_header", "")).endswith(n)
                ]
                assert [c.text for c in hits] == [value], (group, n, column)


#: strucplot.pdf Table 1 (page 2): which software has which feature ("×", "(×)" partly, "" not).
STRUCPLOT_COLUMNS = ("SAS", "S-PLUS", "R base", "R vcd", "R iplots", "ViSta", "MANET", "Mondrian")
STRUCPLOT_TABLE_1 = [
    ["Basic functionality", "×", "×", "×", "×", "×", "×", "×", "×"],
    ["Shape", "", "", "", "×", "", "×", "×", ""],
    ["Res.-based shadings", "×", "", "×", "×", "(×)", "", "(×)", "(×)"],
    ["Highlighting", "", "", "", "×", "×", "×", "×", "×"],
    ["Conditional views", "×", "", "", "×", "", "×", "×", ""],
    ["Interaction", "", "", "", "", "×", "×", "×", "×"],
    ["Linking", "", "", "", "", "×", "×", "×", "×"],
    ["Extensible design", "", "", "", "×", "", "", "", ""],
    ["Language", "SAS", "S", "R", "R", "R/Java", "XLisp", "C++", "Java"],
]


def test_a_grid_of_marks_cell_by_cell(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["strucplot"]
    table = _table(kg, "1")
    assert table.source.page == 2
    assert _rows(kg, table) == STRUCPLOT_TABLE_1


def test_a_two_line_header_with_a_spanning_group_heads_the_right_columns(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["strucplot"]
    table = _table(kg, "1")
    heads = {
        c.attrs["col"]: c.attrs.get("column_header")
        for c in _cells(kg, table)
        if c.attrs["row"] == max(c.attrs["row"] for c in _cells(kg, table))
    }
    assert [heads[col] for col in range(1, 9)] == list(STRUCPLOT_COLUMNS)


def test_a_table_with_a_vertical_rule_cell_by_cell(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["adjcurve"]
    table = _table(kg, "1")
    assert table.source.page == 3
    heads = [c.text for c in sorted(_cells(kg, table), key=lambda c: c.attrs["col"]) if c.attrs.get("header") and c.text]
    assert heads == ["50–59", "60–69", "70–79", "80+"]
    assert _rows(kg, table) == [
        ["FLC < 3.38", "2585 (47)", "1690 (30)", "969 (17)", "314 ( 6)"],
        ["FLC 3.38–4.71", "442 (29)", "446 (29)", "423 (28)", "215 (14)"],
        ["FLC > 4.71", "121 (16)", "187 (25)", "224 (30)", "224 (30)"],
    ]


def test_a_table_without_rules_keeps_its_group_labels_and_spanning_header(graphs: dict[str, KnowledgeGraph]) -> None:
    """adjcurve Table 2: one rule under the header, "Age" centred over all eight age columns, "Females" above the
    header and "Males" between the rows label the two groups of three rows."""
    kg = graphs["adjcurve"]
    table = _table(kg, "2")
    assert table.source.page == 5
    values = {(c.attrs["row_header"], c.attrs["column_header"]): c.text for c in _cells(kg, table) if not c.attrs.get("header") and c.attrs["col"] > 0 and c.text and c.attrs.get("group")}
    assert len(values) == 6 * 8
    assert values[("Females, Low", "Age 50–54")] == "738"
    assert values[("Females, High", "Age 90+")] == "32"
    assert values[("Males, Low", "Age 90+")] == "2"
    assert values[("Males, Med", "Age 65–69")] == "130"
    assert values[("Males, High", "Age 80–89")] == "74"


def test_a_group_label_on_its_groups_first_row_names_no_row(graphs: dict[str, KnowledgeGraph]) -> None:
    """strucplot Table 2: "labeling" stands beside the first of nine generators, "strucplot" / "core" beside the first
    two of three; a row is named by its generator."""
    kg = graphs["strucplot"]
    table = _table(kg, "2")
    described = {c.attrs["row_header"]: (c.text, c.attrs.get("group")) for c in _cells(kg, table) if c.attrs.get("column_header") == "Description"}
    assert described["labeling_cells()"] == ("cell labels", "labeling")
    assert described["labeling_border()"] == ("border labels", "labeling")
    assert described["legend_resbased()"][1] == "legend"
    assert described["struc_sieve()"] == ("core function for sieve plots", "strucplot core")  # a label over two lines between two rules
    assert "labeling" not in described
    valid = {c.attrs["row_header"] for c in _Index(kg).valid_cells(table.id)}
    assert "labeling" not in valid and "labeling_cells()" in valid


def test_type3_tex_fonts_read_as_words(graphs: dict[str, KnowledgeGraph]) -> None:
    """adjcurve's fonts are dvips bitmaps in TeX's T1 encoding: ligatures, dashes and quotes sit below 0x20."""
    kg = graphs["adjcurve"]
    text = "\n".join(n.text for n in kg.nodes() if n.text)
    assert not [ch for ch in text if ord(ch) < 0x20 and ch not in "\n\t"], "a control code left in the graph's text"
    for word in ("influences", "Stratification", "difference", "efficacy", "first"):
        assert word in text, word
    assert "50–59" in text and "There is extensive literature — and debate — on this topic" in text
    assert " uences" not in text and "strati ed" not in text


@pytest.mark.parametrize(
    ("text", "caption"),
    [
        ("Figure 2.3: Correct (solid) and invalid (dashed) estimates", ("figure", "2.3")),
        ("Figure 2.3 shows the transplant curves overlaid with the naive KM", None),  # survival.pdf p. 31: prose
        ("Table 2. Detailed age and sex distribution", ("table", "2")),
        ("Fig. 4 — the residuals", ("figure", "4")),
    ],
)
def test_a_caption_is_its_label_number_and_separator_not_a_sentence_about_the_figure(text: str, caption: tuple[str, str] | None) -> None:
    block = TextBlock(lines=[TextLine(text=text, bbox=(0, 0, 100, 10), size=10, bold=False, chars=len(text), mono_chars=0, math_chars=0)], bbox=(0, 0, 100, 10), page=1)
    assert caption_of(block) == caption


def test_text_drawn_in_a_figure_is_no_paragraph_footnote_or_reference(graphs: dict[str, KnowledgeGraph]) -> None:
    """strucplot p. 5 (a double-decker plot whose bars stand left of its caption, labelled "1st Male" below them) and
    p. 45 (a legend "Pearson residuals: 4.0 …" beside a mosaic plot, a small bold "stage / xray" over it); adjcurve's
    survival curves with tick labels under them."""
    strucplot, adjcurve = graphs["strucplot"], graphs["adjcurve"]
    assert not [n.text for n in strucplot.nodes("footnote")]
    assert not [n.text for n in strucplot.nodes("reference") if "Pearson" in n.text or "xray" in n.text]
    figures = {n.source.page: n.text for n in strucplot.nodes("figure") if n.source.page in (5, 45)}
    assert "1st Male" in " ".join(figures.values()) and "p−value" in figures[45]
    ticks = [n.text for n in adjcurve.nodes("paragraph") if n.text.startswith("0 2 4 6 8") or n.text.startswith("0.0 0.2 0.4")]
    assert not ticks


def test_a_running_head_set_in_pieces_is_dropped_on_every_page(graphs: dict[str, KnowledgeGraph]) -> None:
    """crq p. 25 sets its running head as three pieces of one row (author, affiliation, page number): it became a reference."""
    kg = graphs["crq"]
    assert not [n.text for n in kg.nodes() if n.text and n.text.startswith("Roger Koenker University") and n.source and (n.source.page or 0) > 1]
    assert sum(1 for _ in kg.nodes("reference")) == 28


#: crq Tables 3 and 6 (pp. 20, 23), hand-checked: n = 100, 400, 1000 under each estimator, Intercept then Slope (Bias, MAE, RMSE).
CRQ_TABLES_3_6 = {
    "3": {
        "Portnoy": [("-0.0042", "0.0646", "0.0942", "0.0024", "0.0586", "0.0874"), ("-0.0025", "0.0373", "0.0542", "-0.0009", "0.0322", "0.0471"), ("-0.0025", "0.0208", "0.0311", "0.0006", "0.0191", "0.0283")],
        "Peng-Huang": [("0.0026", "0.0639", "0.0944", "0.0045", "0.0607", "0.0888"), ("0.0056", "0.0389", "0.0547", "-0.0002", "0.0320", "0.0476"), ("0.0019", "0.0212", "0.0311", "0.0009", "0.0187", "0.0283")],
        "Powell": [("-0.0025", "0.0669", "0.1017", "0.0083", "0.0656", "0.1012"), ("0.0014", "0.0398", "0.0581", "-0.0006", "0.0364", "0.0531"), ("-0.0013", "0.0210", "0.0319", "0.0016", "0.0203", "0.0304")],
        "GMLE": [("0.0007", "0.0540", "0.0781", "0.0009", "0.0470", "0.0721"), ("0.0008", "0.0285", "0.0444", "-0.0008", "0.0253", "0.0383"), ("-0.0004", "0.0169", "0.0248", "0.0002", "0.0150", "0.0224")],
    },
    "6": {
        "Portnoy": [("-0.0020", "0.0744", "0.1122", "-0.0002", "0.0782", "0.1167"), ("-0.0026", "0.0371", "0.0555", "-0.0003", "0.0377", "0.0576"), ("-0.0021", "0.0226", "0.0346", "0.0006", "0.0246", "0.0356")],
        "Peng-Huang": [("0.0030", "0.0750", "0.1122", "0.0074", "0.0806", "0.1193"), ("0.0042", "0.0373", "0.0563", "0.0033", "0.0377", "0.0592"), ("0.0015", "0.0219", "0.0345", "0.0027", "0.0244", "0.0360")],
        "Powell": [("-0.0013", "0.0806", "0.1198", "0.0083", "0.0914", "0.1427"), ("-0.0005", "0.0390", "0.0596", "0.0035", "0.0441", "0.0700"), ("-0.0006", "0.0244", "0.0375", "0.0017", "0.0292", "0.0451")],
        "GMLE": [("-0.0420", "0.0842", "0.1437", "0.0549", "0.0848", "0.1562"), ("-0.0401", "0.0505", "0.0816", "0.0550", "0.0538", "0.1013"), ("-0.0415", "0.0407", "0.0609", "0.0560", "0.0511", "0.0765")],
    },
}


@pytest.mark.parametrize("number", ["3", "6", "7"])
def test_crq_grids_of_estimates_cell_by_cell(graphs: dict[str, KnowledgeGraph], number: str) -> None:
    """Tables 6 and 7 share page 23: Table 7's rules stop at Table 6's caption (it once read both tables as one column)."""
    kg = graphs["crq"]
    table = _table(kg, number)
    values = {(c.attrs["row_header"], c.attrs["column_header"]): c.text for c in _cells(kg, table) if c.attrs.get("group") and c.attrs["col"] > 0}
    assert len(values) == 4 * 3 * 6
    if number == "7":
        assert [values[("Portnoy, n = 100", column)] for column in CRQ_COLUMNS] == ["-0.0026", "0.0733", "0.1071", "-0.0020", "0.0637", "0.0986"]
        assert [values[("GMLE, n = 1000", column)] for column in CRQ_COLUMNS] == ["-0.0100", "0.0265", "0.0419", "0.0217", "0.0276", "0.0443"]
        return
    for group, rows in CRQ_TABLES_3_6[number].items():
        for n, row in zip(("n = 100", "n = 400", "n = 1000"), rows, strict=True):
            assert [values[(f"{group}, {n}", column)] for column in CRQ_COLUMNS] == list(row), (group, n)


def test_columns_that_are_lists_address_no_rows_and_raised_marks_leave_names(graphs: dict[str, KnowledgeGraph]) -> None:
    """clm_article.pdf (r-cran-ordinal) Tables 1 and 2 list functions and methods column by column: "clm.fit" and
    "drop.coef" share a row by chance, so no cell is addressed by its row. Its names carry raised marks ("clmm2" + "c")."""
    kg = graphs["clm_article"]
    index = _Index(kg)
    for number in ("1", "2"):
        assert index.valid_cells(_table(kg, number).id) == []
    assert [c.text for c in _cells(kg, _table(kg, "1")) if c.attrs["row"] == 2] == ["clmm", "slice", "clmm2", "[pdg]lgamma"]


def test_stacked_blocks_and_a_spanning_header_beside_a_wide_column(graphs: dict[str, KnowledgeGraph]) -> None:
    """clm_article Table 3 stacks two blocks, each with a "Name" header row, and sets maths whose brackets reach below
    the line; Table 4 centres "Least—Most bitter" over the five rating columns, right of the wide "Contact" column.
    Values read off the rendered pages."""
    kg = graphs["clm_article"]
    links = {(c.attrs.get("row_header"), c.attrs.get("column_header")): c.text for c in _cells(kg, _table(kg, "3")) if not c.attrs.get("header") and c.attrs["col"] > 0}
    assert links[("Distribution", "log-log")] == "Gumbel (max)"  # its raised "b" left
    assert links[("Link function (F −1)", "log-log")] == "−log[−log(γ)]"
    assert links[("Link function (F −1)", "logit")] == "log[γ/(1 −γ)]"  # one cell, not two lines
    assert links[("Inverse link (F)", "log-log")] == "exp(−exp(−η))"
    assert links[("Density (f = F ′)", "log-log")] == ""
    assert links[("Distribution", "clog-log")] == "Gumbel (min)" and links[("Shape", "cauchit")] == "kurtotic"
    assert links[("Inverse link (F)", "cauchit")] == "arctan(η)/π + 0.5"
    assert sum(1 for c in _cells(kg, _table(kg, "3")) if c.attrs.get("header")) == 8  # two header rows of four
    wine = _cells(kg, _table(kg, "4"))
    heads = {c.attrs["col"]: c.attrs.get("column_header") for c in wine if not c.attrs.get("header")}
    assert heads == {0: "Temperature", 1: "Contact", **{k + 1: f"Least—Most bitter {k}" for k in range(1, 6)}}
    assert [c.text for c in sorted(wine, key=lambda c: c.attrs["col"]) if c.attrs["row"] == 5] == ["warm", "yes", "0", "1", "5", "7", "5"]


def test_a_lettered_appendix_after_the_references_is_a_section(graphs: dict[str, KnowledgeGraph]) -> None:
    """clm_article's appendix "A. A regularized Newton-Raphson algorithm…" follows its references; the outline lists it
    as "A regularized …". Its text once became five references."""
    kg = graphs["clm_article"]
    assert any(s.attrs.get("number") == "A" and "Newton-Raphson" in s.text for s in kg.nodes("section"))
    assert sum(1 for _ in kg.nodes("reference")) == 46


def test_typewriter_output_in_a_type3_font_is_code_and_no_table(graphs: dict[str, KnowledgeGraph]) -> None:
    """adjcurve sets R output in a Type 3 bitmap font named "F45": its fixed width, not its name, says typewriter, so the
    printed ratios on pages 21 and 23 ("50-54 0.9 1.0 …") are code, never uncaptioned tables."""
    kg = graphs["adjcurve"]
    assert sorted(t.source.page for t in kg.nodes("table")) == [3, 5]  # Tables 1 and 2 only
    assert any("50-54" in n.text and n.source.page == 21 for n in kg.nodes("paragraph"))
