"""Record and listing nodes from the record blocks of a crawl (the body of ``records.add_records``).

A record is identified by its detail page's URL when a row, card or detail page gives one,
else by its field values; so a record shown on several pages, sort orders and listings is one
node, and a listing row and the detail page it links to merge into one record. A listing is
every page with the same ``urls.listing_key`` (page, sort and format parameters dropped).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from ..model import Edge, EdgeType, Node, NodeType, Source
from .parts import learn_part_labels, named_columns, named_fields
from .urls import bare_key, listing_key, paged_path, query_of, query_role
from .values import relative_to_now, sort_key, typed_value

if TYPE_CHECKING:
    from ..model import KnowledgeGraph
    from .capture import CrawlResult, PageCapture
    from .records import Pager, RecordBlock

__all__ = ["RecordGraph", "record_id", "listing_id", "page_number"]

_OFFSET_KEYS = frozenset({"offset", "start", "skip", "from", "startwith", "start_with"})
_DIRECTION_KEYS = frozenset({"dir", "direction", "asc", "desc"})
_CURSOR_KEYS = frozenset({"next", "prev", "next_page", "page_token", "pagetoken", "continuation", "cursor", "after", "before"})


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def record_id(key: str) -> str:
    """Id of the record whose identity is ``key`` (its detail URL, or its fields)."""
    return f"record:{_digest(key)}"


def listing_id(key: str) -> str:
    """Id of the listing node for a ``urls.listing_key``."""
    return f"listing:{_digest(key)}"


def page_number(url: str, page_size: int | None = None) -> int | None:
    """The listing page a URL shows: 1 without a page parameter, None when it is a cursor or unreadable.

    >>> page_number("http://h/t/?page=3&ordering=2"), page_number("http://h/t/"), page_number("http://h/t/?offset=40", 20), page_number("http://h/t/?_next=100")
    (3, 1, 3, None)
    >>> page_number("http://h/issue?@startwith=100&@pagesize=50", 50)
    3
    """
    for key, value in query_of(url).items():
        if query_role(key) != "page":
            continue
        if not value.isdigit() or bare_key(key) in _CURSOR_KEYS:
            return None  # a cursor ("?_next=100" is where the next page starts, not its number)
        if bare_key(key) in _OFFSET_KEYS:
            return int(value) // page_size + 1 if page_size else None
        return int(value)
    return 1


def _ordering(url: str) -> tuple[tuple[str, str], ...]:
    """The URL's sort parameters (empty for the listing's default order)."""
    return tuple(sorted((k, v) for k, v in query_of(url).items() if query_role(k) == "sort"))


def _sort_values(url: str) -> set[str]:
    """The sort parameters' values without a direction sign: what column a sort link names."""
    return {v.lstrip("+-") for k, v in query_of(url).items() if query_role(k) == "sort" and k.lower() not in _DIRECTION_KEYS}


def _continues(view: _View) -> bool:
    """Whether the page links to a next page: its own next link, or a next link to another path that pages (a page parameter, a numbered path).

    A next link to a path that does not page is the next document (Sphinx's rel=next), and says nothing of the listing.
    """
    if view.pager is None:
        return False
    elsewhere = view.pager.next_elsewhere
    return view.pager.next is not None or (elsewhere is not None and (any(query_role(k) == "page" for k in query_of(elsewhere)) or paged_path(view.url, elsewhere)))


@dataclass
class _Record:
    key: str
    order: int
    detail_url: str | None
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    pages: list[str] = field(default_factory=list)
    listings: list[str] = field(default_factory=list)
    unstable: dict[str, list[str]] = field(default_factory=dict)  # label → the differing texts it was seen with

    def merge(self, fields: dict[str, str]) -> None:
        """Add one page's view of the record; a field two pages show differently, or said relative to now, is unstable."""
        for label, raw in fields.items():
            value = typed_value(raw, label)
            if relative_to_now(raw):
                self.unstable.setdefault(label, []).append(raw)
                continue
            old = self.fields.get(label)
            if old is None or (old["type"] == "missing" and value["type"] != "missing"):
                self.fields[label] = value
            elif value["type"] != "missing" and value["value"] != old["value"]:
                self.unstable.setdefault(label, [str(old["raw"])]).append(raw)

    def stable_fields(self) -> dict[str, dict[str, Any]]:
        """The fields every page showing the record agrees on."""
        return {label: value for label, value in self.fields.items() if label not in self.unstable}


@dataclass
class _View:
    """One crawled page of a listing: its order, page number, pager and the records it showed, in order."""

    url: str
    ordering: tuple[tuple[str, str], ...]
    number: int | None
    pager: Pager | None
    blocks: list[RecordBlock]
    records: list[str] = field(default_factory=list)


@dataclass
class _Listing:
    key: str
    order: int
    url: str = ""
    title: str = ""
    views: list[_View] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    records: list[str] = field(default_factory=list)
    position: tuple[int, int] | None = None  # a table of several on its page: its place among the page's tables, and how many
    shown_as: str = ""  # "table" or "cards": how its page shows it


#: Row counts result pages are commonly cut at: one page showing exactly this many rows, with no total
#: and no next link, may be a cut result, not the whole listing.
_CAPS = frozenset({100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000})


def completeness(listing: _Listing, total: int | None, pages_seen: int, all_pages: bool, stated: int | None) -> tuple[bool, str]:
    """Whether the crawl saw every record of the listing, and the proof (or what is missing) in words.

    Complete only when the crawl followed the listing to its last page, or a total the site
    states equals the records seen; a truncation marker ("more than 1,000 rows"), rows past
    what was read, a stated total that disagrees with a fully visited listing, or one page
    of exactly a common cap size with no total and no next link, means incomplete.
    """
    seen = len(listing.records)
    cut = next((b for v in listing.views for b in v.blocks if b.truncated), None)
    if cut is not None:
        return False, f"a page holds more rows than were read (over {len(cut.rows)}); the rest were never seen"
    marker = next((v.pager.truncation for v in listing.views if v.pager and v.pager.truncation), None)
    if marker:
        return False, f"the site says {marker!r}: the rows shown are not all there are"
    if all_pages:
        if stated is not None and stated != seen:
            return False, f"every page was visited, but the site states {stated} records and {seen} were seen"
        rows = max((len(b.rows) for v in listing.views for b in v.blocks), default=0)
        if total == 1 and stated is None and rows in _CAPS:
            return False, f"one page showing exactly {rows} rows, a common result limit, with no stated total and no next page: more may exist"
        counter = any(v.pager is not None and v.pager.total for v in listing.views)
        proof = f"followed to its last page: {total} of {total} page(s) visited ({'the site counts the pages' if counter else 'the last has no next link'})"
        return True, proof + (f"; the site states {stated} records and {seen} were seen" if stated is not None else "")
    if stated is not None and stated == seen:
        return True, f"the site states {stated} records and all {seen} were seen"
    stated_text = f" of {stated} stated" if stated is not None else ""
    return False, f"{pages_seen} of {total or 'an unknown number of'} pages visited, {seen} records seen{stated_text}"


def own_page(url: str | None) -> bool:
    """Whether a row's link can be the record's own page: not a link to a section of a page (``math.html#math.trunc``, a
    manual's cross-reference). Rows of one table linking to the same page are not that page's records either (the caller
    counts them). A hash route (``#/item/3``, ``#!/item/3``) is a page of an app.

    >>> own_page("http://h/book.html?id=b01"), own_page("http://h/math.html#math.trunc"), own_page("http://h/app#/item/3")
    (True, False, True)
    """
    fragment = urlparse(url or "").fragment
    return bool(url) and (not fragment or fragment.startswith(("/", "!")))


def table_keys(url: str, blocks: list[RecordBlock], part_labels: dict[str, str]) -> dict[str, list[RecordBlock]]:
    """The listing key of each record block a page shows: ``url`` for them all when the blocks share their columns (a page of
    cards, one table), else one key per table (its columns, and the how-manieth table of those columns), so that the
    tables of a manual page are separate listings, not one listing holding the union of their rows and columns.

    >>> from .records import RecordBlock
    >>> a, b = RecordBlock(kind="table", columns=["Codec", "Languages"]), RecordBlock(kind="table", columns=["Value", "Meaning"])
    >>> list(table_keys("http://h/codecs.html", [a], {})), len(table_keys("http://h/codecs.html", [a, b, a], {}))
    (['http://h/codecs.html'], 3)
    """
    shapes = [tuple(named_columns(b, part_labels)) for b in blocks]
    if len(set(shapes)) == 1 and (len(blocks) == 1 or blocks[0].kind == "cards"):
        return {url: blocks}
    keys: dict[str, list[RecordBlock]] = {}
    for shape, block in zip(shapes, blocks):
        digest = _digest("|".join(shape))[:8]
        nth = sum(1 for k in keys if k.startswith(f"{url}#table-{digest}-"))
        keys[f"{url}#table-{digest}-{nth}"] = [block]
    return keys


class RecordGraph:
    """Adds record and listing nodes, and their edges, to a web graph (see the module docstring)."""

    def __init__(self, kg: KnowledgeGraph, result: CrawlResult, page_ids: dict[str, str], part_labels: dict[str, str] | None = None) -> None:
        self.kg = kg
        self.result = result
        self.page_ids = page_ids
        self.records: dict[str, _Record] = {}
        self.listings: dict[str, _Listing] = {}
        self.finals = {p.final_url: p.url for p in result.pages}
        # Pages that list records and show none of their own: a link to one is a category, not a record's detail page.
        self.listing_pages = {
            p.url
            for p in result.pages
            if any(b.kind in ("table", "cards") for b in p.records) and not any(b.kind in ("key_value", "definitions") for b in p.records)
        }
        # Unlabelled card parts named from detail pages (:mod:`.parts`); a second read passes the crawl's names.
        self.part_labels = learn_part_labels(result.pages, self.resolve) if part_labels is None else part_labels

    def resolve(self, url: str) -> str:
        """A URL as the crawl stored it (normalised, aliases and redirects followed)."""
        from .capture import normalize_url

        normal = normalize_url(url)
        normal = self.result.aliases.get(normal, normal)
        return self.finals.get(normal, normal)

    def build(self) -> None:
        for page in self.result.pages:
            self.read_page(page)
        for listing in self.listings.values():
            self.add_listing(listing)
        for record in sorted(self.records.values(), key=lambda r: r.order):
            self.add_record(record)
        for listing in self.listings.values():
            for key in listing.records:
                self.edge(listing_id(listing.key), record_id(key), EdgeType.CONTAINS)
        self.kg.meta.stats.update(records=len(self.records), listings=len(self.listings), part_labels=self.part_labels)

    def record(self, key: str, detail_url: str | None) -> _Record:
        if key not in self.records:
            self.records[key] = _Record(key=key, order=len(self.records), detail_url=detail_url)
        return self.records[key]

    def read_page(self, page: PageCapture) -> None:
        own = [b for b in page.records if b.kind in ("key_value", "definitions")]
        if own:
            record = self.record(page.url, page.url)
            for block in own:
                for row in block.rows:
                    record.merge(row.fields)
            if page.url not in record.pages:
                record.pages.append(page.url)
        many = [b for b in page.records if b.kind in ("table", "cards") and b.rows]
        if not many:
            return
        url = listing_key(page.url)
        pager = next((b.pager for b in many if b.pager is not None), None)
        tables = [b for b in page.records if b.kind in ("table", "key_value")]  # the page's tables, in page order
        for key, blocks in table_keys(url, many, self.part_labels).items():
            self.read_blocks(page, url, key, blocks, pager)
            if key != url and (nth := next((i for i, b in enumerate(tables, start=1) if b is blocks[0]), None)):
                self.listings[key].position = (nth, len(tables))

    def read_blocks(self, page: PageCapture, url: str, key: str, many: list[RecordBlock], pager: Pager | None) -> None:
        """One listing's blocks on ``page`` (its table, or the cards): a view of the listing, and its rows as records."""
        listing = self.listings.setdefault(key, _Listing(key=key, order=len(self.listings), url=url, title=many[0].title if key != url else "", shown_as=many[0].kind))
        size = max(len(b.rows) for b in many)
        view = _View(url=page.url, ordering=_ordering(page.url), number=page_number(page.url, size), pager=pager, blocks=many)
        listing.views.append(view)
        for block in many:
            listing.columns += [c for c in named_columns(block, self.part_labels) if c not in listing.columns]
            pages = [self.resolve(row.url) if row.url else None for row in block.rows]
            for row, detail in zip(block.rows, pages):
                fields = named_fields(block, row.fields, self.part_labels)
                rec = self.row_record(row.url if own_page(row.url) and pages.count(detail) == 1 else None, fields)
                rec.merge(fields)
                for seen, value in ((rec.pages, page.url), (rec.listings, key), (view.records, rec.key), (listing.records, rec.key)):
                    if value not in seen:
                        seen.append(value)

    def row_record(self, url: str | None, fields: dict[str, str]) -> _Record:
        detail = self.resolve(url) if url else None
        if detail is not None and detail not in self.listing_pages and self.may_be(detail, fields):
            return self.record(detail, detail)
        canonical = json.dumps(sorted(fields.items()), ensure_ascii=False)
        return self.record("fields:" + canonical, None)

    def may_be(self, key: str, fields: dict[str, str]) -> bool:
        """Whether a row linking to ``key`` may be the record kept under it: a new one, one seen only on its own page, or a
        row sharing a value with it (rows of two tables that link to one page are one record only when they agree on something)."""
        known = self.records.get(key)
        if known is None or not known.listings:
            return True
        values = {" ".join(str(v["raw"]).split()).lower() for v in known.fields.values()}
        return any(" ".join(raw.split()).lower() in values for raw in fields.values() if raw.strip())

    def edge(self, source: str, target: str, kind: EdgeType) -> None:
        if source != target and source in self.kg and target in self.kg and not self.kg.g.has_edge(source, target, key=kind.value):
            self.kg.add_edge(Edge(source=source, target=target, type=kind))

    def add_record(self, record: _Record) -> None:
        rid = record_id(record.key)
        fields = record.stable_fields()
        text = "; ".join(f"{label}: {value['raw']}" for label, value in fields.items())
        attrs: dict[str, Any] = {
            "fields": fields,
            "listing": listing_id(record.listings[0]) if record.listings else None,
            "listings": [listing_id(k) for k in record.listings],
            "detail_url": record.detail_url,
            "pages": record.pages,
        }
        if record.unstable:
            attrs["unstable"] = {label: sorted(set(texts))[:4] for label, texts in record.unstable.items()}
        source = Source(url=record.detail_url or (record.pages[0] if record.pages else None))
        self.kg.add_node(Node(id=rid, type=NodeType.RECORD, text=text[:4000], attrs=attrs, source=source))
        for url in record.pages:
            if url in self.page_ids:
                self.edge(self.page_ids[url], rid, EdgeType.SHOWS)
        if record.detail_url and record.detail_url in self.page_ids:
            self.edge(rid, self.page_ids[record.detail_url], EdgeType.DETAILS)

    def add_listing(self, listing: _Listing) -> None:
        lid = listing_id(listing.key)
        total = self.pages_total(listing)
        by_order: dict[tuple[tuple[str, str], ...], set[int]] = {}
        for view in listing.views:
            if view.number is not None:
                by_order.setdefault(view.ordering, set()).add(view.number)
        pages_seen = max((len(n) for n in by_order.values()), default=len(listing.views))
        stated = next((v.pager.stated_total for v in listing.views if v.pager and v.pager.stated_total is not None), None)
        all_pages = total is not None and any(set(range(1, total + 1)) <= seen for seen in by_order.values())
        complete, proof = completeness(listing, total, pages_seen, all_pages, stated)
        attrs = {
            "key": listing.key,
            "url": listing.url or listing.key,
            "columns": listing.columns,
            "pages_seen": pages_seen,
            "pages_total": total,
            "total_stated": stated,
            "records": len(listing.records),
            "complete": complete,
            "completeness": proof,
            "sorts": self.sorts(listing),
            "pages": [v.url for v in listing.views],
        }
        if listing.title:
            attrs["table"] = listing.title
        if listing.position:
            attrs["position"] = list(listing.position)
        if listing.shown_as:
            attrs["shown_as"] = listing.shown_as
        text = f"listing {listing.key}: {len(listing.records)} records" + (f" of {stated}" if stated is not None else "")
        self.kg.add_node(Node(id=lid, type=NodeType.LISTING, text=text, attrs=attrs, source=Source(url=listing.key)))
        for view in listing.views:
            if view.url in self.page_ids:
                self.edge(self.page_ids[view.url], lid, EdgeType.SHOWS)

    def pages_total(self, listing: _Listing) -> int | None:
        """Pages of the listing: a 'Page 1 / 7' counter, else the highest page linked or seen once a last page (no next link) was seen."""
        stated = [v.pager.total for v in listing.views if v.pager and v.pager.total]
        if stated:
            return max(stated)
        size = max((len(b.rows) for v in listing.views for b in v.blocks), default=None)
        numbers = {v.number for v in listing.views if v.number is not None}
        for view in listing.views:
            if view.pager is None:
                continue
            for link in [*view.pager.links, view.pager.next, view.pager.last]:
                if link and listing_key(self.resolve(link)) == (listing.url or listing.key) and (n := page_number(link, size)) is not None:
                    numbers.add(n)
        last_seen = [v.number for v in listing.views if v.number is not None and not _continues(v)]
        if last_seen and max(last_seen) == max(numbers):
            return max(numbers)
        if numbers and any(v.pager and v.pager.last for v in listing.views):
            return max(numbers)
        return None

    def sorts(self, listing: _Listing) -> list[dict[str, Any]]:
        """For each crawled sort order: the field it sorts by (its column's header link, else the rows) and the direction the rows show."""
        default = [v for v in listing.views if not v.ordering]
        links: dict[str, str] = {}
        for view in listing.views:
            for block in view.blocks:
                for column, url in block.column_links.items():
                    links.setdefault(column, url)
        out: list[dict[str, Any]] = []
        orderings = sorted({v.ordering for v in listing.views if v.ordering})
        for ordering in orderings:
            views = sorted((v for v in listing.views if v.ordering == ordering), key=lambda v: v.number or 0)
            wanted = _sort_values(views[0].url)
            label: str | None = next((lbl for lbl, url in links.items() if wanted and _sort_values(url) == wanted), None)
            if label is None:
                label = self.sorted_column(listing, views, default)
            direction = self.direction(label, views) if label else None
            out.append({"field": label, "direction": direction, "url": views[0].url})
        return out

    def values(self, label: str, view: _View) -> list[Any]:
        keys = [sort_key(self.records[k].fields.get(label)) for k in view.records]
        return [k for k in keys if k is not None]

    def direction(self, label: str, views: list[_View]) -> str | None:
        """'asc' or 'desc' when every seen page's rows are in that order by ``label`` (and not all equal)."""
        runs = [self.values(label, v) for v in views]
        pairs = [(a, b) for run in runs for a, b in zip(run, run[1:]) if a[0] == b[0]]
        if not pairs or all(a == b for a, b in pairs):
            return None
        if all(a <= b for a, b in pairs):
            return "asc"
        if all(a >= b for a, b in pairs):
            return "desc"
        return None

    def sorted_column(self, listing: _Listing, views: list[_View], default: list[_View]) -> str | None:
        """The one column whose values are ordered in ``views`` but not in the default order."""
        found = [c for c in listing.columns if self.direction(c, views) and not (default and self.direction(c, default))]
        return found[0] if len(found) == 1 else None
