"""Text helpers shared by the HTML, Markdown and plain-text parsers.

Reading a file leniently, collapsing whitespace, recognising captions ("Table 2: …",
"Fig. 3.") and section numbers ("2.1 Methods"), joining hard-wrapped lines, and
building the heading, caption and table blocks every parser makes alike.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...errors import DocumentError, NotFoundError
from .blocks import Block, TableCell
from .linejoin import join_wrapped

__all__ = [
    "read_text",
    "collapse_ws",
    "parse_caption",
    "heading_number",
    "number_depth",
    "join_wrapped",
    "table_text",
    "caption_block",
    "number_captioned",
    "heading_block",
    "list_block",
]

_WS_RE = re.compile(r"\s+")

# A label: "3", "2.1", "S1", "A.2" or a Roman numeral ("IV").
_LABEL = r"(?:[A-Z]\.?)?\d+(?:\.\d+)*[a-z]?|[IVXLC]+"
_CAPTION_RE = re.compile(
    rf"^\s*(?P<kind>(?i:table|figure|fig\.?))\s*(?P<num>{_LABEL})"
    r"(?P<sep>\s*[:.|\u2013\u2014-]|\s*$)?"
)
# A section number at the start of a heading: "2", "2.1", "2.1.", "A.1", "IV." (Roman
# numerals need the dot, so that "I Was There" is not numbered).
_HEADING_NUM_RE = re.compile(
    r"^\s*(?:(?P<num>\d{1,2}(?:\.\d{1,2})*|[A-Z](?:\.\d{1,2})+)\.?|(?P<roman>[IVX]{1,5})\.)\s+\S"
)


def read_text(path: Path) -> str:
    """Return a file's text, decoded as UTF-8 with undecodable bytes replaced."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError as exc:
        raise NotFoundError(f"No such document: {path}. Check the path.") from exc
    except OSError as exc:
        raise DocumentError(f"Cannot read document {path}: {exc.strerror or exc}.") from exc
    text = data.decode("utf-8", errors="replace")
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def collapse_ws(text: str) -> str:
    """Collapse runs of whitespace to one space and strip the ends."""
    return _WS_RE.sub(" ", text).strip()


def parse_caption(text: str, strict: bool = True) -> tuple[str, str] | None:
    """Return ``(label, number)`` if ``text`` starts like a caption, else ``None``.

    ``label`` is "table" or "figure". With ``strict`` the number must be followed by
    punctuation ("Table 1:", "Fig. 3.", "Figure 2 —"), so that running text such as
    "Table 1 shows …" is not taken for a caption.
    """
    m = _CAPTION_RE.match(text)
    if m is None or (strict and m.group("sep") is None):
        return None
    label = "table" if m.group("kind").lower() == "table" else "figure"
    return label, m.group("num")


def heading_number(text: str) -> str | None:
    """Return the section number a heading starts with ("2.1 Methods" → "2.1")."""
    m = _HEADING_NUM_RE.match(text)
    return (m.group("num") or m.group("roman")) if m else None


def number_depth(number: str) -> int:
    """Return how many components a section number has ("2.1" → 2, "IV" → 1)."""
    return number.count(".") + 1


def table_text(cells: list[TableCell]) -> str:
    """Render table cells as plain text: one line per row, cells joined by " | "."""
    rows: dict[int, list[TableCell]] = {}
    for cell in cells:
        rows.setdefault(cell.row, []).append(cell)
    lines = (
        " | ".join(c.text for c in sorted(r, key=lambda c: c.col)) for _, r in sorted(rows.items())
    )
    return "\n".join(lines)


def list_block(items: list[str]) -> Block:
    """A list block: ``items``, and as text the items one per line."""
    return Block(kind="list", text="\n".join(items), items=items)


def caption_block(text: str, strict: bool = True, default_label: str | None = None) -> Block | None:
    """A caption block for ``text`` ("Table 2: …" → label "table", number "2").

    Returns ``None`` when the text is not a caption, unless ``default_label`` is given
    (text known to be a caption, e.g. an HTML ``<caption>``): then the label defaults
    to it and the number stays unset.
    """
    parsed = parse_caption(text, strict=strict)
    if parsed is None and default_label is None:
        return None
    label, number = parsed if parsed else (default_label, None)
    return Block(kind="caption", text=text, label=label, number=number)


def number_captioned(blocks: list[Block]) -> None:
    """Give a numbered caption's table or figure the caption's number, in place.

    The captioned block is the caption's neighbour of the caption's kind: the block
    before it if that fits, else the block after it. Blocks already numbered keep
    their number.
    """
    for i, block in enumerate(blocks):
        if block.kind != "caption" or not block.label or not block.number:
            continue
        for j in (i - 1, i + 1):
            if 0 <= j < len(blocks) and blocks[j].kind == block.label and not blocks[j].number:
                blocks[j].number = block.number
                break


def heading_block(text: str, level: int, number: str | None = None) -> Block:
    """A heading block; ``number`` defaults to the section number the text starts with."""
    return Block(kind="heading", text=text, level=level, number=number or heading_number(text))
