"""Typed values of record fields: what a cell's text says (a number with its unit, a date, a URL, or text).

Pure functions, no browser. Several labelled numbers in one cell ("79 - closed: 18 - active: 61",
a progress bar's legend) are a ``composite``: no one value to ask for, name a record by or
count. A missing value ("", NULL, NA, N/A, None, -, —) is kept as a
field whose ``value`` is None and whose ``type`` is ``"missing"``, so a question about it
("which penguins have no body mass?") can still be asked; the field is never dropped.

Examples
--------
>>> typed_value("5,100 g")
{'value': 5100, 'type': 'number', 'unit': 'g', 'raw': '5,100 g'}
>>> typed_value("3750", "Body Mass (g)")["unit"], typed_value("1.0")["value"]
('g', 1)
>>> typed_value("NULL", "Delta 15 N (o/oo)")
{'value': None, 'type': 'missing', 'unit': 'o/oo', 'raw': 'NULL'}
>>> typed_value("11 November 2007")["value"], typed_value("Nov 9, 2008")["value"]
('2007-11-11', '2008-11-09')
>>> typed_value("https://example.org/a")["type"], typed_value("978-1-9127-0001-1")["type"]
('url', 'text')
>>> typed_value("79 - closed: 18 - active: 61")["type"], typed_value("open: 4, closed: 9")["type"], typed_value("10:30")["type"]
('composite', 'composite', 'text')
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Literal

__all__ = ["ValueType", "MISSING", "typed_value", "unit_of_label", "parse_number", "parse_date", "sort_key", "relative_to_now"]

ValueType = Literal["number", "date", "url", "text", "composite", "missing"]

#: Texts that stand for "no value" (compared case-insensitively).
MISSING = frozenset({"", "null", "none", "na", "n/a", "nan", "-", "–", "—", "?", "unknown"})

_UNIT_IN_LABEL = re.compile(r"[(\[]\s*([^()\[\]\d][^()\[\]]{0,9}?)\s*[)\]]\s*$")
_NUMBER = re.compile(
    r"^(?P<prefix>[$€£¥₹])?\s*(?P<sign>[-+−])?\s*(?P<prefix2>[$€£¥₹])?\s*"
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d{1,3}(?:[  ]\d{3})+|\d+)?(?P<frac>\.\d+)?"
    r"\s*(?P<unit>%|‰|°[CF]?|[A-Za-zµμ/°²³]{1,12}(?:/[A-Za-z²³]{1,6})?)?$"
)
_MONTH_NAMES = "january february march april may june july august september october november december".split()
_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?)?$")
_YMD_SLASH = re.compile(r"^(\d{4})[/.](\d{1,2})[/.](\d{1,2})$")
_DMY_NUMERIC = re.compile(r"^(\d{1,2})[/.](\d{1,2})[/.](\d{4})$")
_D_MONTH_Y = re.compile(r"^(?:[A-Za-z]+,?\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})$")
_MONTH_D_Y = re.compile(r"^(?:[A-Za-z]+,?\s+)?([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})$")
_MONTH_Y = re.compile(r"^([A-Za-z]{3,9})\.?\s+(\d{4})$")
_LABELLED_NUMBER = re.compile(r"[^\W\d_]+:\s*\d")  # "closed: 18"
_NUMBERS = re.compile(r"\d+(?:[.,]\d+)*")
_URL = re.compile(r"^(?:https?://|www\.)\S+$", re.IGNORECASE)
#: Texts whose meaning depends on when they are read ("3 days ago", "in 2 hours", "yesterday at 14:00", "updated today").
_RELATIVE = re.compile(
    r"\b(?:(?:an?|\d+|a few|several)\s+(?:sec(?:ond)?s?|min(?:ute)?s?|hours?|hrs?|days?|weeks?|months?|years?|yrs?)\s+(?:ago|from now|left|remaining)"
    r"|in\s+(?:an?|\d+)\s+(?:sec(?:ond)?s?|min(?:ute)?s?|hours?|days?|weeks?|months?|years?))\b"
    r"|^(?:(?:updated|posted|edited|modified|changed|created|due|last seen|seen)\s+)?(?:just now|yesterday|today|tomorrow|tonight|this (?:morning|afternoon|evening|week|month|year)|last (?:week|month|year)|next (?:week|month|year))\b",
    re.IGNORECASE,
)


def unit_of_label(label: str) -> str | None:
    """The unit a column or field label names in trailing brackets.

    >>> unit_of_label("Body Mass (g)"), unit_of_label("Culmen Length (mm)"), unit_of_label("Price [EUR]"), unit_of_label("Species")
    ('g', 'mm', 'EUR', None)
    """
    found = _UNIT_IN_LABEL.search(label.strip())
    return found.group(1) if found else None


def parse_number(text: str) -> tuple[int | float, str | None] | None:
    """A number and its unit (suffix or currency prefix), or None when the text is not one number.

    Thousands separators are commas (or thin spaces) between groups of three digits;
    a whole value is an int ("1.0" → 1).

    >>> parse_number("5,100 g"), parse_number("-25.18543"), parse_number("$12.50"), parse_number("1,5")
    ((5100, 'g'), (-25.18543, None), (12.5, '$'), None)
    >>> parse_number("21 days"), parse_number("12%"), parse_number("PAL0708")
    ((21, 'days'), (12, '%'), None)
    """
    found = _NUMBER.match(text.strip())
    if not found or not (found["int"] or found["frac"]):
        return None
    digits = re.sub(r"[,  ]", "", found["int"] or "0") + (found["frac"] or "")
    number = float(digits)
    if found["sign"] in ("-", "−"):
        number = -number
    value: int | float = int(number) if number.is_integer() and abs(number) < 2**53 else number
    unit = found["unit"] or found["prefix"] or found["prefix2"]
    return value, unit


def _month(name: str) -> int | None:
    """1–12 for a month name or its abbreviation ("Nov", "Sept", "November"), else None."""
    low = name.lower()
    return next((i + 1 for i, full in enumerate(_MONTH_NAMES) if len(low) >= 3 and full.startswith(low)), None)


def _iso(year: int, month: int, day: int) -> str | None:
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


def parse_date(text: str) -> str | None:
    """An ISO date (or date-time) for ISO and common written forms; None when the text is not a date.

    Numeric day/month orders are read only when unambiguous (a part above 12).

    >>> parse_date("2007-11-11"), parse_date("2009/11/9"), parse_date("Monday, 3rd March 2008")
    ('2007-11-11', '2009-11-09', '2008-03-03')
    >>> parse_date("25/12/2009"), parse_date("04/05/2009"), parse_date("2007-11-11T10:20:00Z")
    ('2009-12-25', None, '2007-11-11T10:20:00+00:00')
    """
    text = text.strip()
    if found := _ISO.match(text):
        if found[4] is None:
            return _iso(int(found[1]), int(found[2]), int(found[3]))
        try:
            return datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
        except ValueError:
            return None
    if found := _YMD_SLASH.match(text):
        return _iso(int(found[1]), int(found[2]), int(found[3]))
    if found := _DMY_NUMERIC.match(text):
        first, second, year = int(found[1]), int(found[2]), int(found[3])
        if first > 12 >= second:
            return _iso(year, second, first)
        if second > 12 >= first:
            return _iso(year, first, second)
        return None
    if found := _D_MONTH_Y.match(text):
        month = _month(found[2])
        return _iso(int(found[3]), month, int(found[1])) if month else None
    if found := _MONTH_D_Y.match(text):
        month = _month(found[1])
        return _iso(int(found[3]), month, int(found[2])) if month else None
    if found := _MONTH_Y.match(text):
        month = _month(found[1])
        return f"{int(found[2]):04d}-{month:02d}" if month else None
    return None


def typed_value(raw: str, label: str = "") -> dict[str, Any]:
    """The field as stored on a record node: ``{"value", "type", "unit", "raw"}`` (see the module docstring)."""
    text = " ".join(raw.split())
    label_unit = unit_of_label(label) if label else None
    if text.lower() in MISSING:
        return {"value": None, "type": "missing", "unit": label_unit, "raw": text}
    if (iso := parse_date(text)) is not None:
        return {"value": iso, "type": "date", "unit": None, "raw": text}
    if (number := parse_number(text)) is not None:
        value, unit = number
        return {"value": value, "type": "number", "unit": unit or label_unit, "raw": text}
    if _LABELLED_NUMBER.search(text) and len(_NUMBERS.findall(text)) >= 2:
        return {"value": text, "type": "composite", "unit": None, "raw": text}
    if _URL.match(text):
        return {"value": text if "://" in text else "http://" + text, "type": "url", "unit": None, "raw": text}
    return {"value": text, "type": "text", "unit": None, "raw": text}


def sort_key(field: dict[str, Any] | None) -> tuple[int, Any] | None:
    """A key to compare two fields' values in a listing's order (numbers, dates and text apart); None when missing.

    >>> sort_key(typed_value("10")) > sort_key(typed_value("9")), sort_key(typed_value("NA"))
    (True, None)
    """
    if not field or field.get("value") is None:
        return None
    kind = field.get("type")
    if kind == "number":
        return (0, field["value"])
    if kind == "date":
        return (1, str(field["value"]))
    return (2, str(field["value"]).casefold())


def relative_to_now(raw: str) -> bool:
    """Whether a value is said relative to the moment it is read: it changes with the clock and is never gold.

    >>> relative_to_now("3 days ago"), relative_to_now("Updated yesterday"), relative_to_now("in 2 hours"), relative_to_now("2014")
    (True, True, True, False)
    >>> relative_to_now("Today, 14:05"), relative_to_now("The Day After Tomorrow"), relative_to_now("Ninety Days")
    (True, False, False)
    """
    return bool(_RELATIVE.search(raw))
