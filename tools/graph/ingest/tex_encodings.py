"""Text of TeX's Type 3 fonts, which carry no Unicode map.

dvips embeds fonts as bitmaps named ``F25``…; pymupdf then returns the raw codes, and TeX's
encodings put ligatures, dashes and quotes below 0x20: "di\\x1berence" is "difference" in the Cork
(T1) encoding, "\\x0cgure" is "figure" in OT1. Each font of a document is decided by the codes it
uses inside words anywhere in it (OT1's ligatures at 0x0B–0x0F, T1's at 0x1B–0x1F); a font with no
such evidence (a maths font's Greek letters) keeps its codes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["T1", "OT1", "font_tables", "decode", "has_codes", "FontEncodings"]

T1: dict[int, str] = {
    0x0D: "‚", 0x0E: "‹", 0x0F: "›", 0x10: "“", 0x11: "”", 0x12: "„", 0x13: "«", 0x14: "»", 0x15: "–", 0x16: "—",
    0x17: "", 0x19: "ı", 0x1A: "ȷ", 0x1B: "ff", 0x1C: "fi", 0x1D: "fl", 0x1E: "ffi", 0x1F: "ffl",
}  # fmt: skip
OT1: dict[int, str] = {
    0x0B: "ff", 0x0C: "fi", 0x0D: "fl", 0x0E: "ffi", 0x0F: "ffl", 0x10: "ı", 0x11: "ȷ",
    0x19: "ß", 0x1A: "æ", 0x1B: "œ", 0x1C: "ø", 0x1D: "Æ", 0x1E: "Œ", 0x1F: "Ø",
}  # fmt: skip
_CODES = re.compile(r"[\x0b-\x1f]")
_OT1_IN_WORD = re.compile(r"[A-Za-z][\x0b-\x0f]|[\x0b-\x0f][a-z]")
_T1_IN_WORD = re.compile(r"[A-Za-z][\x1b-\x1f]|[\x1b-\x1f][a-z]")


def has_codes(text: str) -> bool:
    """Whether ``text`` holds a control code an encoding could mean (tab, newline and carriage return aside)."""
    return bool(_CODES.search(text.replace("\n", "").replace("\r", "")))


def font_tables(spans: Iterable[Mapping[str, Any]]) -> dict[str, dict[int, str]]:
    """The encoding table of each font among ``spans`` that uses TeX's codes inside words.

    >>> font_tables([{"font": "F25", "text": "di\\x1berence"}, {"font": "F50", "text": "\\x1b"}])["F25"][0x1B]
    'ff'
    >>> sorted(font_tables([{"font": "F25", "text": "\\x0cgure"}, {"font": "F50", "text": "\\x1b"}]))
    ['F25']
    """
    tables: dict[str, dict[int, str]] = {}
    for span in spans:
        text, font = str(span["text"]), str(span["font"])
        if font in tables or not has_codes(text):
            continue
        if _OT1_IN_WORD.search(text):
            tables[font] = OT1
        elif _T1_IN_WORD.search(text):
            tables[font] = T1
    return tables


def decode(text: str, table: Mapping[int, str] | None) -> str:
    """``text`` with its codes read through ``table`` (unchanged without one).

    >>> decode("In\\x1duence of \\x10survival\\x11 \\x15 50\\x1559", T1)
    'Influence of “survival” – 50–59'
    """
    return text.translate(table) if table and has_codes(text) else text


@dataclass
class FontEncodings:
    """The tables of one document's fonts, learnt page by page.

    A page read while one of its fonts with codes was still unknown is listed in ``unsure``; once a
    later page decides that font, :meth:`to_reread` names the page, to be read again.
    """

    tables: dict[str, dict[int, str]] = field(default_factory=dict)
    unsure: dict[int, set[str]] = field(default_factory=dict)

    def learn(self, spans: list[Mapping[str, Any]], page: int) -> None:
        for font, table in font_tables(spans).items():
            self.tables.setdefault(font, table)
        unknown = {str(s["font"]) for s in spans if str(s["font"]) not in self.tables and has_codes(str(s["text"]))}
        if unknown:
            self.unsure[page] = unknown

    def to_reread(self) -> list[int]:
        """Pages read before a font of theirs was decided, in order (each listed once)."""
        pages = sorted(p for p, fonts in self.unsure.items() if fonts & self.tables.keys())
        for page in pages:
            del self.unsure[page]
        return pages

    @property
    def text_table(self) -> dict[int, str] | None:
        """One table for text read without fonts (words, clipped cells): T1 when a text font uses it, else OT1, else none."""
        tables = list(self.tables.values())
        return T1 if T1 in tables else (OT1 if OT1 in tables else None)
