"""A table row's own page: never a cross-reference, and never shared by rows of two tables that agree on nothing.

Seen on the Python docs (Debian's python3.11-doc): the codecs table's "base64_codec" row and the regex HOWTO's
"finditer()" row both link to a glossary term (``glossary.html#term-…``). The links' section was dropped, both rows
took the glossary as their own page, and became one record with the fields of both tables, in two listings.
"""

from __future__ import annotations

import asyncio

import pytest

from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph
from taskloom.tools.graph.web.build import page_id
from taskloom.tools.graph.web.crawl import CrawlResult, PageCapture, normalize_url
from taskloom.tools.graph.web.records import RecordBlock, RecordRow, add_records, read_records
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

pytestmark = pytest.mark.integration


def _capture(url: str, order: int, blocks: list[RecordBlock]) -> PageCapture:
    return PageCapture(url=url, final_url=url, title="", text="", depth=0, order=order, dom_hash=str(order), elements=[], records=blocks)


def _graph(pages: dict[str, list[RecordBlock]]) -> KnowledgeGraph:
    captures = [_capture(url, i, blocks) for i, (url, blocks) in enumerate(pages.items())]
    result = CrawlResult(start_url=captures[0].url, allowed_domains=["127.0.0.1"], pages=captures)
    kg = KnowledgeGraph(GraphMeta(id="row-pages", kind="web"))
    add_records(kg, result, {p.url: page_id(p.url) for p in captures})
    return kg


@pytest.fixture(scope="module")
def docs_pages(python_docs_site: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[RecordBlock]]:
    """read_records on codecs.html and the regex HOWTO, in the runtime's real browser."""
    settings = Settings(workspace=tmp_path_factory.mktemp("rows") / "ws", embedder="hashing")
    urls = [python_docs_site + "/library/codecs.html", python_docs_site + "/howto/regex.html"]

    async def go() -> dict[str, list[RecordBlock]]:
        async with Runtime(settings) as rt:
            guarded = await rt.browsers.new_context()
            page = await guarded.context.new_page()
            out = {}
            for url in urls:
                await page.goto(url, wait_until="load")
                out[normalize_url(url)] = await read_records(page)
            await guarded.context.close()
            return out

    return asyncio.run(go())


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
