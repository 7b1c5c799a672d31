"""Build tests/data/cache/heldout-vega.sqlite from CSVs that ``vega_datasets`` ships locally. Idempotent.

Three tables for the held-out bench (``bench/heldout.py``), served by ``datasette``:

* ``airports`` (3,376 rows; primary key ``iata``, so each airport has its own row page),
* ``seattle_weather`` (1,461 rows; primary key ``date``),
* ``la_riots`` (63 rows; an integer ``id`` in the CSV's order, from 1).

Numbers are stored as numbers and empty cells as NULL, so sorting a column orders by value.
Only the CSVs inside the installed package are read (``pip install vega_datasets``: nothing is
downloaded).
"""

from __future__ import annotations

import csv
import importlib.resources
import io
import sqlite3
import sys
from pathlib import Path

#: table → (CSV file in vega_datasets/_data, primary key column or None for an ``id`` from 1, numeric columns)
TABLES: dict[str, tuple[str, str | None, frozenset[str]]] = {
    "airports": ("airports.csv", "iata", frozenset({"latitude", "longitude"})),
    "seattle_weather": ("seattle-weather.csv", "date", frozenset({"precipitation", "temp_max", "temp_min", "wind"})),
    "la_riots": ("la-riots.csv", None, frozenset({"age", "longitude", "latitude"})),
}


def _value(numeric: bool, raw: str) -> object:
    if raw == "":
        return None
    if numeric:
        number = float(raw)
        return int(number) if number.is_integer() and "." not in raw else number
    return raw


def read_table(name: str) -> tuple[list[str], list[list[object]]]:
    """The CSV behind table ``name``: its header and its typed rows, in file order."""
    file, _, numeric = TABLES[name]
    source = importlib.resources.files("vega_datasets") / "_data" / file
    reader = csv.reader(io.StringIO(source.read_text(encoding="utf-8"), newline=""))
    header = next(reader)
    rows = [[_value(c in numeric, v) for c, v in zip(header, row)] for row in reader]
    return header, rows


def build(target: Path) -> dict[str, int]:
    """Write every table of :data:`TABLES` to a new database at ``target``; rows per table."""
    tmp = target.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    counts: dict[str, int] = {}
    with sqlite3.connect(tmp) as db:
        for name, (_, key, numeric) in TABLES.items():
            header, rows = read_table(name)
            columns = ", ".join(f'"{c}" {"NUMERIC" if c in numeric else "TEXT"}' + (" PRIMARY KEY" if c == key else "") for c in header)
            if key is None:
                columns = "id INTEGER PRIMARY KEY, " + columns
            db.execute(f"CREATE TABLE {name} ({columns})")
            quoted = ", ".join(f'"{c}"' for c in header)
            db.executemany(f"INSERT INTO {name} ({quoted}) VALUES ({', '.join('?' for _ in header)})", rows)
            counts[name] = len(rows)
    tmp.replace(target)
    return counts


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "cache" / "heldout-vega.sqlite"
    if out.exists() and out.stat().st_size > 0:
        sys.exit(0)
    out.parent.mkdir(parents=True, exist_ok=True)
    print(f"built {out}: " + ", ".join(f"{n} {t} rows" for t, n in build(out).items()))
