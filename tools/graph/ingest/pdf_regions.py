"""Tables and figures on a PDF page, located through rules, grids, graphics and captions.

Tables come in three shapes: ruled grids (pymupdf's ``find_tables`` with the
``lines`` strategy), booktabs-style tables that have horizontal rules only, and
tables set with space alone; the last two ``find_tables`` misses, and they are
read from word positions (:mod:`.pdf_tables`). Vector figures have no object of
their own in a PDF: they are found as the drawing cluster next to a "Figure N"
caption.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pymupdf

from .blocks import TableCell
from .pdf_table_areas import captioned_lines, mono_share, rule_runs, value_grids, whitespace_tables
from .pdf_tables import Word, join_band_labels, lines_of, page_words, phrases_of, read_cells
from .pdf_text import LIGATURES, TextBlock
from .tex_encodings import decode

__all__ = ["Region", "horizontal_rules", "find_table_regions", "inside"]

BBox = tuple[float, float, float, float]


@dataclass
class Region:
    """A table or figure area; tables carry cells, figures the text found inside."""

    kind: str
    bbox: BBox
    cells: list[TableCell] = field(default_factory=list)
    caption: TextBlock | None = None
    text: str = ""


def inside(inner: BBox, outer: BBox, slack: float = 2.0) -> bool:
    """True when ``inner`` lies within ``outer`` (with ``slack`` points of tolerance)."""
    return (
        inner[0] >= outer[0] - slack
        and inner[1] >= outer[1] - slack
        and inner[2] <= outer[2] + slack
        and inner[3] <= outer[3] + slack
    )


def _x_overlap(a: BBox, b: BBox) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0]))


def horizontal_rules(drawings: list[dict[str, Any]], min_width: float = 50.0) -> list[BBox]:
    """Thin horizontal lines, top to bottom, with collinear touching segments merged.

    Grids drawn cell by cell come out as one rule per row line; the lower line of a double rule is dropped.
    """
    segments = sorted(
        (r.x0, r.y0, r.x1, r.y1)
        for r in (d["rect"] for d in drawings)
        if r.height <= 2.0 and r.width >= 3.0
    )
    rules: list[list[float]] = []
    for x0, y0, x1, y1 in sorted(segments, key=lambda s: (round(s[1]), s[0])):
        last = rules[-1] if rules else None
        if last and abs(last[1] - y0) < 1.0 and x0 <= last[2] + 2.0:
            last[2] = max(last[2], x1)
        else:
            rules.append([x0, y0, x1, y1])
    wide = [(r[0], r[1], r[2], r[3]) for r in rules if r[2] - r[0] >= min_width]
    return [r for r in wide if not any(0 < r[1] - o[1] < 3.0 and abs(o[0] - r[0]) < 2 and abs(o[2] - r[2]) < 2 for o in wide)]  # a double rule is one


def _filled_boxes(drawings: list[dict[str, Any]]) -> list[BBox]:
    """Filled areas taller than a rule: backgrounds of code listings and boxes."""
    return [tuple(d["rect"]) for d in drawings if d.get("fill") is not None and d["rect"].height > 3 and d["rect"].width > 20]


def _rule_group(rules: list[BBox], caption: BBox, page_height: float, others: list[BBox] | None = None) -> list[BBox]:
    """The run of aligned rules right above (or else right below, or else beside) a caption, never past another caption (``others``)."""
    aligned = [r for r in rules if _x_overlap(r, caption) > 0.5 * min(r[2] - r[0], caption[2] - caption[0])]
    ceiling = max((o[3] for o in others or [] if o[3] <= caption[1] + 1), default=-1.0)
    floor = min((o[1] for o in others or [] if o[1] >= caption[3] - 1), default=page_height + 1)
    above = [r for r in aligned if ceiling < r[1] <= caption[1] + 1]
    below = [r for r in aligned if caption[3] - 1 <= r[1] < floor]
    for group, nearest in ((above, above[-1:] ), (below, below[:1])):
        if not nearest:
            continue
        anchor = nearest[0]
        gap = caption[1] - anchor[1] if group is above else anchor[1] - caption[3]
        if gap > 0.12 * page_height:
            continue
        same = [r for r in group if abs(r[0] - anchor[0]) < 3 and abs(r[2] - anchor[2]) < 3]
        if len(same) >= 2:
            return same
    # a table set beside its caption (KOMA-Script's captionbeside): its top rule starts level with the caption, just to one side
    beside = [r for r in rules if _x_overlap(r, caption) == 0 and (0 <= r[0] - caption[2] < 40 or 0 <= caption[0] - r[2] < 40)
              and caption[1] - 20 <= r[1] <= caption[3] + 20]
    if beside:
        top = min(beside, key=lambda r: r[1])
        same = [r for r in rules if abs(r[0] - top[0]) < 3 and abs(r[2] - top[2]) < 3 and top[1] <= r[1] < floor]
        if len(same) >= 2:
            return same
    return []


def header_above(words: list[Word], rule: BBox, body_size: float, captions: Sequence[BBox] = ()) -> float | None:
    """The top of a header set right on a table's first rule with no rule over it (booktabs without ``\toprule``):
    lines of two phrases or more within the rule's width, the lowest closer to the rule than half a line, none
    part of a caption. A top rule has a caption, prose or space above it, never a line sitting on it."""
    near = [
        w for w in words
        if rule[1] - 4 * body_size < w.y1 <= rule[1] + 1 and w.x0 >= rule[0] - 2 and w.x1 <= rule[2] + 2
        and not any(inside((w.x0, w.y0, w.x1, w.y1), c, 1) for c in captions)
    ]
    lines = sorted(lines_of(near, body_size), key=lambda ln: -max(w.y1 for w in ln))
    top, edge = None, rule[1]
    for line in lines:
        if edge - max(w.y1 for w in line) > 0.5 * body_size or len(phrases_of(line, 0.6 * body_size)) < 2:
            break
        top = edge = min(w.y0 for w in line)
    return top - 0.5 if top is not None else None


def _ruled_cells(
    words: list[Word], rules: list[BBox], body_size: float, shorter: Sequence[BBox] = (), head_top: float | None = None, drawings: Sequence[dict[str, Any]] = ()
) -> list[TableCell]:
    """Cells of a table bounded by horizontal rules: the first inner rule ends the header (the first rule, when a
    header sits above it from ``head_top``: :func:`header_above`); ``shorter`` rules (any on the page) drawn in the
    header under a spanning header say its columns, and vertical rules among ``drawings`` the boxes of the header's."""
    top, bottom = head_top if head_top is not None else rules[0][1], rules[-1][1]
    inside_words = [w for w in words if top < w.centre < bottom and w.x0 >= rules[0][0] - 2 and w.x1 <= rules[0][2] + 2]
    inner = [r[1] for r in (rules[:-1] if head_top is not None else rules[1:-1])]
    limit = inner[0] if inner else bottom
    underlines = [r for r in shorter if top < r[1] < limit and r[0] >= rules[0][0] - 2 and r[2] <= rules[0][2] + 2 and r[2] - r[0] < rules[0][2] - rules[0][0] - 4]
    walls = _walls(drawings, top, limit)
    return read_cells(inside_words, body_size, header_limit=inner[0] if inner else None, separators=inner[1:], underlines=underlines, walls=walls)


def _walls(drawings: Sequence[dict[str, Any]], top: float, bottom: float) -> list[float]:
    """The x of vertical rules that run through the band from ``top`` to ``bottom`` (a header's); a rule drawn a
    row at a time is joined first."""
    runs: dict[int, list[list[float]]] = {}
    for r in sorted((d["rect"] for d in drawings if d["rect"].width <= 2 and d["rect"].height > 0), key=lambda r: r.y0):
        spans = runs.setdefault(round(r.x0 + r.x1), [])
        if spans and r.y0 <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], r.y1)
        else:
            spans.append([r.y0, r.y1])
    return [x / 2 for x, spans in runs.items() if any(y0 <= top + 2 and y1 >= bottom - 2 for y0, y1 in spans)]


def _bands_joined(cells: list[TableCell], rules: list[BBox]) -> list[TableCell]:
    """Grid cells with the first-column labels of each band between ``rules`` (after the header's) joined: :func:`join_band_labels`."""
    separators = [r[1] for r in rules[2:-1]]
    body = [c for c in cells if c.col == 0 and not c.header and c.bbox]
    if not separators or not body:
        return cells
    joined = join_band_labels({c.row: c.text for c in body}, {c.row: (c.bbox[1] + c.bbox[3]) / 2 for c in body if c.bbox}, separators)
    return [c.model_copy(update={"text": joined[c.row]}) if c.col == 0 and c.row in joined and joined[c.row] != c.text else c for c in cells]


def _grid_cells(page: pymupdf.Page, table: object, encoding: dict[int, str] | None) -> list[TableCell]:
    cells: list[TableCell] = []
    for r, row in enumerate(table.rows):  # type: ignore[attr-defined]
        for c, box in enumerate(row.cells):
            if box is None:
                continue
            text = " ".join(decode(page.get_text(clip=pymupdf.Rect(box)), encoding).translate(LIGATURES).split())
            cells.append(TableCell(row=r, col=c, text=text, header=r == 0, bbox=tuple(box)))
    return cells


def _filled(cells: list[TableCell]) -> float:
    return sum(1 for c in cells if c.text) / max(1, len(cells))


def _rows(cells: list[TableCell]) -> int:
    return len({c.row for c in cells})


_LEADER_DOTS = re.compile(r"(?:\. ?){4,}")


def _is_table(cells: list[TableCell]) -> bool:
    """At least two columns and a data row filling two of them; no contents or index listing."""
    data: dict[int, int] = {}
    for c in cells:
        if not c.header and c.text:
            data[c.row] = data.get(c.row, 0) + 1
    texts = [c.text for c in cells if c.text]
    if sum(1 for t in texts if _LEADER_DOTS.search(t)) >= 0.2 * len(texts):
        return False
    return len({c.col for c in cells}) >= 2 and any(n >= 2 for n in data.values())


def _overlaps(box: BBox, others: list[BBox]) -> bool:
    return any(_x_overlap(box, o) > 0 and not (box[3] <= o[1] + 1 or box[1] >= o[3] - 1) for o in others)


@dataclass
class _Page:
    """What table finding reads from one page, each read at most once."""

    page: pymupdf.Page
    body_size: float
    drawings: list[dict[str, Any]]
    encoding: dict[int, str] | None = None
    marks: list[BBox] = field(default_factory=list)
    _words: list[Word] | None = None

    @property
    def words(self) -> list[Word]:
        if self._words is None:
            self._words = page_words(self.page, encoding=self.encoding, marks=self.marks)
        return self._words


def _captioned_table(
    pg: _Page, caption: TextBlock, rules: list[BBox], grids: list[Any], used: set[int], others: list[TextBlock], taken: Sequence[BBox] = ()
) -> Region | None:
    """The table a caption belongs to: the adjacent ruled grid or the rule-bounded area.

    Both readings are tried; the one resolving more rows wins (grid cells on a tie,
    since they carry boxes). Grids whose row lines are missing merge rows; the
    word-position reading of the rule-bounded area splits them.
    """
    cb = caption.bbox
    grid_index = next(
        (
            i
            for i, t in enumerate(grids)
            if i not in used
            and _x_overlap(tuple(t.bbox), cb) > 0
            and min(abs(t.bbox[3] - cb[1]), abs(t.bbox[1] - cb[3])) < 40
        ),
        None,
    )
    grid_cells = _grid_cells(pg.page, grids[grid_index], pg.encoding) if grid_index is not None else []
    if grid_cells and _filled(grid_cells) < 0.4:
        grid_cells = []
    group = _rule_group(rules, cb, pg.page.rect.height, [c.bbox for c in others if c is not caption])
    head_top = header_above(pg.words, group[0], pg.body_size, [c.bbox for c in others]) if group else None
    rule_cells = _ruled_cells(pg.words, group, pg.body_size, rules, head_top, pg.drawings) if group else []
    if grid_index is not None and (grid_cells or rule_cells):
        used.add(grid_index)
    if grid_cells and _rows(grid_cells) >= _rows(rule_cells):
        return Region("table", tuple(grids[grid_index].bbox), _bands_joined(grid_cells, group), caption)  # type: ignore[index]
    if rule_cells:
        box = (group[0][0], group[0][1] if head_top is None else head_top, group[-1][2], group[-1][3])
        used.update(i for i, t in enumerate(grids) if inside(tuple(t.bbox), box, 4))
        return Region("table", box, rule_cells, caption)
    if grid_index is None:
        return _unruled_table(pg, caption, rules, taken)
    return None


def _sideways(box: BBox, body_size: float) -> bool:
    """A caption set up the page (one line turned a quarter, as LaTeX's ``sidewaystable`` sets it)."""
    return box[3] - box[1] > 3 * (box[2] - box[0]) and box[2] - box[0] < 2 * body_size


def _sideways_table(pg: _Page, caption: TextBlock) -> Region | None:
    """The table of a caption set up the page, read as a table set upright: every word, rule and the caption
    turned a quarter clockwise (the page's bottom becomes its left), the area turned back for the page."""
    height = pg.page.rect.height

    def turn(b: BBox) -> BBox:
        return (height - b[3], b[0], height - b[1], b[2])

    def back(b: BBox) -> BBox:
        return (b[1], height - b[2], b[3], height - b[0])

    words = [Word(*turn((w.x0, w.y0, w.x1, w.y1)), w.text) for w in pg.words]
    drawings = [{"rect": pymupdf.Rect(turn(tuple(d["rect"])))} for d in pg.drawings]
    turned = _Page(pg.page, pg.body_size, drawings, pg.encoding, _words=words)
    upright = TextBlock(lines=caption.lines, bbox=turn(caption.bbox), page=caption.page, kind=caption.kind, attrs=caption.attrs)
    region = _captioned_table(turned, upright, horizontal_rules(drawings), [], set(), [upright])
    return Region("table", back(region.bbox), region.cells, caption) if region is not None else None


def _unruled_table(pg: _Page, caption: TextBlock, rules: list[BBox], taken: Sequence[BBox] = ()) -> Region | None:
    """A captioned table set without a rule group: aligned lines next to the caption, a rule among them ending the
    header; never words of a table found already (``taken``: Table 4's grid right above Table 5's caption)."""
    free = [w for w in pg.words if not any(inside((w.x0, w.y0, w.x1, w.y1), t, 1) for t in taken)]
    words = captioned_lines(free, caption.bbox, pg.body_size)
    if not words:
        return None
    box = (min(w.x0 for w in words), min(w.y0 for w in words), max(w.x1 for w in words), max(w.y1 for w in words))
    inner = [r[1] for r in rules if box[1] < r[1] < box[3] and _x_overlap(r, box) > 0.5 * (box[2] - box[0])]
    walls = _walls(pg.drawings, box[1] + 2, inner[0]) if inner else []  # a short vertical rule may stop at the header's top line
    cells = read_cells(words, pg.body_size, header_limit=inner[0] if inner else None, walls=walls)
    return Region("table", box, cells, caption) if _is_table(cells) else None


def _uncaptioned_ruled(
    pg: _Page, blocks: list[TextBlock], rules: list[BBox], grids: list[Any], used: set[int], taken: list[BBox], captions: Sequence[BBox] = ()
) -> list[Region]:
    """Tables between rules of one width with no caption (booktabs, or a grid lacking row lines)."""
    out: list[Region] = []
    for run in rule_runs(rules, pg.words, _filled_boxes(pg.drawings)):
        head_top = header_above(pg.words, run[0], pg.body_size, captions)
        box = (run[0][0], run[0][1] if head_top is None else head_top, run[-1][2], run[-1][3])
        if _overlaps(box, taken) or mono_share(blocks, box) >= 0.6:
            continue
        cells = _ruled_cells(pg.words, run, pg.body_size, rules, head_top, pg.drawings)
        inner = [i for i, t in enumerate(grids) if i not in used and inside(tuple(t.bbox), box, 4)]
        grid_cells = _grid_cells(pg.page, grids[inner[0]], pg.encoding) if len(inner) == 1 else []
        used.update(inner)
        if grid_cells and _filled(grid_cells) >= 0.5 and _rows(grid_cells) >= _rows(cells):
            cells = grid_cells
        if _is_table(cells):
            out.append(Region("table", box, cells))
            taken.append(box)
    return out


def _has_aligned_rows(blocks: list[TextBlock], body_size: float) -> bool:
    """Cheap evidence of a whitespace table: three text lines that share a baseline with another."""
    centres = sorted((ln.bbox[1] + ln.bbox[3]) / 2 for b in blocks for ln in b.lines)
    shared = sum(1 for a, b in zip(centres, centres[1:]) if b - a < 0.3 * body_size)
    return shared >= 3


def find_table_regions(
    page: pymupdf.Page,
    captions: list[TextBlock],
    figure_boxes: list[BBox],
    body_size: float,
    blocks: list[TextBlock] | None = None,
    drawings: list[dict[str, Any]] | None = None,
    encoding: dict[int, str] | None = None,
) -> list[Region]:
    """Tables on a page: one per "Table N" caption, then uncaptioned ruled, grid and whitespace tables.

    Never inside a figure's area. Grid detection runs only on pages with table
    evidence (a table caption, or at least three horizontal rules outside the figures,
    whose axes and grid lines are no table): ``find_tables`` dominates parsing time.
    ``drawings`` are the page's ``get_drawings()``, when the caller has them already; ``encoding``
    reads the codes of TeX's Type 3 fonts (:class:`FontEncodings.text_table`).
    """
    blocks = blocks or []
    marks = [m for b in blocks for ln in b.lines for m in ln.marks]
    pg = _Page(page, body_size, page.get_drawings() if drawings is None else drawings, encoding, marks)
    rules = horizontal_rules(pg.drawings)
    grids: list[Any] = []
    if captions or sum(1 for r in rules if not any(inside(r, f, 4) for f in figure_boxes)) >= 3:
        grids = [t for t in page.find_tables(use_layout=False, strategy="lines").tables if t.row_count >= 2 and t.col_count >= 2]
    regions: list[Region] = []
    used: set[int] = set()
    for caption in captions:
        if _sideways(caption.bbox, body_size):
            region = _sideways_table(pg, caption)
        else:  # rules of a table found already belong to no other caption (captions set above their tables)
            free = [r for r in rules if not any(inside(r, found.bbox, 2) for found in regions)]
            region = _captioned_table(pg, caption, free, grids, used, captions, [found.bbox for found in regions])
        if region is not None:
            regions.append(region)
    taken = list(figure_boxes) + [r.bbox for r in regions]
    if len(rules) >= 2:
        regions += _uncaptioned_ruled(pg, blocks, rules, grids, used, taken, [c.bbox for c in captions])
    for i, grid in enumerate(grids):
        box = tuple(grid.bbox)
        if i in used or _overlaps(box, taken):
            continue
        cells = _grid_cells(page, grid, encoding)
        if _filled(cells) >= 0.5 and len(cells) <= 600 and _is_table(cells):
            regions.append(Region("table", box, cells, None))
            taken.append(box)
    if blocks and _has_aligned_rows(blocks, body_size):
        for box, header_lines in whitespace_tables(blocks, pg.words, body_size):
            if _overlaps(box, taken):
                continue
            cells = read_cells([w for w in pg.words if inside((w.x0, w.y0, w.x1, w.y1), box, 1)], body_size, header_lines=header_lines)
            if _is_table(cells):
                regions.append(Region("table", box, cells))
                taken.append(box)
    regions += _value_grid_tables(pg, blocks, rules, taken)
    return regions


def _value_grid_tables(pg: _Page, blocks: list[TextBlock], rules: list[BBox], taken: list[BBox]) -> list[Region]:
    """Tables of aligned numbers with no caption or closing rule (:func:`value_grids`); two rules right
    above one, with a line between them, set its header (a long table's first page: "1 2 … 10")."""
    out: list[Region] = []
    for box in value_grids(pg.words, pg.body_size):
        if _overlaps(box, taken) or mono_share(blocks, box) >= 0.6:
            continue
        over = sorted((r for r in rules if box[1] - 1.5 * pg.body_size < r[1] <= box[1] and _x_overlap(r, box) > 0.8 * (box[2] - box[0])), key=lambda r: r[1])
        header_limit = None
        if over:
            top = [r for r in rules if over[-1][1] - 3 * pg.body_size < r[1] < over[-1][1] - 0.5 * pg.body_size and abs(r[0] - over[-1][0]) < 3]
            if top:
                header_limit, box = over[-1][1], (min(box[0], top[-1][0]), top[-1][1], max(box[2], top[-1][2]), box[3])
        words = [w for w in pg.words if inside((w.x0, w.y0, w.x1, w.y1), box, 1)]
        cells = read_cells(words, pg.body_size, header_limit=header_limit, header_lines=0)
        if _is_table(cells):
            out.append(Region("table", box, cells))
            taken.append(box)
    return out
