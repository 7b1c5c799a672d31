"""The ``record`` criterion: a record in the application's state, read through an export the application offers.

After an episode, the application itself is asked what it holds: the check fetches an
export URL (CSV or tab-separated, as trackers offer for their queries and reports) in the
episode's browser context (its cookies, so a logged-in session reads what it sees), and
looks for the rows whose ``key`` columns equal the given values. It holds when exactly
``count`` rows match, each has the ``fields`` values, and — with ``total`` — the export
lists exactly that many rows (nothing else was created), and — with ``others`` — every
other row is as it was (a digest of them, in any order: a wrong record edited, a record
closed by accident fail). Columns are matched by name without case, a trailing colon or
surrounding spaces; values with spaces collapsed and without case. Which controls made
the record is never looked at.

A *mention* (JSON ``{source, text, count}``) reads a record's own page instead: its text
(markup, scripts and styles left out) holds ``text`` exactly ``count`` times: a comment
added once, not twice.

A *section* check (JSON ``{source, heading, text, before, others}``) reads a wiki page's text
export: ``text`` appears once on the page and ends the section ``heading``, whose earlier
text and the rest of the page are as they were (digests; :mod:`.sections`).
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import re
from typing import Any, TypeVar

from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, Field, ValidationError

from ..errors import InputError
from .sections import sentence_ends_section

__all__ = ["RecordCheck", "MentionCheck", "SectionCheck", "parse_rows", "match_rows", "rows_digest", "page_text", "column_key", "record_state"]


class RecordCheck(BaseModel):
    """The JSON value of a ``record`` criterion."""

    source: str = Field(description="URL of a CSV or tab-separated export of the application's records.")
    key: dict[str, str] = Field(description="Column → value that pick out the record (e.g. its title).")
    fields: dict[str, str] = Field(default_factory=dict, description="Column → value the record must have.")
    count: int = Field(1, ge=0, description="How many rows must match the key.")
    total: int | None = Field(None, ge=0, description="How many rows the whole export must list (None: any).")
    others: str | None = Field(None, description="rows_digest of every row the key does not pick out: they must be unchanged (None: not checked).")

    @classmethod
    def parse(cls, value: str) -> RecordCheck:
        try:
            return cls.model_validate(json.loads(value))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise InputError(f"a record criterion needs JSON {{source, key, fields, count, total}}; got {value[:80]!r} ({str(exc).splitlines()[0]})") from exc


class MentionCheck(BaseModel):
    """The JSON value of a ``record`` criterion read on a record's own page: ``text`` appears there ``count`` times."""

    source: str = Field(description="URL of the record's page.")
    text: str = Field(min_length=1, description="Text that must appear (spaces collapsed, no case).")
    count: int = Field(1, ge=0, description="How many times it must appear.")


class SectionCheck(BaseModel):
    """The JSON value of a ``record`` criterion read on a wiki page's text export: ``text`` ends the section ``heading``, nothing else changed."""

    source: str = Field(description="URL of the page's text export (its markup).")
    heading: str = Field(min_length=1, description="The section's heading text (unique on the page).")
    text: str = Field(min_length=1, description="The sentence that must end the section, once on the page.")
    before: str = Field(description="text_digest of the section's text before the sentence.")
    others: str = Field(description="text_digest of the rest of the page.")


_Check = TypeVar("_Check", bound=BaseModel)


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


def _canonical(row: dict[str, str]) -> str:
    return json.dumps(sorted((k, _value(v)) for k, v in row.items()), ensure_ascii=False)


def rows_digest(rows: list[dict[str, str]], key: dict[str, str]) -> str:
    """A digest of the rows that ``key`` does not pick out, in any order (see ``RecordCheck.others``).

    >>> rows = parse_rows("Summary,Priority\\nA,major\\nB,minor\\n")
    >>> rows_digest(rows, {"Summary": "A"}) == rows_digest(list(reversed(rows)), {"summary": "a"})
    True
    """
    wanted = {column_key(k): _value(v) for k, v in key.items()}
    others = sorted(_canonical(r) for r in rows if not all(_value(r.get(k, "")) == v for k, v in wanted.items()))
    return hashlib.sha1("\n".join(others).encode()).hexdigest()[:16]


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
    if check.others is not None and rows_digest(rows, check.key) != check.others:
        return False, f"{len(hits)} row with {shown}, but another row of the export changed, was added or was removed"
    return True, f"{len(hits)} row with {shown} and the wanted fields" + (f"; {len(rows)} rows in all" if check.total is not None else "")


#: Inline elements join their text to what is around them ("as <a>#301</a>." reads "as #301."); every other tag is a space.
_INLINE = re.compile(r"</?(?:a|abbr|b|bdi|code|em|i|kbd|mark|q|s|samp|small|span|strong|sub|sup|tt|u|var)\b[^>]*>", re.I)
_BLOCK = re.compile(r"<[^>]+>")
_HIDDEN = re.compile(r"<(script|style|template|textarea)\b.*?</\1\s*>|<!--.*?-->", re.S | re.I)


def page_text(markup: str) -> str:
    """The text of an HTML page (or a feed): no markup, scripts, styles or form text areas; spaces collapsed.

    >>> page_text("<p>Seen <b>again</b></p><script>x('Seen again')</script><textarea>Seen again</textarea><p>as <a href='/t/3'>#3</a>.</p>")
    'Seen again as #3.'
    """
    return " ".join(html.unescape(_BLOCK.sub(" ", _INLINE.sub("", _HIDDEN.sub(" ", markup)))).split())


def _mentions(text: str, check: MentionCheck) -> tuple[bool, str]:
    """Whether ``text`` mentions ``check.text`` exactly ``check.count`` times.

    >>> _mentions("Seen again. Later: seen again.", MentionCheck(source="x", text="Seen  again", count=1))
    (False, "'Seen  again' appears 2 times on the record's page, not 1")
    """
    found = len(re.findall(r"(?<!\w)" + re.escape(" ".join(check.text.split())) + r"(?!\w)", text, re.I))
    return found == check.count, f"{check.text!r} appears {found} times on the record's page" + ("" if found == check.count else f", not {check.count}")


def _top_keys(value: str) -> set[str]:
    """The top-level keys of a criterion's JSON value (none when it is no JSON object: :meth:`RecordCheck.parse` then says why)."""
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return set()
    return set(parsed) if isinstance(parsed, dict) else set()


def _parsed(model: type[_Check], value: str, shape: str) -> _Check:
    try:
        return model.model_validate(json.loads(value))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise InputError(f"a {shape}; got {value[:80]!r} ({str(exc).splitlines()[0]})") from exc


async def record_state(page: Any, value: str) -> tuple[bool, str]:
    """Check a ``record`` criterion by fetching its export (for a mention, the record's page; for a section, the page's text export) in ``page``'s browser context.

    The kind is read from the value's own keys: ``heading`` makes a section check, ``text``
    without ``key`` a mention (a record's field or key may well be called "text").
    """
    keys = _top_keys(value)
    if "heading" in keys:
        section = _parsed(SectionCheck, value, "section criterion needs JSON {source, heading, text, before, others}")
        ok, text = await _fetch(page, section.source)
        return sentence_ends_section(text, section.heading, section.text, section.before, section.others) if ok else (False, text)
    if "text" in keys and "key" not in keys:
        mention = _parsed(MentionCheck, value, "mention criterion needs JSON {source, text, count}")
        ok, text = await _fetch(page, mention.source)
        return _mentions(page_text(text), mention) if ok else (False, text)
    check = RecordCheck.parse(value)
    ok, text = await _fetch(page, check.source)
    return match_rows(parse_rows(text), check) if ok else (False, text)


async def _fetch(page: Any, url: str) -> tuple[bool, str]:
    """The body at ``url`` fetched with ``page``'s cookies; (False, why) when it cannot be read."""
    try:
        response = await page.context.request.get(url, timeout=15_000)
        status, text = response.status, await response.text()
    except PlaywrightError as exc:  # an unreadable export is the criterion's observation, not a crash
        return False, f"{url} could not be read: {str(exc).splitlines()[0]}"
    if status != 200:
        return False, f"{url} answered HTTP {status}"
    return True, text
