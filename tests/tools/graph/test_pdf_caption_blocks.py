"""Blocks cut in the wrong place: a caption that pymupdf set in one text block with the table under it (r-cran-psych's
intro.pdf, Table 2), and a paragraph cut by a page break inside a bracket.

The block ran from "Table 2: fa2latex" over the header and nine rows down to the table's bottom rule, so the whole
table read as the caption and the "SS loadings" row under it became the header ("1.86", "1.5" as column names):
four of 30 tasks on that PDF were ill-posed in the unseen-PDF audit. The caption now ends at the first rule across it.
"""

from __future__ import annotations

from collections.abc import Callable

from taskloom.tools.graph.ingest.pdf_regions import Region
from taskloom.tools.graph.ingest.pdf_text import TextBlock

Layout = Callable[[str, int], tuple[list[TextBlock], list[Region]]]


def test_a_caption_ends_at_the_rule_under_it_and_the_table_keeps_its_header_and_rows(laid_out: Layout) -> None:
    blocks, regions = laid_out("intro.pdf", 43)
    (table,) = [r for r in regions if r.kind == "table"]
    assert table.caption is not None and " ".join(table.caption.text.split()) == "Table 2: fa2latex A factor analysis table from the psych package in R"
    header = [c.text for c in sorted(table.cells, key=lambda c: c.col) if c.header]
    assert header == ["Variable", "MR1", "MR2", "MR3", "h2", "u2", "com"]
    rows: dict[int, dict[int, str]] = {}
    for c in table.cells:
        if not c.header:
            rows.setdefault(c.row, {})[c.col] = c.text
    by_label = {r[0]: [r.get(i, "") for i in range(1, 7)] for r in rows.values()}
    assert by_label["Sentences"] == ["0.91", "-0.04", "0.04", "0.82", "0.18", "1.01"]
    assert by_label["Letter.Group"] == ["-0.06", "0.21", "0.64", "0.53", "0.47", "1.23"]
    assert by_label["SS loadings"][:3] == ["2.64", "1.86", "1.5"]
    assert not [b for b in blocks if b.kind == "caption" and "Sentences" in b.text]


def test_a_paragraph_cut_inside_a_bracket_by_a_page_break_goes_on_over_the_page() -> None:
    """r-cran-mcmc's demo.pdf: page 3 ends "It is generally accepted (Gelman, Roberts, and", page 4 goes on "Gilks, 1996)
    that an acceptance rate of about 20% is right"; the capital G had kept the two paragraphs apart."""
    from taskloom.tools.graph.ingest.blocks import Block
    from taskloom.tools.graph.ingest.pdf import _continues

    end = Block(kind="paragraph", text="It is generally accepted (Gelman, Roberts, and", page=3)
    assert _continues(end, Block(kind="paragraph", text="Gilks, 1996) that an acceptance rate of about 20% is right.", page=4))
    opened = Block(kind="paragraph", text="It is generally accepted (Gelman, Roberts", page=3)
    assert not _continues(opened, Block(kind="paragraph", text="Gilks (1996) says so.", page=4))  # closes nothing left open
    assert _continues(end, Block(kind="paragraph", text="Gilks (1996) says so.", page=4))  # but "… and" is no end of a sentence
    assert not _continues(Block(kind="paragraph", text="The rate is set by the scale", page=3), Block(kind="paragraph", text="Gilks, 1996) that …", page=4))
    assert _continues(Block(kind="paragraph", text="The rate is set by the", page=3), Block(kind="paragraph", text="scale of the proposal.", page=4))
