"""Layout analysis of PDF text blocks: running heads, captions, formulas, headings, columns.

Headings are found from font statistics — size and weight relative to the body
text — and section numbering, not from a fixed size cut; the PDF outline, when
there is one, confirms them, sets their level and recovers the ones the
statistics missed.
"""

from __future__ import annotations

import re
from collections import Counter

from .pdf_text import TextBlock, union

__all__ = [
    "CAPTION_RE",
    "drop_running_heads",
    "caption_of",
    "merge_formulas",
    "classify",
    "resolve_headings",
    "reading_order",
]

BBox = tuple[float, float, float, float]

CAPTION_RE = re.compile(r"^\s*(Table|Tab\.|Figure|Fig\.)\s*([A-Z]?\d+(?:\.\d+)*)\s*[:.|—–-]\s*", re.I)
SECTION_NUMBER_RE = re.compile(r"^((?:\d+|[A-Z])(?:\.\d+)*)\.?\s+(?=\S)")
EQ_LABEL_RE = re.compile(r"^\(\s*(\d+[a-z]?)\s*\)$")
BULLET_RE = re.compile(r"^\s*(?:[•●◦▪∙·–—∗*-]|\(?[a-z0-9]{1,2}[.)])\s+")
UNNUMBERED_SECTIONS = {
    "abstract", "references", "bibliography", "acknowledgments", "acknowledgements",
    "acknowledgment", "appendix", "contents", "index", "conclusion", "conclusions",
    "introduction", "summary", "notes", "affiliation", "affiliations",
}


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def drop_running_heads(pages: list[list[TextBlock]], page_height: float) -> list[list[TextBlock]]:
    """Remove page numbers and running heads/feet that repeat in the margins."""
    margin_keys: Counter[str] = Counter()

    def key(block: TextBlock) -> str | None:
        in_margin = block.bbox[3] < 0.11 * page_height or block.bbox[1] > 0.92 * page_height
        if not in_margin or len(block.lines) > 2:
            return None
        return _norm(re.sub(r"\d+", "", block.text))

    for blocks in pages:
        for k in {key(b) for b in blocks} - {None}:
            margin_keys[k] += 1  # type: ignore[index]
    threshold = max(2, int(0.3 * len(pages)))
    kept = []
    for blocks in pages:
        kept.append([b for b in blocks if (k := key(b)) is None or (k and margin_keys[k] < threshold)])
    return kept


def caption_of(block: TextBlock) -> tuple[str, str] | None:
    """("table" | "figure", number) when the block is a caption like "Table 2: …"."""
    match = CAPTION_RE.match(block.text)
    if not match or len(block.lines) > 12:
        return None
    label = "table" if match.group(1).lower().startswith("tab") else "figure"
    return label, match.group(2)


def _equation_label(block: TextBlock, page_width: float) -> str | None:
    for line in block.lines:
        m = EQ_LABEL_RE.match(line.text.strip())
        if m and line.bbox[0] > 0.7 * page_width:
            return m.group(1)
    return None


def merge_formulas(blocks: list[TextBlock], page_width: float, body_size: float) -> list[TextBlock]:
    """Merge the fragments of display equations into one ``formula`` block each.

    A fragment is a block that is mostly maths-font text, an equation label "(n)"
    at the right margin, or a short block sharing a text row with such a block.
    Vertically touching fragments form one formula; its number is its label.
    """
    def is_fragment(b: TextBlock) -> bool:
        return b.math_share >= 0.3 or _equation_label(b, page_width) is not None

    ordered = sorted(blocks, key=lambda b: (b.bbox[1], b.bbox[0]))
    fragment = [is_fragment(b) for b in ordered]
    for i, b in enumerate(ordered):  # small blocks on a fragment's row belong to it
        if not fragment[i] and len(b.lines) <= 2 and (b.bbox[2] - b.bbox[0]) < 0.5 * page_width:
            fragment[i] = any(
                fragment[j] and min(b.bbox[3], o.bbox[3]) - max(b.bbox[1], o.bbox[1]) > 0.3 * body_size
                for j, o in enumerate(ordered)
                if j != i
            )
    out: list[TextBlock] = []
    group: list[TextBlock] = []

    def flush() -> None:
        if not group:
            return
        lines = [ln for b in sorted(group, key=lambda b: (round(b.bbox[1] / body_size), b.bbox[0])) for ln in b.lines]
        merged = TextBlock(lines=lines, bbox=union([b.bbox for b in group]), page=group[0].page, kind="formula")
        label = next((n for b in group if (n := _equation_label(b, page_width))), None)
        if label:
            merged.lines = [ln for ln in lines if not EQ_LABEL_RE.match(ln.text.strip())] or lines
            merged.attrs["number"] = label
        out.append(merged)
        group.clear()

    for b, frag in zip(ordered, fragment):
        if frag and (not group or b.bbox[1] <= max(g.bbox[3] for g in group) + 0.6 * body_size):
            group.append(b)
            continue
        flush()
        if frag:
            group.append(b)
        else:
            out.append(b)
    flush()
    return out


def classify(block: TextBlock, body_size: float, page_height: float) -> str:
    """Kind of a non-caption, non-formula block: heading candidate, list, code, footnote or paragraph."""
    text = block.text
    words = len(text.split())
    larger = block.size >= 1.08 * body_size
    if (
        len(block.lines) <= 3
        and 0 < words <= 16
        and (block.bold or (larger and (block.italic or block.size >= 1.15 * body_size)))
        and not text.rstrip().endswith((",", ";"))
        and block.mono_share < 0.5
    ):
        return "heading"
    if block.mono_share >= 0.7:
        return "code"
    if block.size < 0.93 * body_size and block.bbox[1] > 0.72 * page_height:
        return "footnote"
    if BULLET_RE.match(block.lines[0].text) and not SECTION_NUMBER_RE.match(text):
        return "list"
    return "paragraph"


def _heading_level_by_number(text: str) -> tuple[str | None, int | None]:
    m = SECTION_NUMBER_RE.match(text)
    if not m or len(text) - m.end() < 2:
        return None, None
    number = m.group(1)
    return number, number.count(".") + 1


def resolve_headings(
    candidates: list[TextBlock],
    all_blocks: list[TextBlock],
    outline: list[tuple[int, str, int]],
    body_size: float,
) -> None:
    """Decide which blocks are headings and at what level (sets ``kind`` and ``attrs``).

    With an outline: a candidate matching an outline entry (same page ±1, same
    normalised title) takes its level; outline entries no candidate matched are
    looked up among all blocks of their page; unmatched candidates stay headings
    only when numbered or a well-known section name. Without an outline: numbered
    candidates take their depth as level, the others the rank of their font size.
    """
    entries = [(level, _norm(SECTION_NUMBER_RE.sub("", title)), page) for level, title, page in outline]
    matched_entries: set[int] = set()

    def match(block: TextBlock) -> int | None:
        title = _norm(SECTION_NUMBER_RE.sub("", block.text))
        for i, (_, norm, page) in enumerate(entries):
            if i not in matched_entries and norm and abs(page - block.page) <= 1 and (title == norm or (len(norm) > 12 and title.startswith(norm))):
                return i
        return None

    sizes = sorted({round(b.size, 1) for b in candidates}, reverse=True)
    for block in candidates:
        number, depth = _heading_level_by_number(block.text)
        entry = match(block) if entries else None
        if entry is not None:
            matched_entries.add(entry)
            level: int | None = entries[entry][0]
        elif entries and not number and _norm(block.text) not in UNNUMBERED_SECTIONS:
            level = None
        else:
            level = depth or (1 if _norm(block.text) in UNNUMBERED_SECTIONS else sizes.index(round(block.size, 1)) + 1)
        if level is None:
            block.kind = "paragraph"
            continue
        block.kind = "heading"
        block.attrs.update(level=level, number=number, confirmed=entry is not None)
    for i, (level, norm, page) in enumerate(entries):
        if i in matched_entries:
            continue
        for block in all_blocks:
            if block.kind in ("paragraph", "heading") and abs(block.page - page) <= 1 and len(block.lines) <= 3:
                title = _norm(SECTION_NUMBER_RE.sub("", block.text))
                if norm and title == norm:
                    number, _ = _heading_level_by_number(block.text)
                    block.kind = "heading"
                    block.attrs.update(level=level, number=number, confirmed=True)
                    break


def reading_order(blocks: list[TextBlock], page_width: float) -> list[TextBlock]:
    """Order a page's blocks: top to bottom, and column by column on multi-column pages.

    Blocks spanning the middle of the page split it into bands; inside a band the
    left column is read before the right one.
    """
    mid = page_width / 2
    left = [b for b in blocks if b.bbox[2] <= mid + 0.02 * page_width]
    right = [b for b in blocks if b.bbox[0] >= mid - 0.02 * page_width]
    two_columns = len(left) >= 2 and len(right) >= 2
    if not two_columns:
        return sorted(blocks, key=lambda b: (round(b.bbox[1], 0), b.bbox[0]))
    spanning = sorted((b for b in blocks if b not in left and b not in right), key=lambda b: b.bbox[1])
    ordered: list[TextBlock] = []
    top = float("-inf")
    for separator in [*spanning, None]:
        bottom = separator.bbox[1] if separator else float("inf")
        band = [b for b in blocks if b not in spanning and top <= b.bbox[1] < bottom]
        ordered += sorted(band, key=lambda b: (b.bbox[0] >= mid - 0.02 * page_width, b.bbox[1]))
        if separator:
            ordered.append(separator)
            top = separator.bbox[1]
    return ordered
