"""The records and listings of a web graph, filtered: what ``graph_facts`` and ``taskloom graph facts`` return."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, Field

from ..errors import InputError
from .model import KnowledgeGraph, Node, NodeType
from .web.values import typed_value, unit_of_label

__all__ = ["RecordFact", "ListingFact", "FactsResult", "graph_facts", "parse_where", "population_proof"]


class RecordFact(BaseModel):
    """One record: its typed fields, detail page and the listings that show it."""

    record_id: str
    fields: dict[str, dict[str, Any]] = Field(
        description="Label → {value, type, unit, raw}; type 'missing' (value null) for NULL/NA/empty."
    )
    detail_url: str | None = None
    listings: list[str] = Field(default_factory=list)
    pages: list[str] = Field(default_factory=list)


class ListingFact(BaseModel):
    """One listing and how much of it the crawl saw."""

    listing_id: str
    url: str
    columns: list[str]
    pages_seen: int
    pages_total: int | None
    total_stated: int | None
    records: int
    complete: bool = Field(description="Every page of the listing was visited (or the stated total equals the records seen).")
    completeness: str | None = Field(None, description="The proof of completeness, or what the crawl did not see.")
    sorts: list[dict[str, Any]] = Field(default_factory=list)


class FactsResult(BaseModel):
    """Records matching the filters (one page of them), the total that matched, and the graph's listings."""

    graph_id: str
    total: int = Field(description="Records matching the filters, before limit/offset.")
    records: list[RecordFact]
    listings: list[ListingFact]
    complete: bool = Field(False, description="``total`` is proven to be every matching record the site has, not only those the crawl saw.")
    completeness: str = Field("", description="The proof of ``complete``, or why ``total`` may be partial.")
    note: str | None = None


def parse_where(items: list[str] | None) -> dict[str, str]:
    """``["Island=Dream", "Sex=FEMALE"]`` → a dict; an item without ``=`` or with an empty label is an InputError.

    >>> parse_where(["Island=Dream", "Body Mass (g)=5100"])
    {'Island': 'Dream', 'Body Mass (g)': '5100'}
    """
    out: dict[str, str] = {}
    for item in items or []:
        label, sep, value = item.partition("=")
        if not sep or not label.strip():
            raise InputError(f"filter {item[:80]!r} is not FIELD=VALUE; write e.g. Island=Dream")
        out[label.strip()] = value.strip()
    return out


def _label_key(label: str) -> str:
    unit = unit_of_label(label)
    bare = label.rsplit("(", 1)[0].rsplit("[", 1)[0] if unit else label
    return " ".join(bare.split()).casefold()


def _matches(field: dict[str, Any], wanted: str) -> bool:
    target = typed_value(wanted)
    if field.get("type") == "missing" or target["type"] == "missing":
        return field.get("type") == target["type"]
    if target["type"] == field.get("type") and target["value"] == field.get("value"):
        return True
    return str(field.get("raw", "")).casefold() == wanted.casefold()


def graph_facts(
    kg: KnowledgeGraph,
    listing: str | None = None,
    where: dict[str, str] | None = None,
    query: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> FactsResult:
    """Filter the graph's records (see :class:`FactsResult`).

    ``listing`` is a listing node id or its URL; ``where`` maps a field label (case and unit
    brackets ignored: ``body mass`` finds ``Body Mass (g)``) to a value compared by type
    (``5100`` equals ``5,100 g``) or as text; ``query`` is a case-insensitive substring of the
    record's text.
    """
    if not 1 <= limit <= 500:
        raise InputError(f"limit={limit} is out of range; use 1 to 500")
    if offset < 0:
        raise InputError(f"offset={offset} is negative; use 0 or more")
    if query is not None and not query.strip():
        raise InputError("query is blank; pass some words, or leave it out")
    if kg.meta.kind != "web":
        return FactsResult(
            graph_id=kg.id,
            total=0,
            records=[],
            listings=[],
            note=f"graph {kg.id!r} is a {kg.meta.kind} graph; records come from crawled websites only",
        )
    listings = [
        ListingFact(
            listing_id=n.id,
            **{k: n.attrs.get(k) for k in ("url", "columns", "pages_seen", "pages_total", "total_stated", "records", "complete", "completeness", "sorts")},
        )
        for n in kg.nodes(NodeType.LISTING)
    ]
    wanted_listing: str | None = None
    if listing is not None:
        wanted_listing = next((lf.listing_id for lf in listings if listing in (lf.listing_id, lf.url)), None)
        if wanted_listing is None:
            known = ", ".join(f"{lf.listing_id} ({lf.url})" for lf in listings[:20]) or "none"
            raise InputError(f"listing {listing[:200]!r} is not in graph {kg.id!r}; known listings: {known}")
    records = list(kg.nodes(NodeType.RECORD))
    conditions: list[tuple[str, str]] = []
    if where:
        labels = {_label_key(label) for r in records for label in r.attrs.get("fields", {})}
        for label, value in where.items():
            if _label_key(label) not in labels:
                raise InputError(f"no record has a field {label[:100]!r}; fields: {', '.join(sorted(labels)[:60])}")
            conditions.append((_label_key(label), value))
    needle = query.casefold() if query else None
    hits: list[RecordFact] = []
    for node in records:
        fields: dict[str, dict[str, Any]] = node.attrs.get("fields", {})
        if wanted_listing is not None and wanted_listing not in node.attrs.get("listings", []):
            continue
        if needle is not None and needle not in node.text.casefold():
            continue
        by_key = {_label_key(label): value for label, value in fields.items()}
        if not all(key in by_key and _matches(by_key[key], value) for key, value in conditions):
            continue
        hits.append(
            RecordFact(
                record_id=node.id,
                fields=fields,
                detail_url=node.attrs.get("detail_url"),
                listings=node.attrs.get("listings", []),
                pages=node.attrs.get("pages", []),
            )
        )
    note = (
        None
        if records
        else f"graph {kg.id!r} holds no records (no tables, key-value lists or cards were found, or it was crawled before records were read)"
    )
    complete, proof = population_proof(kg, records, {h.record_id for h in hits}, [key for key, _ in conditions], wanted_listing)
    if not complete and records:
        note = f"partial: {len(hits)} matching records among those the crawl saw; {proof}"
    return FactsResult(
        graph_id=kg.id, total=len(hits), records=hits[offset : offset + limit], listings=listings, complete=complete, completeness=proof, note=note
    )


def population_proof(kg: KnowledgeGraph, records: list[Node], hits: set[str], labels: list[str], listing: str | None = None) -> tuple[bool, str]:
    """Whether the matching records are all the site has, with the proof or what is missing, in words.

    Proven when every listing that shows a match was seen completely (or refines, by extra query
    parameters, a listing of the same path that was), every match is in one of them, and each of
    their records shows every filtered field: a record whose field was never read could match too.
    """
    members: dict[str, list[Node]] = {}
    for node in records:
        for lid in node.attrs.get("listings") or []:
            members.setdefault(str(lid), []).append(node)
    listings = {n.id: n for n in kg.nodes(NodeType.LISTING)}
    if listing is not None:
        scope = [listing]
    else:
        scope = sorted({str(lid) for r in records if r.id in hits for lid in r.attrs.get("listings") or []})
        loose = sorted(r.id for r in records if r.id in hits and not r.attrs.get("listings"))
        if loose:
            return False, f"{len(loose)} matching records were seen only on their own pages, not in a listing; their siblings may never have been opened"
        if not hits:
            scope = sorted(lid for lid, group in members.items() if all(any(_label_key(lb) == key for lb in group[0].attrs.get("fields", {})) for key in labels))
    if not scope:
        return False, "no listing shows records with these fields"
    complete = [listings[lid] for lid in scope if lid in listings and listings[lid].attrs.get("complete")]
    for lid in scope:
        if lid not in listings:
            continue
        node = listings[lid]
        url = str(node.attrs.get("url"))
        if not node.attrs.get("complete") and not any(_refines(url, str(c.attrs.get("url"))) for c in complete):
            return False, f"listing {url} was not seen completely: {node.attrs.get('completeness') or 'not every page was visited'}"
        group = members.get(lid, [])
        for key in labels:
            shown = sum(1 for r in group if key in {_label_key(lb) for lb in r.attrs.get("fields", {})})
            if shown < len(group):
                return False, f"listing {url} shows {key!r} for {shown} of its {len(group)} records; the others' pages were not read"
    urls = ", ".join(str(c.attrs.get("url")) for c in complete[:3]) + (" …" if len(complete) > 3 else "")
    filtered = f"; each of their records shows {', '.join(repr(k) for k in labels)}" if labels else ""
    return True, f"every listing showing a match was seen completely ({urls}){filtered}"


def _refines(url: str, base: str) -> bool:
    """Whether ``url`` is ``base`` with more query parameters: a filter or search within it shows a subset of its records.

    >>> _refines("http://h/s?genre=a&available=1", "http://h/s"), _refines("http://h/s?q=x", "http://h/t")
    (True, False)
    """
    a, b = urlsplit(url), urlsplit(base)
    return (a.scheme, a.netloc, a.path) == (b.scheme, b.netloc, b.path) and set(parse_qsl(b.query)) < set(parse_qsl(a.query))
