"""Parse a plain-text file into a :class:`ParsedDocument`.

Paragraphs are separated by blank lines (a form feed counts as one); wrapped lines
are joined and de-hyphenated. A paragraph that is one short line without a final
period is a heading when it is numbered and capitalised ("2.1 Methods"), ALL CAPS, or
underlined by a line of ``===`` / ``---``. Lines starting "- ", "* " or "1. " form
list blocks; paragraphs starting "Table N:" / "Figure N:" / "Fig. N." are captions.
"""

from __future__ import annotations

import re
from pathlib import Path

from .blocks import Block, ParsedDocument
from .registry import parser
from .textutil import (
    caption_block,
    collapse_ws,
    heading_block,
    heading_number,
    join_wrapped,
    list_block,
    number_captioned,
    number_depth,
    parse_caption,
    read_text,
)

__all__ = ["parse_text"]

_UNDERLINE_RE = re.compile(r"^\s*(=+|-+)\s*$")
_ITEM_RE = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+(?P<text>\S.*)$")
_MAX_HEADING_WORDS = 12


@parser("text", suffixes=(".txt", ".text", ".rst"))
def parse_text(path: Path) -> ParsedDocument:
    """Parse the plain-text file at ``path`` into blocks in reading order."""
    text = read_text(path).replace("\f", "\n\n")
    blocks = [b for chunk in _chunks(text) for b in _chunk_blocks(chunk)]
    number_captioned(blocks)
    first_heading = next((b.text for b in blocks if b.kind == "heading"), "")
    first_line = next((collapse_ws(ln) for ln in text.splitlines() if ln.strip()), "")
    title = first_heading or first_line or Path(path).stem
    return ParsedDocument(path=str(path), format="text", title=title, blocks=blocks)


def _chunks(text: str) -> list[list[str]]:
    """Split text into runs of non-blank lines."""
    chunks: list[list[str]] = [[]]
    for line in text.split("\n"):
        if line.strip():
            chunks[-1].append(line.rstrip())
        elif chunks[-1]:
            chunks.append([])
    return [c for c in chunks if c]


def _chunk_blocks(lines: list[str]) -> list[Block]:
    """Blocks of one blank-line-separated chunk."""
    if _UNDERLINE_RE.match(lines[0]):  # a stray rule line
        return _chunk_blocks(lines[1:]) if len(lines) > 1 else []
    if len(lines) >= 2 and _UNDERLINE_RE.match(lines[1]) and _is_short(lines[0].strip()):
        text = collapse_ws(lines[0])
        level = 1 if lines[1].strip().startswith("=") else 2
        return [heading_block(text, level)] + (_chunk_blocks(lines[2:]) if len(lines) > 2 else [])
    if len(lines) == 1:
        single = _single_line_heading(collapse_ws(lines[0]))
        if single is not None:
            return [single]
    return _runs(lines)


def _is_short(line: str) -> bool:
    """One short line that does not end like a sentence."""
    return 0 < len(line.split()) <= _MAX_HEADING_WORDS and line[-1] not in ".:;,"


def _single_line_heading(line: str) -> Block | None:
    """A heading block if a one-line paragraph looks like a heading, else None."""
    if not _is_short(line) or line[0] in "-*+\u2022" or parse_caption(line):
        return None
    number = heading_number(line)
    if number is not None and line[len(number) :].lstrip(". ")[:1].isupper():
        return heading_block(line, number_depth(number), number)
    letters = [c for c in line if c.isalpha()]
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return heading_block(line, 1)
    return None


def _runs(lines: list[str]) -> list[Block]:
    """Split a chunk into paragraph runs and list runs, in order."""
    blocks: list[Block] = []
    para: list[str] = []
    items: list[list[str]] = []
    for line in lines:
        m = _ITEM_RE.match(line)
        if m:
            if para:
                blocks.append(_paragraph(para))
                para = []
            items.append([m.group("text")])
        elif items:
            items[-1].append(line)  # a wrapped list item
        else:
            para.append(line)
    if para:
        blocks.append(_paragraph(para))
    if items:
        texts = [join_wrapped(item) for item in items]
        blocks.append(list_block(texts))
    return blocks


def _paragraph(lines: list[str]) -> Block:
    """A paragraph or caption block from wrapped lines."""
    text = join_wrapped(lines)
    return caption_block(text) or Block(kind="paragraph", text=text)
