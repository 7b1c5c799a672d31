"""Edge cases of PDF parsing on PDFs generated with pymupdf."""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest

from taskloom.tools.errors import DocumentError
from taskloom.tools.graph.ingest.pdf import parse_pdf


def test_two_columns_read_left_column_first(two_column_pdf: Path) -> None:
    doc = parse_pdf(two_column_pdf)
    order = [int(m.group(1)) for b in doc.blocks if (m := re.match(r"Paragraph (\d+)", b.text))]
    assert order == [1, 2, 3, 4, 5, 6]


def test_table_across_page_break_is_one_table(table_across_pages_pdf: Path) -> None:
    doc = parse_pdf(table_across_pages_pdf)
    tables = [b for b in doc.blocks if b.kind == "table"]
    assert len(tables) == 1
    table = tables[0]
    assert table.number == "1" and table.page == 1 and table.end_page == 2
    rows = {}
    for cell in table.cells:
        rows.setdefault(cell.row, {})[cell.col] = cell.text
    assert rows[0] == {0: "Station", 1: "Rain", 2: "Wind"}
    assert len(rows) == 21  # header once + 20 stations: the repeated header is dropped
    assert rows[20] == {0: "S20", 1: "60", 2: "30"}
    assert [c.header for c in table.cells if c.row == 0] == [True, True, True]
    captions = [b for b in doc.blocks if b.kind == "caption"]
    assert [(c.label, c.number) for c in captions] == [("table", "1")]


def test_hyphenation_is_undone_but_real_hyphens_stay(hyphenated_pdf: Path) -> None:
    text = " ".join(b.text for b in parse_pdf(hyphenated_pdf).blocks)
    assert "measurements every hour" in text
    assert "Smith-Jones archive" in text


def test_no_text_layer_is_refused_with_advice(image_only_pdf: Path) -> None:
    with pytest.raises(DocumentError, match="no text layer.*OCR"):
        parse_pdf(image_only_pdf)


def test_encrypted_pdf_is_refused_with_advice(encrypted_pdf: Path) -> None:
    with pytest.raises(DocumentError, match="encrypted.*decrypt"):
        parse_pdf(encrypted_pdf)


def test_zero_pages_is_refused(zero_page_pdf: Path) -> None:
    with pytest.raises(DocumentError, match="no pages"):
        parse_pdf(zero_page_pdf)


def test_a_pdf_over_the_page_limit_is_refused_naming_its_pages(two_column_pdf: Path) -> None:
    pages = pymupdf.open(two_column_pdf).page_count
    with pytest.raises(DocumentError, match=rf"has {pages} pages, over the limit of {pages - 1}; raise TASKLOOM_MAX_PAGES"):
        parse_pdf(two_column_pdf, max_pages=pages - 1)


def test_not_a_pdf_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "fake.pdf"
    fake.write_text("this is plain text pretending to be a PDF")
    with pytest.raises(DocumentError, match="not a readable PDF"):
        parse_pdf(fake)


@pytest.fixture
def stacked_figures_pdf(tmp_path: Path) -> Path:
    """Two vector figures stacked on a page, each captioned underneath; the first caption sits
    closer to the second figure (5 pt below it) than to its own (13 pt above it)."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Results", fontsize=16, fontname="hebo")
    for top, bottom, caption in ((90, 250, "Figure 1: Alpha growth per year."), (280, 440, "Figure 2: Beta decay per year.")):
        page.draw_rect(pymupdf.Rect(100, top, 500, bottom), color=(0, 0, 0))
        for i in range(6):
            page.draw_line((110 + 60 * i, bottom - 10), (140 + 60 * i, top + 20 + 10 * i), color=(0, 0, 1))
        page.insert_text((100, bottom + 22), caption, fontsize=10, fontname="helv")
    page.insert_textbox(pymupdf.Rect(72, 480, 522, 700), "Figure 1 shows alpha; Figure 2 shows beta. " * 6, fontsize=10)
    path = tmp_path / "stacked.pdf"
    doc.save(path)
    return path


def test_stacked_figures_keep_their_own_captions(stacked_figures_pdf: Path) -> None:
    figures = {b.number: b.bbox for b in parse_pdf(stacked_figures_pdf).blocks if b.kind == "figure"}
    assert set(figures) == {"1", "2"}
    assert figures["1"] is not None and figures["2"] is not None
    assert figures["1"][3] <= 252 and figures["2"][1] >= 278  # figure 1 is the upper drawing
