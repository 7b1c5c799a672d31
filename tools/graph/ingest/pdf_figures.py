"""Where a PDF page's figures are, and which text labels them (axis titles, tick labels, legends).

A captioned figure is the graphics next to its "Figure N" caption: the drawings beside the
nearest ones, and the rows of a panel grid stacked above them (``par(mfrow = c(2, 3))``). An
uncaptioned figure is a raster image, or a vector plot (many strokes, some of them curves or
slanted lines: a data line, a point, a fitted curve). Text inside a figure's area, or labelling it
from just outside, belongs to the figure and never becomes prose.
"""

from __future__ import annotations

import re
from typing import Any

import pymupdf

from .pdf_regions import BBox, Region, _x_overlap, inside
from .pdf_text import TextBlock

__all__ = ["drawn", "find_figure_regions", "figure_label_of", "LABEL_REACH"]

#: How far outside a figure's graphics its labels sit (axis titles, tick labels), in body-text sizes.
LABEL_REACH = 4.0
#: How far apart the drawings of one figure may stand side by side (the bars of a double-decker plot), in points.
_NEIGHBOUR_GAP = 24.0
#: Least strokes of an uncaptioned vector plot, and least of them curves or slanted lines (a frame or a ruled table has none).
_PLOT_ITEMS, _PLOT_SHAPES = 20, 10
#: Least distinct heights of level lines, and places of upright ones, in a step curve (a ruled table has a line per row and column).
_STEP_PLACES = 20
#: A section number opening a heading ("3", "2.1", "A.2").
_NUMBERED = re.compile(r"(?:\d+|[A-Z])(?:\.\d+)*\.?\s")
#: A tick label: a number, maybe signed, maybe a percentage.
_TICK = re.compile(r"[−–-]?\d*[.,]?\d+(?:e[−–+-]?\d+)?%?")


def drawn(page: pymupdf.Page) -> list[dict[str, Any]]:
    """The page's drawings (``get_drawings``), each box cut to the clip it is drawn in.

    A plot clips its data lines to its frame, but a line's own box runs on to wherever its
    points are (a steep fitted line, a reference line): without the clip, a panel seems to
    reach into the next one or past its caption.
    """
    out: list[dict[str, Any]] = []
    clips: list[tuple[int, pymupdf.Rect]] = []  # (level, scissor) of the clips in force
    for item in page.get_drawings(extended=True):
        level = int(item.get("level", 0))
        while clips and clips[-1][0] >= level:
            clips.pop()
        if item.get("type") == "clip":
            scissor = pymupdf.Rect(item["scissor"])
            clips.append((level, scissor & clips[-1][1] if clips else scissor))
        elif item.get("type") != "group":
            box = pymupdf.Rect(item["rect"])
            if clips and not clips[-1][1].contains(box):
                cut = box & clips[-1][1]
                box = cut if not cut.is_empty or box.is_empty else box  # a rule of no height stays itself
            out.append({**item, "rect": box})
    return out


def find_figure_regions(page: pymupdf.Page, captions: list[TextBlock], drawings: list[dict[str, Any]] | None = None) -> list[Region]:
    """Figures: the graphics next to each "Figure N" caption, uncaptioned raster images and uncaptioned vector plots
    (``drawings``: the page's, if known, as :func:`drawn` gives them)."""
    drawings = drawn(page) if drawings is None else drawings
    graphics: list[BBox] = [tuple(r) for r in page.cluster_drawings(drawings=drawings) if r.width >= 20 and r.height >= 20]
    images = [tuple(info["bbox"]) for info in page.get_image_info() if info["bbox"][2] - info["bbox"][0] >= 20]
    graphics += images
    regions: list[Region] = []
    taken: set[int] = set()
    ordered = sorted(captions, key=lambda c: c.bbox[1])
    for index, caption in enumerate(ordered):
        cb = caption.bbox
        # Captions go under their figures by convention: take the graphics above this caption and
        # below the previous caption of the same column first; only without any, the nearest below.
        ceiling = max((c.bbox[3] for c in ordered[:index] if _x_overlap(c.bbox, cb) > 0), default=0.0)
        # A stroke clipped at the plot's edge keeps its whole length in the drawings: graphics that run on through
        # the caption are cut at its top (a figure never holds its own caption).
        candidates = [
            i
            for i, g in enumerate(graphics)
            if i not in taken and _x_overlap(g, cb) > 0 and (g[3] <= cb[1] + 4 or g[3] >= cb[3]) and ceiling - 4 <= g[1] < cb[1] - 4
        ] or [i for i, g in enumerate(graphics) if i not in taken and _x_overlap(g, cb) > 0 and g[1] >= cb[3] - 4]
        for i in candidates:
            if graphics[i][1] < cb[1] < graphics[i][3]:
                graphics[i] = (*graphics[i][:3], cb[1])
        if not candidates:
            regions.append(Region("figure", cb, caption=caption))
            continue
        nearest = min(candidates, key=lambda i: min(abs(cb[1] - graphics[i][3]), abs(graphics[i][1] - cb[3])))
        anchor = graphics[nearest]
        above = anchor[3] <= cb[1] + 4
        side = [i for i in candidates if (graphics[i][3] <= cb[1] + 4) == above]
        members = _stacked(graphics, [nearest], side)
        members += _panel_rows(graphics, members, [i for i in side if i not in members])
        box = _union([graphics[i] for i in members])
        box = _with_neighbours(box, graphics, set(members) | taken, members)
        taken.update(members)
        regions.append(Region("figure", box, caption=caption))
    for i, box in enumerate(graphics):
        if i not in taken and (box in images or _is_plot(box, drawings)):
            regions.append(Region("figure", box))
    return regions


def _union(boxes: list[BBox]) -> BBox:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def _stacked(graphics: list[BBox], members: list[int], others: list[int]) -> list[int]:
    """``members`` and the ``others`` level with them or within 12 points above or below, gathered until none is left
    (the tiles of a mosaic, a plot and its legend)."""
    members = list(members)
    grown = True
    while grown:
        grown = False
        top, bottom = min(graphics[m][1] for m in members), max(graphics[m][3] for m in members)
        for i in others:
            if i not in members and not (graphics[i][3] < top - 12 or graphics[i][1] > bottom + 12):
                members.append(i)
                grown = True
    return members


def _panel_rows(graphics: list[BBox], members: list[int], others: list[int]) -> list[int]:
    """The ``others`` that continue a grid of panels, row by row: the same left and right edges as a panel
    of the figure (within 6 points: tick labels of another width), about its height, at most two heights from it."""
    rows: list[int] = []
    grown = True
    while grown:
        grown = False
        for i in others:
            if i in rows:
                continue
            g = graphics[i]
            for m in members + rows:
                p = graphics[m]
                height = p[3] - p[1]
                aligned = abs(g[0] - p[0]) <= 6 and abs(g[2] - p[2]) <= 6 and abs((g[3] - g[1]) - height) <= 0.25 * height
                if aligned and max(g[1] - p[3], p[1] - g[3]) <= 2 * height:
                    rows.append(i)
                    grown = True
                    break
    return rows


def _is_plot(box: BBox, drawings: list[dict[str, Any]]) -> bool:
    """Whether the drawings within ``box`` make a plot: :data:`_PLOT_ITEMS` strokes or more, and :data:`_PLOT_SHAPES` of
    them curves or slanted lines, or level and upright lines at :data:`_STEP_PLACES` heights and as many places across
    (a step curve). Frames, axes and a table's rules are level or upright, at a few places only."""
    items = [item for d in drawings if inside(tuple(d["rect"]), box, 1) for item in d["items"]]
    lines = [(item[1], item[2]) for item in items if item[0] == "l"]
    slanted = sum(1 for a, b in lines if abs(a.x - b.x) > 0.5 and abs(a.y - b.y) > 0.5)
    heights = {round(a.y) for a, b in lines if abs(a.y - b.y) <= 0.5 < abs(a.x - b.x)}
    places = {round(a.x) for a, b in lines if abs(a.x - b.x) <= 0.5 < abs(a.y - b.y)}
    shapes = slanted + sum(1 for item in items if item[0] == "c")
    return len(items) >= _PLOT_ITEMS and (shapes >= _PLOT_SHAPES or min(len(heights), len(places)) >= _STEP_PLACES)


def _with_neighbours(box: BBox, graphics: list[BBox], skip: set[int], members: list[int]) -> BBox:
    """``box`` grown by the graphics beside it (within :data:`_NEIGHBOUR_GAP`, overlapping it from top to bottom), until none is left;
    their indices join ``members``. A figure's panels need not stand over its caption."""
    grown = True
    while grown:
        grown = False
        for i, g in enumerate(graphics):
            if i in skip or g[1] < box[1] - 4 or g[3] > box[3] + 4:
                continue
            if g[0] - box[2] <= _NEIGHBOUR_GAP and box[0] - g[2] <= _NEIGHBOUR_GAP:
                box = (min(box[0], g[0]), box[1], max(box[2], g[2]), box[3])
                skip.add(i)
                members.append(i)
                grown = True
    return box


def figure_label_of(block: TextBlock, figures: list[Region], body_size: float) -> Region | None:
    """The figure whose graphics ``block`` labels: short, plain text no larger than the body, just outside one figure's region.

    Tick labels and axis titles ("0 2 4 6 8", "Number of years of education") are drawn as text
    next to the plot's lines, so they fall outside the drawing cluster; a heading (bold or
    larger), a sentence or a line of code never counts as a label. A plot's own title ("Q−Q plot",
    bold) is one: a few words with no section number, over the figure within its width, just above it.
    """
    if (figure := _plot_title_of(block, figures, body_size)) is not None:
        return figure
    words = block.text.split()
    column = len(words) <= 12 and all(len(line.text.split()) <= 3 for line in block.lines)  # an axis's tick labels, one a line
    ticks = len(words) <= 24 and all(_TICK.fullmatch(w) for w in words)  # or numbers alone ("0 0.1 0.2 … 0.9")
    short = (len(words) <= 12 and len(block.lines) == 1) or (len(words) <= 6 and len(block.lines) <= 2) or column or ticks  # or a title
    tiny = ticks or (len(words) == 1 and len(words[0]) <= 3)  # tick labels and axis letters keep the plot's size, larger or not
    scaled = block.size <= 1.25 * body_size and not block.bold and not _NUMBERED.match(block.text.strip())  # a plot scaled up a little
    if not words or (block.size > 1.02 * body_size and not (tiny or scaled)) or (block.bold and block.size >= 0.9 * body_size) or block.mono_share >= 0.5:
        return None  # a heading (larger, or bold: plots set small bold titles) or code
    reach = LABEL_REACH * max(body_size, block.size)  # a plot set larger sets its labels farther out
    label = short and not block.text.rstrip().endswith((".", ":", ";"))
    near = [
        f for f in figures
        if (label and inside(block.bbox, (f.bbox[0] - reach, f.bbox[1] - reach, f.bbox[2] + reach, f.bbox[3] + reach), 3)) or _legend_of(block, f, reach)
    ]  # fmt: skip
    return min(near, key=lambda f: _distance(block.bbox, f.bbox), default=None)  # panels side by side: the one it is next to


def _plot_title_of(block: TextBlock, figures: list[Region], body_size: float) -> Region | None:
    """The figure ``block`` is the bold title of: at most 8 words on at most 2 lines, no section number or closing
    punctuation, within a figure's width and no more than :data:`LABEL_REACH` body sizes above its graphics."""
    text = block.text.strip()
    if not block.bold or not text or len(text.split()) > 8 or len(block.lines) > 2 or _NUMBERED.match(text) or text.endswith((".", ":", ";")):
        return None
    reach = LABEL_REACH * body_size
    x0, y0, x1, y1 = block.bbox
    over = [f for f in figures if f.bbox[0] - reach <= x0 and x1 <= f.bbox[2] + reach and f.bbox[1] - reach <= y0 and y1 <= f.bbox[1] + 2]
    return min(over, key=lambda f: f.bbox[1] - y1, default=None)


def _distance(a: BBox, b: BBox) -> float:
    """How far apart two boxes are (0 when they overlap)."""
    return max(0.0, b[0] - a[2], a[0] - b[2]) + max(0.0, b[1] - a[3], a[1] - b[3])


def _legend_of(block: TextBlock, figure: Region, reach: float) -> bool:
    """A column of a few words a line (a legend: "Pearson residuals: 4.0 2.0 0.0 -2.0") level with a captioned figure's
    graphics, within them or beside them up to the caption's column edges."""
    if figure.caption is None or len(block.text.split()) > 4 * len(block.lines):
        return False
    x0, y0, x1, y1 = figure.bbox
    cap = figure.caption.bbox
    return inside(block.bbox, (min(cap[0], x0 - reach), y0 - reach, max(cap[2], x1 + reach), y1 + reach), 0)
