"""The ``sheet_cells`` check: a saved workbook's cell values, read with Gnumeric's own ``ssconvert``.

A criterion's value is JSON ``{"path", "cells", "rules"}``: ``cells`` maps A1 references to the
value each must hold (a number, equal within :data:`TOLERANCE`, or a text, equal ignoring case and
surrounding spaces); each rule ``{"cell", "op", "cells", "above"?}`` recomputes a cell from the
saved file's other cells (``sum``, ``average``, ``max``, ``min``, ``product``, ``difference``
(first minus the rest), ``count_above``), so a right number next to changed data still fails.

The workbook is read through ``ssconvert`` (Gnumeric's converter), which opens any format Gnumeric
saves and recalculates it: a saved ``.gnumeric`` file holds formulas without their values, so
reading its XML would mean evaluating spreadsheet formulas ourselves.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import InputError
from ..tasks.model import SuccessCriterion
from .trajectory import CriterionResult

__all__ = ["TOLERANCE", "OPS", "sheet_cells", "read_sheet", "cell_name", "parse_cell", "compute", "check_sheet"]

#: How far a number may be from the expected one (values rounded to the cent pass).
TOLERANCE = 0.005
OPS = ("sum", "average", "max", "min", "product", "difference", "count_above")
_CELL = re.compile(r"^([A-Z]{1,2})([1-9][0-9]{0,4})$")
READ_TIMEOUT = 20.0


def parse_cell(ref: str) -> tuple[int, int]:
    """``(row, column)`` from 0 of an A1 reference.

    >>> parse_cell("B7"), parse_cell("AA1")
    ((6, 1), (0, 26))
    """
    match = _CELL.match(ref)
    if match is None:
        raise InputError(f"{ref!r} is not a cell reference like 'D8'")
    col = 0
    for letter in match[1]:
        col = col * 26 + ord(letter) - 64
    return int(match[2]) - 1, col - 1


def cell_name(row: int, col: int) -> str:
    """The A1 reference of ``(row, column)`` from 0.

    >>> cell_name(6, 1), cell_name(0, 26)
    ('B7', 'AA1')
    """
    letters, n = "", col + 1
    while n:
        n, rest = divmod(n - 1, 26)
        letters = chr(65 + rest) + letters
    return f"{letters}{row + 1}"


def sheet_cells(path: str, cells: dict[str, float | str], rules: list[dict[str, object]] | None = None) -> SuccessCriterion:
    """The criterion "the workbook at ``path`` holds these cell values (and its rules hold on its own cells)"."""
    for ref in [*cells, *(str(r["cell"]) for r in rules or [])]:
        parse_cell(ref)
    return SuccessCriterion(kind="sheet_cells", value=json.dumps({"path": path, "cells": cells, "rules": rules or []}))


def read_sheet(file: Path) -> list[list[str]]:
    """The first sheet's values as rows of text (formulas evaluated), read by ``ssconvert``."""
    program = shutil.which("ssconvert")
    if program is None:
        raise InputError("reading a workbook needs `ssconvert` (apt-get install gnumeric)")
    if not file.is_file():
        raise InputError(f"{file.name} is not a file")
    with tempfile.TemporaryDirectory(prefix="taskloom-sheet-") as home:  # ssconvert's settings and caches stay out of the episode
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "GSETTINGS_BACKEND": "memory", "LANG": "C.UTF-8"}
        run = subprocess.run(
            [program, "-T", "Gnumeric_stf:stf_csv", str(file), "fd://1"], env=env, capture_output=True, text=True, timeout=READ_TIMEOUT, stdin=subprocess.DEVNULL
        )
    if run.returncode != 0:
        raise InputError(f"ssconvert could not read {file.name}: {run.stderr.strip()[:200]}")
    return list(csv.reader(io.StringIO(run.stdout)))


def _at(rows: list[list[str]], ref: str) -> str:
    row, col = parse_cell(ref)
    return rows[row][col].strip() if row < len(rows) and col < len(rows[row]) else ""


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def compute(op: str, values: list[float], above: float | None = None) -> float:
    """``op`` over ``values`` (in order)."""
    if not values:
        raise InputError(f"{op} of no values")
    if op == "sum":
        return sum(values)
    if op == "average":
        return sum(values) / len(values)
    if op in ("max", "min"):
        return max(values) if op == "max" else min(values)
    if op == "product":
        product = 1.0
        for v in values:
            product *= v
        return product
    if op == "difference":
        return values[0] - sum(values[1:])
    if op == "count_above" and above is not None:
        return float(sum(1 for v in values if v > above))
    raise InputError(f"unknown sheet rule {op!r}: one of {', '.join(OPS)}")


def _same(found: str, expected: float | str) -> bool:
    if isinstance(expected, str):
        return found.casefold() == expected.strip().casefold()
    number = _number(found)
    return number is not None and abs(number - expected) <= TOLERANCE


def check_sheet(criterion: SuccessCriterion, file: Path) -> CriterionResult:
    """The criterion checked on the workbook ``file``: every expected cell, then every rule on the saved cells."""
    spec = json.loads(criterion.value)
    try:
        rows = read_sheet(file)
    except (InputError, OSError, subprocess.TimeoutExpired) as exc:
        return CriterionResult(criterion=criterion, ok=False, observed=f"{spec['path']} could not be read: {exc}")
    problems = [f"{ref} holds {_at(rows, ref)!r}, not {want!r}" for ref, want in spec["cells"].items() if not _same(_at(rows, ref), want)]
    for rule in spec.get("rules", []):
        sources = [_number(_at(rows, ref)) for ref in rule["cells"]]
        if any(v is None for v in sources):
            problems.append(f"{rule['op']} for {rule['cell']}: a source cell of {', '.join(rule['cells'])} is not a number")
            continue
        want = compute(rule["op"], [v for v in sources if v is not None], rule.get("above"))
        if not _same(_at(rows, rule["cell"]), want):
            problems.append(f"{rule['cell']} holds {_at(rows, rule['cell'])!r}, but the {rule['op']} of the saved {', '.join(rule['cells'])} is {want:g}")
    shown = "; ".join(problems[:5]) if problems else f"{len(spec['cells'])} cells and {len(spec.get('rules', []))} rules hold"
    return CriterionResult(criterion=criterion, ok=not problems, observed=f"{spec['path']}: {shown}")
