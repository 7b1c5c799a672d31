"""The crawl frontier: which URL to load next, and why the others were not loaded.

Pure Python (no browser). URLs are grouped by :func:`urls.url_template` (path shape + query
keys) and capped per template, so a site's thousand detail pages do not eat the budget; a URL
whose template has not been seen yet comes first, then pages likely to hold interactive
components (linked from pages that have them). Sort and format/export variants of a listing
(query keys whose :func:`urls.query_role` is ``sort`` / ``format``) are *views* of one listing:
recorded, at most ``view_cap`` of them loaded, last; among them the first page of a sort order
comes before its later pages, the other direction of a field already loaded before a new
field, and the listing with the most pages first. Budget left once nothing else can be
picked goes to further sort views (never format or export views) in that order, so a
listing's sort orders are seen in both directions when the site is small enough. The pages of one listing (page-key
variants, e.g. ``?page=3``) have their own cap, and paging (also a sort view's next page in the same
order) does not add depth, so a listing can be seen completely. Files that are not pages (images, archives, data, sources: by extension)
come after everything else, capped per folder and extension.

Deterministic: :meth:`Frontier.next_batch` picks by (tier, depth, interactivity, discovery order)
and the caller integrates results in the order they were picked.

>>> f = Frontier("http://h/", max_pages=10, max_depth=2, template_cap=1)
>>> f.add("http://h/", 0)
>>> [e.url for e in f.next_batch(8)]
['http://h/']
>>> f.done("http://h/", kept=True)
>>> for u in ("http://h/item/a1", "http://h/item/b2", "http://h/about", "http://h/?sort=name"):
...     f.add(u, 1, parent="http://h/")
>>> [e.url for e in f.next_batch(8)]
['http://h/item/a1', 'http://h/about', 'http://h/?sort=name']
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlparse, urlunparse

from pydantic import BaseModel, Field

from .urls import bare_key, listing_key, query_of, query_role, url_template

__all__ = ["SkipReason", "Skip", "Entry", "Frontier", "RESOURCE_EXTENSIONS", "sort_order"]

#: File extensions of things that are not pages (images, archives, data files, sources): loaded last, capped per folder.
RESOURCE_EXTENSIONS = frozenset(
    "png jpg jpeg gif svg webp ico bmp tif tiff avif pdf zip gz tgz tar bz2 xz 7z rar csv tsv json xml txt rst md css js mjs map "
    "woff woff2 ttf otf eot mp3 mp4 m4a webm ogg wav avi mov doc docx xls xlsx ppt pptx odt ods db sqlite exe dmg iso bin whl epub".split()
)
Kind = Literal["page", "listing_page", "view", "resource"]
#: Sort keys that carry only a direction (the field is named by another key).
_DIRECTION_KEYS = frozenset({"dir", "direction", "asc", "desc"})

SkipReason = Literal[
    "out_of_domain", "budget", "depth", "template_cap", "view_variant", "duplicate_content", "timeout", "http_status", "redirected", "download", "error"
]


class Skip(BaseModel):
    """Why a URL was not stored as a page."""

    reason: SkipReason
    detail: str = Field("", description="What happened, in words (the error, the page it duplicates, the template).")
    status: int | None = Field(None, description="The HTTP status, for reason http_status.")


@dataclass
class Entry:
    """A URL the frontier knows."""

    url: str
    depth: int
    order: int  # discovery order
    template: str
    listing: str
    kind: Kind
    interactive: bool = False
    picked: bool = False


#: Format keys that make an export or another format of a listing (other format keys only size or lay out its pages).
_EXPORT_KEYS = frozenset({"format", "fmt", "export", "download", "output"})


def sort_order(url: str) -> tuple[str, str] | None:
    """(field, direction) a sort URL asks for: the sort values without their sign, and ``-``/``+`` or the direction key's value.

    None when the URL has no sort key, or also exports the listing (a page size or column choice beside the sort is no export).

    >>> sort_order("http://h/t/?ordering=-4&page=2"), sort_order("http://h/t/?sort=year&dir=desc"), sort_order("http://h/t/?format=csv")
    (('ordering=4', '-'), ('sort=year', 'desc'), None)
    >>> sort_order("http://h/issue?@sort=-activity&@pagesize=50&@startwith=50")
    ('@sort=activity', '-')
    """
    query = query_of(url)
    roles = {k: query_role(k) for k in query}
    if "sort" not in roles.values() or any(role == "format" and bare_key(k) in _EXPORT_KEYS for k, role in roles.items()):
        return None
    fields = sorted((k, v) for k, v in query.items() if roles[k] == "sort" and k.lower() not in _DIRECTION_KEYS)
    sign = "".join("-" if v.startswith("-") else "+" for _, v in fields if v[:1] in "+-")
    direction = sign + "".join(v.lower() for k, v in query.items() if k.lower() in _DIRECTION_KEYS)
    return "&".join(f"{k}={v.lstrip('+-')}" for k, v in fields), direction


def _pages_on(parent: str, url: str, kind: Kind) -> bool:
    """Whether ``url`` is another page of ``parent``'s listing in the same order (a page key, the same sort): paging, which adds no depth."""
    if kind == "listing_page":
        return True
    return kind == "view" and any(query_role(k) == "page" for k in query_of(url)) and sort_order(url) is not None and sort_order(url) == sort_order(parent)


class Frontier:
    """URLs discovered, picked and left over; see the module docstring."""

    def __init__(self, start_url: str, max_pages: int, max_depth: int, template_cap: int = 5, listing_cap: int = 10, view_cap: int = 2) -> None:
        self.start_url = start_url
        self.max_pages, self.max_depth = max_pages, max_depth
        self.template_cap, self.listing_cap, self.view_cap = template_cap, listing_cap, view_cap
        self.entries: dict[str, Entry] = {}
        self.too_deep: dict[str, int] = {}  # URL → depth it was found at, beyond max_depth
        self.kept = 0
        self.per_template: dict[str, int] = {}
        self.per_listing: dict[str, int] = {}
        self.views: dict[str, int] = {}
        self.orders: dict[str, set[tuple[str, str]]] = {}  # listing → (field, direction) of its picked sort views
        self.listing_pages: dict[str, int] = {}  # listing → its plain and paged URLs known
        self.templates_seen: set[str] = set()
        self.id_templates: set[str] = set()  # templates with an {id} segment, as discovered

    # -- discovery ----------------------------------------------------------------------

    def template(self, url: str) -> str:
        """``url_template(url)``, or a known template with ``{id}`` at a segment where this URL has a literal.

        Short ids can look like words (``/row/Wzdd/`` beside ``/row/WzFd/``): a sibling of a
        known id-shaped URL is the same kind of page.
        """
        template = url_template(url)
        parts = urlparse(template)
        segments = parts.path.split("/")
        for i, segment in enumerate(segments):
            if segment and not segment.startswith("{id}"):
                ext = posixpath.splitext(segment)[1]
                candidate = urlunparse(parts._replace(path="/".join([*segments[:i], "{id}" + ext, *segments[i + 1 :]])))
                if candidate in self.id_templates:
                    return candidate
        if "{id}" in parts.path:
            self.id_templates.add(template)
        return template

    def classify(self, url: str) -> tuple[str, str, Kind]:
        """(template, listing key, kind) of a URL: a resource is a non-page file (its template: folder + extension),
        a view has sort/format keys, a listing page has page keys."""
        parts = urlparse(url)
        ext = posixpath.splitext(parts.path)[1].lower().lstrip(".")
        if ext in RESOURCE_EXTENSIONS:
            folder = posixpath.dirname(parts.path)
            return urlunparse((parts.scheme, parts.netloc, f"{folder.rstrip('/')}/{{file}}.{ext}", "", "", "")), url, "resource"
        roles = {query_role(k) for k in query_of(url)}
        kind: Kind = "view" if roles & {"sort", "format"} else "listing_page" if "page" in roles else "page"
        return self.template(url), listing_key(url), kind

    def add(self, url: str, depth: int, parent: str | None = None, interactive: bool = False) -> None:
        """A URL linked from ``parent`` (at ``depth``); paging within one listing keeps the parent's depth."""
        template, listing, kind = self.classify(url)
        if parent is not None and listing_key(parent) == listing and parent in self.entries and _pages_on(parent, url, kind):
            depth = self.entries[parent].depth
        known = self.entries.get(url)
        if known is not None:
            if not known.picked and (depth < known.depth or (interactive and not known.interactive and depth == known.depth)):
                known.depth, known.interactive = min(depth, known.depth), known.interactive or interactive
            return
        if depth > self.max_depth:
            self.too_deep.setdefault(url, depth)
            return
        self.too_deep.pop(url, None)
        self.entries[url] = Entry(url, depth, len(self.entries), template, listing, kind, interactive)
        if kind in ("page", "listing_page"):
            self.listing_pages[listing] = self.listing_pages.get(listing, 0) + 1

    # -- picking ------------------------------------------------------------------------

    def _blocked(self, e: Entry, extra: dict[str, int]) -> SkipReason | None:
        """Why ``e`` may not be picked now (a cap is full), counting ``extra`` picks of this batch."""
        if e.kind == "view":
            return "view_variant" if self.views.get(e.listing, 0) + extra.get("v" + e.listing, 0) >= self.view_cap else None
        if e.kind == "listing_page":
            return "template_cap" if self.per_listing.get(e.listing, 0) + extra.get("l" + e.listing, 0) >= self.listing_cap else None
        return "template_cap" if self.per_template.get(e.template, 0) + extra.get("t" + e.template, 0) >= self.template_cap else None

    def _rank(self, e: Entry, fresh: set[str]) -> tuple[int, ...]:
        tier = 3 if e.kind == "resource" else 2 if e.kind == "view" else 0 if e.template not in self.templates_seen and e.template not in fresh else 1
        view = self._view_rank(e) if e.kind == "view" else (0, 0, 0)
        return (tier, *view, e.depth, 0 if e.interactive else 1, e.order)

    def _view_rank(self, e: Entry) -> tuple[int, int, int]:
        """(a later page of an order, a field not loaded in another direction yet, minus the listing's known pages)."""
        paged = int(any(query_role(k) == "page" for k in query_of(e.url)))
        order = sort_order(e.url)
        picked = self.orders.get(e.listing, set())
        paired = order is not None and any(field == order[0] and direction != order[1] for field, direction in picked)
        return paged, 0 if paired else 1, -self.listing_pages.get(e.listing, 0)

    def _spare(self, e: Entry) -> bool:
        """A sort view held back only by ``view_cap``: loaded with budget nothing else can use."""
        return not e.picked and e.kind == "view" and sort_order(e.url) is not None

    def next_batch(self, size: int) -> list[Entry]:
        """Up to ``size`` URLs to load next (never more than the budget left), best first."""
        size = min(size, self.max_pages - self.kept)
        batch: list[Entry] = []
        extra: dict[str, int] = {}
        fresh: set[str] = set()
        while len(batch) < size:
            open_ = [e for e in self.entries.values() if not e.picked and self._blocked(e, extra) is None]
            if not open_:
                open_ = [e for e in self.entries.values() if self._spare(e)]
            if not open_:
                break
            best = min(open_, key=lambda e: self._rank(e, fresh))
            best.picked = True
            if best.kind == "view" and (order := sort_order(best.url)) is not None:
                self.orders.setdefault(best.listing, set()).add(order)
            batch.append(best)
            fresh.add(best.template)
            key = ("v" + best.listing) if best.kind == "view" else ("l" + best.listing) if best.kind == "listing_page" else ("t" + best.template)
            extra[key] = extra.get(key, 0) + 1
        return batch

    def done(self, url: str, kept: bool) -> None:
        """A picked URL was loaded: ``kept`` if it became a page (counts against the budget and caps)."""
        e = self.entries[url]
        self.templates_seen.add(e.template)
        if not kept:
            return
        self.kept += 1
        if e.kind == "view":
            self.views[e.listing] = self.views.get(e.listing, 0) + 1
        elif e.kind == "listing_page":
            self.per_listing[e.listing] = self.per_listing.get(e.listing, 0) + 1
        else:
            self.per_template[e.template] = self.per_template.get(e.template, 0) + 1

    def exhausted(self) -> bool:
        """True when the budget is spent or nothing can be picked."""
        return self.kept >= self.max_pages or not any((not e.picked and self._blocked(e, {}) is None) or self._spare(e) for e in self.entries.values())

    def leftovers(self) -> dict[str, Skip]:
        """Every URL never picked, with why: a full cap, the depth limit, or the page budget."""
        out: dict[str, Skip] = {}
        for e in self.entries.values():
            if e.picked:
                continue
            reason = self._blocked(e, {})
            if e.kind == "view":
                crawled = self.views.get(e.listing, 0)
                why = "" if reason else f"; max_pages ({self.max_pages}) reached"
                out[e.url] = Skip(reason="view_variant", detail=f"a sort or format view of the listing {e.listing}; {crawled} views of it were crawled{why}")
            elif reason == "template_cap":
                cap, what = (self.listing_cap, f"pages of the listing {e.listing}") if e.kind == "listing_page" else (self.template_cap, f"pages of the template {e.template}")
                out[e.url] = Skip(reason=reason, detail=f"{cap} {what} were crawled")
            else:
                out[e.url] = Skip(reason="budget", detail=f"max_pages ({self.max_pages}) reached")
        for url, depth in self.too_deep.items():
            out.setdefault(url, Skip(reason="depth", detail=f"found at depth {depth}, beyond max_depth ({self.max_depth})"))
        return out
