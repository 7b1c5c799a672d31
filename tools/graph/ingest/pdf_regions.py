"""Tables and figures on a PDF page, located through rules, grids, graphics and captions.

Tables come in two shapes: ruled grids (pymupdf's ``find_tables`` with the
``lines`` strategy) and booktabs-style tables that have horizontal rules only,
which ``find_tables`` misses; those are read here from word positions. Cell text
is always read with ``page.get_text(clip=…)``. Vector figures have no object of
their own in a PDF: they are found as the drawing cluster next to a "Figure N"
caption.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pymupdf

from .blocks import TableCell
from .pdf_text import LIGATURES, TextBlock, join_lines

__all__ = ["Region", "horizontal_rules", "find_table_regions", "find_figure_regions", "inside"]

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


def horizontal_rules(page: pymupdf.Page, min_width: float = 50.0) -> list[BBox]:
    """Thin horizontal lines, top to bottom, with collinear touching segments merged.

    Grids drawn cell by cell come out as one rule per row line.
    """
    segments = sorted(
        (r.x0, r.y0, r.x1, r.y1)
        for r in (d["rect"] for d in page.get_drawings())
        if r.height <= 2.0 and r.width >= 3.0
    )
    rules: list[list[float]] = []
    for x0, y0, x1, y1 in sorted(segments, key=lambda s: (round(s[1]), s[0])):
        last = rules[-1] if rules else None
        if last and abs(last[1] - y0) < 1.0 and x0 <= last[2] + 2.0:
            last[2] = max(last[2], x1)
        else:
            rules.append([x0, y0, x1, y1])
    return [(r[0], r[1], r[2], r[3]) for r in rules if r[2] - r[0] >= min_width]


def _rule_group(rules: list[BBox], caption: BBox, page_height: float) -> list[BBox]:
    """The run of aligned rules right above (or else right below) a caption."""
    aligned = [r for r in rules if _x_overlap(r, caption) > 0.5 * min(r[2] - r[0], caption[2] - caption[0])]
    above = [r for r in aligned if r[1] <= caption[1] + 1]
    below = [r for r in aligned if r[1] >= caption[3] - 1]
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
    return []


def _cluster(values: list[float], tolerance: float) -> list[list[int]]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    groups: list[list[int]] = []
    for i in order:
        if groups and values[i] - values[groups[-1][-1]] <= tolerance:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _booktabs_cells(page: pymupdf.Page, rules: list[BBox], body_size: float) -> list[TableCell]:
    """Cells of a table bounded by horizontal rules, read from word positions."""
    top, bottom = rules[0][1], rules[-1][1]
    area = pymupdf.Rect(rules[0][0] - 2, top, rules[0][2] + 2, bottom)
    words = [(*w[:4], w[4].translate(LIGATURES)) for w in page.get_text("words", clip=area) if w[4].strip()]
    if not words:
        return []
    centres = [(w[1] + w[3]) / 2 for w in words]
    lines = sorted(_cluster(centres, 0.35 * body_size), key=lambda g: centres[g[0]])
    # Column gaps: x positions no word covers, on any line, wider than a space.
    spans = sorted((w[0], w[2]) for w in words)
    cuts: list[float] = []
    reach = spans[0][1]
    for x0, x1 in spans[1:]:
        if x0 - reach >= 0.9 * body_size:
            cuts.append((x0 + reach) / 2)
        reach = max(reach, x1)

    def column(word: tuple) -> int:
        return sum(1 for c in cuts if (word[0] + word[2]) / 2 > c)

    inner = [r[1] for r in rules[1:-1]]
    header_limit = inner[0] if inner else None
    # A line continues the current row when it fills a single column that the line
    # before it filled too (wrapped cell text); otherwise it starts a new row.
    rows: list[dict[int, list[str]]] = []
    previous: set[int] = set()
    header_rows = 0
    for group in lines:
        parts: dict[int, list[str]] = {}
        for i in sorted(group, key=lambda j: words[j][0]):
            parts.setdefault(column(words[i]), []).append(words[i][4])
        cells = {col: [" ".join(ws)] for col, ws in parts.items()}
        in_header = header_limit is not None and centres[group[0]] < header_limit
        if in_header:
            continues = header_rows > 0
        else:
            continues = len(rows) > header_rows and len(cells) == 1 and set(cells) <= previous
        if continues:
            for col, lines_of_cell in cells.items():
                rows[-1].setdefault(col, []).extend(lines_of_cell)
        else:
            rows.append(cells)
            header_rows += int(in_header)
        previous = set(cells)
    if header_limit is None:
        header_rows = 1
    return [
        TableCell(row=r, col=c, text=join_lines(row.get(c, [])), header=r < header_rows)
        for r, row in enumerate(rows)
        for c in range(len(cuts) + 1)
    ]


def _grid_cells(page: pymupdf.Page, table: object) -> list[TableCell]:
    cells: list[TableCell] = []
    for r, row in enumerate(table.rows):  # type: ignore[attr-defined]
        for c, box in enumerate(row.cells):
            if box is None:
                continue
            text = " ".join(page.get_text(clip=pymupdf.Rect(box)).translate(LIGATURES).split())
            cells.append(TableCell(row=r, col=c, text=text, header=r == 0, bbox=tuple(box)))
    return cells


def _filled(cells: list[TableCell]) -> float:
    return sum(1 for c in cells if c.text) / max(1, len(cells))


def _rows(cells: list[TableCell]) -> int:
    return len({c.row for c in cells})


def _captioned_table(
    page: pymupdf.Page,
    caption: TextBlock,
    rules: list[BBox],
    grids: list[Any],
    used: set[int],
    body_size: float,
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
    grid_cells = _grid_cells(page, grids[grid_index]) if grid_index is not None else []
    if grid_cells and _filled(grid_cells) < 0.4:
        grid_cells = []
    group = _rule_group(rules, cb, page.rect.height)
    rule_cells = _booktabs_cells(page, group, body_size) if group else []
    if grid_index is not None and (grid_cells or rule_cells):
        used.add(grid_index)
    if grid_cells and _rows(grid_cells) >= _rows(rule_cells):
        return Region("table", tuple(grids[grid_index].bbox), grid_cells, caption)  # type: ignore[index]
    if rule_cells:
        box = (group[0][0], group[0][1], group[-1][2], group[-1][3])
        used.update(i for i, t in enumerate(grids) if inside(tuple(t.bbox), box, 4))
        return Region("table", box, rule_cells, caption)
    return None


def find_table_regions(
    page: pymupdf.Page,
    captions: list[TextBlock],
    figure_boxes: list[BBox],
    body_size: float,
) -> list[Region]:
    """Tables on a page: one per "Table N" caption, plus uncaptioned ruled grids.

    Table detection runs only on pages with table evidence (a table caption or at
    least three horizontal rules): ``find_tables`` dominates ingestion time.
    """
    rules = horizontal_rules(page)
    if not captions and len(rules) < 3:
        return []
    grids = [t for t in page.find_tables(use_layout=False, strategy="lines").tables if t.row_count >= 2 and t.col_count >= 2]
    regions: list[Region] = []
    used: set[int] = set()
    for caption in captions:
        region = _captioned_table(page, caption, rules, grids, used, body_size)
        if region is not None:
            regions.append(region)
    for i, grid in enumerate(grids):
        box = tuple(grid.bbox)
        if i in used or any(_x_overlap(box, f) > 0 and not (box[3] < f[1] or box[1] > f[3]) for f in figure_boxes):
            continue
        cells = _grid_cells(page, grid)
        if _filled(cells) >= 0.5 and len(cells) <= 600:
            regions.append(Region("table", box, cells, None))
    return regions


def find_figure_regions(page: pymupdf.Page, captions: list[TextBlock]) -> list[Region]:
    """Figures: the graphics next to each "Figure N" caption, and uncaptioned raster images."""
    graphics: list[BBox] = [tuple(r) for r in page.cluster_drawings() if r.width >= 20 and r.height >= 20]
    images = [tuple(info["bbox"]) for info in page.get_image_info() if info["bbox"][2] - info["bbox"][0] >= 20]
    graphics += images
    regions: list[Region] = []
    taken: set[int] = set()
    for caption in captions:
        cb = caption.bbox
        candidates = [
            i
            for i, g in enumerate(graphics)
            if i not in taken and _x_overlap(g, cb) > 0 and (g[3] <= cb[1] + 4 or g[1] >= cb[3] - 4)
        ]
        if not candidates:
            regions.append(Region("figure", cb, caption=caption))
            continue
        nearest = min(candidates, key=lambda i: min(abs(cb[1] - graphics[i][3]), abs(graphics[i][1] - cb[3])))
        anchor = graphics[nearest]
        above = anchor[3] <= cb[1] + 4
        members = [i for i in candidates if (graphics[i][3] <= cb[1] + 4) == above and not (graphics[i][3] < anchor[1] - 12 or graphics[i][1] > anchor[3] + 12)]
        taken.update(members)
        box = (
            min(graphics[i][0] for i in members),
            min(graphics[i][1] for i in members),
            max(graphics[i][2] for i in members),
            max(graphics[i][3] for i in members),
        )
        regions.append(Region("figure", box, caption=caption))
    for i, box in enumerate(graphics):
        if i not in taken and box in images:
            regions.append(Region("figure", box))
    return regions
