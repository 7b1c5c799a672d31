"""What a URL says about the page behind it: its template, and which query keys page, sort or re-format a listing.

Shared by the crawl frontier (cap pages per template, treat sort and export variants as
views), the listing reader (which pages of a listing were seen) and the graph builder
(pagination and sort edges). Every rule is about URL shape, never about one site.

Examples
--------
>>> url_template("http://h/penguins/row/WzFd/?page=2&ordering=-3")
'http://h/penguins/row/{id}/?ordering&page'
>>> listing_key("http://h/penguins/content/?page=2&ordering=-3")
'http://h/penguins/content/'
>>> query_role("ordering"), query_role("page"), query_role("format"), query_role("genre")
('sort', 'page', 'format', 'filter')

Framework parameters (a leading underscore: ``_next``, ``_sort_desc``, ``_facet``, ``_size``) take the
role of their bare name, and an unknown one is a display parameter, not a column:

>>> query_role("_next"), query_role("_sort_desc"), query_role("_facet"), query_role("_search"), query_role("country__exact")
('page', 'sort', 'format', 'filter', 'filter')

An ``@`` sigil (Roundup's ``@startwith``, ``@pagesize``, ``@sort``) marks a framework's parameter too: a known
bare name takes its role, an unknown one (``@template``, ``@dispname``) stays a filter, since it may choose
another page:

>>> query_role("@startwith"), query_role("@pagesize"), query_role("@sort"), query_role("@template")
('page', 'format', 'sort', 'filter')
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urlparse, urlunparse

__all__ = [
    "PAGE_KEYS", "SORT_KEYS", "FORMAT_KEYS", "SEARCH_KEYS", "QueryRole", "query_role", "bare_key", "url_template", "listing_key", "query_of", "with_query", "route_of", "site_path",
]

QueryRole = Literal["page", "sort", "format", "filter"]

#: Query keys that select a page of a listing (page number, offset, cursor).
PAGE_KEYS = frozenset(
    "page p pg pagenum page_number offset start skip from cursor after before pageindex page_no next prev next_page page_token pagetoken "
    "continuation startwith start_with".split()
)
#: Query keys that order a listing.
SORT_KEYS = frozenset({"sort", "sort_by", "sortby", "order", "order_by", "orderby", "ordering", "dir", "direction", "asc", "desc", "o", "s"})
#: Query keys that change a listing's format, size or display (export formats, page size, layout, shown columns, language),
#: not its records.
FORMAT_KEYS = frozenset(
    "format fmt export download output view display layout per_page perpage page_size pagesize limit size rows theme lang locale hl density "
    "items_per_page results_per_page columns print embed dispname".split()
)
#: Query keys that carry a free-text search or a query: they restrict the records (another listing), but by no one field.
SEARCH_KEYS = frozenset({"q", "query", "search", "keyword", "keywords", "term", "terms", "text", "k", "where", "sql"})

_TOKEN = re.compile(r"^[A-Za-z0-9_+=-]+$")


def _looks_like_id(stem: str) -> bool:
    """A path segment that names one item: has a digit, or mixes case inside one token (base64, hashes)."""
    if not stem or not _TOKEN.match(stem):
        return False
    if any(c.isdigit() for c in stem):
        return True
    inner = stem[1:]
    return any(c.isupper() for c in inner) and any(c.islower() for c in inner)


def bare_key(key: str) -> str:
    """The key's name without a framework's sigils (leading ``_`` or ``@``), lower-cased.

    >>> bare_key("@StartWith"), bare_key("__next")
    ('startwith', 'next')
    """
    return key.lower().lstrip("_@")


def query_role(key: str) -> QueryRole:
    """What a query key does to a listing: select a page, order it, re-format it, or (anything else) filter it.

    A key with a leading underscore or ``@`` is a framework's parameter, not a column: its bare name decides;
    an unknown underscore one (``_labels``, ``_filter_op``, ``_facet_date``) only changes the display, an
    unknown ``@`` one stays a filter.
    """
    low = key.lower()
    bare = bare_key(key)
    if bare in PAGE_KEYS:
        return "page"
    if bare in SORT_KEYS or bare.startswith(("sort", "order")):
        return "sort"
    if bare in FORMAT_KEYS:
        return "format"
    if low.startswith("_") and bare not in SEARCH_KEYS:
        return "format"
    return "filter"


def _segment_shape(segment: str) -> str:
    if not segment:
        return segment
    stem, dot, ext = segment.rpartition(".") if "." in segment else (segment, "", "")
    return "{id}" + dot + ext if _looks_like_id(stem) else segment


def url_template(url: str) -> str:
    """The URL's shape: path segments that look like ids become ``{id}``, the query keeps its sorted keys only.

    Two pages with the same template are usually the same kind of page (one record's detail
    page, one listing with other parameters).

    >>> url_template("http://h/book.html?id=b07") == url_template("http://h/book.html?id=b12")
    True
    >>> url_template("http://h/library/csv.html") == url_template("http://h/library/json.html")
    False
    """
    parts = urlparse(url)
    path = "/".join(_segment_shape(s) for s in parts.path.split("/"))
    keys = "&".join(sorted({k for k, _ in parse_qsl(parts.query, keep_blank_values=True)}))
    return urlunparse((parts.scheme, parts.netloc, path, "", keys, ""))


def query_of(url: str) -> dict[str, str]:
    """The URL's query parameters (last value wins)."""
    return dict(parse_qsl(urlparse(url).query, keep_blank_values=True))


def with_query(url: str, query: dict[str, str]) -> str:
    """``url`` with its query replaced by ``query`` (keys sorted, empty values dropped)."""
    parts = urlparse(url)
    return urlunparse(parts._replace(query=urlencode(sorted((k, v) for k, v in query.items() if v != "")), fragment=""))


def listing_key(url: str) -> str:
    """The listing a URL shows, whatever page, order or format: the URL without page, sort and format parameters.

    Filter parameters stay: a filtered listing is another listing.

    >>> listing_key("http://h/genres.html?genre=poetry&page=3&sort=title")
    'http://h/genres.html?genre=poetry'
    """
    return with_query(url, {k: v for k, v in query_of(url).items() if query_role(k) == "filter"})


def site_path(url: str) -> str:
    """``url`` without its scheme and host: what names a page within its site, whatever port a local server took.

    Orders and seeds that follow it give the same tasks for the same site served on another port.

    >>> site_path("http://127.0.0.1:41234/books/3.html?x=1#top"), site_path("fields:a=1")
    ('/books/3.html?x=1#top', 'fields:a=1')
    """
    parts = urlparse(url)
    return urlunparse(parts._replace(scheme="", netloc="")) if parts.netloc else url


def route_of(url: str) -> str | None:
    """The client-side route in a URL's fragment (``#/active``, ``#!/page``), or None for a plain anchor.

    >>> route_of("http://h/#/completed"), route_of("http://h/page.html#section-2")
    ('/completed', None)
    """
    fragment = urlparse(url).fragment
    if fragment.startswith("!"):
        fragment = fragment[1:]
    return fragment if fragment.startswith("/") else None


_PAGE_SEGMENT = re.compile(r"^(?:page|p|pg)?[-_/]?\d+(?:\.[a-z]+|/)?$", re.IGNORECASE)


def paged_path(url: str, next_url: str) -> bool:
    """Whether ``next_url``'s path could be a later page of ``url``'s: the same path with one number one higher, or a numbered page below its folder.

    A link to another path that fails this (Sphinx's rel=next to the next chapter, or from
    "What's New in 3.10" to 3.9) is another document.

    >>> paged_path("http://h/travel/index.html", "http://h/travel/page-2.html"), paged_path("http://h/blog/page/2/", "http://h/blog/page/3/")
    (True, True)
    >>> paged_path("http://h/library/functions.html", "http://h/library/constants.html"), paged_path("http://h/whatsnew/3.10.html", "http://h/whatsnew/3.9.html")
    (False, False)
    """
    here, there = urlparse(url).path, urlparse(next_url).path
    if here == there:
        return True
    if re.sub(r"\d+", "#", here) == re.sub(r"\d+", "#", there):
        steps = [int(b) - int(a) for a, b in zip(re.findall(r"\d+", here), re.findall(r"\d+", there), strict=True) if a != b]
        return steps == [1]
    folder = here.rpartition("/")[0] + "/"
    return there.startswith(folder) and bool(_PAGE_SEGMENT.match(there[len(folder) :]))
