"""The parsed form of a document: an ordered list of layout blocks.

Every format parser (PDF, HTML, Markdown, plain text) turns its input into a
:class:`ParsedDocument`; one builder turns that into a knowledge graph. Blocks are
in reading order.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["BlockKind", "TableCell", "Block", "ParsedDocument", "REFERENCE_HEADING"]

#: A heading that opens a bibliography ("References", "7. Bibliography", …).
REFERENCE_HEADING = re.compile(
    r"^\s*(?:[\dA-Z]+\.?\s+)?(references|bibliography|literature cited|works cited|sources)\s*$", re.I
)

BlockKind = Literal[
    "heading",
    "paragraph",
    "list",
    "table",
    "figure",
    "caption",
    "formula",
    "footnote",
    "reference",
    "code",
    "listing",
]


class TableCell(BaseModel):
    """One table cell; ``header`` marks header-row cells, ``span`` the columns a cell covers."""

    row: int
    col: int
    text: str
    header: bool = False
    span: int = 1
    bbox: tuple[float, float, float, float] | None = None


class Block(BaseModel):
    """One layout block in reading order.

    ``level`` is the heading level (1 = top); ``number`` the label a block is referred
    to by ("2" for "Table 2", "4.1" for a section, "5" for equation (5));
    ``label`` for captions is "table" or "figure" — the kind of thing captioned.
    """

    kind: BlockKind
    text: str = ""
    level: int | None = None
    number: str | None = None
    label: str | None = None
    items: list[str] = Field(default_factory=list, description="List items (kind 'list').")
    cells: list[TableCell] = Field(default_factory=list, description="Table cells (kind 'table').")
    page: int | None = Field(None, description="1-based page (PDF).")
    bbox: tuple[float, float, float, float] | None = None
    end_page: int | None = Field(None, description="Last page of a block spanning pages (tables).")
    continues: bool = Field(False, description="A reference's rows that end the entry before it (its block began mid-entry).")


class ParsedDocument(BaseModel):
    """A document as parsed: title, blocks in reading order, and format facts."""

    path: str
    format: Literal["pdf", "html", "markdown", "text"]
    title: str = ""
    pages: int = 1
    blocks: list[Block] = Field(default_factory=list)
    outline: list[tuple[int, str, int]] = Field(
        default_factory=list, description="(level, title, page) from the PDF outline."
    )
    chapters: bool = Field(True, description="Whether the document calls its own parts chapters (a PDF: a running head or heading mark \"Chapter N\"); else \"Chapter 3\" names another work's.")
