"""Layout analysis of PDF text blocks: running heads, captions, formulas, headings, columns.

Headings are found from font statistics — size and weight relative to the body
text — and section numbering, not from a fixed size cut; the PDF outline, when
there is one, confirms them, sets their level and recovers the ones the
statistics missed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from .pdf_outline import Listing, clean_title, drop_page_number, in_listing, is_byline, is_licence_clause, is_licence_title
from .pdf_text import TextBlock, TextLine, union

__all__ = [
    "split_caption_at_rule",
    "join_caption_tails",
    "CAPTION_RE",
    "drop_running_heads",
    "CHAPTER_BLOCK",
    "caption_of",
    "merge_formulas",
    "classify",
    "resolve_headings",
    "reading_order",
]

BBox = tuple[float, float, float, float]

CAPTION_RE = re.compile(r"^\s*(Table|Tab\.|Figure|Fig\.)\s*([A-Z]?\d+(?:\.\d+)*)\s*[:.|—–-](?!\d)\s*", re.I)  # "Figure 2.3 shows" is prose, not Figure 2
SECTION_NUMBER_RE = re.compile(r"^((?:\d+|[IVXLC]{2,7}(?=\.)|[A-Z])(?:\.\d+)*)\.?\s+(?=\S)")  # "2.1", "A.3", "VI.2." (REVTeX)
EQ_LABEL_RE = re.compile(r"^\(\s*(\d+[a-z]?)\s*\)$")
BULLET_RE = re.compile(r"^\s*(?:[•●◦▪∙·–—∗*-]|\(?[a-z0-9]{1,2}[.)])\s+")
UNNUMBERED_SECTIONS = {
    "abstract", "references", "bibliography", "acknowledgments", "acknowledgements",
    "acknowledgment", "appendix", "contents", "index", "conclusion", "conclusions",
    "introduction", "summary", "notes", "affiliation", "affiliations",
}


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


_CHAPTER_MARK = re.compile(r"^\s*(?:\d+\s+)?(?:Chapter|Appendix)\s+[\dA-Z]+\s*[:.]\s*", re.I)  # "Chapter 3:", "4 Chapter 1." (Sphinx)
#: A block that marks a chapter: a running head ("Chapter 1: Creating R packages 3", "4 Chapter 1. Scope of This Document")
#: or a chapter opening's word ("CHAPTER" above "ONE"); "Chapter 3 for detailed explanations:" is prose.
CHAPTER_BLOCK = re.compile(r"^\s*(?:\d+\s+)?chapter(?:\s+[\dA-Z]+\s*(?:[:.]\s*\S.*)?)?\s*$", re.I)


def _paged(text: str, printed: set[str], repeated: bool) -> bool:
    """A running head's marks beside a title: "Chapter 3:" before it, a page number after it, or, on a line the margins
    repeat, a number before it that is not the title's own ("281 The backend libraries" for "14 The backend libraries";
    ``printed``: the outline's titles with their numbers, normalised). A heading has none of them."""
    leading = repeated and re.match(r"\s*\d+\s", text) is not None and _norm(text) not in printed
    return bool(_CHAPTER_MARK.match(text) or re.search(r"\s\d+\s*$", text) or leading)


def drop_running_heads(pages: list[list[TextBlock]], page_height: float, titles: Iterable[str] = ()) -> list[list[TextBlock]]:
    """Remove page numbers and running heads/feet that repeat in the margins, and margin lines naming a
    chapter or section of the outline (``titles``): "Chapter 3: Tidying and profiling R code 107"."""
    margin_keys: Counter[str] = Counter()
    titles = list(titles)
    named = {_norm(re.sub(r"\d+", "", t)) for t in titles} - {""}
    printed = {_norm(t) for t in titles}

    def key(block: TextBlock, margin: bool = True) -> str | None:
        in_margin = block.bbox[3] < 0.11 * page_height or block.bbox[1] > 0.92 * page_height
        rows = {round((ln.bbox[1] + ln.bbox[3]) / 4) for ln in block.lines}  # pieces of one row (author, title, page) count once
        if in_margin != margin or len(rows) > 2:
            return None
        return _norm(re.sub(r"\d+", "", _CHAPTER_MARK.sub("", block.text)))

    body_keys: Counter[str] = Counter()
    for blocks in pages:
        for k in {key(b) for b in blocks} - {None}:
            margin_keys[k] += 1  # type: ignore[index]
        for k in {key(b, margin=False) for b in blocks} - {None}:
            body_keys[k] += 1  # type: ignore[index]
    for k in [k for k in margin_keys if body_keys[k] >= margin_keys[k]]:  # a heading ("Example") some pages happen to open with
        del margin_keys[k]
    threshold = max(2, min(int(0.3 * len(pages)), max(3, int(0.05 * len(pages)))))  # a chapter's running head repeats on its pages only
    folios = [_folio(blocks, page_height) for blocks in pages]
    foot = _foot_line([f for f in folios if f is not None], len(pages))
    kept = []
    for blocks, folio in zip(pages, folios):
        kept.append([
            b for b in blocks
            if b is not folio and b.bbox[1] < foot
            and ((k := key(b)) is None or (k and margin_keys[k] < threshold and not (k in named and _paged(b.text, printed, margin_keys[k] > 1))))
        ])
    return kept


def _folio(blocks: list[TextBlock], page_height: float) -> TextBlock | None:
    """The page number set just above a low margin ("21"): the page's lowest block, when it is one."""
    lowest = max(blocks, key=lambda b: b.bbox[1], default=None)
    return lowest if lowest is not None and lowest.bbox[1] > 0.8 * page_height and _FOLIO.match(lowest.text) else None


def _foot_line(folios: list[TextBlock], pages: int) -> float:
    """Where the foot of the page starts: the top of the page numbers, when at least half the pages (three or more) have
    one at the foot. Nothing of the text starts there; a line that does is furniture printed once, such as the
    "Preprint submitted to … / February 10, 2020" of an Elsevier preprint's first page (not repeated, so no running foot)."""
    if len(folios) < max(3, pages // 2):
        return float("inf")
    tops = sorted(f.bbox[1] for f in folios)
    return tops[len(tops) // 2] - 2.0


_FOLIO = re.compile(r"^\s*(?:\d{1,4}|[ivxlc]{1,6})\s*$")
_LABEL_LINE = re.compile(r"^\s*(Table|Tab\.|Figure|Fig\.)\s*([A-Z]?\d+(?:\.\d+)*)\s*$", re.I)


def caption_of(block: TextBlock) -> tuple[str, str] | None:
    """("table" | "figure", number) when the block is a caption like "Table 2: …", or one whose label is a line
    of its own in bold or beside the text ("**Table 1** The meaning of flags…": prose never breaks after "Table 1")."""
    match = CAPTION_RE.match(block.text)
    if match is None and len(block.lines) >= 2 and (alone := _LABEL_LINE.match(block.lines[0].text)) is not None:
        first, second = block.lines[0], block.lines[1]
        beside = second.bbox[0] > first.bbox[2] and second.bbox[1] < first.bbox[3]
        match = alone if first.bold or beside else None
    rows = {round((ln.bbox[1] + ln.bbox[3]) / 4) for ln in block.lines}  # printed lines: pymupdf makes a line of each word set far apart
    if not match or len(rows) > 12:
        return None
    label = "table" if match.group(1).lower().startswith("tab") else "figure"
    return label, match.group(2)


def split_before_caption(block: TextBlock) -> list[TextBlock]:
    """A block whose caption line follows table rows (pymupdf set "87 1.17 … 0.84" and "Table 3: …" in one
    block) split before the caption. Only after a line ending in a number or a closing sign, so prose that
    wraps onto "Table 3." stays whole.
    """
    for index in range(1, len(block.lines)):
        line, before = block.lines[index], block.lines[index - 1].text.rstrip()
        if CAPTION_RE.match(line.text) and before[-1:].isdigit():
            parts = [block.lines[:index], block.lines[index:]]
            return [TextBlock(lines=g, bbox=union([ln.bbox for ln in g]), page=block.page, kind=block.kind, attrs=dict(block.attrs)) for g in parts]
    return [block]


def split_caption_at_rule(block: TextBlock, rules: list[tuple[float, float, float, float]]) -> list[TextBlock]:
    """A caption block that runs on past a rule crossing it (pymupdf set "Table 2: …", the header and the rows of a
    table captioned above in one block) cut at the first such rule: the caption above, the rest a plain block."""
    x0, y0, x1, y1 = block.bbox
    for rule in sorted(rules, key=lambda r: r[1]):  # a table set beside its caption (KOMA-Script's captionbeside): split by side
        if block.lines[0].bbox[2] < rule[0] - 2 and y0 - 20 <= rule[1] <= y1 + 20:
            beside = [ln for ln in block.lines if ln.bbox[0] >= rule[0] - 2 and ln.bbox[2] <= rule[2] + 2]
            caption = [ln for ln in block.lines if ln.bbox[2] < rule[0] - 2]
            if beside and caption and len(beside) + len(caption) == len(block.lines):
                return [_part(block, caption, keep_kind=True), _part(block, beside)]
    for rule in sorted(rules, key=lambda r: r[1]):
        if min(rule[2], x1) - max(rule[0], x0) < 0.6 * (x1 - x0):
            continue
        above = [ln for ln in block.lines if ln.bbox[3] <= rule[1] + 1]
        below = [ln for ln in block.lines if ln.bbox[1] >= rule[1] - 1]
        if above and below and len(above) + len(below) == len(block.lines):
            return [_part(block, above, keep_kind=True), _part(block, below)]
    return [block]


def join_caption_tails(blocks: list[TextBlock]) -> list[TextBlock]:
    """A caption's last line set apart as a block of its own ("…figure or table cap-" / "tions") joined back: a block
    under a caption's last line, inside its width, touching it, of at most four lines, in the caption's type size, when the
    caption breaks a word or the block opens in lower case (a figure's panel title under it, "x1 predictor effect plot"
    in a smaller type, is no tail)."""
    out: list[TextBlock] = []
    for block in blocks:
        caption = next((c for c in reversed(out) if c.kind == "caption"), None)
        if caption is not None and block.kind != "caption" and len(block.lines) <= 4 and block.text[:1]:
            last = caption.lines[-1]
            touching = block.bbox[1] - last.bbox[3] < 0.5 * (last.bbox[3] - last.bbox[1])
            inside_width = block.bbox[0] >= caption.bbox[0] - 2 and block.bbox[2] <= caption.bbox[2] + 2
            same_type = abs(block.size - last.size) <= 0.5
            if touching and inside_width and same_type and block.bbox[1] > last.bbox[1] and (caption.text.endswith("-") or block.text[0].islower()):
                caption.lines = caption.lines + block.lines
                caption.bbox = union([caption.bbox, block.bbox])
                continue
        out.append(block)
    return out


def _part(block: TextBlock, lines: list[TextLine], keep_kind: bool = False) -> TextBlock:
    """Some of ``block``'s lines as a block of their own: the caption's part keeps its kind, the rest is plain."""
    box = union([ln.bbox for ln in lines])
    return TextBlock(lines=lines, bbox=box, page=block.page, kind=block.kind, attrs=dict(block.attrs)) if keep_kind else TextBlock(lines=lines, bbox=box, page=block.page)


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


#: A footnote opens with its mark (a number or a symbol) and then words: "1Note that…", "2 This seems…", "∗This is a preprint…".
FOOTNOTE_MARK_RE = re.compile(r"^\s*(?:\d{1,3}|[∗*†‡§¶])\s?[^\W\d_]")


_NUMBERED_NOTE = re.compile(r"^\s*(\d{1,3})\s?[^\W\d_]")


def split_footnotes(block: TextBlock) -> list[TextBlock]:
    """A footnote block holding several notes, one per block: a line opening with the next note's number
    (the current one plus one) starts a new note. "5 at least if… 6 and required by CRAN…" is two notes."""
    first = _NUMBERED_NOTE.match(block.lines[0].text)
    if first is None or len(block.lines) < 2:
        return [block]
    number, groups = int(first.group(1)), [[block.lines[0]]]
    for line in block.lines[1:]:
        m = _NUMBERED_NOTE.match(line.text)
        if m is not None and int(m.group(1)) == number + 1:
            number += 1
            groups.append([line])
        else:
            groups[-1].append(line)
    if len(groups) == 1:
        return [block]
    return [TextBlock(lines=g, bbox=union([ln.bbox for ln in g]), page=block.page, kind="footnote", attrs=dict(block.attrs)) for g in groups]


def _rows(block: TextBlock) -> int:
    """How many rows the block's lines stand on (lines whose middles lie within half a line's height are one row)."""
    middles = sorted((ln.bbox[1] + ln.bbox[3]) / 2 for ln in block.lines)
    height = max((ln.bbox[3] - ln.bbox[1] for ln in block.lines), default=0.0)
    return 1 + sum(b - a > 0.5 * height for a, b in zip(middles, middles[1:])) if middles else 0


def classify(block: TextBlock, body_size: float, page_height: float) -> str:
    """Kind of a non-caption, non-formula block: heading candidate, list, code, footnote or paragraph."""
    text = block.text
    words = len(text.split())
    larger = block.size >= 1.08 * body_size
    numbered = SECTION_NUMBER_RE.match(text) is not None  # "2.2 Creation of zooreg objects", partly in a code font
    if (
        _rows(block) <= 3  # "2" and "Improving boosting …" on one row are two lines of one
        and 0 < words <= 16
        and (block.bold or (larger and (block.italic or numbered or block.size >= 1.15 * body_size)))
        and not text.rstrip().endswith((",", ";"))
        and (block.mono_share < 0.5 or (numbered and (larger if words <= 4 else block.size >= 1.15 * body_size)))  # "3.5 FASTLIBS" in 12 pt typewriter
    ):
        return "heading"
    if block.mono_share >= 0.7:
        return "code"
    if block.size < 0.93 * body_size and block.bbox[1] > 0.72 * page_height and FOOTNOTE_MARK_RE.match(text):
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


def _bare_letter(number: str | None) -> bool:
    """A lone capital without a dot ("R Core Team", "A Installing"): a number only when the outline says so."""
    return number is not None and len(number) == 1 and number.isalpha()


def _style(block: TextBlock) -> tuple[float, bool, bool]:
    """Sort key of a heading's look: larger first, then bold before regular, upright before italic."""
    return (-round(block.size, 1), not block.bold, block.italic)


#: What follows a name in a reference manual's entry line: its arguments ("⟨general text⟩", "(x, y)", "[options]").
_ARGUMENTS = re.compile(r"\s*[⟨(\[<]")
_MARKER = re.compile(r"^[▶►▸▹•■□◆◇●○★☞→⇒·*]+\s*")  # a pointer in the margin before an entry's name


@dataclass
class _Outline:
    """The PDF outline's entries, normalised for matching against heading blocks."""

    entries: list[tuple[int, str, int]]
    plain: list[str] = field(default_factory=list)  # each entry's title with nothing taken for a number ("A regularized …")
    matched: set[int] = field(default_factory=set)
    raw: list[str] = field(default_factory=list)  # each entry's title as printed, cleaned
    by_page: dict[int, list[int]] = field(default_factory=dict, init=False, repr=False)
    depth: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        for i, (_, _, page) in enumerate(self.entries):
            self.by_page.setdefault(page, []).append(i)
        self.depth = max((level for level, _, _ in self.entries), default=0)

    @classmethod
    def of(cls, outline: list[tuple[int, str, int]]) -> _Outline:
        return cls(
            [(level, _norm(SECTION_NUMBER_RE.sub("", clean_title(title))), page) for level, title, page in outline],
            [_norm(clean_title(title)) for _, title, _ in outline],
            raw=[clean_title(title) for _, title, _ in outline],
        )

    def signature_of(self, entry: int, block: TextBlock) -> bool:
        """Whether ``block`` is the line giving the entry's name with its arguments ("\\pdfinfo ⟨general text⟩", "plot(x, y)")."""
        title = self.raw[entry] if entry < len(self.raw) else ""
        text = _MARKER.sub("", block.text)  # "▶ \\pdfinfo ⟨general text⟩": the margin's pointer is not the name
        named = [line for line in block.lines if not _MARKER.fullmatch(line.text.strip())]
        return bool(title) and len(named) <= 2 and text.startswith(title) and bool(_ARGUMENTS.match(text[len(title):]))

    def match(self, block: TextBlock, exact_page: bool = False) -> int | None:
        """The first unmatched entry with the block's title on its page (±1 unless ``exact_page``)."""
        title = _norm(SECTION_NUMBER_RE.sub("", clean_title(block.text)))
        slack = 0 if exact_page else 1
        near = sorted(i for page in range(block.page - slack, block.page + slack + 1) for i in self.by_page.get(page, ()))
        for i in near:  # the entries on the block's page ±slack, in outline order
            _, norm, _ = self.entries[i]
            if i in self.matched or not norm:
                continue
            plain = self.plain[i] if i < len(self.plain) else norm
            if title in (norm, plain) or (len(norm) > 12 and title.startswith(norm)):
                return i
        return None


def _front_matter(candidates: list[TextBlock]) -> set[int]:
    """Ids of first-page candidates before the first numbered or well-known heading: title-page lines, not sections."""
    first_real = next(
        (
            i
            for i, b in enumerate(candidates)
            if _norm(b.text) in UNNUMBERED_SECTIONS or ((n := _heading_level_by_number(b.text)[0]) and not _bare_letter(n))
        ),
        None,
    )
    if first_real is None or not candidates:
        return set()
    first_page = candidates[0].page
    return {id(b) for b in candidates[:first_real] if b.page == first_page}


def _not_a_heading(block: TextBlock, body_size: float, front: set[int], first_page: int) -> bool:
    """Candidates that only look like headings: small print, title-page lines, bylines, licence clauses."""
    known = _norm(block.text) in UNNUMBERED_SECTIONS
    number, _ = _heading_level_by_number(block.text)
    if block.size < 0.9 * body_size and not known:
        return True
    if id(block) in front:
        return True
    if number and not _bare_letter(number):
        return False
    return (block.page == first_page and is_byline(block.text)) or is_licence_clause(block.text)


def _decorations(candidates: list[TextBlock], body_size: float) -> set[int]:
    """Ids of unnumbered candidates whose look no other candidate shares, at a size no numbered heading nor the body uses.

    Such one-off text is a plot title or a logo rather than a heading: headings come in families.
    """
    styles = Counter(_style(b) for b in candidates)
    numbered_sizes = {round(b.size, 1) for b in candidates if _heading_level_by_number(b.text)[0]}
    if not numbered_sizes:
        return set()
    return {
        id(b)
        for b in candidates
        if styles[_style(b)] == 1
        and not _heading_level_by_number(b.text)[0]
        and _norm(b.text) not in UNNUMBERED_SECTIONS
        and round(b.size, 1) not in numbered_sizes
        and abs(b.size - body_size) > 0.25
    }


def resolve_headings(
    candidates: list[TextBlock],
    all_blocks: list[TextBlock],
    outline: list[tuple[int, str, int]],
    body_size: float,
    listings: Mapping[int, Listing] | None = None,
) -> None:
    """Decide which blocks are headings and at what level (sets ``kind`` and ``attrs``).

    Lines of contents, index and list-of-figures pages (``listings``) are never
    headings unless the outline points at them on their own page (an index's own
    title). With an outline, a candidate matching an outline entry (same page ±1,
    same normalised title) takes its level; outline entries no candidate matched
    are looked up among all blocks of their page. Candidates the outline does not
    list stay headings when numbered, a well-known section name, or a sub-heading
    below the depth the outline goes to. Without an outline, numbered candidates
    take their depth as level and the others nest under the nearest preceding
    heading of a stronger look (size, then weight, then upright over italic).
    Trailing leaders and page numbers are cut from every heading's title.
    """
    listings = listings or {}
    book = _Outline.of(outline)
    front = _front_matter(candidates)
    odd = _decorations(candidates, body_size) if not book.entries else set()
    first_page = min((b.page for b in candidates), default=1)
    ranks = {style: rank for rank, style in enumerate(sorted({_style(b) for b in candidates}))}
    stack: list[tuple[int, int]] = []  # (level, style rank) of the open headings
    licence: tuple[int, int] | None = None  # (level, style rank) of the open licence heading: its numbered lines are clauses
    offset = 0  # outline level minus number depth of the last numbered heading the outline confirmed (1 under a title entry)
    for block in candidates:
        block.kind = "paragraph"
        listed = in_listing(block, listings)
        entry = book.match(block, exact_page=listed) if book.entries else None
        if entry is None and (listed or id(block) in odd or _not_a_heading(block, body_size, front, first_page)):
            continue
        rank, numbered = ranks[_style(block)], _heading_level_by_number(block.text)[0] is not None
        if licence is not None and entry is None and numbered and rank > licence[1]:
            continue  # "1. Source Code." in a licence, in a weaker look than its title: text of the licence's section
        level = _level(block, entry, book, rank, stack, offset)
        if level is None:
            continue
        if entry is not None:
            book.matched.add(entry)
            depth = _heading_level_by_number(block.text)[1]
            offset = offset if depth is None or _bare_letter(_heading_level_by_number(block.text)[0]) else level - depth
        _make_heading(block, level, confirmed=entry is not None)
        if is_licence_title(block.text):
            licence = (level, rank) if licence is None or level <= licence[0] else licence
        elif licence is not None and level > licence[0]:
            block.attrs["number"] = None  # a clause the outline lists: a heading of the licence, not the document's section "1"
        else:
            licence = None  # the next chapter or appendix
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, ranks[_style(block)]))
    _recover_outline_entries(book, all_blocks, listings)


def _level(block: TextBlock, entry: int | None, book: _Outline, rank: int, stack: list[tuple[int, int]], offset: int = 0) -> int | None:
    """A candidate's heading level, or None when it is not a heading. A numbered heading the outline does not confirm
    sits at its number's depth plus ``offset``: REVTeX's outline puts the title at level 1, so "I." is at level 2, and
    an unmatched "VIII.3." must go under "VIII." (level 3), not beside it."""
    if entry is not None:
        return book.entries[entry][0]
    number, depth = _heading_level_by_number(block.text)
    if _norm(block.text) in UNNUMBERED_SECTIONS:
        return 1
    if number and depth is not None and (not _bare_letter(number) or not book.entries):
        return depth + offset
    open_ = [s for s in stack if s[1] < rank]
    level = open_[-1][0] + 1 if open_ else 1
    if book.entries and level <= book.depth:
        return None  # the outline lists this depth and does not list this line
    return level


def _make_heading(block: TextBlock, level: int, confirmed: bool) -> None:
    last = block.lines[-1]
    if last.raised_tail and last.text.rstrip().endswith(last.raised_tail):  # "Comments" + a raised footnote mark "7"
        last.text = last.text.rstrip()[: -len(last.raised_tail)]
    _drop_marker(block)
    drop_page_number(block)
    number, _ = _heading_level_by_number(block.text)
    block.kind = "heading"
    block.attrs.update(level=level, number=number, confirmed=confirmed)


def _drop_marker(block: TextBlock) -> None:
    """A pointer in the margin before a heading ("▶ \\pdfinfo ⟨general text⟩") is not part of its title."""
    lines = [line for line in block.lines if line.text.strip() and not _MARKER.fullmatch(line.text.strip())] or block.lines
    if _MARKER.match(lines[0].text) and _MARKER.sub("", lines[0].text):
        lines = [replace(lines[0], text=_MARKER.sub("", lines[0].text)), *lines[1:]]
    block.lines = lines


def _recover_outline_entries(book: _Outline, all_blocks: list[TextBlock], listings: Mapping[int, Listing]) -> None:
    """Outline entries no candidate matched: find their line among the short blocks of their page (that page first)."""
    by_page: dict[int, list[tuple[int, TextBlock]]] = {}
    for index, b in enumerate(all_blocks):
        if len(b.lines) <= 3 and not in_listing(b, listings):
            by_page.setdefault(b.page, []).append((index, b))
    titles: dict[int, str] = {}
    for i, (level, norm, page) in enumerate(book.entries):
        if i in book.matched or not norm:
            continue
        # the short blocks of the entry's page, then of the pages before and after, each in reading order
        near = sorted((abs(b.page - page), index, b) for p in (page - 1, page, page + 1) for index, b in by_page.get(p, ()))
        nearby = [b for _, _, b in near if b.kind in ("paragraph", "heading", "code") and not b.attrs.get("confirmed")]
        for block in nearby:
            if id(block) not in titles:  # a block's text changes only when it becomes a confirmed heading, out of `nearby`
                titles[id(block)] = _norm(SECTION_NUMBER_RE.sub("", clean_title(block.text)))
            signature = book.signature_of(i, block)  # the entry's own line, before a code line that names it ("\\pdfinfo {")
            if titles[id(block)] == norm or signature:
                book.matched.add(i)
                _make_heading(block, level, confirmed=True)
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
