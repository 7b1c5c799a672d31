"""The ``record`` criterion: a record in the application's state, read through an export the application offers.

After an episode, the application itself is asked what it holds: the check fetches an
export URL (CSV or tab-separated, as trackers offer for their queries and reports) in the
episode's browser context (its cookies, so a logged-in session reads what it sees), and
looks for the rows whose ``key`` columns equal the given values. It holds when exactly
``count`` rows match, each has the ``fields`` values, and — with ``total`` — the export
lists exactly that many rows (nothing else was created). Columns are matched by name
without case, a trailing colon or surrounding spaces; values with spaces collapsed and
without case. Which controls made the record is never looked at.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, Field, ValidationError

from ..errors import InputError

__all__ = ["RecordCheck", "parse_rows", "match_rows", "column_key", "record_state"]


class RecordCheck(BaseModel):
    """The JSON value of a ``record`` criterion."""

    source: str = Field(description="URL of a CSV or tab-separated export of the application's records.")
    key: dict[str, str] = Field(description="Column → value that pick out the record (e.g. its title).")
    fields: dict[str, str] = Field(default_factory=dict, description="Column → value the record must have.")
    count: int = Field(1, ge=0, description="How many rows must match the key.")
    total: int | None = Field(None, ge=0, description="How many rows the whole export must list (None: any).")

    @classmethod
    def parse(cls, value: str) -> RecordCheck:
        try:
            return cls.model_validate(json.loads(value))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise InputError(f"a record criterion needs JSON {{source, key, fields, count, total}}; got {value[:80]!r} ({str(exc).splitlines()[0]})") from exc


def column_key(name: str) -> str:
    """A column or field label as compared: no case, no trailing colon, spaces collapsed.

    >>> column_key(" Priority: ")
    'priority'
    """
    return " ".join(name.strip().rstrip(":").split()).lower()


def _value(text: str) -> str:
    return " ".join((text or "").split()).lower()


def parse_rows(text: str) -> list[dict[str, str]]:
    """Rows of a CSV or tab-separated export (the delimiter the header line uses), keyed by :func:`column_key`.

    >>> parse_rows("\\ufeffid,Summary\\n1,Broken login\\n")
    [{'id': '1', 'summary': 'Broken login'}]
    """
    body = text.lstrip("\ufeff")
    header = body.split("\n", 1)[0]
    delimiter = "\t" if header.count("\t") > header.count(",") else ","
    reader = csv.reader(io.StringIO(body), delimiter=delimiter)
    names = [column_key(n) for n in next(reader, [])]
    return [dict(zip(names, row)) for row in reader if any(cell.strip() for cell in row)]


def match_rows(rows: list[dict[str, str]], check: RecordCheck) -> tuple[bool, str]:
    """Whether the rows meet ``check``, and what was seen.

    >>> rows = parse_rows("Summary,Priority\\nA,major\\nB,minor\\n")
    >>> match_rows(rows, RecordCheck(source="x", key={"Summary": "a"}, fields={"Priority": "Major"}, total=2))[0]
    True
    >>> match_rows(rows, RecordCheck(source="x", key={"Summary": "a"}, fields={"Priority": "minor"}))
    (False, "1 row with Summary='a'; priority is 'major', not 'minor'")
    """
    missing = [c for c in (*check.key, *check.fields) if rows and column_key(c) not in rows[0]]
    if missing:
        return False, f"the export has no column {missing[0]!r} (columns: {', '.join(rows[0])})"
    key = {column_key(k): _value(v) for k, v in check.key.items()}
    hits = [r for r in rows if all(_value(r.get(k, "")) == v for k, v in key.items())]
    shown = ", ".join(f"{k}={v!r}" for k, v in check.key.items())
    if len(hits) != check.count:
        return False, f"{len(hits)} rows with {shown}, not {check.count}"
    for row in hits:
        for column, wanted in check.fields.items():
            have = row.get(column_key(column), "")
            if _value(have) != _value(wanted):
                return False, f"{len(hits)} row with {shown}; {column_key(column)} is {have!r}, not {wanted!r}"
    if check.total is not None and len(rows) != check.total:
        return False, f"the export lists {len(rows)} rows, not {check.total}: something else was added or removed"
    return True, f"{len(hits)} row with {shown} and the wanted fields" + (f"; {len(rows)} rows in all" if check.total is not None else "")


async def record_state(page: Any, value: str) -> tuple[bool, str]:
    """Check a ``record`` criterion by fetching its export in ``page``'s browser context."""
    check = RecordCheck.parse(value)
    try:
        response = await page.context.request.get(check.source, timeout=15_000)
        status, text = response.status, await response.text()
    except PlaywrightError as exc:  # an unreadable export is the criterion's observation, not a crash
        return False, f"the export {check.source} could not be read: {str(exc).splitlines()[0]}"
    if status != 200:
        return False, f"the export {check.source} answered HTTP {status}"
    return match_rows(parse_rows(text), check)
