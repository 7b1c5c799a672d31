"""PDF → :class:`ParsedDocument` with pymupdf: text blocks, headings, tables, figures, formulas."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import re

import pymupdf

from ...errors import DocumentError
from .blocks import REFERENCE_HEADING, Block, ParsedDocument
from .linejoin import known_words, word_counts
from .links import entry_label, looks_like_entry_start, opens_author_year_entry  # entry rules live with the citation matcher
from .pdf_layout import (
    BULLET_RE,
    caption_of,
    classify,
    CHAPTER_BLOCK,
    drop_running_heads,
    merge_formulas,
    reading_order,
    resolve_headings,
    split_before_caption,
    join_caption_tails,
    split_caption_at_rule,
    split_footnotes,
)
from .pdf_outline import Listing, find_listings, in_listing
from .pdf_figures import drawn, figure_label_of, find_figure_regions
from .pdf_regions import Region, find_table_regions, horizontal_rules, inside
from .pdf_tables import unfold_halves
from .pdf_text import TextBlock, body_font_size, join_lines, page_text_blocks, union
from .tex_encodings import FontEncodings
from .registry import parser
from .textutil import table_text

__all__ = ["parse_pdf", "open_pdf"]

ProgressFn = Callable[[int, int, str], None]


def open_pdf(path: Path, max_pages: int = 2000) -> pymupdf.Document:
    """Open a PDF or raise :class:`DocumentError` saying what is wrong and what to do."""
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except (pymupdf.FileDataError, RuntimeError, ValueError) as exc:
        raise DocumentError(f"{path} is not a readable PDF ({exc}); pass a PDF, HTML, Markdown or text file") from None
    if doc.needs_pass:
        doc.close()
        raise DocumentError(f"{path} is encrypted; decrypt it first (e.g. `qpdf --decrypt in.pdf out.pdf`) and ingest the copy")
    if doc.page_count == 0:
        doc.close()
        raise DocumentError(f"{path} has no pages; nothing to ingest — check that the file is the complete document")
    if (pages := doc.page_count) > max_pages:
        doc.close()
        raise DocumentError(f"{path} has {pages} pages, over the limit of {max_pages}; raise TASKLOOM_MAX_PAGES")
    return doc


@parser("pdf", suffixes=(".pdf",), magic=(b"%PDF",))
def parse_pdf(path: Path, progress: ProgressFn | None = None, max_pages: int = 2000) -> ParsedDocument:
    """Parse a PDF into blocks in reading order.

    ``progress(done, total, message)`` is called after every page.
    """
    doc = open_pdf(path, max_pages)
    try:
        fonts = FontEncodings()
        pages = [page_text_blocks(doc[i], fonts) for i in range(doc.page_count)]
        for index in fonts.to_reread():  # a TeX font decided only on a later page
            pages[index] = page_text_blocks(doc[index], fonts)
        if not any(pages):
            raise DocumentError(
                f"{path} has no text layer (scanned pages?); run OCR first, e.g. `ocrmypdf in.pdf out.pdf`, and ingest the result"
            )
        with known_words(word_counts(line.text for blocks in pages for block in blocks for line in block.lines)):
            return _read(doc, path, pages, fonts, progress)
    finally:
        doc.close()


def _read(doc: pymupdf.Document, path: Path, pages: list[list[TextBlock]], fonts: FontEncodings, progress: ProgressFn | None) -> ParsedDocument:
    """The document's blocks from its pages' text blocks: running heads dropped, pages laid out, headings resolved."""
    height = doc[0].rect.height
    body = body_font_size(pages)
    chapters = any(len(b.lines) <= 2 and CHAPTER_BLOCK.match(b.text) for blocks in pages for b in blocks)
    pages = drop_running_heads(pages, height, [str(t) for _, t, *_ in doc.get_toc(simple=True)])
    title = _take_title(pages, body) or str(doc.metadata.get("title") or "") or path.stem
    outline = [(int(lvl), str(t), int(p)) for lvl, t, p, *_ in doc.get_toc(simple=True)]
    listings = find_listings(pages)  # contents, index, list-of-figures pages: no headings, no captions
    laid_out: list[tuple[list[TextBlock], list[Region]]] = []
    for index in range(doc.page_count):
        laid_out.append(_layout_page(doc[index], pages[index], body, listings, fonts.text_table))
        if progress:
            progress(index + 1, doc.page_count, f"page {index + 1}/{doc.page_count}")
    candidates = [b for blocks, _ in laid_out for b in blocks if b.kind == "heading"]
    resolve_headings(candidates, [b for blocks, _ in laid_out for b in blocks], outline, body, listings)
    for page_blocks, _ in laid_out:
        for tb in page_blocks:
            if tb.kind == "paragraph" and in_listing(tb, listings):
                tb.kind = "listing"  # a contents, index or list-of-figures line: no passage of the document
    return ParsedDocument(path=str(path), format="pdf", title=title, pages=doc.page_count, blocks=_chapter_openings(_emit(laid_out)), outline=outline, chapters=chapters)


_NUMBER_WORDS = {w: str(i) for i, w in enumerate("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split(), 1)}


def _chapter_openings(blocks: list[Block]) -> list[Block]:
    """A chapter opening set as three blocks on its page, "CHAPTER" / "FIVE" / "MANAGING PACKAGES" (Sphinx; "APPENDIX" / "A"),
    made one heading numbered 5: the chapter keeps its number, so "Chapter 5" resolves and 5.4 is found in it."""
    out: list[Block] = []
    i = 0
    while i < len(blocks):
        mark, number, head = blocks[i], blocks[i + 1] if i + 1 < len(blocks) else None, blocks[i + 2] if i + 2 < len(blocks) else None
        word = number.text.strip().lower() if number is not None else ""
        if (
            mark.text.strip().lower() in ("chapter", "appendix") and number is not None and head is not None and head.kind == "heading"
            and mark.page == number.page == head.page and not head.number
        ):  # fmt: skip
            value = _NUMBER_WORDS.get(word) or (word if word.isdigit() else word.upper() if mark.text.strip().lower() == "appendix" and len(word) == 1 and word.isalpha() else None)
            if value is not None:
                head.number, head.level = value, 1
                head.text = f"{value} {head.text}"
                out.append(head)
                i += 3
                continue
        out.append(mark)
        i += 1
    return out


def _take_title(pages: list[list[TextBlock]], body: float) -> str:
    """Remove and return the title: the largest text on page 1 (all its wrapped lines), if clearly larger than the body."""
    if not pages or not pages[0]:
        return ""
    size = max(b.size for b in pages[0])
    if size < 1.3 * body:
        return ""
    parts = sorted((b for b in pages[0] if abs(b.size - size) < 0.5), key=lambda b: b.bbox[1])
    title = [parts[0]]
    for block in parts[1:]:
        if block.bbox[1] - title[-1].bbox[3] > 1.5 * size or len(title) >= 4:
            break
        title.append(block)
    for block in title:
        pages[0].remove(block)
    return join_lines([b.text for b in title])


def _layout_page(
    page: pymupdf.Page, blocks: list[TextBlock], body: float, listings: dict[int, Listing] | None = None, encoding: dict[int, str] | None = None
) -> tuple[list[TextBlock], list[Region]]:
    """Classify one page's blocks and find its tables and figures (a list of figures holds no captions)."""
    blocks = [part for block in blocks for part in split_before_caption(block)]
    for block in blocks:
        if (cap := caption_of(block)) is not None and not in_listing(block, listings or {}):
            block.kind = "caption"
            block.attrs.update(label=cap[0], number=cap[1])
    drawings = drawn(page)
    rules = horizontal_rules(drawings)
    blocks = join_caption_tails([part for block in blocks for part in (split_caption_at_rule(block, rules) if block.kind == "caption" else [block])])
    captions = [b for b in blocks if b.kind == "caption"]
    figures = find_figure_regions(page, [c for c in captions if c.attrs["label"] == "figure"], drawings)
    tables = find_table_regions(
        page, [c for c in captions if c.attrs["label"] == "table"], [f.bbox for f in figures], body, blocks, drawings, encoding
    )
    regions = figures + tables
    remaining: list[TextBlock] = []
    for block in _late_captions(_without_table_lines(blocks, tables), tables, listings or {}):
        holder = next((r for r in regions if block.kind != "caption" and inside(block.bbox, r.bbox, 3)), None)
        if holder is None and block.kind != "caption":
            holder = figure_label_of(block, figures, body)
        if holder is None:
            remaining.append(block)
        elif holder.kind == "figure":
            holder.text = join_lines([holder.text, block.text])
    prose = [b for b in remaining if b.kind != "caption"]
    listed = [b for b in prose if in_listing(b, listings or {})]  # leader dots are no maths
    formulas = merge_formulas([b for b in prose if not any(b is x for x in listed)], page.rect.width, body) + listed
    for block in formulas:
        if block.kind != "formula":
            block.kind = classify(block, body, page.rect.height)
    formulas = [part for block in formulas for part in (split_footnotes(block) if block.kind == "footnote" else [block])]
    placed = formulas + [b for b in remaining if b.kind == "caption"]
    for region in regions:
        placed.append(TextBlock(lines=[], bbox=region.bbox, page=page.number + 1, kind=region.kind, attrs={"region": region}))
    return reading_order(placed, page.rect.width), regions


def _without_table_lines(blocks: list[TextBlock], tables: list[Region]) -> list[TextBlock]:
    """Blocks with the lines that lie in a table taken out (a text block may run into a table)."""
    out: list[TextBlock] = []
    for block in blocks:
        if block.kind == "caption" or not any(inside(ln.bbox, t.bbox, 3) for t in tables for ln in block.lines):
            out.append(block)
            continue
        kept = [ln for ln in block.lines if not any(inside(ln.bbox, t.bbox, 3) for t in tables)]
        if kept:
            out.append(TextBlock(lines=kept, bbox=union([ln.bbox for ln in kept]), page=block.page, kind=block.kind, attrs=block.attrs))
    return out


def _late_captions(blocks: list[TextBlock], tables: list[Region], listings: dict[int, Listing]) -> list[TextBlock]:
    """Captions that shared a text block with their table's rows, paired with that table once split off."""
    for block in blocks:
        cap = caption_of(block) if block.kind != "caption" and not in_listing(block, listings) else None
        if cap is None or cap[0] != "table":
            continue
        near = [
            t for t in tables
            if t.caption is None and min(t.bbox[2], block.bbox[2]) > max(t.bbox[0], block.bbox[0])
            and min(abs(block.bbox[1] - t.bbox[3]), abs(t.bbox[1] - block.bbox[3])) < 40
        ]  # fmt: skip
        if near:
            block.kind = "caption"
            block.attrs.update(label=cap[0], number=cap[1])
            min(near, key=lambda t: min(abs(block.bbox[1] - t.bbox[3]), abs(t.bbox[1] - block.bbox[3]))).caption = block
    return blocks


def _emit(laid_out: list[tuple[list[TextBlock], list[Region]]]) -> list[Block]:
    """Turn laid-out pages into :class:`Block` records, joining what spans pages."""
    out: list[Block] = []
    in_references = False
    indents = _indents_paragraphs(laid_out)
    for blocks, _ in laid_out:
        for tb in blocks:
            block = _to_block(tb)
            if block is None:
                continue
            if block.kind == "heading":
                in_references = bool(REFERENCE_HEADING.match(block.text))
            elif in_references and block.kind in ("paragraph", "list"):
                entries, continued = _split_references(tb)
                out.extend(Block(kind="reference", text=e, page=block.page, bbox=block.bbox, continues=continued and i == 0) for i, e in enumerate(entries))
                continue
            flush = indents and _flush_left(tb)  # where paragraphs open indented, one that does not goes on from the page before
            if out and _continues(out[-1], block, flush=flush):
                _join(out[-1], block)
                continue
            if (
                block.kind == "paragraph" and (part := _paragraph_before_floats(out)) is not None
                and _continues(out[part], block, past_floats=True, flush=flush and not any(b.kind == "code" and b.page == block.page for b in out[part + 1 :]),
                               past_code=any(b.kind == "code" for b in out[part + 1 :]))
            ):  # fmt: skip  (flush text right under code on its page follows the code, not a float)
                _join(out[part], block)  # the paragraph goes on below the floats at the top of the page
                continue
            if block.kind == "table" and (part := _table_before_furniture(out)) is not None and _continues(out[part], block):
                del out[part + 1 :]  # "Continued on next page" and the page number between a long table's parts
                _join(out[part], block)
                continue
            out.append(block)
    return out


def _paragraph_before_floats(out: list[Block]) -> int | None:
    """The index of the paragraph ``out`` ends with but for floats (figures, tables, their captions, code) on the pages
    after it and footnotes: a paragraph a page break cut, which goes on under them (constparty, dbscan, seriation; a
    footnote at the page's foot in graphviz's dotguide)."""
    k = len(out)
    while k > 0 and out[k - 1].kind in (*_FLOATS, "footnote"):
        k -= 1
    if not 0 < k < len(out) or out[k - 1].kind != "paragraph":
        return None
    last = out[k - 1].end_page or out[k - 1].page or 0
    return k - 1 if all((b.page or 0) > last or b.kind == "footnote" for b in out[k:]) else None


#: Blocks a typesetter floats to the top of a page, between the halves of a paragraph cut by the page break.
_FLOATS = ("figure", "table", "caption", "code")
#: A line that stops on a word no sentence ends with ("… are not part of the", "… equipped with an").
_OPEN_END = re.compile(r"\b(?:a|an|the|of|to|in|on|for|with|by|and|or|from|at|than|that|which|whose|is|are|was|were|be)$", re.I)


def _table_before_furniture(out: list[Block]) -> int | None:
    """The index of the table that ``out`` ends with but for a few short lines on its last page ("Continued on next page", "22")."""
    k = len(out)
    while k > 0 and out[k - 1].kind == "paragraph" and len(out[k - 1].text.split()) <= 4 and len(out) - k < 3:
        k -= 1
    if k == len(out) or k == 0 or out[k - 1].kind != "table":
        return None
    last = out[k - 1].end_page or out[k - 1].page
    return k - 1 if all(b.page == last for b in out[k:]) else None


def _to_block(tb: TextBlock) -> Block | None:
    box = tuple(round(v, 1) for v in tb.bbox)
    common = {"page": tb.page, "bbox": box}
    if tb.kind in ("table", "figure"):
        region: Region = tb.attrs["region"]
        caption = region.caption
        number = caption.attrs.get("number") if caption else None
        if tb.kind == "table":
            cells = unfold_halves(region.cells)
            return Block(kind="table", text=table_text(cells), cells=cells, number=number, **common)
        return Block(kind="figure", text=region.text, number=number, **common)
    text = tb.text
    if not text:
        return None
    if tb.kind == "caption":
        return Block(kind="caption", text=text, label=tb.attrs["label"], number=tb.attrs["number"], **common)
    if tb.kind == "heading":
        return Block(kind="heading", text=text, level=tb.attrs["level"], number=tb.attrs.get("number"), **common)
    if tb.kind == "formula":
        return Block(kind="formula", text=text, number=tb.attrs.get("number"), **common)
    if tb.kind == "list":
        items = _list_items(tb)
        return Block(kind="list", text="\n".join(items), items=items, **common)
    return Block(kind=tb.kind, text=text, **common)  # type: ignore[arg-type]


def _list_items(tb: TextBlock) -> list[str]:
    items: list[list[str]] = []
    for line in tb.lines:
        if BULLET_RE.match(line.text) or not items:
            items.append([BULLET_RE.sub("", line.text, count=1)])
        else:
            items[-1].append(line.text)
    return [join_lines(parts) for parts in items]


def _split_references(tb: TextBlock) -> tuple[list[str], bool]:
    """Split a bibliography block into entries; never cut an entry at a line break.

    Lines on one baseline are one row. When rows start at two left edges, the edge
    where entries open (the margin under a hanging indent, the indent under a
    first-line indent) starts an entry; rows above the first such row continue an
    entry from the previous block. When all rows share one edge, a row opens an entry
    only if it is the next ``[n]``/``n.`` label, or an author list with a year right
    after a row that ended a sentence. A block that is only a page number is dropped. Also returns whether the
    first entry is such rows, the end of an entry begun in the previous block.
    """
    rows = _reference_rows(tb)
    if not rows or (len(rows) == 1 and rows[0][1].isdigit() and len(rows[0][1]) <= 4):
        return [], False
    edges = [x0 for x0, _ in rows]
    margin = min(edges)
    if max(edges) > margin + 2:
        starts = _indent_starts(rows, margin)
    else:
        starts = _text_starts([text for _, text in rows])
    entries: list[list[str]] = []
    for (_, text), start in zip(rows, starts, strict=True):
        if start or not entries:
            entries.append([text])
        else:
            entries[-1].append(text)
    joined = [text for parts in entries if (text := join_lines(parts))]
    return joined, bool(joined) and not starts[0] and max(edges) > margin + 2


def _reference_rows(tb: TextBlock) -> list[tuple[float, str]]:
    """(left edge, text) of each visual row: pieces of a justified line on one baseline are joined."""
    rows: list[tuple[float, float, list[str]]] = []
    for line in tb.lines:
        if rows and abs(line.bbox[1] - rows[-1][1]) < 2 and line.bbox[0] > rows[-1][0]:
            rows[-1][2].append(line.text)
        else:
            rows.append((line.bbox[0], line.bbox[1], [line.text]))
    return [(x0, " ".join(" ".join(parts).split())) for x0, _, parts in rows if "".join(parts).strip()]


def _indent_starts(rows: list[tuple[float, str]], margin: float) -> list[bool]:
    """Which rows open an entry when rows start at a margin and an indent."""

    indented = [x0 > margin + 2 for x0, _ in rows]
    opening = [ind for ind, (_, text) in zip(indented, rows, strict=True) if looks_like_entry_start(text)]
    # First-line indents need two indented openings, or the block's first row: one row of a long author list
    # under a hanging indent ("C, Ouwehand W, … Samani NJ (2008).") looks like an opening too.
    head_indented = opening.count(True) > opening.count(False) and (opening.count(True) >= 2 or (indented[0] and looks_like_entry_start(rows[0][1])))
    return [ind == head_indented for ind in indented]


def _text_starts(lines: list[str]) -> list[bool]:
    """Which rows open an entry when all rows share one left edge: the next label, or an author–year start."""

    starts: list[bool] = []
    number = 0
    for index, text in enumerate(lines):
        value = entry_label(text)
        if value is not None:
            start = index == 0 or value == number + 1
            number = value if start else number
        else:
            ended = index == 0 or lines[index - 1].rstrip().endswith((".", ")", "/"))
            start = number == 0 and ended and opens_author_year_entry(text)
        starts.append(start)
    return starts


def _indents_paragraphs(laid_out: list[tuple[list[TextBlock], list[Region]]]) -> bool:
    """Whether the document opens its paragraphs with an indented line (many paragraphs of three lines or more do)."""
    long = [tb for blocks, _ in laid_out for tb in blocks if tb.kind == "paragraph" and len(tb.lines) >= 3]
    return len(long) >= 10 and sum(_indent(tb) > 5 for tb in long) > 0.4 * len(long)  # not after a heading, nor in a parskip document


def _indent(tb: TextBlock) -> float:
    return tb.lines[0].bbox[0] - min(ln.bbox[0] for ln in tb.lines[1:])


def _flush_left(tb: TextBlock) -> bool:
    """A paragraph of two lines or more whose first line starts where the others do."""
    return tb.kind == "paragraph" and len(tb.lines) >= 2 and abs(_indent(tb)) <= 1.5


def _continues(prev: Block, block: Block, past_floats: bool = False, flush: bool = False, past_code: bool = False) -> bool:
    """A paragraph or table cut by a page break continues on the next page (a long table over several;
    its caption, and so its number, may stand on its first page or its last); ``past_floats``: pages of
    floats alone may stand between a paragraph's halves; ``flush``: the next page's paragraph opens without
    the indent the document's paragraphs open with (dotguide: a page break right after a sentence's end); ``past_code``:
    code stands between them, and a line ending "… is" may end on that code (coin: "… (stratified by gender) is" over
    R output, then "Ordered Alternatives."), so only a lower-case start, a closed bracket or an article ("… not part of
    the" / "PMML description") goes on."""
    last = prev.end_page or prev.page
    if last is None or block.page is None or not (block.page == last + 1 or (past_floats and block.page > last)):
        return False
    if prev.kind == block.kind == "paragraph" and flush:
        return True
    if prev.kind == block.kind == "paragraph":  # the next page goes on in lower case, closes a bracket left open, or ends "of the"
        open_bracket = prev.text.count("(") > prev.text.count(")") and block.text.count(")") > block.text.count("(")
        open_end = _OPEN_END.search(prev.text.rstrip())
        goes_on = block.text[:1].islower() or open_bracket or bool(open_end and (not past_code or open_end.group(0).lower() in ("a", "an", "the")))
        return not prev.text.rstrip().endswith((".", ":", "?", "!")) and goes_on
    if prev.kind == block.kind == "table" and (block.number is None or prev.number is None or block.number == prev.number):  # "Table 3 – continued"
        prev_cols = {c.col for c in prev.cells}
        return prev_cols == {c.col for c in block.cells}
    return False


def _join(prev: Block, block: Block) -> None:
    prev.end_page = block.page
    prev.number = prev.number or block.number
    if prev.kind == "paragraph":
        prev.text = join_lines([prev.text, block.text])
        return
    header = [c.text for c in prev.cells if c.row == 0]
    offset = max(c.row for c in prev.cells) + 1
    repeated = [c.text for c in block.cells if c.row == 0] == header
    for cell in block.cells:
        if repeated and cell.row == 0:
            continue
        prev.cells.append(cell.model_copy(update={"row": cell.row + offset - int(repeated), "header": False}))
    prev.text = table_text(prev.cells)
