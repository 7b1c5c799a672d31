"""Parse an HTML file into a :class:`ParsedDocument` with the stdlib ``html.parser``.

A stack of open elements decides where text goes: headings, paragraphs, ``<pre>``,
list items, table cells and captions collect their own text; text loose in a
``<div>``/``<blockquote>``/``<body>`` becomes a paragraph. Block tags inside those
(a ``<p>`` in an ``<li>``) only add text; nested lists flatten into the outermost.
``<script>``, ``<style>``, ``<nav>``, ``<footer>`` and ``<head>`` (bar ``<title>``) are
skipped. Unclosed tags close at an enclosing end tag, a sibling start tag, or the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from .blocks import Block, ParsedDocument, TableCell
from .registry import parser
from .textutil import (
    caption_block,
    collapse_ws,
    heading_block,
    list_block,
    number_captioned,
    read_text,
    table_text,
)

__all__ = ["parse_html"]

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr", "param"}  # fmt: skip
_SKIP = {"script", "style", "nav", "footer", "noscript", "template", "svg", "iframe"}
_HEAD_OK = {"title", "meta", "link", "style", "script", "base", "noscript", "template"}
_LEAF_TAGS = {"p": "paragraph", "pre": "code", "caption": "caption", "figcaption": "caption"}
_LEAF_TAGS.update({f"h{n}": "heading" for n in range(1, 7)})
_CONTAINERS = {"div", "blockquote", "section", "article", "main", "body", "html", "aside",
               "header", "dl", "dt", "dd", "address", "details", "summary", "form",
               "fieldset", "center", "hgroup"}  # fmt: skip
_STRUCTURE = {"ul", "ol", "li", "table", "thead", "tbody", "tfoot", "tr", "td", "th", "figure"}
_HEADINGS = {f"h{n}" for n in range(1, 7)}
_TABLE_PARTS = {"caption", "thead", "tbody", "tfoot", "tr", "td", "th"}
_BLOCK_TAGS = set(_LEAF_TAGS) | _CONTAINERS | _STRUCTURE | {"hr"}
_TEXT_KINDS = {"leaf", "item", "cell", "title"}
_DROP_KINDS = {"skip", "head", "list", "table", "row", "thead"}


@dataclass(eq=False)
class _Frame:
    """One open element and the state it collects."""

    tag: str
    kind: str  # leaf item cell title list table row thead figure container inline skip head
    buf: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)  # list: items (root list only)
    cells: list[TableCell] = field(default_factory=list)  # table
    row: int = -1  # table: current row; cell: its row
    col: int = 0  # table: next column; cell: its column
    new_row: bool = False  # table: a <tr> opened since the last cell
    header: bool = False  # table: inside <thead>; cell: header cell
    caption: str | None = None  # table/figure: caption text
    alts: list[str] = field(default_factory=list)  # figure: image alt texts
    has_table: bool = False  # figure: holds a table


@parser("html", suffixes=(".html", ".htm", ".xhtml"), sniff=(b"<!doctype html", b"<html"))
def parse_html(path: Path) -> ParsedDocument:
    """Parse the HTML file at ``path`` into blocks in reading order."""
    parser = _Parser()
    parser.feed(read_text(path))
    parser.close()
    number_captioned(parser.blocks)
    first_h1 = next((b.text for b in parser.blocks if b.kind == "heading" and b.level == 1), "")
    title = parser.title or first_h1 or Path(path).stem
    return ParsedDocument(path=str(path), format="html", title=title, blocks=parser.blocks)


class _Parser(HTMLParser):
    """Builds blocks from parser events (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.title = ""
        self.stack: list[_Frame] = []
        self.loose: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._find("skip") is not None:
            if tag not in _VOID:
                self._push(tag, "inline")
            return
        if tag not in _HEAD_OK and (head := self._find("head")) is not None:
            self._pop_through(head)
        if tag in _VOID:
            self._void(tag, dict(attrs))
        elif tag == "title":
            self._push(tag, "title")
        elif tag in _SKIP or tag == "head":
            self._push(tag, "skip" if tag in _SKIP else "head")
        elif tag in _BLOCK_TAGS:
            self._block_start(tag, dict(attrs))

    def handle_endtag(self, tag: str) -> None:
        for frame in reversed(self.stack):
            if frame.tag == tag:
                self._pop_through(frame)
                return

    def handle_data(self, data: str) -> None:
        for frame in reversed(self.stack):
            if frame.kind in _TEXT_KINDS:
                frame.buf.append(data)
                return
            if frame.kind in _DROP_KINDS:
                return
            if frame.kind != "inline":
                break
        self.loose.append(data)

    def close(self) -> None:
        super().close()
        while self.stack:
            self._pop_through(self.stack[-1])
        self._flush_loose()

    def _block_start(self, tag: str, attrs: dict[str, str | None]) -> None:
        top = self.stack[-1] if self.stack else None
        if top is not None and (top.tag == "p" or {top.tag, tag} <= _HEADINGS):
            self._pop_through(top)  # implicitly closed, as browsers do
        leaf = self._find("leaf", "item", "cell")
        if leaf is not None and not self._opens_inside(leaf, tag):
            leaf.buf.append(" ")  # a block inside a block: text only
            self._push(tag, "inline")
            return
        self._flush_loose()
        if tag in _TABLE_PARTS:
            self._table_part(tag, attrs)
        elif tag in _LEAF_TAGS:
            self._push(tag, "leaf")
        elif tag in ("ul", "ol"):
            if (item := self._find("item")) is not None:  # nested: parent item's text first
                self._end_item(item)
            self._push(tag, "list")
        elif tag == "li":
            near = self._find("item", "list")
            if near is not None and near.kind == "item":  # an unclosed <li> before this one
                self._pop_through(near)
            self._push(tag, "item")
        elif tag in ("table", "figure"):
            if tag == "table" and (fig := self._find("figure")) is not None:
                fig.has_table = True
            self._push(tag, tag)
        elif tag != "hr":
            self._push(tag, "container")

    def _opens_inside(self, leaf: _Frame, tag: str) -> bool:
        """Whether ``tag`` is structure inside ``leaf`` (a nested list, a next cell)."""
        if leaf.kind == "item":
            return tag in ("ul", "ol", "li")
        return (leaf.kind == "cell" or leaf.tag == "caption") and tag in _TABLE_PARTS

    def _table_part(self, tag: str, attrs: dict[str, str | None]) -> None:
        table = self._find("table")
        if table is None:
            self._push(tag, "leaf" if tag == "caption" else "container")
            return
        # Close an unclosed cell or row (and, for a new section, an unclosed <thead>).
        stop = ("table", "thead") if tag in ("tr", "td", "th") else ("table",)
        while self.stack[-1].kind not in stop:
            self._pop_through(self.stack[-1])
        if tag == "caption":
            self._push(tag, "leaf")
        elif tag == "tr":
            table.new_row = True
            self._push(tag, "row")
        elif tag == "thead":
            table.header = True
            self._push(tag, "thead")
        elif tag in ("td", "th"):
            if table.new_row or table.row < 0:
                table.row, table.col, table.new_row = table.row + 1, 0, False
            cell = self._push(tag, "cell")
            cell.row, cell.col, cell.header = table.row, table.col, tag == "th" or table.header
            span = (attrs.get("colspan") or "").strip()
            table.col += max(1, int(span)) if span.isdigit() else 1

    def _void(self, tag: str, attrs: dict[str, str | None]) -> None:
        if tag == "br":
            self.handle_data("\n")
        elif tag == "hr":
            self._flush_loose()
        elif tag == "img":
            self._image(collapse_ws(attrs.get("alt") or ""))

    def _image(self, alt: str) -> None:
        """An image: part of an open figure, or a figure block of its own."""
        figure = self._find("figure")
        if figure is not None:
            figure.alts.append(alt)
            return
        leaf = self._find("leaf", "item", "cell")
        if not alt or (leaf is not None and leaf.tag != "p"):
            return  # decorative, or inside a heading, cell, item or caption
        if leaf is not None:  # split the paragraph around the image
            self._emit_leaf(leaf)
            leaf.buf = []
        self._flush_loose()
        self.blocks.append(Block(kind="figure", text=alt))

    def _pop_through(self, frame: _Frame) -> None:
        """Close ``frame`` and everything opened after it."""
        while self.stack:
            top = self.stack.pop()
            self._end(top)
            if top is frame:
                return

    def _end(self, frame: _Frame) -> None:
        if frame.kind not in ("inline", "skip", "head", "title", "row"):
            self._flush_loose()
        if frame.kind == "leaf":
            self._emit_leaf(frame)
        elif frame.kind == "title":
            self.title = self.title or collapse_ws("".join(frame.buf))
        elif frame.kind == "item":
            self._end_item(frame)
        elif frame.kind == "list" and self._find("list") is None:
            if frame.items:
                self.blocks.append(list_block(frame.items))
        elif frame.kind == "cell" and (table := self._find("table")) is not None:
            text = collapse_ws("".join(frame.buf))
            cell = TableCell(row=frame.row, col=frame.col, text=text, header=frame.header)
            table.cells.append(cell)
        elif frame.kind == "thead" and (table := self._find("table")) is not None:
            table.header = False
        elif frame.kind in ("table", "figure"):
            self._end_captioned(frame)

    def _emit_leaf(self, frame: _Frame) -> None:
        """Emit the block a heading, paragraph, pre or caption element holds."""
        raw = "".join(frame.buf)
        kind = _LEAF_TAGS.get(frame.tag, "paragraph")
        if kind == "code":
            if raw.strip():
                self.blocks.append(Block(kind="code", text=raw.strip("\n").rstrip()))
            return
        text = collapse_ws(raw)
        if not text:
            return
        if kind == "heading":
            self.blocks.append(heading_block(text, int(frame.tag[1])))
        elif kind == "caption":
            label = "table" if frame.tag == "caption" else "figure"
            if (owner := self._find(label)) is not None:
                owner.caption = text
            else:
                self.blocks.append(_caption(text, label))
        else:
            self.blocks.append(Block(kind="paragraph", text=text))

    def _end_item(self, item: _Frame) -> None:
        text = collapse_ws("".join(item.buf))
        item.buf = []
        root = next((f for f in self.stack if f.kind == "list"), None)  # nested lists flatten
        if text and root is not None:
            root.items.append(text)
        elif text:  # an <li> outside any list
            self.blocks.append(Block(kind="paragraph", text=text))

    def _end_captioned(self, frame: _Frame) -> None:
        """Emit a table or figure block, then its caption."""
        if frame.kind == "table" and (frame.cells or frame.caption):
            self.blocks.append(Block(kind="table", text=table_text(frame.cells), cells=frame.cells))
        elif frame.kind == "figure" and (frame.alts or not frame.has_table):
            self.blocks.append(Block(kind="figure", text="; ".join(a for a in frame.alts if a)))
        if frame.caption:
            self.blocks.append(_caption(frame.caption, frame.kind))

    def _push(self, tag: str, kind: str) -> _Frame:
        frame = _Frame(tag=tag, kind=kind)
        self.stack.append(frame)
        return frame

    def _find(self, *kinds: str) -> _Frame | None:
        """The innermost open frame of one of ``kinds``."""
        return next((f for f in reversed(self.stack) if f.kind in kinds), None)

    def _flush_loose(self) -> None:
        text = collapse_ws("".join(self.loose))
        self.loose = []
        if text:
            self.blocks.append(Block(kind="paragraph", text=text))


def _caption(text: str, default_label: str) -> Block:
    """A caption block; label and number come from "Table 2: …" text if present."""
    block = caption_block(text, strict=False, default_label=default_label)
    return block or Block(kind="caption", text=text, label=default_label)
