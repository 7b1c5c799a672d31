"""Dates in element names, so calendar controls merge by the date they stand for.

:func:`iso_dates` writes every date it recognises in a name as ISO (``2026-07-25``; ``--07-25``
without a year) and drops the weekday and a picker's leading "Choose" / "Select": "Choose Saturday, July 25th, 2026", "Sat Jul 25 2026",
"25 July 2026" and "2026-07-25" all read ``2026-07-25``. Numeric forms other than ISO
(``07/25/2026``) are left alone: whether the day or the month comes first is not written.

:func:`month_step` says whether a control steps a calendar's months ("Next month", "Previous
month"): field merging counts those steps since a trajectory last changed page, so a bare day
number ("25") is told apart from the same number one month later on the same page.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["iso_dates", "month_step"]

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"), ("july", "jul"),
         ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"), ("december", "dec")]
    )  # fmt: skip
    for m in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<year>\d{4}))?"
_WEEKDAY = re.compile(r"\b(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|sday|urday)?\b,?\s*", re.I)
_FORMS = [
    re.compile(rf"\b{_MONTH}\s+{_DAY}\b{_YEAR}", re.I),  # July 25, 2026
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}{_YEAR}\b", re.I),  # 25 July 2026
    re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})\b"),  # 2026-07-25
]
_VERB = re.compile(r"^\s*(?:choose|select|pick)\s+", re.I)  # a date picker's "Choose Saturday, July 25th, 2026"
_NEXT_MONTH = re.compile(r"\bnext\s+month\b|\bmonth\s+forward\b", re.I)
_PREVIOUS_MONTH = re.compile(r"\b(?:previous|prev|last)\s+month\b|\bmonth\s+back\b", re.I)


def _iso(match: re.Match[str]) -> str:
    month_text = match.group("month").lower().rstrip(".")
    month = int(month_text) if month_text.isdigit() else _MONTHS[month_text]
    day = int(match.group("day"))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return match.group(0)
    year = match.group("year")
    return f"{year}-{month:02d}-{day:02d}" if year else f"--{month:02d}-{day:02d}"


def iso_dates(name: str) -> str:
    """``name`` with each date written as ISO and weekdays dropped; unchanged when it holds no date.

    >>> iso_dates("Choose Saturday, July 25th, 2026"), iso_dates("Sat Jul 25 2026"), iso_dates("25 October")
    ('2026-07-25', '2026-07-25', '--10-25')
    >>> iso_dates("May I help you?"), iso_dates("Departure 2026-7-5"), iso_dates("Page 25")
    ('May I help you?', 'Departure 2026-07-05', 'Page 25')
    """
    out = name
    for form in _FORMS:
        out = form.sub(_iso, out)
    if out == name:
        return name
    return " ".join(_VERB.sub("", _WEEKDAY.sub("", out)).split())


@lru_cache(maxsize=65_536)
def month_step(name: str) -> int:
    """+1 for a "next month" control, −1 for "previous month", else 0.

    >>> month_step("Next month"), month_step("Go to previous month"), month_step("Next")
    (1, -1, 0)
    """
    return 1 if _NEXT_MONTH.search(name) else -1 if _PREVIOUS_MONTH.search(name) else 0
