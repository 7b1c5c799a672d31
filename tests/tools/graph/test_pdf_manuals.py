"""Two TeX manuals from Debian's texlive-base, never tuned for before: pdfTeX's and Kpathsea's.

pdftex-a.pdf lists its primitives in the outline ("\\pdfinfo"); each primitive's entry line gives the
name with its arguments and a pointer in the margin ("▶ \\pdfinfo ⟨general text⟩"), and code lines
further down name it again ("\\pdfinfo {"). The heading is the entry line, without the pointer.
kpathsea.pdf (texinfo) breaks lines inside names and URLs and after a compound's hyphen. luatex.pdf's
running feet put the page number before the chapter's title ("281 The backend libraries"). KOMA-Script's
guide (scrguide-en.pdf) sets tables beside their captions, the caption's lines level with the header's.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pymupdf
import pytest

from taskloom.tools.graph.ingest.blocks import ParsedDocument
from taskloom.tools.graph.ingest.pdf import parse_pdf
from taskloom.tools.graph.ingest.pdf_layout import drop_running_heads
from taskloom.tools.graph.ingest.pdf_text import FontEncodings, page_text_blocks

CACHE = Path(__file__).resolve().parents[2] / "data" / "cache"


@pytest.fixture(scope="module")
def manuals() -> dict[str, ParsedDocument]:
    if not all((CACHE / f"{name}.pdf").is_file() for name in ("pdftex-a", "kpathsea", "luatex", "scrguide-en")):
        subprocess.run(["bash", str(CACHE.parent / "fetch-pdfs.sh")], check=True)
    return {name: parse_pdf(CACHE / f"{name}.pdf") for name in ("pdftex-a", "kpathsea")}


def test_a_primitives_heading_is_its_entry_line_not_a_code_line_naming_it(manuals: dict[str, ParsedDocument]) -> None:
    headings = [(b.page, b.level, b.text) for b in manuals["pdftex-a"].blocks if b.kind == "heading"]
    texts = [text for _, _, text in headings]
    assert (21, 3, "\\pdfinfo ⟨general text⟩") in headings
    assert (22, 3, "\\pdfcatalog ⟨general text⟩[ openaction ⟨action spec⟩]") in headings
    assert "\\pdfinfo {" not in texts and "\\pdfcatalog{" not in texts  # lines of the code examples
    assert not [t for t in texts if t.startswith(("▶", "\\pdfinfo {"))]
    assert len(headings) >= 200  # of the outline's 212 entries; 69 before entry lines were read


def test_a_table_under_a_primitive_belongs_to_that_primitive(manuals: dict[str, ParsedDocument]) -> None:
    blocks = manuals["pdftex-a"].blocks
    table = next(i for i, b in enumerate(blocks) if b.kind == "table" and "/UseOutlines" in b.text)
    owner = next(b for b in reversed(blocks[:table]) if b.kind == "heading")
    assert owner.text.startswith("\\pdfcatalog ⟨general text⟩")


def test_texinfo_breaks_inside_names_urls_and_compounds_are_joined(manuals: dict[str, ParsedDocument]) -> None:
    text = "\n".join(b.text for b in manuals["kpathsea"].blocks)
    for whole in ("kpse_var_expand", "https://tug.org/texlive", "next-highest-priority", "three-character"):
        assert whole in text, whole
    for broken in ("kpse_ var_expand", "tug.org/ texlive", "highestpriority", "threecharacter"):
        assert broken not in text, broken


def test_captions_whose_label_stands_apart_number_their_tables(manuals: dict[str, ParsedDocument]) -> None:
    """pdfTeX's captions set the label in bold beside the text ("Table 1  The meaning of flags…"), with no colon."""
    tables = [(b.page, b.number, b.text.split("\n", 1)[0]) for b in manuals["pdftex-a"].blocks if b.kind == "table"]
    numbered = {number: (page, header) for page, number, header in tables if number}
    assert numbered == {
        "1": (9, "bit position | semantics"), "2": (22, "value | suppresses"), "3": (22, "value | meaning"),
        "4": (40, "keyword | meaning"), "5": (56, "used for | texmf.cnf"), "6": (58, "internal name | type | default | comment"),
    }  # fmt: skip
    assert [header for _, number, header in tables if not number] == ["key | type | meaning"]  # section 9's table has no caption


def test_a_running_foot_with_the_page_number_before_the_chapters_title_is_dropped(manuals: dict[str, ParsedDocument]) -> None:
    """Chapter 14 runs for 16 pages of 324: too few for the margin's repeat count alone, so the number decides."""
    doc = pymupdf.open(CACHE / "luatex.pdf")
    fonts = FontEncodings()
    pages = [page_text_blocks(doc[i], fonts) if 284 <= i < 300 else [] for i in range(doc.page_count)]
    kept = [b.text for blocks in drop_running_heads(pages, doc[0].rect.height, [t for _, t, _ in doc.get_toc()]) for b in blocks]
    feet = [b.text for blocks in pages for b in blocks if re.fullmatch(r"\d{3} The backend libraries", b.text)]
    assert len(feet) >= 5  # the odd pages' feet are there to be dropped
    assert "14 The backend libraries" in kept and not set(feet) & set(kept)


def test_a_table_set_beside_its_caption_keeps_its_header_and_its_number(tmp_path: Path, manuals: dict[str, ParsedDocument]) -> None:
    pages = tmp_path / "scrguide-pages.pdf"
    with pymupdf.open(CACHE / "scrguide-en.pdf") as guide, pymupdf.open() as out:
        for number in (35, 68, 132, 136, 200):
            out.insert_pdf(guide, from_page=number - 1, to_page=number - 1)
        out.save(pages)
    blocks = parse_pdf(pages).blocks
    tables = {b.number: b.text.split("\n")[:2] for b in blocks if b.kind == "table"}
    captions = [b.text for b in blocks if b.kind == "caption"]
    assert tables["2.1"] == [" | Type area | Margins", "DIV | width | height | top | inner"]  # two header rows, not in the caption
    assert tables["3.3"][0] == "Element name | Default" and tables["3.4"][0] == "Element | Command | Font | Alignment"
    assert "Table 2.1.: Type area dimensions dependent on DIV for A4 regardless of \\topskip or BCOR" in captions
    assert "Table 3.3.: Font defaults for the elements of the title" in captions
    assert "Table 3.18.: Font defaults for the elements of figure or table captions" in captions  # "cap-" / "tions": a block each
    assert "Figure 3.5.: A figure description which is neither above nor below, but centred beside the figure" in captions
    assert any(c.startswith("Figure 4.14.: result of a short letter") and c.endswith("extended letterhead with fromalign=center") for c in captions)
