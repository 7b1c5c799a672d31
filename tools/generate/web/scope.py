"""A listing filtered on one value of a field, proven from other listings: the scope a question names.

Trac's milestone pages link a query per milestone (``query?milestone=Release+1.0&group=status``)
that the site states in full ("60 matches") but that hides the Milestone column. A count over it
is a count over "the tickets with milestone “Release 1.0”", true only if the filter means exactly
that. It is proven from what the crawl saw elsewhere, never from the parameter's name alone:

- the URL has one filtering parameter (layout keys such as ``group`` aside), given once, with a
  plain value (no ``!``, ``~`` or list);
- another listing shows a field of that name (``Milestone``), and every record both show (by
  detail page) has the value there, at least :data:`MIN_SHARED` of them;
- no record of the same kind (its detail page on the same path, digits aside: ``/ticket/N``,
  not the roadmap's ``/milestone/…``) another listing shows with the value is missing from the
  filtered listing. A blank value says nothing either way.

The filtered listing must also be complete (the caller's rule); its questions then name the scope
("How many tickets with priority “major” and milestone “Release 1.0” are there?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlparse

from ...graph.web.urls import bare_key, query_role
from .phrasing import detail_noun

if TYPE_CHECKING:
    from .lookup import ListingData

__all__ = ["LAYOUT_KEYS", "MIN_SHARED", "Scope", "listing_scope", "scoped_noun"]

#: Query keys that lay a listing out (group it, pick columns, page size) without leaving records out.
LAYOUT_KEYS = frozenset({"group", "groupby", "groupdesc", "col", "cols", "max", "filter", "action", "template"})

#: Records the filtered listing shares with another listing, all with the value, before the filter is read as "field = value".
MIN_SHARED = 3


@dataclass(frozen=True)
class Scope:
    """The records of a listing are exactly those whose ``label`` is ``value`` (``shared`` of them seen with it elsewhere)."""

    label: str
    value: str
    shared: int


def _norm(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def _detail(record: object) -> str | None:
    url = getattr(record, "attrs", {}).get("detail_url")
    return str(url) if url else None


def _kind(url: str | None) -> str | None:
    """A detail page's path with its numbers masked: records of one kind share it.

    >>> _kind("http://h/ticket/12"), _kind("http://h/milestone/Release%201.0")
    ('/ticket/#', '/milestone/Release%#.#')
    """
    return re.sub(r"\d+", "#", urlparse(url).path) if url else None


def listing_scope(data: ListingData, listings: list[ListingData]) -> Scope | str:
    """The proven scope of ``data``'s one filter, or why it is not proven (see the module notes)."""
    pairs = [(k, v) for k, v in parse_qsl(urlparse(str(data.node.attrs.get("url") or "")).query, keep_blank_values=True) if query_role(k) == "filter" and bare_key(k) not in LAYOUT_KEYS]
    keys = {k for k, _ in pairs}
    if len(pairs) != 1 or len(keys) != 1:
        return f"its URL filters on {len(keys)} fields ({', '.join(sorted(keys)) or 'none'}) or one field several times: no single scope to name"
    key, value = pairs[0]
    if not value.strip() or value.strip()[:1] in "!~^<>" or "," in value:
        return f"its filter {key}={value!r} is not one plain value"
    name = re.sub(r"\W+", "", bare_key(key))
    mine = {d for r in data.records if (d := _detail(r))}
    kinds = {_kind(d) for d in mine}
    shared: set[str] = set()
    label = None
    for other in listings:
        if other is data:
            continue
        column = next((lb for lb in other.stats if re.sub(r"\W+", "", lb.lower()) == name), None)
        if column is None:
            continue
        for record in other.records:
            raw = str((record.attrs.get("fields") or {}).get(column, {}).get("raw") or "")
            if not raw.strip() or _kind(_detail(record)) not in kinds:
                continue
            inside = _detail(record) in mine
            if inside and _norm(raw) != _norm(value):
                return f"a record it lists shows {column} {raw!r} on {other.node.attrs.get('url')}, not {value!r}"
            if not inside and _norm(raw) == _norm(value):
                return f"{other.node.attrs.get('url')} shows a record with {column} {value!r} that it does not list"
            if inside:
                shared.add(str(_detail(record)))
                label = label or column
    if label is None or len(shared) < MIN_SHARED:
        return f"other listings show {len(shared)} of its records with a {key!r} field (at least {MIN_SHARED} needed): the filter's meaning is not proven"
    return Scope(label, value, len(shared))


def scoped_noun(data: ListingData) -> str:
    """The noun for a scoped listing's records: its own, or (when that went to a wider listing of the same records, "record") what their detail pages say."""
    if data.noun != "record":
        return data.noun
    return detail_noun([str(r.attrs["detail_url"]) for r in data.records if r.attrs.get("detail_url")]) or data.noun
