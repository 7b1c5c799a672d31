"""Document furniture the section tree must not take in.

Tables of contents, indexes and lists of figures or tables repeat heading-like
lines followed by page numbers; their pages (or the part of a page they fill)
are recognised from the shape of their rows, not from one document's layout.
Heading titles lose trailing leaders and page numbers, and bylines or licence
clauses on the first page are told apart from headings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from .pdf_text import TextBlock, TextLine

__all__ = [
    "CONTENTS_RE",
    "Listing",
    "Row",
    "text_rows",
    "entry_title",
    "page_listing",
    "find_listings",
    "in_listing",
    "clean_title",
    "drop_page_number",
    "is_byline",
    "is_licence_clause",
    "is_licence_title",
]

BBox = tuple[float, float, float, float]

_LEADER = r"(?:\s*[.·…⋯∙]){2,}\s*|\s*[…⋯]\s*"
_ARABIC_REFS = r"\d{1,4}(?:\s*[,–—-]\s*\d{1,4})*"
_ROMAN = r"[ivxlcdm]{1,7}"
_LEADER_CHARS = ".·…⋯∙"  # a leader holds at least one of these
_ROMAN_DIGITS = "ivxlcdm"
LEADER_ENTRY_RE = re.compile(rf"^(?P<title>.*?\w.*?)(?:{_LEADER})(?P<pages>{_ARABIC_REFS}|{_ROMAN})$")
_PLAIN_REFS = r"\d{1,3}(?:\s*[,–—-]\s*\d{1,3})*"  # without leaders a four-digit number reads as a year
PLAIN_ENTRY_RE = re.compile(rf"^(?P<title>.*?[^\W\d_].*?)\s+(?P<pages>{_PLAIN_REFS})$")
TRAILING_REF_RE = re.compile(rf"(?:{_LEADER})(?:{_ARABIC_REFS}|{_ROMAN})\s*$")
TRAILING_LEADER_RE = re.compile(r"(?:\s*[.·∙]){3,}\s*$")
PAGE_REF_RE = re.compile(rf"^\s*(?:{_ARABIC_REFS}|{_ROMAN})\s*$")
LISTING_HEADING_RE = re.compile(
    r"^\s*(?:(?:table\s+of\s+)?contents|(?:[\w-]+\s+){0,4}index|list\s+of\s+(?:figures|tables|illustrations|algorithms|listings)"
    r"(?:\s+and\s+(?:figures|tables))?|(?:figures|tables|illustrations))\s*$",
    re.I,
)
#: A contents heading, which may stand below a title page's abstract (sp's over.pdf), not only at a page's top.
CONTENTS_RE = re.compile(r"^\s*(?:table\s+of\s+)?contents\s*$", re.I)
CAPTION_ENTRY_RE = re.compile(r"^\s*(?:figure|fig\.|table|tab\.)\s*[A-Z]?\d", re.I)
LICENCE_RE = re.compile(
    r"copyright|©|\(c\)\s*\d{4}|all rights reserved|licen[cs]ed\s+(?:under|to)|permission\s+is\s+(?:hereby\s+)?granted"
    r"|creative\s+commons|\bcc[- ]by\b|terms\s+of\s+the\s+\w+\s+licen[cs]e|distributed\s+under",
    re.I,
)
#: Titles of a licence's text ("Appendix A GNU General Public License", "TERMS AND CONDITIONS", "License"):
#: the numbered lines under them are its clauses, not the document's sections.
LICENCE_TITLE_RE = re.compile(
    r"\b(?:(?:gnu\s+)?(?:general|lesser|library|free\s+documentation|affero)\s+public\s+licen[cs]e|licen[cs]e\s+agreement"
    r"|terms\s+and\s+conditions|(?:apache|mit|bsd|artistic|mozilla\s+public|eclipse\s+public)\s+licen[cs]e)\b"
    r"|^\W*(?:(?:appendix\s+)?[\dA-Z]{1,3}[.)]?\s+)?(?:the\s+)?(?:licen[cs]es?|copying|copyright(?:\s+notice)?)\W*$",
    re.I,
)
_NAME_PARTICLES = {"von", "van", "der", "den", "de", "da", "di", "del", "du", "le", "la", "bin", "al", "y"}
_NAME_SEPARATORS = re.compile(r"\s*(?:,|;|&|\band\b|\bund\b|\bet\b)\s*")


@dataclass(frozen=True)
class Row:
    """The text lines of a page sharing one baseline, read left to right."""

    text: str
    bbox: BBox


@dataclass(frozen=True)
class Listing:
    """A table of contents, index or list of figures/tables on one page, from ``top`` to ``bottom``."""

    kind: str  # "contents" | "index" | "figures"
    top: float
    bottom: float

    def holds(self, bbox: BBox) -> bool:
        """Whether a box lies (vertically) within the listing."""
        return bbox[3] >= self.top - 1 and bbox[1] <= self.bottom + 1


def text_rows(blocks: Iterable[TextBlock]) -> list[Row]:
    """Group the lines of a page into rows: lines whose vertical middles are within half a line of each other."""
    lines = sorted((ln for b in blocks for ln in b.lines), key=lambda ln: ((ln.bbox[1] + ln.bbox[3]) / 2, ln.bbox[0]))
    groups: list[list[TextLine]] = []
    for line in lines:
        middle = (line.bbox[1] + line.bbox[3]) / 2
        if groups:
            first = groups[-1][0]
            height = max(1.0, min(first.bbox[3] - first.bbox[1], line.bbox[3] - line.bbox[1]))
            if abs(middle - (first.bbox[1] + first.bbox[3]) / 2) <= 0.5 * height:
                groups[-1].append(line)
                continue
        groups.append([line])
    rows = []
    for group in groups:
        group.sort(key=lambda ln: ln.bbox[0])
        text = " ".join(" ".join(ln.text.split()) for ln in group).strip()
        if text:
            rows.append(Row(text=text, bbox=_union([ln.bbox for ln in group])))
    return rows


def entry_title(text: str) -> tuple[str, bool] | None:
    """``(title, has_leader)`` when a row reads like a listing entry: a title, then page numbers.

    Examples
    --------
    >>> entry_title("1.2 Configure and cleanup . . . . . 29")
    ('1.2 Configure and cleanup', True)
    >>> entry_title("Bessel functions, 194, 201")
    ('Bessel functions,', False)
    >>> entry_title("The model is fitted to the data.") is None
    True
    """
    text = " ".join(text.split())
    last = text[-1:]
    if not (last.isdecimal() or last in _ROMAN_DIGITS):
        return None  # both patterns end in a page number; this check spares their backtracking on prose
    if any(c in text for c in _LEADER_CHARS) and (m := LEADER_ENTRY_RE.match(text)):
        return m.group("title").strip(), True
    if m := PLAIN_ENTRY_RE.match(text):
        return m.group("title").strip(), False
    return None


def page_listing(blocks: list[TextBlock], previous: Listing | None = None) -> Listing | None:
    """The listing (contents, index, list of figures/tables) on a page, if the page holds one.

    A page holds a listing when a listing heading ("Contents", "Index", "List of
    Figures", …; among the first six rows, or "Contents" anywhere, as below an
    abstract) is followed by rows ending in page numbers, when most of its rows
    are dotted-leader entries, or when it continues the previous page's listing
    with rows of the same shape.
    """
    rows = text_rows(blocks)
    if not rows:
        return None
    heading_at = next((i for i, r in enumerate(rows) if LISTING_HEADING_RE.match(r.text) and (i < 6 or CONTENTS_RE.match(r.text))), None)
    body = rows[heading_at + 1 :] if heading_at is not None else rows
    entries = [(r, e) for r in body if (e := entry_title(r.text)) is not None]
    leaders = sum(1 for _, (_, has_leader) in entries if has_leader)
    if len(entries) < 3:
        return None
    share = len(entries) / len(body)
    listed = (
        (heading_at is not None and share >= 0.4)
        or (leaders >= 3 and share >= 0.5)
        or (previous is not None and share >= 0.5)
    )
    if not listed:
        return None
    heading = rows[heading_at].text if heading_at is not None else None
    if heading_at is not None:
        top = rows[heading_at].bbox[1]
    else:  # a page continuing a listing starts with it; otherwise the listing starts at its first entry
        top = body[0].bbox[1] if previous is not None else entries[0][0].bbox[1]
    kind = _listing_kind(heading, [title for _, (title, _) in entries], [r.text for r, _ in entries], previous)
    return Listing(kind=kind, top=top, bottom=_run_end(body, {id(r) for r, _ in entries}))


def _run_end(rows: list[Row], entry_ids: set[int], gap: int = 2) -> float:
    """Bottom of the first run of entries: it ends at ``gap`` consecutive prose rows (index letters do not end it)."""
    bottom: float | None = None
    misses = 0
    for row in rows:
        if id(row) in entry_ids:
            bottom, misses = row.bbox[3], 0
        elif bottom is not None and len(row.text.split()) >= 4:
            misses += 1
            if misses >= gap:
                break
    return bottom if bottom is not None else rows[-1].bbox[3]


def _listing_kind(heading: str | None, titles: list[str], texts: list[str], previous: Listing | None) -> str:
    """Contents, index or figures: from the listing's heading, else the page before, else the entries' shape."""
    if heading:
        low = heading.lower()
        if "index" in low:
            return "index"
        if "contents" not in low:
            return "figures"
        return "contents"
    if previous is not None:
        return previous.kind
    if sum(1 for t in titles if CAPTION_ENTRY_RE.match(t)) >= 0.5 * len(titles):
        return "figures"
    if sum(1 for t in texts if re.search(r"\d\s*,\s*\d+\s*$", t)) >= 0.2 * len(texts):
        return "index"
    return "contents"


def find_listings(pages: list[list[TextBlock]]) -> dict[int, Listing]:
    """Listings by (1-based) page number; a listing may run on over the following pages."""
    found: dict[int, Listing] = {}
    previous: Listing | None = None
    for number, blocks in enumerate(pages, start=1):
        listing = page_listing(blocks, previous)
        if listing is not None:
            found[number] = listing
        previous = listing
    return found


def in_listing(block: TextBlock, listings: Mapping[int, Listing]) -> bool:
    """Whether a block is part of a listing on its page."""
    listing = listings.get(block.page)
    return listing is not None and listing.holds(block.bbox)


def clean_title(text: str) -> str:
    """A heading title without the dotted leader and page number a contents line ends with.

    Examples
    --------
    >>> clean_title("A Installing packages … 144")
    'A Installing packages'
    >>> clean_title("1.2 Configure and cleanup. . . . . 29")
    '1.2 Configure and cleanup'
    >>> clean_title("Matrix . . . . . . .")
    'Matrix'
    >>> clean_title("Phase 2")
    'Phase 2'
    """
    if TRAILING_REF_RE.search(text):
        return TRAILING_REF_RE.sub("", text).rstrip(" .·…")
    leader = TRAILING_LEADER_RE.search(text)
    if leader and " " in leader.group(0).strip():
        return text[: leader.start()].rstrip()
    return text


def drop_page_number(block: TextBlock) -> None:
    """Remove a page number printed at the end of a heading's last row, and any leader before it.

    A bare number is a page number only when set apart from the title by a wide gap
    (more than twice the font size), as contents lines set it; "Phase 2" keeps its 2.
    """
    if not block.lines:
        return
    last_row = [ln for ln in block.lines if abs(ln.bbox[1] - block.lines[-1].bbox[1]) < 0.5 * max(1.0, ln.size)]
    last_row.sort(key=lambda ln: ln.bbox[0])
    if len(last_row) >= 2 and PAGE_REF_RE.match(last_row[-1].text):
        gap = last_row[-1].bbox[0] - last_row[-2].bbox[2]
        if gap > 2 * max(1.0, last_row[-2].size):
            block.lines = [ln for ln in block.lines if ln is not last_row[-1]]
    block.lines = [ln for ln in block.lines if not re.fullmatch(rf"(?:{_LEADER})?", ln.text.strip())]
    if block.lines:
        tail = block.lines[-1]
        cleaned = clean_title(tail.text)
        if cleaned != tail.text and cleaned.strip():
            block.lines[-1] = replace(tail, text=cleaned)


def is_byline(text: str) -> bool:
    """Whether a line reads like a list of personal names ("Jane Q. Doe and John Roe").

    Examples
    --------
    >>> is_byline("Martin Mächler, Benjamin M. Bolker and Steven C. Walker")
    True
    >>> is_byline("2.1 Generalized linear models")
    False
    """
    text = re.sub(r"[\d∗*†‡§¶]+", "", text).strip(" ,")
    names = [n for n in _NAME_SEPARATORS.split(text) if n]
    return bool(names) and all(_is_name(n) for n in names)


def _is_name(name: str) -> bool:
    words = name.split()
    if not 2 <= len(words) <= 5:
        return False
    capitalised = 0
    for word in words:
        if word.lower() in _NAME_PARTICLES:
            continue
        if re.fullmatch(r"[^\W\d_](?:\.|\.-?[^\W\d_]\.)", word) and word[0].isupper():
            capitalised += 1
            continue
        if not (word[0].isupper() and re.fullmatch(r"[^\W\d_][^\W\d_'’-]*", word) and not word.isupper()):
            return False
        capitalised += 1
    return capitalised >= 2


def is_licence_clause(text: str) -> bool:
    """Whether a line is a copyright or licence statement rather than a heading ("Licensing" is a heading).

    Examples
    --------
    >>> is_licence_clause("Copyright © 2022 R Core Team")
    True
    >>> is_licence_clause("1.1.2 Licensing")
    False
    """
    return bool(LICENCE_RE.search(text))


def is_licence_title(text: str) -> bool:
    """Whether a heading opens a licence's text, whose numbered clauses are not the document's sections.

    Examples
    --------
    >>> is_licence_title("Appendix A GNU General Public License"), is_licence_title("TERMS AND CONDITIONS")
    (True, True)
    >>> is_licence_title("1.1.2 Licensing"), is_licence_title("A License"), is_licence_title("1. Source Code.")
    (False, True, False)
    """
    return bool(LICENCE_TITLE_RE.search(" ".join(text.split())))


def _union(boxes: list[BBox]) -> BBox:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))
