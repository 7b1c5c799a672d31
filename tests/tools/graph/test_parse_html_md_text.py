"""Tests of the HTML, Markdown and plain-text parsers and their shared helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskloom.tools.errors import NotFoundError
from taskloom.tools.graph.ingest.blocks import Block, ParsedDocument
from taskloom.tools.graph.ingest.html import parse_html
from taskloom.tools.graph.ingest.markdown import parse_markdown
from taskloom.tools.graph.ingest.text import parse_text
from taskloom.tools.graph.ingest.textutil import heading_number, join_wrapped, parse_caption

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "documents"
PARSERS = {"html": parse_html, "md": parse_markdown, "txt": parse_text}


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _kinds(doc: ParsedDocument) -> list[str]:
    return [b.kind for b in doc.blocks]


def _headings(doc: ParsedDocument) -> list[tuple[int | None, str | None, str]]:
    return [(b.level, b.number, b.text) for b in doc.blocks if b.kind == "heading"]


def _only(doc: ParsedDocument, kind: str) -> Block:
    found = [b for b in doc.blocks if b.kind == kind]
    assert len(found) == 1, f"expected one {kind} block, got {len(found)}"
    return found[0]


def _cell(block: Block, row: int, col: int) -> tuple[str, bool]:
    cell = next(c for c in block.cells if (c.row, c.col) == (row, col))
    return cell.text, cell.header


# -- shared helpers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Table 2: Results by site", ("table", "2")),
        ("Figure 3. A photo", ("figure", "3")),
        ("Fig. 3. Close-up", ("figure", "3")),
        ("TABLE IV. Errors", ("table", "IV")),
        ("Figure 2.1: Layout", ("figure", "2.1")),
        ("Table 1 shows the sensors", None),
        ("Figures 2 and 3 compare", None),
        ("The table below", None),
    ],
)
def test_parse_caption(text: str, expected: tuple[str, str] | None) -> None:
    assert parse_caption(text) == expected


def test_parse_caption_lenient_accepts_running_text() -> None:
    assert parse_caption("Table 1 shows the sensors", strict=False) == ("table", "1")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2.1 Methods", "2.1"),
        ("3. Results", "3"),
        ("2.1. Choosing a site", "2.1"),
        ("A.2 Proofs", "A.2"),
        ("IV. Discussion", "IV"),
        ("Introduction", None),
        ("I Was There", None),
        ("2024 in Review", None),
        ("3D Printing", None),
    ],
)
def test_heading_number(text: str, expected: str | None) -> None:
    assert heading_number(text) == expected


def test_join_wrapped_dehyphenates_only_before_lowercase() -> None:
    assert join_wrapped(["an exam-", "ple of", "Smith-", "Jones work"]) == (
        "an example of Smith-Jones work"
    )


# -- Markdown --------------------------------------------------------------------------


def test_markdown_field_guide_structure() -> None:
    doc = parse_markdown(EXAMPLES / "field-guide.md")
    assert doc.format == "markdown"
    assert doc.title == "Running a Community Weather Station: A Field Guide"
    heads = _headings(doc)
    assert heads[0] == (1, None, "Running a Community Weather Station: A Field Guide")
    assert (2, "1", "1. Planning the Station") in heads
    assert (3, "2.1", "2.1 Choosing a Site") in heads
    assert (3, "4.2", "4.2 Quality Control") in heads
    assert heads[-1] == (2, None, "References")
    assert len([h for h in heads if h[0] == 3]) == 10


def test_markdown_field_guide_table_figure_and_captions() -> None:
    doc = parse_markdown(EXAMPLES / "field-guide.md")
    table = _only(doc, "table")
    assert table.number == "1"
    assert _cell(table, 0, 0) == ("Sensor", True)
    assert _cell(table, 0, 3) == ("Check interval", True)
    assert _cell(table, 1, 2) == ("±0.2 °C", False)
    assert _cell(table, 5, 0) == ("Barometer", False)
    assert max(c.row for c in table.cells) == 5
    i = doc.blocks.index(table)
    caption = doc.blocks[i + 1]
    assert (caption.kind, caption.label, caption.number) == ("caption", "table", "1")
    assert caption.text.startswith("Table 1: Core sensors")
    figure = _only(doc, "figure")
    assert figure.text.startswith("Volunteers and pupils beside the rooftop mast")
    after = doc.blocks[doc.blocks.index(figure) + 1]
    assert (after.kind, after.label, after.number) == ("caption", "figure", "1")
    paragraphs = " ".join(b.text for b in doc.blocks if b.kind == "paragraph")
    assert "see Table 1" in paragraphs and "Section 2.1" in paragraphs
    assert "(Smith 2019)" in paragraphs
    assert "**" not in paragraphs and "consistency matters more than precision" in paragraphs


def test_markdown_field_guide_lists_and_code() -> None:
    doc = parse_markdown(EXAMPLES / "field-guide.md")
    checklist, references = [b for b in doc.blocks if b.kind == "list"]
    assert len(checklist.items) == 5
    assert checklist.items[2] == "No roof work in winds above 40 km/h or during lightning."
    assert checklist.text.split("\n") == checklist.items
    assert [item.split(",")[0] for item in references.items] == ["Bell", "Okafor", "Smith"]
    assert "*" not in references.items[0]
    code = _only(doc, "code")
    assert code.text.startswith("[logger]\ninterval_seconds = 60")
    assert code.text.endswith("retry_minutes = 15")


def test_markdown_inline_markup_setext_and_nested_lists(tmp_path: Path) -> None:
    md = """Field Notes
===========

Some *emphasis*, **strong**, a [link](https://example.org) and `code span`.

Second Part
-----------

1. first
   - nested *one*
   - nested two
2. second

Then:

    indented code
    block

![A wind vane](vane.png)
Fig. 4. The wind vane on its mast

Table 1 shows nothing special.

| Site | Rain (mm) |
|:-----|----------:|
| Pier | 12.5 |
"""
    doc = parse_markdown(_write(tmp_path, "notes.md", md))
    assert doc.title == "Field Notes"
    assert _headings(doc) == [(1, None, "Field Notes"), (2, None, "Second Part")]
    assert doc.blocks[1].text == "Some emphasis, strong, a link and code span."
    assert _only(doc, "list").items == ["first", "nested one", "nested two", "second"]
    assert _only(doc, "code").text == "indented code\nblock"
    figure = _only(doc, "figure")
    caption = doc.blocks[doc.blocks.index(figure) + 1]
    assert (figure.text, figure.number) == ("A wind vane", "4")
    assert (caption.kind, caption.label, caption.number) == ("caption", "figure", "4")
    assert "Table 1 shows nothing special." in [b.text for b in doc.blocks if b.kind == "paragraph"]
    table = _only(doc, "table")
    assert _cell(table, 0, 1) == ("Rain (mm)", True)
    assert _cell(table, 1, 1) == ("12.5", False)


def test_markdown_front_matter_and_title_fallbacks(tmp_path: Path) -> None:
    with_fm = "---\ntitle: 'Station Log'\nlayout: post\n---\n\n## 2.3 Wind\n\nCalm.\n"
    doc = parse_markdown(_write(tmp_path, "log.md", with_fm))
    assert doc.title == "Station Log"
    assert _kinds(doc) == ["heading", "paragraph"]
    assert _headings(doc) == [(2, "2.3", "2.3 Wind")]
    doc = parse_markdown(_write(tmp_path, "no-title.md", "## Only a subheading\n\nText.\n"))
    assert doc.title == "no-title"


# -- HTML ------------------------------------------------------------------------------


def test_html_field_guide_structure_and_skipped_content() -> None:
    doc = parse_html(EXAMPLES / "field-guide.html")
    assert doc.format == "html"
    assert doc.title == "Running a Community Weather Station: A Field Guide"
    heads = _headings(doc)
    assert heads[0] == (1, None, "Running a Community Weather Station: A Field Guide")
    assert (3, "3.1", "3.1 Core Sensors") in heads
    assert heads[-1] == (2, None, "References")
    everything = " ".join(b.text for b in doc.blocks)
    for skipped in ("Live readings", "dataLayer", "border-collapse", "CC BY 4.0"):
        assert skipped not in everything
    assert "A documented check is worth more than an undocumented adjustment." in everything
    assert "Volunteers come and go" in everything  # text loose in a <div>


def test_html_field_guide_table_figure_lists_code() -> None:
    doc = parse_html(EXAMPLES / "field-guide.html")
    table = _only(doc, "table")
    assert table.number == "1"
    assert _cell(table, 0, 2) == ("Accuracy", True)
    assert _cell(table, 1, 2) == ("±0.2 °C", False)
    assert _cell(table, 3, 0) == ("Tipping-bucket gauge", False)
    caption = doc.blocks[doc.blocks.index(table) + 1]
    assert (caption.kind, caption.label, caption.number) == ("caption", "table", "1")
    assert caption.text == (
        "Table 1: Core sensors, their claimed accuracy and how often they are checked."
    )
    figure = _only(doc, "figure")
    after = doc.blocks[doc.blocks.index(figure) + 1]
    assert (after.kind, after.label, after.number) == ("caption", "figure", "1")
    checklist, references = [b for b in doc.blocks if b.kind == "list"]
    assert checklist.items[2:5] == [
        "No roof work in bad weather:",
        "not in winds above 40 km/h;",
        "not during lightning.",
    ]
    assert checklist.items[-2].startswith("Tools carried")  # its <li> was never closed
    assert checklist.items[-1].startswith("A note in the logbook")
    assert len(references.items) == 3
    code = _only(doc, "code")
    assert code.text.splitlines()[:2] == ["[logger]", "interval_seconds = 60"]


def test_html_and_markdown_examples_agree() -> None:
    md = parse_markdown(EXAMPLES / "field-guide.md")
    html = parse_html(EXAMPLES / "field-guide.html")
    assert _headings(md) == _headings(html)
    md_cells = [(c.row, c.col, c.text, c.header) for c in _only(md, "table").cells]
    html_cells = [(c.row, c.col, c.text, c.header) for c in _only(html, "table").cells]
    assert md_cells == html_cells


def test_html_tables_colspan_headers_and_loose_text(tmp_path: Path) -> None:
    html = """<html><body><h1>Readings</h1>
<div>Intro text in a div. <p>A paragraph
   with   spaces.</p> Tail text.</div>
<table>
  <thead><tr><th>Site</th><th colspan="2">Rain</th><th>Notes</th></tr></thead>
  <tbody>
    <tr><th>Pier</th><td>12</td><td>14</td><td><p>gusty</p></td></tr>
    <tr><td>Hill<td>9<td>11<td>calm
  </tbody>
  <caption>Rainfall at two sites</caption>
</table>
<p>Before <img src="x.png" alt="A gauge"> after.</p>
<img src="logo.png" alt="">
</body></html>"""
    doc = parse_html(_write(tmp_path, "r.html", html))
    assert doc.title == "Readings"  # no <title>: the first h1
    assert [b.text for b in doc.blocks[1:4]] == [
        "Intro text in a div.",
        "A paragraph with spaces.",
        "Tail text.",
    ]
    table = _only(doc, "table")
    assert _cell(table, 0, 1) == ("Rain", True)
    assert _cell(table, 0, 3) == ("Notes", True)  # after a colspan of 2
    assert _cell(table, 1, 0) == ("Pier", True)  # a <th> outside <thead>
    assert _cell(table, 1, 3) == ("gusty", False)
    assert _cell(table, 2, 3) == ("calm", False)  # unclosed cells and rows
    caption = doc.blocks[doc.blocks.index(table) + 1]
    assert (caption.kind, caption.label, caption.number) == ("caption", "table", None)
    assert [(b.kind, b.text) for b in doc.blocks[-3:]] == [
        ("paragraph", "Before"),
        ("figure", "A gauge"),
        ("paragraph", "after."),
    ]


@pytest.mark.parametrize(
    "html",
    [
        "<html><head><title>Broken",
        "<p>one<p>two<li>three<table><tr><td>four",
        "</div></p></table><h2>Stray ends</h3><p>text",
        "<ul><li>a<ul><li>b</ul></li></ol><li>c",
        "<figure><figcaption>Figure 9: lost</figure></figure><caption>Table X</caption>",
        "<!-- unterminated comment <p>x",
        "<div <p>weird attrs = = ></div>&bogus; &#xZZ; <![CDATA[x]]> <?pi?>",
        "<svg><text>drawn</text></svg><script>if (a < b) {</script><p>after",
    ],
)
def test_html_malformed_does_not_crash(tmp_path: Path, html: str) -> None:
    doc = parse_html(_write(tmp_path, "bad.html", html))
    assert isinstance(doc, ParsedDocument)
    assert all(b.text or b.kind in ("figure", "table") for b in doc.blocks)


def test_html_malformed_keeps_what_it_can(tmp_path: Path) -> None:
    doc = parse_html(_write(tmp_path, "bad.html", "<p>one<p>two<h2>2.1 Next<h2>Then</h2>"))
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("paragraph", "one"),
        ("paragraph", "two"),
        ("heading", "2.1 Next"),
        ("heading", "Then"),
    ]
    assert doc.blocks[2].number == "2.1"


# -- plain text ------------------------------------------------------------------------


TEXT_SAMPLE = """WEATHER STATION NOTES

This report covers the first year of the harbourside sta-
tion. Readings were taken every five minutes and up-
loaded hourly.

1. Introduction

The station sits on a flat roof.

2.1 Siting Constraints

Constraints we met:
- the mast had to be at least
  1.5 metres tall
- cables run down the north wall
* guy wires on three sides

12 volunteers attended

Results
-------

Table 2: Monthly rainfall
at the harbour, in millimetres.

Summary of Findings
===================
Rain was above average.

The end of the notes.
"""


def test_text_headings_paragraphs_lists_and_captions(tmp_path: Path) -> None:
    doc = parse_text(_write(tmp_path, "notes.txt", TEXT_SAMPLE))
    assert doc.format == "text"
    assert doc.title == "WEATHER STATION NOTES"
    assert _headings(doc) == [
        (1, None, "WEATHER STATION NOTES"),
        (1, "1", "1. Introduction"),
        (2, "2.1", "2.1 Siting Constraints"),
        (2, None, "Results"),
        (1, None, "Summary of Findings"),
    ]
    assert doc.blocks[1].text == (
        "This report covers the first year of the harbourside station. Readings were taken "
        "every five minutes and uploaded hourly."
    )
    lst = _only(doc, "list")
    assert lst.items == [
        "the mast had to be at least 1.5 metres tall",
        "cables run down the north wall",
        "guy wires on three sides",
    ]
    assert doc.blocks[doc.blocks.index(lst) - 1].text == "Constraints we met:"
    assert doc.blocks[doc.blocks.index(lst) + 1].kind == "paragraph"  # "12 volunteers attended"
    caption = _only(doc, "caption")
    assert (caption.label, caption.number) == ("table", "2")
    assert caption.text == "Table 2: Monthly rainfall at the harbour, in millimetres."
    assert doc.blocks[-2].text == "Rain was above average."
    assert doc.blocks[-1] == Block(kind="paragraph", text="The end of the notes.")


def test_text_title_falls_back_to_first_line(tmp_path: Path) -> None:
    doc = parse_text(_write(tmp_path, "plain.txt", "Just some prose here.\nMore prose.\n"))
    assert doc.title == "Just some prose here."
    assert _kinds(doc) == ["paragraph"]


def test_text_form_feed_and_crlf(tmp_path: Path) -> None:
    doc = parse_text(_write(tmp_path, "pages.txt", b"Page one text.\r\n\x0cPage two text.\r\n"))
    assert [b.text for b in doc.blocks] == ["Page one text.", "Page two text."]


# -- robustness, all formats -----------------------------------------------------------


@pytest.mark.parametrize("suffix", sorted(PARSERS))
@pytest.mark.parametrize("content", [b"", b"   \n\n\t\n"])
def test_empty_file_gives_no_blocks(tmp_path: Path, suffix: str, content: bytes) -> None:
    doc = PARSERS[suffix](_write(tmp_path, f"empty.{suffix}", content))
    assert doc.blocks == []
    assert doc.title == "empty"


@pytest.mark.parametrize("suffix", sorted(PARSERS))
def test_non_utf8_bytes_are_replaced(tmp_path: Path, suffix: str) -> None:
    raw = "<p>Caf\xe9 na\xefve \x80\x81 text</p>" if suffix == "html" else "Caf\xe9 \x80 text\n"
    doc = PARSERS[suffix](_write(tmp_path, f"latin1.{suffix}", raw.encode("latin-1")))
    assert len(doc.blocks) == 1
    assert "\ufffd" in doc.blocks[0].text and doc.blocks[0].text.endswith("text")


@pytest.mark.parametrize("suffix", sorted(PARSERS))
def test_missing_file_raises_not_found(tmp_path: Path, suffix: str) -> None:
    with pytest.raises(NotFoundError):
        PARSERS[suffix](tmp_path / f"missing.{suffix}")
