"""Table cells from word positions (where the tables stand: :mod:`.pdf_table_areas`).

A table whose rows are not all ruled (booktabs, or a grid missing its row lines)
is read from the words inside its area: lines from vertical word centres, columns
from the x gaps no body word covers, header phrases assigned to every column they
sit over (a spanning header covers several), wrapped cell text joined into its row.
Cell text keeps its reading order; ligatures are undone.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import pymupdf

from .blocks import TableCell
from .pdf_text import LIGATURES, join_lines

__all__ = ["Word", "page_words", "read_cells", "join_band_labels", "lines_of", "phrases_of", "unfold_halves"]

BBox = tuple[float, float, float, float]


@dataclass(frozen=True)
class Word:
    """One word on the page with its box."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str

    @property
    def centre(self) -> float:
        return (self.y0 + self.y1) / 2


def page_words(page: pymupdf.Page, area: BBox | None = None, encoding: dict[int, str] | None = None, marks: Sequence[BBox] = ()) -> list[Word]:
    """Words in ``area`` (the whole page by default), ligatures undone, TeX codes read through ``encoding``,
    footnote marks (``marks``: their boxes, from :attr:`TextLine.marks`) dropped."""
    clip = pymupdf.Rect(area) if area else None
    if encoding:  # pymupdf's words break at TeX's codes ("50\x1559" is two words): words read char by char
        words = _coded_words(page, clip, encoding)
    else:
        words = [Word(w[0], w[1], w[2], w[3], w[4].translate(LIGATURES)) for w in page.get_text("words", clip=clip) if w[4].strip()]
    return [_without_mark(w, marks) for w in words] if marks else words


def _without_mark(word: Word, marks: Sequence[BBox]) -> Word:
    """``word`` without the raised footnote mark that ends it ("densea" printed "dense" with a raised "a")."""
    upward = word.y1 - word.y0 > 1.5 * (word.x1 - word.x0) and len(word.text) > 2  # set up the page: it ends at its top
    for mark in marks:
        if len(word.text) < 2:
            continue
        if not upward and abs(word.x1 - mark[2]) <= 0.5 and word.y0 - 2 <= mark[1] <= word.y1:
            return Word(word.x0, word.y0, mark[0], word.y1, word.text[:-1])
        if upward and abs(word.y0 - mark[1]) <= 0.5 and word.x0 - 2 <= mark[0] <= word.x1:
            return Word(word.x0, mark[3], word.x1, word.y1, word.text[:-1])
    return word


def _coded_words(page: pymupdf.Page, clip: pymupdf.Rect | None, encoding: dict[int, str]) -> list[Word]:
    """Words of a page in a TeX Type 3 font, as pymupdf's ``words`` splits them (at spaces and control codes),
    with TeX's codes read through ``encoding``."""
    words: list[Word] = []
    for block in page.get_text("rawdict", clip=clip)["blocks"]:
        for line in block.get("lines", []):
            text, boxes = "", list[tuple[float, float, float, float]]()
            for ch in [ch for span in line["spans"] for ch in span["chars"]] + [None]:
                if ch is None or ((ch["c"].isspace() or ord(ch["c"]) < 0x20) and ord(ch["c"]) not in encoding):
                    if text.strip():
                        words.append(Word(min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes), text.translate(LIGATURES)))
                    text, boxes = "", []
                    continue
                text += encoding.get(ord(ch["c"]), ch["c"])
                boxes.append(tuple(ch["bbox"]))
    return words


def _lines(words: Sequence[Word], body_size: float) -> list[list[Word]]:
    """Words grouped into text lines by vertical centre, top to bottom, each left to right."""
    heights = sorted(w.y1 - w.y0 for w in words)
    usual = heights[len(heights) // 2] if heights else body_size
    plain = sorted(w.centre for w in words if w.y1 - w.y0 <= 1.3 * usual)

    def centre(w: Word) -> float:
        """A word taller than the text (a hat over β, a maths bracket reaching below) sits in the line its top or its
        bottom shares with plain words, whichever is nearer to one; a word set sideways keeps its own middle."""
        height = w.y1 - w.y0
        if height <= 1.3 * usual or (height > 2.5 * usual and len(w.text) > 2) or not plain:
            return w.centre
        return min((w.y0 + usual / 2, w.y1 - usual / 2), key=lambda c: _distance(plain, c))

    lines: list[list[Word]] = []
    last = 0.0
    for word in sorted(words, key=centre):
        if lines and centre(word) - last <= 0.35 * body_size:
            lines[-1].append(word)
        else:
            lines.append([word])
        last = centre(word)
    return [sorted(line, key=lambda w: w.x0) for line in lines]


def _distance(sorted_values: list[float], value: float) -> float:
    """How far ``value`` is from the nearest of ``sorted_values`` (not empty)."""
    i = bisect.bisect_left(sorted_values, value)
    return min(abs(sorted_values[j] - value) for j in (i - 1, i) if 0 <= j < len(sorted_values))


def _phrases(line: list[Word], gap: float) -> list[list[Word]]:
    """A line cut where the space between two words is at least ``gap``."""
    out: list[list[Word]] = [[line[0]]]
    for word in line[1:]:
        if word.x0 - out[-1][-1].x1 >= gap:
            out.append([word])
        else:
            out[-1].append(word)
    return out


def _cuts(lines: list[list[Word]], gap: float) -> list[float]:
    """x positions between columns: gaps at least ``gap`` wide that no word of ``lines`` covers."""
    spans = sorted((w.x0, w.x1) for line in lines for w in line)
    if not spans:
        return []
    cuts: list[float] = []
    reach = spans[0][1]
    for x0, x1 in spans[1:]:
        if x0 - reach >= gap:
            cuts.append((x0 + reach) / 2)
        reach = max(reach, x1)
    return cuts


def _column(x: float, cuts: list[float]) -> int:
    return sum(1 for c in cuts if x > c)


lines_of = _lines
phrases_of = _phrases


def _starts_aligned(phrases: list[list[Word]], below: list[list[Word]]) -> bool:
    """Whether every phrase of a header line starts where a phrase of a line below starts (group headers set flush left)."""
    return all(any(abs(p[0].x0 - q[0].x0) <= 1.0 for q in below) for p in phrases)


def _group_spans(
    phrases: list[list[Word]],
    cuts: list[float],
    body_edges: list[tuple[float, float]],
    slack: float,
    underlines: Sequence[BBox] = (),
    walls: Sequence[float] = (),
) -> list[tuple[int, int, str]]:
    """(first column, span, text) for a header line above the last: group headers ("Intercept" over Bias, MAE, RMSE).

    A phrase heads the columns its words stand over (or, standing in the gap between two, both), widened
    to the most columns that no other phrase of the line stands over, that leave out the row labels'
    column, and whose middle is no further from the phrase's than the first columns' (or half of ``slack``): a group
    header sits centred over its group, and a wide neighbour on one side ("Contact" left of five rating
    columns) is no part of it. A rule drawn right under a phrase alone (booktabs' ``cmidrule``) says its columns, as
    do two vertical rules (``walls``) with no other phrase between them.
    """
    boxes = [(p[0].x0, p[-1].x1) for p in phrases]
    over = [[c for c, (left, right) in enumerate(body_edges) if left <= b[1] and right >= b[0]] for b in boxes]
    owned = {c for cols in over for c in cols}
    out: list[tuple[int, int, str]] = []
    rules = [_underline(phrase, underlines, slack) for phrase in phrases]
    for phrase, box, cols, rule in zip(phrases, boxes, over, rules):
        middle = (box[0] + box[1]) / 2
        alone = rule is not None and rules.count(rule) == 1  # one rule under "Intercept" and "Slope" says neither's columns
        ruled = [c for c, (left, right) in enumerate(body_edges) if alone and rule and rule[0] - 2 <= (left + right) / 2 <= rule[2] + 2]
        ruled = ruled or _walled(boxes[len(out)], boxes, walls, body_edges)  # alone between two vertical rules: their columns
        if ruled:
            owned.update(ruled)
            out.append((ruled[0], len(ruled), " ".join(w.text for w in phrase)))
            continue
        if not cols:
            col = _column(middle, cuts)
            cols = [col - 1, col] if 1 <= col - 1 and not {col - 1, col} & owned else [col]
        floor = 0 if cols[0] == 0 else 1
        off = {
            (lo, hi): abs(middle - (body_edges[lo][0] + body_edges[hi][1]) / 2)
            for lo in range(floor, cols[0] + 1)
            for hi in range(cols[-1], len(body_edges))
            if not (set(range(lo, hi + 1)) - set(cols)) & owned
        }
        limit = max(off.get((cols[0], cols[-1]), 0.0), slack / 2)
        fits = [span for span, away in off.items() if away <= limit]
        low, high = max(fits, key=lambda s: (s[1] - s[0], -off[s]), default=(cols[0], cols[-1]))
        owned.update(range(low, high + 1))
        out.append((low, high - low + 1, " ".join(w.text for w in phrase)))
    return out


def _underline(phrase: list[Word], rules: Sequence[BBox], reach: float) -> BBox | None:
    """The rule drawn under ``phrase`` (within ``reach`` below it, under its middle), if any."""
    middle, bottom = (phrase[0].x0 + phrase[-1].x1) / 2, max(w.y1 for w in phrase)
    return next((r for r in rules if bottom - 1 <= r[1] <= bottom + reach and r[0] <= middle <= r[2]), None)


def _header_spans(
    phrases: list[list[Word]],
    cuts: list[float],
    body_edges: list[tuple[float, float]],
    reach: float,
    own: set[int] | None = None,
    walls: Sequence[float] = (),
) -> list[tuple[int, int, str]]:
    """(first column, span, text) for the phrases of a header line.

    Every column goes to the phrase over it, or else the nearest phrase within
    ``reach`` unless a line above heads it alone (``own``); a phrase given several
    columns is a spanning header. A phrase alone between two vertical rules (``walls``, their x)
    heads every column between them ("time" set left in its box over twelve columns).
    """
    boxes = [(p[0].x0, p[-1].x1) for p in phrases]
    owner: dict[int, int] = {}
    for col, (left, right) in enumerate(body_edges):
        centre = (left + right) / 2
        distance = [max(0.0, b[0] - right, left - b[1]) for b in boxes]
        best = min(range(len(boxes)), key=lambda i: (distance[i], abs((boxes[i][0] + boxes[i][1]) / 2 - centre)))
        if distance[best] <= reach and (distance[best] == 0 or col not in (own or set())):
            owner[col] = best
    out: list[tuple[int, int, str]] = []
    for index, phrase in enumerate(phrases):
        cols = sorted(c for c, o in owner.items() if o == index)
        middle = (boxes[index][0] + boxes[index][1]) / 2
        over = [c for c in cols if body_edges[c][0] <= boxes[index][1] and body_edges[c][1] >= boxes[index][0]]
        cols = [c for c in cols if c > 0 or 0 in over]  # the row-label column's header is its own
        flush = [c for c in cols if abs(body_edges[c][0] - boxes[index][0]) <= 1.0]
        if flush:  # set flush left with a column: heads nothing left of it ("R function" over lFormula, not "(Section 2)")
            cols = [c for c in cols if c >= flush[0]]
        if len(cols) > 1:  # a spanning header starts over, or sits centred over, the columns it spans
            left, right = body_edges[cols[0]][0], body_edges[cols[-1]][1]
            if cols[0] not in over and abs(middle - (left + right) / 2) > 0.25 * (right - left):
                cols = over
        if not cols:  # over no column's words: the column its middle falls in
            cols = [_column(middle, cuts)]
        boxed = _walled(boxes[index], boxes, walls, body_edges)
        if len(boxed) > len(cols):
            cols = boxed
        out.append((cols[0], cols[-1] - cols[0] + 1, " ".join(w.text for w in phrase)))
    return out


def _walled(box: tuple[float, float], boxes: list[tuple[float, float]], walls: Sequence[float], body_edges: list[tuple[float, float]]) -> list[int]:
    """The columns between the two vertical rules around ``box``, when no other phrase of its line stands between them."""
    left = max((x for x in walls if x <= box[0]), default=None)
    right = min((x for x in walls if x >= box[1]), default=None)
    if left is None or right is None or any(b != box and b[1] > left and b[0] < right for b in boxes):
        return []
    return [c for c, (x0, x1) in enumerate(body_edges) if x0 >= left - 1 and x1 <= right + 1]


def read_cells(
    words: Sequence[Word],
    body_size: float,
    header_limit: float | None = None,
    header_lines: int = 1,
    separators: Sequence[float] = (),
    underlines: Sequence[BBox] = (),
    walls: Sequence[float] = (),
) -> list[TableCell]:
    """Cells of the table whose words are ``words``.

    Lines above ``header_limit`` (a rule's y) are the header; without one, the first
    ``header_lines`` lines are. Columns come from the body lines only, so a header
    spanning two columns does not merge them. ``underlines`` are rules shorter than the table's drawn in its
    header: each says which columns the phrase right above it heads; ``walls`` are the x of vertical rules
    through the header.
    """
    lines = _lines(words, body_size)
    if len(lines) < 2:
        return []
    if header_limit is not None:
        head = [ln for ln in lines if ln[0].centre < header_limit]
    else:
        head = lines[:header_lines]
    while len(head) > 1 and _off_centre_label(head[0], lines, body_size) and not _underline(head[0], underlines, body_size) and not _stacked(head[0], head[1], body_size):  # "Females" over the header: the first group's label
        head = head[1:]
    body = [ln for ln in lines if not any(ln is h for h in head)]
    if not body:
        return []
    gap = 0.8 * body_size  # fasta_guide: 9.5 pt between "Target file(s)" and "Function" at 10.9 pt body
    labels, notes = _lone_lines(body, body_size)
    body = [ln for ln in body if not any(ln is x for x in notes)]
    cuts = _cuts([ln for ln in body if not any(ln is x for x in labels)], gap)
    columns = len(cuts) + 1
    edges = [(min(w.x0 for ln in body for w in ln if _column((w.x0 + w.x1) / 2, cuts) == c),
              max(w.x1 for ln in body for w in ln if _column((w.x0 + w.x1) / 2, cuts) == c)) for c in range(columns)]
    rows: list[dict[int, tuple[int, list[str]]]] = []
    own: set[int] = set()  # columns an upper header line heads alone
    for i, line in enumerate(head):  # one header row a line; the graph joins a column's header rows
        row: dict[int, tuple[int, list[str]]] = {}
        phrases = _phrases(line, 0.6 * body_size)
        upper = (  # a line of group headers: above the last, fewer phrases than value columns, not set flush left
            i < len(head) - 1
            and len(phrases) < columns - 1
            and not _starts_aligned(phrases, [p for ln in head[i + 1 :] for p in _phrases(ln, 0.6 * body_size)])
        )
        spans = _group_spans(phrases, cuts, edges, body_size, underlines, walls) if upper else _header_spans(phrases, cuts, edges, 1.5 * body_size, own, walls)
        own = {col for col, span, _ in spans if span == 1} if upper else own
        for col, span, text in spans:
            old = row.get(col)
            row[col] = (max(span, old[0]) if old else span, (old[1] if old else []) + [text])
        rows.append(row)
    row_y: list[float] = []  # each body row's first line
    previous: set[int] = set()
    previous_x0 = 0.0
    previous_y1: float | None = None
    last_head = {col: " ".join(texts) for col, (_, texts) in rows[-1].items()} if rows else {}
    restarts: set[int] = set()  # a header row again, between blocks stacked in one table ("Name | clog-log | cauchit")
    pieces = _with_raised_pieces(body, cuts)
    for index, line in enumerate(pieces):
        parts: dict[int, list[str]] = {}
        group_label = any(line[0] in x for x in labels) or _heads_rows(line, pieces[index + 1 : index + 2], cuts, body_size)
        for word in line:
            parts.setdefault(0 if group_label else _column((word.x0 + word.x1) / 2, cuts), []).append(word.text)
        cells = {col: (1, [" ".join(ws)]) for col, ws in parts.items()}
        # A line filling one column that the line before filled too is wrapped cell text, unless it
        # starts left of the line before (a group label outdented from its rows: "Peng-Huang" over "n = 100").
        outdented = line[0].x0 < previous_x0 - 0.5 * body_size
        apart = previous_y1 is not None and min(w.y0 for w in line) - previous_y1 > 0.8 * body_size  # set off by space: a label
        # Several columns wrap together when one goes on after a hyphen and every one in lower case ("triangu-" / "lar", "Cholesky" / "factor").
        above = {col: rows[-1].get(col, (1, []))[1] for col in cells} if rows else {}
        wrapped = len(cells) == 1 or (
            len(cells) < len(previous)
            and any(texts and texts[-1].endswith("-") for texts in above.values())
            and all(texts[0][:1].islower() for _, texts in cells.values())
        )
        same = sum(1 for col, (_, texts) in cells.items() if last_head.get(col) and " ".join(texts) == last_head[col])
        corner = bool(last_head.get(0)) and " ".join(cells.get(0, (1, []))[1]) == last_head[0]
        restart = len(rows) > len(head) and (corner or (same >= 1 and 2 * same >= len(cells)))  # "Name | …", "Method | Description"
        if len(rows) > len(head) and wrapped and set(cells) <= previous and not outdented and not apart and not restart and not group_label:
            for col, (_, texts) in cells.items():
                rows[-1].setdefault(col, (1, []))[1].extend(texts)
        else:
            rows.append(cells)
            row_y.append(line[0].centre)
            if restart:
                restarts.add(len(rows) - 1)
        previous, previous_x0, previous_y1 = set(cells), line[0].x0, max(w.y1 for w in line)
    body_rows = rows[len(head) :]
    joined = join_band_labels({r: " ".join(row.get(0, (1, []))[1]) for r, row in enumerate(body_rows)}, dict(enumerate(row_y)), separators)
    for r, label in joined.items():
        if label != " ".join(body_rows[r].get(0, (1, []))[1]):
            body_rows[r][0] = (1, [label] if label else [])
    out: list[TableCell] = []
    for r, row in enumerate(rows):
        covered: set[int] = set()
        for col in range(columns):
            if col in covered:
                continue
            span, texts = row.get(col, (1, []))
            out.append(TableCell(row=r, col=col, text=join_lines(texts), header=r < len(head) or r in restarts, span=span))
            covered.update(range(col, col + span))
    return out


def unfold_halves(cells: list[TableCell]) -> list[TableCell]:
    """A table printed as two halves side by side, its header repeated ("description | key | default | description |
    key | default"), as one table: the right half's rows after the left half's, under the left half's header."""
    width = 1 + max((c.col for c in cells), default=-1)
    head = [c for c in cells if c.header]
    if width < 4 or width % 2 or not head or any(c.span > 1 for c in cells):
        return cells
    half, last = width // 2, max(c.row for c in head)
    heads = {c.col: c.text for c in head if c.row == last}
    if any(not heads.get(col) or heads.get(col) != heads.get(col + half) for col in range(half)):
        return cells
    right = [c for c in cells if c.col >= half and not c.header]
    filled = {c.row for c in right if c.text}
    below = max(c.row for c in cells) + 1
    moved = [c for c in cells if c.col < half] + [c.model_copy(update={"row": below + c.row, "col": c.col - half}) for c in right if c.row in filled]
    rows = {r: i for i, r in enumerate(sorted({c.row for c in moved}))}
    return [c.model_copy(update={"row": rows[c.row]}) for c in moved]


def join_band_labels(labels: dict[int, str], row_y: dict[int, float], separators: Sequence[float]) -> dict[int, str]:
    """Row labels (first-column texts by row) with a group label set over two lines between the same two rules
    ("strucplot" / "core" beside three rows) made one: when the first rows of a band are labelled and the rest
    of the band is not, the labels join on the band's first row and leave the others blank.

    >>> join_band_labels({0: "strucplot", 1: "core", 2: "", 3: "labeling", 4: ""}, {0: 1, 1: 2, 2: 3, 3: 5, 4: 6}, [4])
    {0: 'strucplot core', 1: '', 2: '', 3: 'labeling', 4: ''}
    """
    out = dict(labels)
    bands: dict[int, list[int]] = {}
    for r in sorted(row_y):
        bands.setdefault(sum(1 for s in separators if s < row_y[r]), []).append(r)
    for rows in bands.values():
        labelled = [r for r in rows if labels.get(r)]
        if separators and 2 <= len(labelled) < len(rows) and labelled == rows[: len(labelled)]:
            out[rows[0]] = " ".join(labels[r] for r in labelled)
            out.update({r: "" for r in labelled[1:]})
    return out


def _with_raised_pieces(body: list[list[Word]], cuts: list[float]) -> list[list[Word]]:
    """Body lines with a one-column piece reaching into the line below, and nearer it than the line above, joined to it
    (the upper entry of a stacked fraction, "pi+1" over "mi = 2", belongs to its row, not the one above)."""
    out: list[list[Word]] = []
    pending: list[Word] = []
    for i, line in enumerate(body):
        line = sorted(pending + line, key=lambda w: w.x0)
        pending = []
        columns = {_column((w.x0 + w.x1) / 2, cuts) for w in line}
        if out and i + 1 < len(body) and len(columns) == 1:
            up, down = line[0].centre - out[-1][0].centre, body[i + 1][0].centre - line[0].centre
            if down < 0.6 * up and line[0].centre >= min(w.y0 for w in body[i + 1]) - 1:  # reaching into the line below
                pending = line
                continue
        out.append(line)
    if pending:
        out.append(pending)
    return out


def _heads_rows(line: list[Word], following: list[list[Word]], cuts: list[float], body_size: float) -> bool:
    """A line of the first column alone that names the rows under it, not the rest of the row above: it ends in a colon
    ("Correct calculations:") or the next line starts further right ("Education" over "Junior college")."""
    if any(_column((w.x0 + w.x1) / 2, cuts) != 0 for w in line):
        return False
    return line[-1].text.endswith(":") or bool(following and following[0][0].x0 > line[0].x0 + 0.5 * body_size)


def _note(line: list[Word]) -> bool:
    """A table note: a raised mark ("1", "a", "*") then words of prose."""
    if len(line) < 4:
        return False
    mark, first, rest = line[0], line[1], [w.text for w in line[1:]]
    raised = mark.y1 < first.y1 - 0.2 * (first.y1 - first.y0)
    return raised and len(mark.text) <= 2 and (mark.text.isdigit() or mark.text in "*†‡§¶abcdef") and sum(1 for t in rest if t.isalpha()) >= 3


def _lone_lines(body: list[list[Word]], body_size: float) -> tuple[list[list[Word]], list[list[Word]]]:
    """(labels, notes): lines of one phrase that cross a gap between the columns of the other lines (three or more).

    A label is centred on the table ("Independent samples") or starts at its left edge ("Calculations by Pollet
    and Nettle (2009):") and heads the rows under it: it must not join two columns. A line that starts where a
    later column's cells start is a cell's wrapped text running over the gap (seriation's "MDS_nonmetric"). A note is wide and comes
    after the last line of several phrases ("1 Coefficient of this variable not significant…"): no row at all.
    """
    single = [ln for ln in body if len(_phrases(ln, 0.6 * body_size)) == 1]
    others = [ln for ln in body if not any(ln is x for x in single)]
    if len(others) < 3:
        return [], []
    cuts = _cuts(others, 0.8 * body_size)
    left, right = min(ln[0].x0 for ln in others), max(ln[-1].x1 for ln in others)
    width = right - left
    crossing = [ln for ln in single if any(ln[0].x0 < c < ln[-1].x1 for c in cuts)]  # a wrapped cell's line keeps to its column
    last = max(i for i, ln in enumerate(body) if any(ln is x for x in others))
    notes = [ln for ln in body[last + 1 :] if any(ln is x for x in crossing) and ln[-1].x1 - ln[0].x0 > 0.5 * width]
    end = len(body)
    while end > 1 and _note(body[end - 1]):  # "1 AIC for step 4a. 2 BIC for step 4b." under the last row
        end -= 1
    notes += [ln for ln in body[end:] if not any(ln is x for x in notes)]
    starts = [min(w.x0 for ln in others for w in ln if _column((w.x0 + w.x1) / 2, cuts) == c) for c in range(1, len(cuts) + 1)]
    labels = [
        ln for ln in crossing
        if not any(ln is x for x in notes) and ln[-1].x1 - ln[0].x0 < 0.6 * width
        and (abs(ln[0].x0 - left) < 0.5 * body_size or abs((ln[0].x0 + ln[-1].x1) / 2 - (left + right) / 2) < 0.05 * width)
        and not any(abs(ln[0].x0 - x) < 0.3 * body_size for x in starts)  # set where a column's cells start: wrapped cell text
    ]
    return labels, notes


def _stacked(upper: list[Word], lower: list[Word], body_size: float) -> bool:
    """Whether ``upper`` is centred right over a phrase of ``lower``: one header set on two lines ("Number" / "at Risk")."""
    middle = (upper[0].x0 + upper[-1].x1) / 2
    return any(abs((p[0].x0 + p[-1].x1) / 2 - middle) < 0.3 * body_size for p in _phrases(lower, 0.6 * body_size))


def _off_centre_label(line: list[Word], lines: list[list[Word]], body_size: float) -> bool:
    """One short phrase whose middle is off the table's middle by over a quarter of its width: a group's label, no header."""
    left, right = min(ln[0].x0 for ln in lines), max(ln[-1].x1 for ln in lines)
    short = len(_phrases(line, 0.6 * body_size)) == 1 and line[-1].x1 - line[0].x0 < 0.25 * (right - left)
    return short and abs((line[0].x0 + line[-1].x1) / 2 - (left + right) / 2) > 0.25 * (right - left)

