"""The "compute something in the spreadsheet and save it" desktop task family (Gnumeric).

Five small workbooks (a household's monthly expenses, a class's marks, a shop's stock, spring
rainfall by city, quarterly sales by region) are seeded as Gnumeric files. A task asks for one
computed result: a column's total, average, maximum or minimum in a named cell; a count of rows
above a threshold; or a new column computed from two others on every row. The generator computes the expected values from the seeded data; the check
(:mod:`.sheet_cells`) reads the saved workbook's values and also recomputes each result from the
saved file's own data cells. It never looks at the controls used. No task holds on its seeded file.

The gold uses Gnumeric's keyboard: the name box (the textbox holding the current cell's
reference) to go to a cell or range, the cell's edit line (empty on an empty cell) for the
formula, Ctrl+Enter to fill a selected range, Ctrl+S to save in place (a ``.gnumeric`` file saves
without a dialog; the title then loses its unsaved mark).
"""

from __future__ import annotations

import hashlib
import random
from xml.sax.saxutils import escape

from ..tasks.model import DesktopSetup, GoldStep, Provenance, SuccessCriterion, Task
from .desktop_checks import holds_at_start
from .sheet_cells import cell_name, compute, sheet_cells

__all__ = ["WORKBOOKS", "workbook_xml", "sheet_tasks"]

#: Seeded workbooks: file name -> (sheet name, header row, data rows).
WORKBOOKS: dict[str, tuple[str, list[str], list[list[str | float]]]] = {
    "expenses.gnumeric": ("Expenses", ["Month", "Rent", "Food", "Transport", "Utilities"], [
        ["January", 950, 312.4, 86.5, 141.2],
        ["February", 950, 287.15, 79, 138.6],
        ["March", 950, 301.8, 92.25, 120.45],
        ["April", 975, 295.6, 88, 97.3],
        ["May", 975, 334.05, 104.5, 84.9],
        ["June", 975, 318.7, 110.75, 79.15],
    ]),
    "marks.gnumeric": ("Class 4B", ["Student", "Maths", "Physics", "English", "History"], [
        ["Amara Okafor", 78, 65, 88, 71],
        ["Ben Schofield", 54, 61, 47, 58],
        ["Chen Wei", 91, 87, 72, 66],
        ["Dario Rossi", 63, 49, 81, 77],
        ["Eva Lindqvist", 85, 92, 69, 90],
        ["Farah Haddad", 47, 58, 93, 84],
        ["Gabriel Costa", 70, 74, 56, 62],
        ["Hana Sato", 88, 79, 84, 59],
    ]),
    "stock.gnumeric": ("Stock", ["Item", "Price", "Quantity", "Reorder level"], [
        ["A4 paper (ream)", 4.99, 120, 40],
        ["Ballpoint pens (box)", 3.49, 64, 30],
        ["Stapler", 8.75, 15, 10],
        ["Sticky notes", 2.2, 210, 50],
        ["Printer toner", 46.9, 7, 5],
        ["Envelopes (pack)", 5.6, 38, 20],
        ["Desk lamp", 24.5, 11, 4],
    ]),
    "rainfall.gnumeric": ("Rainfall (mm)", ["City", "March", "April", "May"], [
        ["Bergen", 182.5, 131.2, 104.8],
        ["Cardiff", 94.1, 71.6, 80.3],
        ["Lyon", 63.4, 78.9, 91.7],
        ["Porto", 112.6, 96.3, 74.2],
        ["Vienna", 41.8, 52.5, 83.1],
    ]),
    "sales.gnumeric": ("Q3 sales", ["Region", "Units", "Unit price", "Returns"], [
        ["North", 1240, 18.5, 37],
        ["South", 980, 19.25, 22],
        ["East", 1515, 17.8, 61],
        ["West", 860, 21, 15],
        ["Central", 1102, 18.9, 48],
        ["Islands", 315, 23.4, 6],
    ]),
}
#: Per workbook: the columns a task computes on (numeric), by header.
NUMERIC = {path: [h for i, h in enumerate(header) if all(isinstance(r[i], int | float) for r in rows)] for path, (_, header, rows) in WORKBOOKS.items()}
AGGREGATES = {"sum": ("total", "SUM"), "average": ("average", "AVERAGE"), "max": ("largest value", "MAX"), "min": ("smallest value", "MIN")}
PAIRS = {"product": ("times", "*"), "difference": ("minus", "-"), "sum": ("plus", "+")}
#: Per workbook: the computed columns a task may add: (name, op, first column, second column).
NEW_COLUMNS: dict[str, list[tuple[str, str, str, str]]] = {
    "expenses.gnumeric": [("Food and transport", "sum", "Food", "Transport"), ("Rent minus food", "difference", "Rent", "Food")],
    "marks.gnumeric": [("Science", "sum", "Maths", "Physics"), ("Maths lead", "difference", "Maths", "English")],
    "stock.gnumeric": [("Value", "product", "Price", "Quantity"), ("Spare", "difference", "Quantity", "Reorder level")],
    "rainfall.gnumeric": [("March and April", "sum", "March", "April"), ("May change", "difference", "May", "April")],
    "sales.gnumeric": [("Revenue", "product", "Units", "Unit price"), ("Net units", "difference", "Units", "Returns")],
}
OPS = ("aggregate", "count_above", "new_column")


def _cell_xml(row: int, col: int, value: str | float) -> str:
    kind = 60 if isinstance(value, str) else 40  # Gnumeric's value types: 60 string, 40 float
    return f'        <gnm:Cell Row="{row}" Col="{col}" ValueType="{kind}">{escape(str(value))}</gnm:Cell>'


def workbook_xml(path: str) -> str:
    """The seeded workbook as uncompressed Gnumeric XML (Gnumeric opens it; saving compresses it)."""
    sheet, header, rows = WORKBOOKS[path]
    table: list[list[str | float]] = [[*header], *rows]
    cells = "\n".join(_cell_xml(r, c, v) for r, row in enumerate(table) for c, v in enumerate(row))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<gnm:Workbook xmlns:gnm="http://www.gnumeric.org/v10.dtd">\n'
        f"  <gnm:SheetNameIndex>\n    <gnm:SheetName>{escape(sheet)}</gnm:SheetName>\n  </gnm:SheetNameIndex>\n"
        f"  <gnm:Sheets>\n    <gnm:Sheet>\n      <gnm:Name>{escape(sheet)}</gnm:Name>\n"
        f"      <gnm:MaxCol>{len(header) - 1}</gnm:MaxCol>\n      <gnm:MaxRow>{len(rows)}</gnm:MaxRow>\n"
        f"      <gnm:Cells>\n{cells}\n      </gnm:Cells>\n    </gnm:Sheet>\n  </gnm:Sheets>\n</gnm:Workbook>\n"
    )


def _column(path: str, name: str) -> tuple[str, list[float]]:
    """The column letter of header ``name`` and its data values."""
    _, header, rows = WORKBOOKS[path]
    i = header.index(name)
    return cell_name(0, i)[:-1], [float(r[i]) for r in rows]


def _range(letter: str, path: str) -> tuple[str, list[str]]:
    last = len(WORKBOOKS[path][2]) + 1
    return f"{letter}2:{letter}{last}", [f"{letter}{r}" for r in range(2, last + 1)]


def _goto(start: str, target: str) -> GoldStep:
    """Type ``target`` into the name box (the textbox showing the current cell ``start``)."""
    return GoldStep(action="type", selector=f"role=textbox text={start}", text=target, submit=True, canonical="the name box")


def _save(path: str) -> list[GoldStep]:
    """Ctrl+S, then wait until the title loses its unsaved mark ('*')."""
    return [GoldStep(action="press_key", text="ctrl+s"), GoldStep(action="wait_for", selector=f"role=window text={path} - Gnumeric", canonical="saved")]


def _enter(text: str, submit: bool = True) -> GoldStep:
    """Type ``text`` into the current (empty) cell's edit line."""
    return GoldStep(action="type", selector="role=textbox value=", text=text, submit=submit, canonical="the cell's edit line")


Made = tuple[str, list[SuccessCriterion], list[GoldStep]]


def _aggregate(path: str, rng: random.Random) -> Made:
    _, header, rows = WORKBOOKS[path]
    name, op = rng.choice(NUMERIC[path]), rng.choice(sorted(AGGREGATES))
    letter, values = _column(path, name)
    span, refs = _range(letter, path)
    target = f"{letter}{len(rows) + 3}"  # one empty row below the data
    words, function = AGGREGATES[op]
    expected = round(compute(op, values), 6)
    instruction = rng.choice([
        f"In the spreadsheet {path}, put the {words} of the {name} column (rows 2 to {len(rows) + 1}) in cell {target}, then save the file in place.",
        f"Cell {target} of {path} should show the {words} of the {name} figures in rows 2-{len(rows) + 1}. Make it so and save the workbook under the same name.",
    ])
    steps = [_goto("A1", target), _enter(f"={function}({span})"), *_save(path)]
    return instruction, [sheet_cells(path, {target: expected}, [{"cell": target, "op": op, "cells": refs}])], steps


def _count_above(path: str, rng: random.Random) -> Made:
    _, header, rows = WORKBOOKS[path]
    name = rng.choice([n for n in NUMERIC[path] if len(set(_column(path, n)[1])) >= 3])  # a threshold with rows on both sides
    letter, values = _column(path, name)
    span, refs = _range(letter, path)
    ordered = sorted(set(values))
    above = ordered[rng.randrange(1, len(ordered) - 1)]  # some rows above it, some not
    target = cell_name(1, len(header) + 1)  # right of the table, one empty column between
    expected = compute("count_above", values, above)
    shown = f"{above:g}"
    instruction = rng.choice([
        f"In the spreadsheet {path}, put in cell {target} the number of rows whose value in the {name} column is greater than {shown}, then save the file in place.",
        f"How many rows of {path} have a {name} above {shown}? Write that count into cell {target} and save the workbook in place.",
    ])
    steps = [_goto("A1", target), _enter(f'=COUNTIF({span},">{shown}")'), *_save(path)]
    return instruction, [sheet_cells(path, {target: expected}, [{"cell": target, "op": "count_above", "cells": refs, "above": above}])], steps


def _new_column(path: str, rng: random.Random) -> Made:
    _, header, rows = WORKBOOKS[path]
    title, op, first, second = rng.choice(NEW_COLUMNS[path])
    (a, xs), (b, ys) = _column(path, first), _column(path, second)
    letter = cell_name(0, len(header))[:-1]
    last = len(rows) + 1
    sign, operator = PAIRS[op]
    cells: dict[str, float | str] = {f"{letter}1": title}
    rules: list[dict[str, object]] = []
    for r, (x, y) in enumerate(zip(xs, ys), start=2):
        cells[f"{letter}{r}"] = round(compute(op, [x, y]), 6)
        rules.append({"cell": f"{letter}{r}", "op": op, "cells": [f"{a}{r}", f"{b}{r}"]})
    instruction = rng.choice([
        f"In the spreadsheet {path}, add a column headed '{title}' in column {letter} (the header in {letter}1) that holds, on every row from 2 to {last}, "
        f"{first} {sign} {second} for that row; then save the file in place.",
        f"Extend {path} with a new column {letter} titled '{title}' (title in {letter}1): on each row 2 to {last} it must equal that row's {first} {sign} {second}. "
        "Save the workbook in place.",
    ])
    steps = [
        _goto("A1", f"{letter}1"), _enter(title), _goto(f"{letter}2", f"{letter}2:{letter}{last}"),
        _enter(f"={a}2{operator}{b}2", submit=False), GoldStep(action="press_key", text="ctrl+enter"), *_save(path),
    ]
    return instruction, [sheet_cells(path, cells, rules)], steps


def sheet_tasks(seed: int = 0, count: int = 10) -> list[Task]:
    """``count`` tasks of the family, the same for the same ``seed``; none already holds on its seeded workbook."""
    rng = random.Random(seed)
    tasks: list[Task] = []
    paths = sorted(WORKBOOKS)
    attempts = 0
    while len(tasks) < count and attempts < count * 20:
        attempts += 1
        op, path = OPS[attempts % len(OPS)], paths[attempts % len(paths)]  # every (operation, workbook) pair in turn
        make = {"aggregate": _aggregate, "count_above": _count_above, "new_column": _new_column}[op]
        instruction, checks, steps = make(path, rng)
        digest = hashlib.sha1(instruction.encode()).hexdigest()[:10]
        task = Task(
            id=f"desktop-sheet-{digest}", kind="desktop", type="compute_sheet", difficulty="medium" if op == "new_column" else "easy", instruction=instruction,
            desktop=DesktopSetup(app="gnumeric", files={path: workbook_xml(path)}, open_files=[path]),
            gold_steps=steps, success=checks, capabilities=["desktop", "spreadsheet"], evidence=["app:gnumeric", f"file:{path}"],
            provenance=Provenance(graph_id="desktop:gnumeric", template=f"compute_sheet/{op}", generator="desktop-tasks", seed=seed),
        )
        if any(t.id == task.id for t in tasks) or holds_at_start(task):
            continue  # a repeat, or a no-op
        tasks.append(task)
    return tasks
