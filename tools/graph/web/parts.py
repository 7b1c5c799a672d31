"""Names for the unlabelled parts of cards ("Margaret Oyelaran · 2014 · Book · Mystery"), learnt from the records' own pages.

A card list often shows a record's values without labels, while the record's detail page
labels them ("Year: 2014"). The crawl keeps each unlabelled part under its place in the card
(``PART`` + a path such as ``/p1/span2``); a place gets a label when, on every card of that
list whose detail page the crawl read (two at least), the part's text equals that label's
value there, and no other label fits every one of them. Parts no detail page names are
dropped: a value without a label cannot be asked about or counted.

The mapping is learnt once per crawl, kept in the graph (``meta.stats["part_labels"]``) and
reused when pages are read again (:mod:`taskloom.tools.generate.web.confirm`), where detail
pages may not be read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .capture import PageCapture
    from .records import RecordBlock

__all__ = ["PART", "learn_part_labels", "named_fields", "named_columns"]

#: Prefix of an unlabelled card part's key (RECORDS_JS writes it): never a label a site shows.
PART = "\u241f"
#: Cards whose detail page names a part before the name is trusted.
MIN_WITNESSES = 2


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def learn_part_labels(pages: Iterable[PageCapture], resolve: Callable[[str], str]) -> dict[str, str]:
    """``selector + part key`` → the label detail pages give it, for every part named as the module says.

    >>> from .capture import PageCapture
    >>> from .records import RecordBlock, RecordRow
    >>> def page(url, *blocks):
    ...     return PageCapture(url=url, final_url=url, title="", text="", depth=0, order=0, dom_hash=url, elements=[], records=list(blocks))
    >>> def detail(year, fmt):
    ...     return RecordBlock(kind="key_value", rows=[RecordRow(fields={"Year": year, "Format": fmt})])
    >>> cards = RecordBlock(kind="cards", selector="#results", rows=[
    ...     RecordRow(fields={"title": "A", PART + "/span1": "Ann", PART + "/span2": "2014"}, url="http://h/a"),
    ...     RecordRow(fields={"title": "B", PART + "/span1": "Bo", PART + "/span2": "2019"}, url="http://h/b")])
    >>> learn_part_labels([page("http://h/s", cards), page("http://h/a", detail("2014", "Book")), page("http://h/b", detail("2019", "Book"))], str)
    {'#results\u241f/span2': 'Year'}
    """
    pages = list(pages)
    own: dict[str, dict[str, str]] = {}
    for page in pages:
        for block in page.records:
            if block.kind in ("key_value", "definitions"):
                for row in block.rows:
                    own.setdefault(page.url, {}).update(row.fields)
    witnesses: dict[str, dict[str, tuple[str, dict[str, str]]]] = {}  # place → detail URL → (part text, the detail page's fields)
    for page in pages:
        for block in page.records:
            if block.kind != "cards":
                continue
            for row in block.rows:
                detail = own.get(resolve(row.url)) if row.url else None
                if detail is None:
                    continue
                for key, text in row.fields.items():
                    if key.startswith(PART):
                        witnesses.setdefault(block.selector + key, {})[resolve(str(row.url))] = (text, detail)
    labels: dict[str, str] = {}
    for place, seen in sorted(witnesses.items()):
        if len(seen) < MIN_WITNESSES:
            continue
        fits: set[str] | None = None
        for text, detail in seen.values():
            here = {label for label, raw in detail.items() if label != "title" and _norm(raw) == _norm(text)}
            fits = here if fits is None else fits & here
        if fits is not None and len(fits) == 1:
            labels[place] = next(iter(fits))
    return labels


def named_fields(block: RecordBlock, fields: dict[str, str], labels: dict[str, str]) -> dict[str, str]:
    """A row's fields with its parts named (a part whose name the card already shows, or two parts of one name, dropped)."""
    out = {k: v for k, v in fields.items() if not k.startswith(PART)}
    named: dict[str, list[str]] = {}
    for key, text in fields.items():
        label = labels.get(block.selector + key) if key.startswith(PART) else None
        if label is not None and label not in out:
            named.setdefault(label, []).append(text)
    out.update({label: texts[0] for label, texts in named.items() if len(texts) == 1})
    return out


def named_columns(block: RecordBlock, labels: dict[str, str]) -> list[str]:
    """The block's columns with its parts named, unnamed parts left out."""
    out: list[str] = []
    for column in block.columns:
        label = labels.get(block.selector + column) if column.startswith(PART) else column
        if label is not None and label not in out:
            out.append(label)
    return out
