"""Where tables stand on a page when no caption and grid say so: runs of rules of one width, lines set with
space alone under a header in another style, aligned numbers, the aligned lines next to a caption.

Cells are read from the words found here by :func:`.pdf_tables.read_cells`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .pdf_tables import BBox, Word, lines_of, phrases_of
from .pdf_text import TextBlock, TextLine

__all__ = ["mono_share", "rule_runs", "whitespace_tables", "value_grids", "captioned_lines"]

_lines = lines_of
_phrases = phrases_of


def mono_share(blocks: Sequence[TextBlock], area: BBox) -> float:
    """Share of the characters inside ``area`` set in a monospace font (code, not a table)."""
    chars = mono = 0
    for block in blocks:
        for line in block.lines:
            b = line.bbox
            if b[0] >= area[0] - 2 and b[2] <= area[2] + 2 and b[1] >= area[1] - 2 and b[3] <= area[3] + 2:
                chars += line.chars
                mono += line.mono_chars
    return mono / chars if chars else 0.0


def rule_runs(rules: list[BBox], words: Sequence[Word], fills: Sequence[BBox]) -> list[list[BBox]]:
    """Runs of horizontal rules of one width that bound a single table between them.

    A run breaks where something between two rules does not belong to a table of
    that width: a word reaching past the rules' ends or a filled box (a code
    listing's background).
    """
    runs: list[list[BBox]] = []
    for rule in sorted(rules, key=lambda r: r[1]):
        run = next((r for r in reversed(runs) if abs(r[-1][0] - rule[0]) < 3 and abs(r[-1][2] - rule[2]) < 3), None)
        if run is not None and _joins(run[-1], rule, words, fills):
            run.append(rule)
        else:
            runs.append([rule])
    return [run for run in runs if len(run) >= 2]


def _joins(upper: BBox, lower: BBox, words: Sequence[Word], fills: Sequence[BBox]) -> bool:
    top, bottom = upper[1], lower[1]
    between = [w for w in words if w.centre > top and w.centre < bottom]
    if not between:
        return False
    if any(w.x1 > upper[2] + 2 or w.x0 < upper[0] - 2 for w in between):
        return False
    return not any(f[1] < bottom and f[3] > top and f[2] > upper[0] and f[0] < upper[2] for f in fills)


def whitespace_tables(blocks: Sequence[TextBlock], words: Sequence[Word], body_size: float) -> list[tuple[BBox, int]]:
    """Tables set with space alone: a header line in another style over aligned columns.

    Returns (area, header lines). The header must differ in style from the rows
    (bold, or proportional over monospace rows) and every line must break into
    the same columns, so aligned code and author blocks are not taken.
    """
    styled = [line for block in blocks for line in block.lines]
    found: list[tuple[BBox, int]] = []
    lines = _lines(words, body_size)
    phrases = [_phrases(ln, 1.2 * body_size) for ln in lines]
    i = 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and len(phrases[j + 1]) >= 2 and lines[j + 1][0].y0 - lines[j][0].y1 < 1.2 * body_size:
            j += 1
        if j - i >= 2 and len(phrases[i]) >= 2 and _aligned(phrases[i:j + 1]) and _header_differs(lines[i], lines[i + 1:j + 1], styled):
            run = [w for ln in lines[i:j + 1] for w in ln]
            found.append(((min(w.x0 for w in run), min(w.y0 for w in run), max(w.x1 for w in run), max(w.y1 for w in run)), 1))
        i = j + 1
    return found


_VALUE = re.compile(r"^[-+−–]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)%?$")


def value_grids(words: Sequence[Word], body_size: float) -> list[BBox]:
    """Areas of five or more lines set in the same three or more aligned columns, four in five of their
    cells numbers: a table with no rules or caption beside it (a long table's middle page). A run of prose,
    code or a formula does not break into one column count line after line with numbers in them.
    """
    lines = _lines(words, body_size)
    phrases = [_phrases(ln, 0.6 * body_size) for ln in lines]
    found: list[BBox] = []
    i = 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and len(phrases[j + 1]) == len(phrases[i]) and lines[j + 1][0].y0 - lines[j][-1].y1 < 1.2 * body_size:
            j += 1
        run = phrases[i : j + 1]
        cells = [" ".join(w.text for w in p) for row in run for p in row]
        numbers = sum(1 for c in cells if _VALUE.match(c))
        if j - i >= 4 and len(phrases[i]) >= 3 and numbers >= 0.8 * len(cells) and _aligned(run):
            taken = [w for ln in lines[i : j + 1] for w in ln]
            found.append((min(w.x0 for w in taken), min(w.y0 for w in taken), max(w.x1 for w in taken), max(w.y1 for w in taken)))
        i = j + 1
    return found


def captioned_lines(words: Sequence[Word], caption: BBox, body_size: float) -> list[Word]:
    """The words of a captioned table set without rules: the lines right above the caption (else right below).

    Lines are taken while no gap between them exceeds two body lines and each breaks into at least two
    phrases, or is short (a group label, a spanning header) and centred over the lines taken; a line of
    prose ends the run. Empty when fewer than two lines of phrases qualify.
    """
    lines = [ln for ln in _lines(words, body_size) if _x_overlap_words(ln, caption)]
    above = [ln for ln in lines if ln[0].y1 <= caption[1] + 1][::-1]
    below = [ln for ln in lines if ln[0].y0 >= caption[3] - 1]
    width = caption[2] - caption[0]
    for side, edge in ((above, caption[1]), (below, caption[3])):
        taken: list[list[Word]] = []
        for line in side:
            gap = (edge - max(w.y1 for w in line)) if side is above else (min(w.y0 for w in line) - edge)
            reach = max(width, max((ln[-1].x1 for ln in taken), default=0.0) - min((ln[0].x0 for ln in taken), default=0.0))
            if gap > 2.5 * body_size or (len(_phrases(line, 0.6 * body_size)) < 2 and line[-1].x1 - line[0].x0 >= 0.6 * reach):
                break
            taken.append(line)
            edge = min(w.y0 for w in line) if side is above else max(w.y1 for w in line)
        if sum(1 for ln in taken if len(_phrases(ln, 0.6 * body_size)) >= 2) >= 2:
            area = (min(ln[0].x0 for ln in taken), min(w.y0 for ln in taken for w in ln), max(ln[-1].x1 for ln in taken), max(w.y1 for ln in taken for w in ln))
            return [w for w in words if w.x0 >= area[0] - 1 and w.x1 <= area[2] + 1 and area[1] - 1 <= w.centre <= area[3] + 1]  # rows off the caption's width too
    return []


def _x_overlap_words(line: list[Word], box: BBox) -> bool:
    return min(line[-1].x1, box[2]) > max(line[0].x0, box[0])


def _aligned(rows: list[list[list[Word]]]) -> bool:
    """Every row has the same number of columns, starting (or ending) at the same x."""
    width = len(rows[1])
    if any(len(r) != width for r in rows[2:]) or len(rows[0]) > width:
        return False
    for col in range(width):
        starts = [r[col][0].x0 for r in rows[1:]]
        ends = [r[col][-1].x1 for r in rows[1:]]
        if max(starts) - min(starts) > 3 and max(ends) - min(ends) > 3:
            return False
    return True


def _style(words: list[Word], styled: list[TextLine]) -> tuple[bool, bool] | None:
    """(bold, monospace) of the text line holding ``words``."""
    y = words[0].centre
    for line in styled:
        b = line.bbox
        if b[1] <= y <= b[3] and b[0] <= words[0].x1 and b[2] >= words[0].x0:
            return line.bold, line.mono_chars >= 0.8 * line.chars
    return None


def _header_differs(head: list[Word], rows: list[list[Word]], styled: list[TextLine]) -> bool:
    top = _style(head, styled)
    below = [_style(r, styled) for r in rows]
    if top is None or any(s is None for s in below):
        return False
    bold, mono = top
    return (bold and not any(s[0] for s in below if s)) or (not mono and all(s[1] for s in below if s))
