"""Parse a Markdown file (CommonMark + GFM tables) into a :class:`ParsedDocument`.

Uses markdown-it-py's token stream. Inline markup is reduced to plain text (emphasis
markers dropped, link and code-span text kept); nested lists are flattened into one
list block; an image alone in a paragraph is a figure; a paragraph starting
"Table N:" / "Figure N:" / "Fig. N." is a caption. Raw HTML blocks are ignored.
"""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

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

__all__ = ["parse_markdown"]

_MD = MarkdownIt("commonmark").enable("table")
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_FM_TITLE_RE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)


@parser("markdown", suffixes=(".md", ".markdown"))
def parse_markdown(path: Path) -> ParsedDocument:
    """Parse the Markdown file at ``path`` into blocks in reading order."""
    body, fm_title = _strip_front_matter(read_text(path))
    blocks = _Builder().run(_MD.parse(body))
    number_captioned(blocks)
    first_h1 = next((b.text for b in blocks if b.kind == "heading" and b.level == 1), "")
    title = fm_title or first_h1 or Path(path).stem
    return ParsedDocument(path=str(path), format="markdown", title=title, blocks=blocks)


def _strip_front_matter(text: str) -> tuple[str, str]:
    """Remove a leading YAML front-matter block; return the body and its ``title:``."""
    m = _FRONT_MATTER_RE.match(text)
    if m is None:
        return text, ""
    t = _FM_TITLE_RE.search(m.group(1) or "")
    title = t.group(1).strip("'\"").strip() if t else ""
    return text[m.end() :], title


def _plain(tokens: list[Token] | None) -> str:
    """Plain text of inline tokens: text and code spans kept, markup dropped."""
    out: list[str] = []
    for tok in tokens or []:
        if tok.type in ("text", "code_inline"):
            out.append(tok.content)
        elif tok.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif tok.type == "image":
            out.append(_plain(tok.children))
    return "".join(out)


class _Builder:
    """Walks the block-level token stream and collects blocks."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.list_depth = 0
        self.items: list[str] = []
        self.parts: list[str] = []
        self.heading: int | None = None
        self.cells: list[TableCell] | None = None
        self.row = -1
        self.col = 0
        self.in_header = False

    def run(self, tokens: list[Token]) -> list[Block]:
        """Process every token and return the blocks."""
        for tok in tokens:
            self._token(tok)
        return self.blocks

    def _token(self, tok: Token) -> None:
        t = tok.type
        if t in ("bullet_list_open", "ordered_list_open"):
            self._flush_item()
            self.list_depth += 1
        elif t in ("bullet_list_close", "ordered_list_close"):
            self._close_list()
        elif t in ("list_item_open", "list_item_close"):
            self._flush_item()
        elif t == "heading_open":
            self.heading = int(tok.tag[1:])
        elif t == "heading_close":
            self.heading = None
        elif t == "table_open":
            self.cells, self.row = [], -1
        elif t == "tr_open":
            self.row, self.col = self.row + 1, 0
        elif t in ("th_open", "td_open"):
            self.in_header = t == "th_open"
        elif t == "table_close":
            self._close_table()
        elif t == "inline":
            self._inline(tok)
        elif t in ("fence", "code_block"):
            self._code(tok.content)

    def _flush_item(self) -> None:
        text = collapse_ws(" ".join(self.parts))
        if text:
            self.items.append(text)
        self.parts = []

    def _close_list(self) -> None:
        self._flush_item()
        self.list_depth -= 1
        if self.list_depth == 0 and self.items:
            self.blocks.append(list_block(self.items))
            self.items = []

    def _close_table(self) -> None:
        cells = self.cells or []
        self.blocks.append(Block(kind="table", text=table_text(cells), cells=cells))
        self.cells = None

    def _code(self, content: str) -> None:
        if self.list_depth:
            self.parts.append(content)
        elif content.strip():
            self.blocks.append(Block(kind="code", text=content.strip("\n")))

    def _inline(self, tok: Token) -> None:
        if self.list_depth:
            self.parts.append(_plain(tok.children))
        elif self.cells is not None:
            text = collapse_ws(_plain(tok.children))
            cell = TableCell(row=self.row, col=self.col, text=text, header=self.in_header)
            self.cells.append(cell)
            self.col += 1
        elif self.heading is not None:
            text = collapse_ws(_plain(tok.children))
            self.blocks.append(heading_block(text, self.heading))
        else:
            self._paragraph(tok.children or [])

    def _paragraph(self, children: list[Token]) -> None:
        """A paragraph, a caption, or (image alone, maybe with a caption) figures."""
        alts = [collapse_ws(_plain(c.children)) for c in children if c.type == "image"]
        text = collapse_ws(_plain([c for c in children if c.type != "image"]))
        caption = caption_block(text) if text else None
        if alts and (not text or caption):
            self.blocks.extend(Block(kind="figure", text=alt) for alt in alts)
        if caption:
            self.blocks.append(caption)
        elif text:
            self.blocks.append(Block(kind="paragraph", text=text))
