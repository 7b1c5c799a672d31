"""Tables of real PDFs in many styles: booktabs without captions, spanning headers, whitespace tables.

xtableGallery.pdf (r-cran-xtable) prints dozens of tables with rules only; R-exts.pdf
(r-doc-pdf) sets its tables with space alone and frames code in boxes; countreg.pdf
(r-cran-pscl) has a grid with spanning and four-line headers.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pymupdf
import pytest

from taskloom.tools.graph.ingest.blocks import Block, ParsedDocument
from taskloom.tools.graph.ingest.builder import build_graph
from taskloom.tools.graph.ingest.links import link_references
from taskloom.tools.graph.ingest.pdf import parse_pdf
from taskloom.tools.graph.model import GraphMeta

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / "tests" / "data" / "cache"


@pytest.fixture(scope="module")
def parsed() -> dict[str, ParsedDocument]:
    names = ("xtableGallery", "R-exts", "countreg", "zoo", "generalsiminf")
    if not all((CACHE / f"{n}.pdf").is_file() for n in names):
        subprocess.run(["bash", str(ROOT / "tests" / "data" / "fetch-pdfs.sh")], check=True)
    return {n: parse_pdf(CACHE / f"{n}.pdf") for n in names}


def _tables(doc: ParsedDocument, page: int | None = None) -> list[Block]:
    return [b for b in doc.blocks if b.kind == "table" and (page is None or b.page == page)]


def _grid(table: Block) -> dict[tuple[int, int], str]:
    return {(c.row, c.col): c.text for c in table.cells}


def _shape(table: Block) -> tuple[int, int]:
    return len({c.row for c in table.cells}), len({c.col for c in table.cells})


def test_uncaptioned_booktabs_tables_are_found_with_their_rows(parsed: dict[str, ParsedDocument]) -> None:
    page3 = _tables(parsed["xtableGallery"], 3)
    assert [_shape(t) for t in page3] == [(6, 6), (8, 5), (5, 6), (3, 7)]
    aov = _grid(page3[0])
    assert [aov[(0, c)] for c in range(6)] == ["", "Df", "Sum Sq", "Mean Sq", "F value", "Pr(>F)"]
    assert aov[(2, 0)] == "ethnicty" and aov[(2, 3)] == "857.38" and aov[(5, 2)] == "18682.87"
    assert [c.header for c in page3[0].cells if c.row == 0] == [True] * 6
    assert not any(c.header for c in page3[0].cells if c.row > 0)
    anova2 = _grid(page3[3])  # an empty cell stays empty: the row does not shift left
    assert [anova2[(1, c)] for c in range(7)] == ["1", "96", "19053.59", "", "", "", ""]


def test_a_gallery_of_tables_and_no_listing_is_a_table(parsed: dict[str, ParsedDocument]) -> None:
    tables = _tables(parsed["xtableGallery"])
    assert len(tables) >= 40
    assert all(t.page != 1 for t in tables)  # page 1 is the table of contents
    longtable = next(t for t in tables if t.number == "4")  # pages 22-24, "Continued on next page" between, its caption at the end
    assert (longtable.page, longtable.end_page, _shape(longtable)) == (22, 24, (101, 11))
    body = _grid(longtable)
    assert [body[(r, 0)] for r in (1, 24, 25, 79, 80, 100)] == ["1", "24", "25", "79", "80", "100"]


def test_spanning_header_heads_every_column_under_it(parsed: dict[str, ParsedDocument]) -> None:
    ftable = _tables(parsed["xtableGallery"], 8)[0]
    spans = {c.text: c.span for c in ftable.cells if c.header and c.text in ("four", "six", "eight")}
    assert spans == {"four": 2, "six": 2, "eight": 2}
    kg = build_graph(ParsedDocument(path="x.pdf", format="pdf", blocks=[ftable]), GraphMeta(id="t", source="x.pdf"))
    by_col = {c.attrs["col"]: c.attrs.get("column_header") for c in kg.nodes("table_cell") if c.attrs["row"] == 3}
    assert by_col[2] == "four Transmission 0" and by_col[3] == "four 1" and by_col[7] == "eight 1"


def test_four_header_lines_with_a_spanning_group(parsed: dict[str, ParsedDocument]) -> None:
    table = next(t for t in _tables(parsed["countreg"]) if t.number == "2")
    grid = _grid(table)
    assert [grid[(r, 0)] for r in range(4)] == ["Type", "Distribution", "Method", "Object"]
    assert [grid[(3, c)] for c in range(1, 7)] == ["fm_pois", "fm_pois", "fm_qpois", "fm_nbin", "fm_hurdle", "fm_zinb"]
    assert grid[(4, 0)] == "(Intercept)" and grid[(4, 4)] == "0.929" and grid[(5, 4)] == "(0.055)"
    assert any(c.text == "zero-augmented" and c.span == 2 for c in table.cells)


def test_whitespace_tables_of_a_manual(parsed: dict[str, ParsedDocument]) -> None:
    doc = parsed["R-exts"]
    modes = _tables(doc, 142)
    assert [_shape(t) for t in modes] == [(7, 3)]
    grid = _grid(modes[0])
    assert [grid[(0, c)] for c in range(3)] == ["R storage mode", "C type", "Fortran type"]
    assert [grid[(6, c)] for c in range(3)] == ["raw", "unsigned char *", "none"]
    constants = _grid(_tables(doc, 203)[0])
    pi = next(r for (r, c), text in constants.items() if c == 0 and text == "M_PI")
    assert constants[(pi, 2)] == "3.1415927"
    # the table's lines are not prose as well
    assert not any("CHARACTER(255)" in b.text for b in doc.blocks if b.kind != "table")


def test_code_boxes_contents_and_index_pages_are_no_tables(parsed: dict[str, ParsedDocument]) -> None:
    doc = parsed["R-exts"]
    pages = {t.page for t in _tables(doc)}
    with pymupdf.open(CACHE / "R-exts.pdf") as pdf:
        count = pdf.page_count
    assert pages and all(10 < p < count - 10 for p in pages)  # no contents or index page
    assert not {12, 65, 66}.intersection(pages)  # pages of framed code listings
    assert not _tables(parsed["zoo"]) and not _tables(parsed["generalsiminf"])  # they hold none


def test_a_caption_sharing_a_text_block_with_its_rows_numbers_its_table(parsed: dict[str, ParsedDocument]) -> None:
    numbered = {t.number: t.page for t in _tables(parsed["xtableGallery"]) if t.number}
    # Tables 3 and 4 are longtables from pages 20 and 22 to their captions on pages 22 and 24; Table 5 is set sideways
    assert numbered == {"1": 13, "2": 13, "3": 20, "4": 22, "5": 26}
    captions = {b.number for b in parsed["xtableGallery"].blocks if b.kind == "caption"}
    assert {"1", "2", "3", "4", "5"} <= captions


def test_a_long_table_without_rules_on_its_middle_page_and_a_sideways_table_cell_by_cell(parsed: dict[str, ParsedDocument]) -> None:
    """xtableGallery Table 3: a header between two rules on page 20, rows 1-29 below it with no closing rule, rows
    30-86 alone on page 21, rows 87-100 over the caption on page 22, in one text block with it. Table 5: the same
    matrix's first 30 rows set up page 26. Values read off the rendered pages."""
    tables = {t.number: _grid(t) for t in _tables(parsed["xtableGallery"]) if t.number in ("3", "5")}
    long, sideways = tables["3"], tables["5"]
    assert [long[(0, c)] for c in range(11)] == [""] + [str(n) for n in range(1, 11)]
    assert max(r for r, _ in long) == 100 and max(c for _, c in long) == 10
    assert [long[(29, c)] for c in (0, 1, 10)] == ["29", "-0.64", "-0.23"]  # page 20's last row
    assert [long[(30, c)] for c in (0, 1, 4, 10)] == ["30", "0.23", "0.74", "-1.23"]  # page 21's first
    assert [long[(86, c)] for c in (0, 4, 10)] == ["86", "3.20", "0.39"]
    assert [long[(100, c)] for c in (0, 1, 10)] == ["100", "-2.08", "-0.02"]
    assert all(long[(r, 0)] == str(r) for r in range(1, 101))
    assert max(r for r, _ in sideways) == 30
    assert [sideways[(r, c)] for r, c in ((1, 1), (17, 5), (30, 10))] == ["0.41", "-2.70", "-1.23"]
    assert all(sideways[(r, c)] == long[(r, c)] for r in range(31) for c in range(11))


def test_a_chapters_running_head_is_no_paragraph(parsed: dict[str, ParsedDocument]) -> None:
    """R-exts heads its odd pages "Chapter 3: Tidying and profiling R code 107": a chapter of 8 pages repeats it too
    rarely to count as a running head by frequency; it names a chapter of the outline beside a page number."""
    heads = [b.text for b in parsed["R-exts"].blocks if b.text.startswith(("Chapter ", "Appendix ")) and b.text.rstrip()[-1:].isdigit()]
    assert not heads
    assert any(b.kind == "heading" and b.text.endswith("Tidying and profiling R code") for b in parsed["R-exts"].blocks)


def test_chapter_references_of_a_manual_resolve_and_chapters_of_cited_books_do_not(parsed: dict[str, ParsedDocument]) -> None:
    """R-exts: "See Chapter 2 [Writing R documentation files]" is its own chapter 2; a cited book's chapter is none of this paper's."""
    manual = build_graph(parsed["R-exts"], GraphMeta(id="r-exts", source="R-exts.pdf"))
    link_references(manual)
    chapters = [(e.attrs["label"], manual.node(e.target).text) for e in manual.edges("refers_to") if e.attrs["label"].startswith("Chapter")]
    assert ("Chapter 2", "2 Writing R documentation files") in chapters
    generalsiminf = build_graph(parsed["generalsiminf"], GraphMeta(id="g", source="generalsiminf.pdf"))
    link_references(generalsiminf)  # "We refer to Hsu (1996), Chapter 7": Hsu's chapter, not this paper's Section 7
    assert all(not e.attrs["label"].startswith("Chapter") for e in generalsiminf.edges("refers_to"))


def test_two_footnotes_in_one_block_are_two_notes(parsed: dict[str, ParsedDocument]) -> None:
    """R-exts p. 13 sets notes 5 and 6 in one text block; each opens with the next number."""
    notes = [b.text for b in parsed["R-exts"].blocks if b.kind == "footnote" and b.page == 13]
    assert [n.split()[0] for n in notes] == ["5", "6"]
    assert notes[1].startswith("6 and required by CRAN")


def test_a_table_continued_under_its_own_number_on_the_next_page_is_one() -> None:
    """mnras_guide.pdf (texlive-publishers-doc) captions a table's second page "Table 3 – continued"."""
    from taskloom.tools.graph.ingest.blocks import Block, TableCell
    from taskloom.tools.graph.ingest.pdf import _continues

    def part(page: int, number: str) -> Block:
        return Block(kind="table", number=number, page=page, cells=[TableCell(row=0, col=c, text=t) for c, t in enumerate(("Star", "Mass"))])

    assert _continues(part(4, "3"), part(5, "3"))
    assert not _continues(part(4, "3"), part(5, "4")) and not _continues(part(4, "3"), part(6, "3"))


def test_page_numbers_just_above_a_low_margin_are_no_paragraphs(parsed: dict[str, ParsedDocument]) -> None:
    """xtableGallery prints its page numbers at 90% of the page's height, above the margin band running heads are sought in."""
    doc = parsed["xtableGallery"]
    assert not [b.text for b in doc.blocks if b.kind == "paragraph" and b.text.strip().isdigit()]
    assert any(b.kind == "paragraph" and "longtable" in b.text for b in doc.blocks)  # prose at the foot of a page stays
