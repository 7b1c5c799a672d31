"""Build tests/data/cache/penguins.sqlite from palmerpenguins' penguins-raw.csv (344 records). Idempotent.

One table, ``penguins``, with an integer primary key ``id`` (the CSV's row order, from 1) and
the CSV's columns under their own names; numbers are stored as numbers and "NA" as NULL, so
sorting a column in the data browser orders by value.
"""

from __future__ import annotations

import csv
import importlib.resources
import sqlite3
import sys
from pathlib import Path

NUMERIC = {"Sample Number", "Culmen Length (mm)", "Culmen Depth (mm)", "Flipper Length (mm)", "Body Mass (g)", "Delta 15 N (o/oo)", "Delta 13 C (o/oo)"}


def _value(column: str, raw: str) -> object:
    if raw in ("", "NA"):
        return None
    if column in NUMERIC:
        number = float(raw)
        return int(number) if number.is_integer() and "." not in raw else number
    return raw


def build(target: Path) -> int:
    source = importlib.resources.files("palmerpenguins") / "data" / "penguins-raw.csv"
    with source.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        rows = [[_value(c, v) for c, v in zip(header, row)] for row in reader]
    tmp = target.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    with sqlite3.connect(tmp) as db:
        types = ", ".join(f'"{c}" {"NUMERIC" if c in NUMERIC else "TEXT"}' for c in header)
        db.execute(f"CREATE TABLE penguins (id INTEGER PRIMARY KEY, {types})")
        marks = ", ".join("?" for _ in header)
        db.executemany(f"INSERT INTO penguins ({', '.join(chr(34) + c + chr(34) for c in header)}) VALUES ({marks})", rows)
    tmp.replace(target)
    return len(rows)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "cache" / "penguins.sqlite"
    if out.exists() and out.stat().st_size > 0:
        sys.exit(0)
    out.parent.mkdir(parents=True, exist_ok=True)
    print(f"built {out} with {build(out)} penguin records")
