"""Records and listings read from real sites: the penguins data browser (compared with palmerpenguins' CSV) and the example site's book pages (compared with its books.json)."""

from __future__ import annotations

import csv
import importlib.resources
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph
from taskloom.tools.graph.web.build import build_web_graph, page_id
from taskloom.tools.graph.web.crawl import CrawlOptions, CrawlResult, PageCapture, crawl
from taskloom.tools.graph.web.records import RecordBlock, add_records, read_records
from taskloom.tools.graph.web.urls import listing_key
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]
BOOKS = json.loads((ROOT / "examples" / "site" / "data" / "books.json").read_text(encoding="utf-8"))
#: Records need no clicks or app states; leaving them out keeps the crawl to about 20 s.
QUICK: dict[str, Any] = {"click_budget": 0, "max_states": 0}
NUMERIC = {
    "Sample Number",
    "Culmen Length (mm)",
    "Culmen Depth (mm)",
    "Flipper Length (mm)",
    "Body Mass (g)",
    "Delta 15 N (o/oo)",
    "Delta 13 C (o/oo)",
}


def _csv() -> list[dict[str, str]]:
    source = importlib.resources.files("palmerpenguins") / "data" / "penguins-raw.csv"
    with source.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


PENGUINS = _csv()


def with_records(result: CrawlResult) -> KnowledgeGraph:
    """The web graph of a crawl with its records (added here too while build_web_graph does not add them yet)."""
    kg = build_web_graph(result, GraphMeta(id="records-test", kind="web"))
    if not any(True for _ in kg.nodes("record")):
        add_records(kg, result, {p.url: page_id(p.url) for p in result.pages})
    return kg


@dataclass
class Crawled:
    base: str
    result: CrawlResult
    kg: KnowledgeGraph


@pytest.fixture(scope="module")
def penguins(penguins_site: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crawled]:
    """The data browser crawled with a budget that covers its 7 content pages."""
    import asyncio

    settings = Settings(workspace=tmp_path_factory.mktemp("records") / "ws", embedder="hashing", crawl_delay=0)

    async def go() -> CrawlResult:
        async with Runtime(settings) as rt:
            return await crawl(
                CrawlOptions(start_url=penguins_site + "/", max_pages=40, max_depth=3, delay=0, screenshots=False, **QUICK), rt.browsers
            )

    result = asyncio.run(go())
    yield Crawled(penguins_site, result, with_records(result))


def _content(crawled: Crawled) -> dict[str, Any]:
    key = listing_key(crawled.base + "/penguins/content/")
    return next(n.attrs | {"id": n.id} for n in crawled.kg.nodes("listing") if n.attrs["key"] == key)


def _check_against_csv(fields: dict[str, dict[str, Any]]) -> None:
    row = PENGUINS[int(fields["id"]["value"]) - 1]
    for column, raw in row.items():
        field = fields[column]
        if raw == "NA":
            assert field["value"] is None and field["type"] == "missing", (column, field)
        elif column in NUMERIC:
            assert field["type"] == "number" and field["value"] == pytest.approx(float(raw)), (column, field, raw)
        elif column == "Date Egg":
            assert field == {"value": raw, "type": "date", "unit": None, "raw": raw}
        else:
            assert field["value"] == raw, (column, field, raw)


def test_content_listing_is_complete_with_the_csv_records(penguins: Crawled) -> None:
    content = _content(penguins)
    pages = [p for p in penguins.result.pages if listing_key(p.url) == content["key"]]
    numbers = {p.url for p in pages if "ordering" not in p.url}
    assert len(numbers) == 7, sorted(numbers)  # the budget reached every content page
    assert (content["pages_total"], content["total_stated"], content["records"], content["complete"]) == (7, 344, 344, True)
    assert content["pages_seen"] == 7
    shown = {row.fields["id"] for p in pages for b in p.records for row in b.rows}
    records = [n for n in penguins.kg.nodes("record") if content["id"] in n.attrs["listings"]]
    assert len(records) == len(shown) == len(PENGUINS)  # records ≥ rows visited, one per row
    for node in records:
        _check_against_csv(node.attrs["fields"])
        assert node.attrs["detail_url"].startswith(penguins.base + "/penguins/row/")


def test_typed_values_of_named_records(penguins: Crawled) -> None:
    records = {
        (
            n.attrs["fields"]["studyName"]["value"],
            n.attrs["fields"]["Individual ID"]["value"],
            n.attrs["fields"]["Species"]["value"].split()[0],
        ): n.attrs["fields"]
        for n in penguins.kg.nodes("record")
        if "studyName" in n.attrs["fields"]
    }
    gentoo = records[("PAL0809", "N12A1", "Gentoo")]
    assert gentoo["Body Mass (g)"] == {"value": 5100, "type": "number", "unit": "g", "raw": "5100"}
    assert isinstance(gentoo["Body Mass (g)"]["value"], int) and gentoo["Culmen Length (mm)"]["unit"] == "mm"
    for (study, ident, genus), fields in list(records.items())[::37]:
        row = next(r for r in PENGUINS if (r["studyName"], r["Individual ID"], r["Species"].split()[0]) == (study, ident, genus))
        assert fields["Date Egg"]["value"] == row["Date Egg"] and fields["Island"]["value"] == row["Island"]
        mass = fields["Body Mass (g)"]
        assert mass["value"] == (None if row["Body Mass (g)"] == "NA" else int(row["Body Mass (g)"]))


def test_row_page_merges_with_its_listing_row(penguins: Crawled) -> None:
    rows = [p for p in penguins.result.pages if "/penguins/row/" in p.url]
    assert rows, "the crawl reached no row page"
    kg = penguins.kg
    for page in rows:
        matching = [n for n in kg.nodes("record") if n.attrs["detail_url"] == page.url]
        assert len(matching) == 1
        record = matching[0]
        assert page.url in record.attrs["pages"] and any("/penguins/content/" in u for u in record.attrs["pages"])
        assert kg.g.has_edge(record.id, page_id(page.url), key="details")
        assert kg.g.has_edge(page_id(page.url), record.id, key="shows")
        shown_on = [u for u in record.attrs["pages"] if "/penguins/content/" in u]
        assert all(kg.g.has_edge(page_id(u), record.id, key="shows") for u in shown_on)
        assert kg.g.has_edge(record.attrs["listing"], record.id, key="contains")
        _check_against_csv(record.attrs["fields"])


def _capture(url: str, order: int, blocks: list[RecordBlock]) -> PageCapture:
    return PageCapture(url=url, final_url=url, title="", text="", depth=0, order=order, dom_hash=str(order), elements=[], records=blocks)


@pytest.fixture(scope="module")
def read_pages(penguins_site: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[RecordBlock]]:
    """read_records on a few pages of both sites, straight from the runtime's browser pool."""
    import asyncio

    from taskloom.tools.environment.site import serve_static
    from taskloom.tools.graph.web.crawl import normalize_url

    settings = Settings(workspace=tmp_path_factory.mktemp("read") / "ws", embedder="hashing")
    with serve_static() as site:
        urls = [
            penguins_site + "/penguins/content/",
            penguins_site + "/penguins/content/?ordering=-14",
            penguins_site + "/penguins/content/?ordering=-14&page=2",
        ]
        urls += [f"{site.url}/book.html?id={b['id']}" for b in BOOKS[:6]] + [site.url + "/search.html"]

        async def go() -> dict[str, list[RecordBlock]]:
            async with Runtime(settings) as rt:
                guarded = await rt.browsers.new_context()
                page = await guarded.context.new_page()
                out = {}
                for url in urls:
                    await page.goto(url, wait_until="load")
                    if "book.html" in url:
                        await page.wait_for_selector("body[data-ready]")
                    if "search.html" in url:
                        await page.wait_for_selector("#results li")
                    out[normalize_url(url)] = await read_records(page)
                await guarded.context.close()
                return out

        return asyncio.run(go())


def test_book_pages_give_one_record_each_like_books_json(read_pages: dict[str, list[RecordBlock]]) -> None:
    books = {b["id"]: b for b in BOOKS}
    pages = {url: blocks for url, blocks in read_pages.items() if "book.html" in url}
    assert len(pages) == 6
    for url, blocks in pages.items():
        book = books[url.rsplit("=", 1)[1]]
        assert {b.kind for b in blocks} == {"key_value", "definitions"}
        fields = {k: v for b in blocks for row in b.rows for k, v in row.fields.items()}
        assert (fields["ISBN"], fields["Year"], fields["Shelf"], fields["Format"], fields["Copies"], fields["Genre"]) == (
            book["isbn"],
            str(book["year"]),
            book["shelf"],
            book["format"],
            str(book["copies"]),
            book["genre"],
        )
    search = next(blocks for url, blocks in read_pages.items() if url.endswith("/search.html"))
    cards = [b for b in search if b.kind == "cards"]
    assert len(cards) == 1 and [r.fields["title"] for r in cards[0].rows] == [b["title"] for b in BOOKS[:8]]
    assert all(r.url and r.url.endswith(f"book.html?id={b['id']}") for r, b in zip(cards[0].rows, BOOKS))
    assert cards[0].pager is not None and cards[0].pager.stated_total == len(BOOKS)


def test_book_records_merge_search_cards_with_detail_pages(read_pages: dict[str, list[RecordBlock]]) -> None:
    captures = [
        _capture(url, i, blocks) for i, (url, blocks) in enumerate(read_pages.items()) if "book.html" in url or url.endswith("search.html")
    ]
    result = CrawlResult(start_url=captures[0].url, allowed_domains=["127.0.0.1"], pages=captures)
    kg = with_records(result)
    for book in BOOKS[:6]:
        record = next(n for n in kg.nodes("record") if (n.attrs["detail_url"] or "").endswith(f"book.html?id={book['id']}"))
        fields = record.attrs["fields"]
        assert fields["title"]["value"] == book["title"] and fields["Year"] == {
            "value": book["year"],
            "type": "number",
            "unit": None,
            "raw": str(book["year"]),
        }
        assert fields["Copies"]["value"] == book["copies"] and fields["ISBN"]["type"] == "text"
        assert len(record.attrs["pages"]) == 2  # the search page's card and the book's own page
    search = next(n for n in kg.nodes("listing") if n.attrs["key"].endswith("/search.html"))
    assert (search.attrs["records"], search.attrs["total_stated"], search.attrs["complete"]) == (8, len(BOOKS), False)
    assert search.attrs["pages_total"] == -(-len(BOOKS) // 8) and search.attrs["pages_seen"] == 1


def test_sort_view_is_recorded_with_field_and_direction(read_pages: dict[str, list[RecordBlock]]) -> None:
    penguin_pages = [(url, blocks) for url, blocks in read_pages.items() if "/penguins/" in url]
    result = CrawlResult(
        start_url=penguin_pages[0][0], allowed_domains=["127.0.0.1"], pages=[_capture(u, i, b) for i, (u, b) in enumerate(penguin_pages)]
    )
    kg = with_records(result)
    listing = next(kg.nodes("listing"))
    heaviest = max(int(r["Body Mass (g)"]) for r in PENGUINS if r["Body Mass (g)"] != "NA")
    assert listing.attrs["sorts"] == [{"field": "Body Mass (g)", "direction": "desc", "url": penguin_pages[1][0]}]
    first = next(b for b in penguin_pages[1][1] if b.kind == "table").rows[0]
    assert int(first.fields["Body Mass (g)"]) == heaviest
    # one page of the default order and two of another: fewer than 344 records, not complete
    shown = {row.fields["id"] for _, blocks in penguin_pages for b in blocks for row in b.rows}
    assert (listing.attrs["records"], listing.attrs["complete"], listing.attrs["pages_total"], listing.attrs["pages_seen"]) == (
        len(shown),
        False,
        7,
        2,
    )
