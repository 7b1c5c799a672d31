"""What a page's elements do to its listing, read from URL shape and names: pagination, sort orders, facets, filter forms, toasts.

Pure Python over one page's :class:`ElementInfo` records (no browser), so every rule is testable;
the URL rules (which query keys page, sort, re-format or filter) are :mod:`urls`'.

Examples
--------
>>> page = "http://h/list/?page=2"
>>> links = [ElementInfo(tag="a", selector="#n", name="›", href="http://h/list/?page=3", region="nav"),
...          ElementInfo(tag="a", selector="#s", name="Mass", href="http://h/list/?ordering=-4"),
...          ElementInfo(tag="a", selector="#f", name="Poetry (12)", href="http://h/list/?genre=poetry"),
...          ElementInfo(tag="nav", selector="nav")]
>>> out = annotate(links, page)
>>> out[0].pagination, out[1].sort, out[2].facet, out[3].is_pagination
({'direction': 'next', 'page': 3}, {'field': 'Mass', 'key': 'ordering', 'value': '-4'}, {'param': 'genre', 'value': 'poetry', 'count': 12, 'label': 'Poetry'}, False)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from urllib.parse import urlparse

from .extract import ElementInfo
from .urls import listing_key, query_of, query_role

__all__ = ["annotate", "link_direction"]

_WORDS = re.compile(r"^(next|previous|prev|first|last)\b", re.IGNORECASE)
_ARROWS = {"‹": "prev", "<": "prev", "←": "prev", "«": "first", "⟨": "prev", "›": "next", ">": "next", "→": "next", "»": "last", "⟩": "next"}
_COUNT = re.compile(r"^(?P<label>.*?)\s*[\(\[]\s*(?P<count>\d[\d,.\s]*)\s*[\)\]]\s*$")
_EXPORT = re.compile(r"\b(export|download|csv|json|xml|xlsx?|tsv)\b", re.IGNORECASE)


def link_direction(name: str, rel: str | None) -> str | None:
    """next / prev / first / last, from rel or the accessible name (words or arrow glyphs), else None."""
    for token in (rel or "").lower().split():
        if token in ("next", "prev", "previous", "first", "last"):
            return "prev" if token == "previous" else token
    text = name.strip()
    if match := _WORDS.match(text):
        word = match.group(1).lower()
        return "prev" if word == "previous" else word
    glyphs = text.replace(" ", "")
    if glyphs and all(c in _ARROWS for c in glyphs):
        return _ARROWS[glyphs[0]]
    return None


def _same_path(a: str, b: str) -> bool:
    pa, pb = urlparse(a), urlparse(b)
    return (pa.scheme, pa.netloc, pa.path or "/") == (pb.scheme, pb.netloc, pb.path or "/")


def _by_role(url: str, role: str) -> dict[str, str]:
    return {k: v for k, v in query_of(url).items() if query_role(k) == role}


def _page_number(query: dict[str, str]) -> int | None:
    for value in query.values():
        if value.isdigit():
            return int(value)
    return None


def _listing_link(info: ElementInfo, page_url: str) -> None:
    """Set ``pagination``, ``sort`` or ``facet`` on a link to the page's own listing."""
    href = info.href or ""
    if not href.startswith(("http://", "https://")) or not _same_path(href, page_url) or urlparse(href).query == urlparse(page_url).query:
        return
    here, there = query_of(page_url), query_of(href)
    pages = _by_role(href, "page")
    same_listing = listing_key(href) == listing_key(page_url)
    direction = link_direction(info.name, info.rel)
    if same_listing and (direction or (pages != _by_role(page_url, "page") and _by_role(href, "sort") == _by_role(page_url, "sort"))):
        if direction or pages:
            info.pagination = {"direction": direction, "page": _page_number(pages) if pages else 1}
            return
    if same_listing and _by_role(href, "sort") != _by_role(page_url, "sort"):
        changed = sorted(k for k, v in _by_role(href, "sort").items() if here.get(k) != v)
        if changed:
            info.sort = {"field": info.name, "key": changed[0], "value": there[changed[0]]}
        return
    mine, theirs = _by_role(page_url, "filter"), _by_role(href, "filter")
    if all(theirs.get(k) == v for k, v in mine.items()) and len(theirs) > len(mine):  # keeps every filter, adds one
        param = sorted(k for k in theirs if k not in mine)[0]
        match = _COUNT.match(info.name)
        count = int(re.sub(r"\D", "", match.group("count"))) if match else None
        info.facet = {"param": param, "value": theirs[param], "count": count, "label": match.group("label") if match else info.name}


def _filter_form(form: ElementInfo, page_url: str) -> bool:
    """A GET form that re-submits the page's listing with choice controls that filter it (not export or format choices)."""
    if form.method != "get" or form.dialog or not form.submit_url or not _same_path(form.submit_url, page_url):
        return False
    if any(_EXPORT.search(name) for name in form.submit_names) or _EXPORT.search(urlparse(form.submit_url).path):
        return False
    return any(kind in ("select", "select-one", "select-multiple", "checkbox", "radio") and query_role(name) == "filter" for name, kind in form.field_names)


def annotate(elements: Iterable[ElementInfo], page_url: str, opened: Iterable[str] = ()) -> list[ElementInfo]:
    """Copies of one page's elements with listing roles set (see the module docstring).

    ``opened``: selectors a click was seen revealing on this page (a live region among them is a toast).
    """
    out = [e.model_copy() for e in elements]  # shallow: only whole fields are set below, never changed in place
    revealed = set(opened)
    listing = any(e.role == "result_list" or e.tag == "table" for e in out)  # only a page showing a listing can narrow one
    forms = {e.selector: listing and _filter_form(e, page_url) for e in out if e.tag == "form"}
    paging: Counter[str] = Counter()
    for info in out:
        if info.tag == "a" and info.href:
            _listing_link(info, page_url)
            if info.pagination and info.region:
                paging[info.region] += 1
        elif info.form and forms.get(info.form) and (info.tag == "select" or info.input_type in ("checkbox", "radio")):
            info.is_filter = query_role(info.field_name or "") == "filter"
        if (info.live or (info.role or "") in ("status", "alert", "log")) and info.selector in revealed:
            info.is_toast = True
    for info in out:
        named = "pagination" in (info.aria_label or info.name or "").lower()
        if info.tag == "nav" or info.role == "navigation":
            info.is_pagination = paging[info.selector] >= 2 or (named and paging[info.selector] >= 1)
    return out

