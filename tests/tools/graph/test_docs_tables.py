"""Tables of the Python docs (Debian's python3.11-doc) read in a real browser: what a row is, where a table is, what a number is.

- A row's own page is never a cross-reference, nor a page another table's row links to with nothing in common. The codecs
  table's "base64_codec" row and the regex HOWTO's "finditer()" row both link to a glossary term (``glossary.html#term-…``):
  the links' section was dropped, both rows took the glossary as their own page and became one record with the fields of
  both tables, in two listings.
- One table of several on a page is always placed, by its own heading or its place among the page's tables: "By how many
  do the requests with contig U outnumber those with contig C?" named no table, and two tables of ``c-api/buffer.html``
  have a "contig" column (4 in one, 2 over both).
- A footnote mark ("(4)" in struct's "Notes" column) is no answer: "What is the Notes value of …?" asked for one.
- A column holding ranges ("1991-1995", "2001-now") is no measure: the licence page's "largest year" was computed over
  the plain years only (2002 − 2000 = 2; the years run from 1991).
"""

from __future__ import annotations

import asyncio
import re

import pytest

from taskloom.tools.generate.web.compare import ListingGroups
from taskloom.tools.generate.web.lookup import ListingData, listing_data, lookup_task
from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph, Node, NodeType
from taskloom.tools.graph.web.build import page_id
from taskloom.tools.graph.web.crawl import CrawlResult, PageCapture, normalize_url
from taskloom.tools.graph.web.records import RecordBlock, RecordRow, add_records, read_records
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

pytestmark = pytest.mark.integration


def _capture(url: str, order: int, blocks: list[RecordBlock], title: str = "") -> PageCapture:
    return PageCapture(url=url, final_url=url, title=title, text="", depth=0, order=order, dom_hash=str(order), elements=[], records=blocks)


def _graph(pages: dict[str, list[RecordBlock]], titles: dict[str, str] | None = None) -> KnowledgeGraph:
    captures = [_capture(url, i, blocks, (titles or {}).get(url, "")) for i, (url, blocks) in enumerate(pages.items())]
    result = CrawlResult(start_url=captures[0].url, allowed_domains=["127.0.0.1"], pages=captures)
    kg = KnowledgeGraph(GraphMeta(id="row-pages", kind="web"))
    for page in captures:
        kg.add_node(Node(id=page_id(page.url), type=NodeType.PAGE, text=page.title, attrs={"url": page.url, "title": page.title}))
    add_records(kg, result, {p.url: page_id(p.url) for p in captures})
    return kg


PAGES = ("library/codecs.html", "howto/regex.html", "c-api/buffer.html", "library/sqlite3.html", "license.html", "library/struct.html")


@pytest.fixture(scope="module")
def read_docs(python_docs_site: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, list[RecordBlock]], dict[str, str]]:
    """read_records on five docs pages in the runtime's real browser, and their titles."""
    settings = Settings(workspace=tmp_path_factory.mktemp("rows") / "ws", embedder="hashing")

    async def go() -> tuple[dict[str, list[RecordBlock]], dict[str, str]]:
        async with Runtime(settings) as rt:
            guarded = await rt.browsers.new_context()
            page = await guarded.context.new_page()
            blocks, titles = {}, {}
            for path in PAGES:
                url = normalize_url(f"{python_docs_site}/{path}")
                await page.goto(url, wait_until="load")
                blocks[url], titles[url] = await read_records(page), await page.title()
            await guarded.context.close()
            return blocks, titles

    return asyncio.run(go())


@pytest.fixture(scope="module")
def docs_pages(read_docs: tuple[dict[str, list[RecordBlock]], dict[str, str]]) -> dict[str, list[RecordBlock]]:
    """The record blocks of the regex HOWTO and codecs pages."""
    return {url: blocks for url, blocks in read_docs[0].items() if url.endswith(("codecs.html", "regex.html"))}


@pytest.fixture(scope="module")
def docs_listings(read_docs: tuple[dict[str, list[RecordBlock]], dict[str, str]]) -> list[ListingData]:
    return listing_data(_graph(*read_docs))


def test_one_table_of_several_is_always_placed(docs_listings: list[ListingData]) -> None:
    """Every table of a page with several is placed, each differently: the buffer page's "contig" tables by their headings, sqlite3's two type tables (one heading) by their place."""
    several = [d for d in docs_listings if d.node.attrs.get("table")]
    assert len(several) >= 15
    for data in several:
        assert data.where.startswith("in the ") and " of the page “" in data.where, (data.noun, data.where)
    by_page: dict[str, list[str]] = {}
    for data in several:
        by_page.setdefault(str(data.node.attrs["url"]), []).append(data.where)
    assert all(len(set(w)) == len(w) for w in by_page.values()), by_page
    contig = sorted(d.where for d in several if "contig" in d.stats)
    assert contig == ["in the table “compound requests” of the page “Buffer Protocol”", "in the table “contiguity requests” of the page “Buffer Protocol”"], contig
    sqlite = sorted(d.where for d in several if "SQLite type" in d.stats)  # two tables under one heading: by their place
    assert sqlite == ["in the second table of the page “sqlite3 — DB-API 2.0 interface for SQLite databases”", "in the third table of the page “sqlite3 — DB-API 2.0 interface for SQLite databases”"], sqlite
    cells = {str(r.attrs["fields"].get("Request", {}).get("raw")) for d in several for r in d.records}
    assert "PyBUF_CONTIG_RO" in cells and not any("¶" in c for c in cells)  # the permalink mark is no part of a cell


def test_a_column_of_years_and_ranges_is_no_measure(docs_listings: list[ListingData]) -> None:
    """The licence page's "Year" column holds "1991-1995" and "2001-now": no largest or smallest year is asked of it."""
    history = next(d for d in docs_listings if "Year" in d.stats and "GPL compatible?" in d.stats)
    assert {"1991-1995", "2001-now"} <= set(history.stats["Year"].values)
    assert "Year" not in ListingGroups(history).measures and not history.stats["Year"].numbers_only


def test_a_link_into_a_section_is_no_rows_own_page(docs_pages: dict[str, list[RecordBlock]]) -> None:
    """Rows whose only links are cross-references ('strict' → exceptions.html#UnicodeError, a glossary term) have no page of their own."""
    rows = {r.fields[b.columns[0]]: r for blocks in docs_pages.values() for b in blocks if b.kind == "table" for r in b.rows if b.columns}
    for key in ("'strict'", "base64_codec [1]", "finditer()", "bz2_codec"):
        assert key in rows and rows[key].url is None, (key, rows.get(key))


def test_rows_of_two_tables_are_two_records(docs_pages: dict[str, list[RecordBlock]]) -> None:
    """Every table row of the two pages lies in one page's listings and holds only its listing's columns."""
    kg = _graph(docs_pages)
    listings = {n.id: n for n in kg.nodes("listing")}
    records = list(kg.nodes("record"))
    assert len(records) >= 150  # codecs' standard encodings alone list 97
    for record in records:
        homes = [listings[i] for i in record.attrs["listings"]]
        if not homes:
            continue  # a page's own key-value record
        assert len({h.attrs["url"] for h in homes}) == 1, (record.attrs["fields"], [h.attrs["url"] for h in homes])
        for home in homes:
            assert set(record.attrs["fields"]) <= set(home.attrs["columns"]), (record.attrs["fields"], home.attrs["columns"])


def _table(title: str, columns: list[str], rows: list[tuple[dict[str, str], str | None]]) -> RecordBlock:
    return RecordBlock(kind="table", title=title, columns=columns, rows=[RecordRow(fields=f, url=u) for f, u in rows])


def test_rows_linking_to_one_page_are_one_record_only_when_they_agree() -> None:
    """Two tables' rows linking to one page: the same book when they share its title, two records when they share nothing."""
    base = "http://127.0.0.1:9"
    kg = _graph({
        f"{base}/genres/poetry.html": [_table("Poetry", ["Title", "Author"], [({"Title": "Salt Lines", "Author": "A. Reyes"}, f"{base}/book.html?id=b07"),
                                                                              ({"Title": "Tide", "Author": "B. Oyelaran"}, f"{base}/book.html?id=b08")])],
        f"{base}/new.html": [_table("New", ["Title", "Year"], [({"Title": "Salt Lines", "Year": "2021"}, f"{base}/book.html?id=b07"),
                                                               ({"Title": "Maps", "Year": "2020"}, f"{base}/book.html?id=b09")])],
        f"{base}/codes.html": [_table("Codes", ["Code", "Meaning"], [({"Code": "E1", "Meaning": "overflow"}, f"{base}/glossary.html"),
                                                                     ({"Code": "E2", "Meaning": "underflow"}, None)])],
        f"{base}/errors.html": [_table("Errors", ["Error", "Action"], [({"Error": "timeout", "Action": "retry"}, f"{base}/glossary.html"),
                                                                       ({"Error": "refused", "Action": "give up"}, None)])],
    })
    by_title = {str(r.attrs["fields"].get("Title", {}).get("raw")): r for r in kg.nodes("record") if "Title" in r.attrs["fields"]}
    assert len(by_title["Salt Lines"].attrs["listings"]) == 2 and by_title["Salt Lines"].attrs["fields"]["Year"]["raw"] == "2021"
    glossary = [r for r in kg.nodes("record") if set(r.attrs["fields"]) & {"Code", "Error"} and r.attrs["fields"].get("Meaning", r.attrs["fields"].get("Action"))]
    assert sorted(len(r.attrs["listings"]) for r in glossary) == [1, 1, 1, 1]
    assert all(not ({"Code", "Error"} <= set(r.attrs["fields"])) for r in glossary)


def test_a_footnote_mark_is_no_answer(read_docs: tuple[dict[str, list[RecordBlock]], dict[str, str]]) -> None:
    """struct's format table: its "Notes" cells are marks ("(1)") and are never asked; its "Standard size" values are."""
    kg = _graph(*read_docs)
    start = next(p for p in kg.nodes("page") if str(p.attrs["url"]).endswith("license.html"))
    formats = next(d for d in listing_data(kg) if "Standard size" in d.stats and "Notes" in d.stats)
    marked = [r for r in formats.records if re.fullmatch(r"\(\d\)", str(r.attrs["fields"]["Notes"]["raw"]))]
    assert len(marked) >= 5
    assert all(lookup_task(kg, formats, r, "Notes", start, 0) is None for r in marked)
    asked = [t for r in formats.records if (t := lookup_task(kg, formats, r, "Standard size", start, 0)) is not None]
    assert asked and all(re.fullmatch(r"\d", str(t.gold_answer)) for t in asked)
