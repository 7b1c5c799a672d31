"""Text blocks of a PDF page with the font facts the layout analysis needs.

Turns pymupdf's ``get_text("dict")`` into :class:`TextBlock` records: lines merged
and de-hyphenated, with dominant font size, boldness, monospace and maths shares.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pymupdf

from .tex_encodings import FontEncodings, decode
from .linejoin import join_wrapped as join_lines

__all__ = ["LIGATURES", "union", "TextLine", "TextBlock", "page_text_blocks", "join_lines", "body_font_size"]

BBox = tuple[float, float, float, float]

_BOLD_FONT = re.compile(r"bold|demi|black|heavy|semibold|cmbx|cmb\d", re.I)
_ITALIC_FONT = re.compile(r"italic|oblique|slant|cmti", re.I)
_MONO_FONT = re.compile(r"mono|nimbusmon|courier|cmtt|cmsltt|sftt|sfst|consol|typewriter", re.I)
_MATH_FONT = re.compile(r"math|cmmi|cmsy|cmex|symbol|msbm|msam|rsfs|eufm", re.I)
# Ligatures, and the private-use pieces of Adobe Symbol's tall delimiters (U+F8EB–U+F8FE): the top of a
# left delimiter and the bottom of a right one become the delimiter; extension pieces vanish.
_DELIMITER_PIECES = {
    0xF8EB: "(", 0xF8EE: "[", 0xF8F1: "{", 0xF8F8: ")", 0xF8FB: "]", 0xF8FE: "}",
    **{code: "" for code in (0xF8EC, 0xF8ED, 0xF8EF, 0xF8F0, 0xF8F2, 0xF8F3, 0xF8F4, 0xF8F5, 0xF8F6, 0xF8F7, 0xF8F9, 0xF8FA, 0xF8FC, 0xF8FD)},
}  # fmt: skip
LIGATURES = str.maketrans({"ﬁ": "fi", "ﬂ": "fl", "ﬀ": "ff", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st", **{chr(k): v for k, v in _DELIMITER_PIECES.items()}})
#: TeX's spacing accents, set before their letter ("R¨ohmel"), and the combining marks they stand for.
_ACCENTS = {"¨": "\u0308", "´": "\u0301", "ˆ": "\u0302", "˜": "\u0303", "ˇ": "\u030c", "˚": "\u030a", "˘": "\u0306", "˙": "\u0307", "¯": "\u0304", "˝": "\u030b"}
_ACCENTED = re.compile(f"(?<![^\\s\\w(“\"'-])([{''.join(_ACCENTS)}])([A-Za-z])")  # not in code: "/ˆregex$/"


def compose_accents(text: str) -> str:
    """Put TeX's accents on their letters.

    >>> compose_accents("R¨ohmel and Erd˝os, Dvoˇr´ak"), compose_accents("match /ˆregex$/")
    ('Röhmel and Erdős, Dvořák', 'match /ˆregex$/')
    """
    return _ACCENTED.sub(lambda m: unicodedata.normalize("NFC", m.group(2) + _ACCENTS[m.group(1)]), text)
_TEXT_FLAGS = pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_PRESERVE_WHITESPACE


@dataclass
class TextLine:
    """One line of text with its box and font facts."""

    text: str
    bbox: BBox
    size: float
    bold: bool
    chars: int
    mono_chars: int
    math_chars: int
    italic: bool = False
    marks: list[BBox] = field(default_factory=list)  # footnote marks raised after a word ("dense" + raised "a")
    raised_tail: str = ""  # a small raised number ending the line right after a word ("Comments" + raised "7"): a heading's footnote mark


@dataclass
class TextBlock:
    """A pymupdf text block: lines in order plus aggregate font facts."""

    lines: list[TextLine]
    bbox: BBox
    page: int
    kind: str = "paragraph"
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return join_lines([line.text for line in self.lines])

    @property
    def chars(self) -> int:
        return sum(line.chars for line in self.lines) or 1

    @property
    def size(self) -> float:
        """Font size covering the most characters."""
        sizes: Counter[float] = Counter()
        for line in self.lines:
            sizes[line.size] += line.chars
        return sizes.most_common(1)[0][0] if sizes else 0.0

    @property
    def bold(self) -> bool:
        return all(line.bold for line in self.lines if line.text.strip())

    @property
    def italic(self) -> bool:
        return all(line.italic for line in self.lines if line.text.strip())

    @property
    def mono_share(self) -> float:
        return sum(line.mono_chars for line in self.lines) / self.chars

    @property
    def math_share(self) -> float:
        return sum(line.math_chars for line in self.lines) / self.chars


@functools.lru_cache(maxsize=4096)
def _font_traits(font: str) -> tuple[bool, bool, bool, bool]:
    """Whether a font's name says bold, italic, monospaced, maths (a document uses few fonts: cached)."""
    return (
        bool(_BOLD_FONT.search(font)),
        bool(_ITALIC_FONT.search(font)),
        bool(_MONO_FONT.search(font)),
        bool(_MATH_FONT.search(font)),
    )


def _fixed_pitch(spans: list[dict[str, Any]]) -> set[str]:
    """Fonts a page sets at one width per character though their names do not say so (typewriter text in TeX's
    Type 3 bitmap fonts, named "F49"): six spans or more of three characters or more with letters, five of them different,
    ten different letters among them, nine in ten of whose widths per character and size are within 1.5% of
    their median (a span opening with a space, as pymupdf sets one, is a little off).
    """
    widths: dict[str, list[tuple[float, str]]] = {}
    for span in spans:
        text = str(span["text"]).strip()  # a span's box leaves out its leading and trailing spaces
        if len(text) >= 3 and sum(c.isalpha() for c in text) >= 2 and float(span["size"]) > 0:  # digits are of one width in most fonts
            widths.setdefault(str(span["font"]), []).append(((span["bbox"][2] - span["bbox"][0]) / len(text) / float(span["size"]), text))
    fixed: set[str] = set()
    for font, seen in widths.items():
        texts = {text for _, text in seen}
        letters = {c for text in texts for c in text if c.isalpha()}
        per_char = sorted(w for w, _ in seen)
        usual = per_char[len(per_char) // 2]
        steady = sum(1 for w in per_char if abs(w - usual) <= 0.015 * usual)
        if len(seen) >= 6 and len(texts) >= 5 and len(letters) >= 10 and steady >= 0.9 * len(seen):
            fixed.add(font)
    return fixed


def _line_record(spans: list[dict[str, Any]], bbox: BBox, encodings: dict[str, dict[int, str]], fixed: set[str] | frozenset[str] = frozenset()) -> TextLine | None:
    text = "".join(decode(str(s["text"]), encodings.get(str(s["font"]))) for s in spans).translate(LIGATURES)
    text = compose_accents(text)
    if not text.strip():
        return None
    sizes: Counter[float] = Counter()
    chars = bold_chars = mono = math = italic_chars = 0
    for s in spans:
        n = len(str(s["text"]).strip())
        if not n:
            continue
        font = str(s["font"])
        flags = int(s["flags"])
        chars += n
        sizes[round(float(s["size"]), 1)] += n
        bold_font, italic_font, mono_font, math_font = _font_traits(font)
        if flags & 16 or bold_font:
            bold_chars += n
        if flags & 2 or italic_font:
            italic_chars += n
        if flags & 8 or mono_font or font in fixed:
            mono += n
        if math_font:
            math += n
    if not chars:
        return None
    return TextLine(
        raised_tail=_raised_tail(spans),
        marks=[tuple(s["bbox"]) for before, s in zip(spans, spans[1:]) if _footnote_mark(s, before)],
        text=text,
        bbox=bbox,
        size=sizes.most_common(1)[0][0],
        bold=bold_chars >= 0.8 * chars,
        chars=chars,
        mono_chars=mono,
        math_chars=math,
        italic=italic_chars >= 0.8 * chars,
    )


#: Footnote marks set raised after a word; digits are left alone (exponents).
_MARKS = set("abcdefgh*†‡§¶")


def _footnote_mark(span: dict[str, Any], before: dict[str, Any]) -> bool:
    """A raised mark (:data:`_MARKS`) in a smaller size right after a word ("clmm2" + raised "c", "Gumbel (max)" + raised "b"),
    or a small digit right after a decimal number or a sign ("760.4" + "2", "√" + "1": no power of a rounded value or
    a tick; set up the page, pymupdf flags no superscript, so the size says it)."""
    text, word = str(span["text"]), str(before["text"]).split()[-1:] or [""]
    last, smaller = word[0][-1:], float(span["size"]) < 0.85 * float(before["size"])
    if text.isdigit() and len(text) == 1 and (_DECIMAL.match(word[0]) or last in "√✓✗—–*"):
        return smaller and (bool(int(span["flags"]) & 1) or float(span["size"]) < 0.75 * float(before["size"]))
    return bool(int(span["flags"]) & 1) and text in _MARKS and (last.isalnum() or last in ")]") and smaller


_DECIMAL = re.compile(r"^[-−]?\d+\.\d+$")


def _raised_tail(spans: list[dict[str, Any]]) -> str:
    """The line's last span when it is a one- or two-digit number set smaller and raised right after a letter, else ""."""
    filled = [sp for sp in spans if str(sp["text"]).strip()]
    if len(filled) < 2:
        return ""
    before, last = filled[-2], filled[-1]
    text, size = str(last["text"]).strip(), float(before["size"])
    raised = bool(int(last["flags"]) & 1) or float(last["bbox"][3]) < float(before["bbox"][3]) - 0.15 * size
    return text if text.isdigit() and len(text) <= 2 and str(before["text"]).rstrip()[-1:].isalpha() and float(last["size"]) < 0.85 * size and raised else ""


def page_text_blocks(page: pymupdf.Page, fonts: FontEncodings | None = None) -> list[TextBlock]:
    """The page's non-empty text blocks, with their lines; ``fonts`` learns the document's TeX encodings across calls."""
    blocks: list[TextBlock] = []
    data = page.get_text("dict", flags=_TEXT_FLAGS)
    fonts = fonts if fonts is not None else FontEncodings()
    fonts.learn([span for raw in data["blocks"] for raw_line in raw.get("lines", []) for span in raw_line["spans"]], page.number)
    encodings = fonts.tables
    fixed = _fixed_pitch([span for raw in data["blocks"] for raw_line in raw.get("lines", []) for span in raw_line["spans"]])
    last_spans: list[dict[str, Any]] = []  # the raw spans of the last line kept
    last_dir: tuple[float, ...] = ()  # and the way it runs
    for raw in data["blocks"]:
        if raw.get("type") != 0:
            continue
        lines = []
        for raw_line in raw["lines"]:
            line = _line_record(raw_line["spans"], tuple(raw_line["bbox"]), encodings, fixed)
            if line is not None:
                lines.append(line)
        if not lines:
            continue
        if blocks and (
            _continues_row(last_spans, raw["lines"][0]["spans"], blocks[-1].lines[-1].bbox, lines[0].bbox)
            or _next_sideways_line(last_dir, tuple(raw["lines"][0]["dir"]), blocks[-1].lines[-1].bbox, lines[0].bbox)
        ):
            blocks[-1].lines.extend(lines)
            blocks[-1].bbox = union([blocks[-1].bbox, *(ln.bbox for ln in lines)])
        else:
            blocks.append(TextBlock(lines=lines, bbox=union([ln.bbox for ln in lines]), page=page.number + 1))
        last_spans = raw["lines"][-1]["spans"]
        last_dir = tuple(raw["lines"][-1]["dir"])
    return blocks


def _next_sideways_line(before: tuple[float, ...], direction: tuple[float, ...], last: BBox, first: BBox) -> bool:
    """A block that is the next line of sideways text (a caption on a rotated page): PyMuPDF makes each such line a
    block of its own, so "Figure 2: Upper row: …" lost its "Lower row: …" (vcd's residual-shadings)."""
    if not before or before != direction or abs(direction[0]) > 0.1:
        return False
    width, length = last[2] - last[0], last[3] - last[1]
    gap = first[0] - last[2] if direction[1] < 0 else last[0] - first[2]  # read upwards, lines go right; downwards, left
    start = abs(last[3] - first[3]) if direction[1] < 0 else abs(last[1] - first[1])
    return length >= 150 and start <= 2 and -1.0 <= gap <= 0.8 * width  # a long line, the next starting where it did: no table row


def _continues_row(before: list[dict[str, Any]], spans: list[dict[str, Any]], last: BBox, first: BBox) -> bool:
    """A block that goes on with the last line's row: it opens with a script (a subscript set under a superscript, "x₁²")
    where that line ends, so PyMuPDF began a new block there ("… = x2" / "1 + x2x3, with …")."""
    opening = next((sp for sp in spans if sp["text"].strip()), None)
    body = max((sp["size"] for sp in before if sp["text"].strip()), default=0.0)
    overlap = min(last[3], first[3]) - max(last[1], first[1])
    return opening is not None and opening["size"] < 0.85 * body and overlap > 0.5 * min(last[3] - last[1], first[3] - first[1]) and -6 <= first[0] - last[2] <= 2


def body_font_size(pages: list[list[TextBlock]]) -> float:
    """The font size that covers the most characters in the document (the body text)."""
    sizes: Counter[float] = Counter()
    for blocks in pages:
        for block in blocks:
            for line in block.lines:
                sizes[line.size] += line.chars
    return sizes.most_common(1)[0][0] if sizes else 10.0


def union(boxes: list[BBox]) -> BBox:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )
