"""Listings are complete only when proven, values only when stable: real pages read in Chromium.

Each page below is a small real HTML file served on 127.0.0.1 and read with ``read_records``
in the runtime's browser; the graph is built from those reads as a crawl builds it. Every
case is one a site nobody tuned for showed: a result cut at 1,000 rows that says so, an
index of tables with their row counts, a page of exactly a common cap size, a date picker's
calendar grid, values said relative to now, and a field two pages show differently.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from taskloom.tools.environment.site import serve_static
from taskloom.tools.graph.facts import graph_facts
from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph
from taskloom.tools.graph.web.build import build_web_graph, page_id
from taskloom.tools.graph.web.crawl import CrawlResult, PageCapture, normalize_url
from taskloom.tools.graph.web.records import RecordBlock, add_records, read_records
from taskloom.tools.generate.web.lookup import listing_data
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

pytestmark = pytest.mark.integration

_SPECIES = ["Adelie", "Gentoo", "Chinstrap"]


def _table(rows: int, extra: str = "", start: int = 0) -> str:
    body = "".join(
        f"<tr><td><a href='row{i}.html'>R{i:04d}</a></td><td>{_SPECIES[i % 3]}</td><td>{3000 + 7 * i}</td></tr>" for i in range(start, start + rows)
    )
    return f"<html><body><main><h1>Rows</h1>{extra}<table><thead><tr><th>id</th><th>Species</th><th>Mass</th></tr></thead><tbody>{body}</tbody></table></main></body></html>"


PAGES = {
    # A query result cut at 1,000 rows that says so: seen whole, it is still not the whole table.
    "cut.html": _table(1000, "<p>This data as CSV. Returned more than 1,000 rows; showing the first 1,000.</p>"),
    # The same rows with a stated total equal to what is shown.
    "whole.html": _table(30, "<p>30 rows</p>"),
    # Exactly a common result cap, with no total and no next link: more may exist.
    "cap.html": _table(100),
    # An index of tables with their row counts: none of them is the total of a listing on this page.
    "tables.html": "<html><body><ul>"
    + "".join(f"<li class='t'><h3><a href='{n}.html'>{n}</a></h3><p>Rows: {c} rows</p><p>Columns: {k}</p></li>" for n, c, k in [("birds", 3376, 9), ("cars", 406, 8), ("iris", 150, 5), ("stocks", 560, 3)])
    + "</ul></body></html>",
    # A date picker: weeks as rows, weekdays as columns.
    "calendar.html": "<html><body><table><caption>November 2026</caption><thead><tr>"
    + "".join(f"<th>{d}</th>" for d in ["Su", "Mo", "Tu", "We", "Th", "Fr", "Sa"])
    + "</tr></thead><tbody>"
    + "".join("<tr>" + "".join(f"<td>{7 * w + d + 1}</td>" for d in range(7)) + "</tr>" for w in range(4))
    + "</tbody></table></body></html>",
    # Records whose "Updated" is relative to now, and whose views counter differs between two pages.
    "news.html": "<html><body><table><thead><tr><th>Title</th><th>Updated</th><th>Views</th></tr></thead><tbody>"
    + "".join(f"<tr><td><a href='item{i}.html'>Item {i}</a></td><td>{i + 2} days ago</td><td>{100 + i}</td></tr>" for i in range(8))
    + "</tbody></table><p>8 items</p></body></html>",
    # A documentation page (Sphinx): rel=next names the next chapter, an anchor named "next" documents next(),
    # and prose and cells say "truncated" of something else. The table is whole.
    "chapter.html": "<html><head><link rel='next' title='Constants' href='constants.html'></head><body><main>"
    + "<p>Excluded time components are truncated, not rounded.</p><p>See <a href='chapter.html#next'>next</a>.</p>"
    + _table(12).split("<main>", 1)[1].replace("</main></body></html>", "")
    + "<table><tbody><tr><td>math.trunc(x)</td><td>x truncated to Integral</td></tr></tbody></table></main></body></html>",
    # A listing whose next page lives at a numbered path: rel=next to page-2.html is its next page.
    "list.html": "<html><head><link rel='next' href='page-2.html'></head><body>" + _table(20).split("<body>", 1)[1],
    # A short note saying the list is cut, with no number.
    "short.html": _table(25, "<p>(truncated)</p>"),
    # A manual page with three tables: two of one shape under two headings, one of another shape. Each is its own listing.
    "manual.html": "<html><head><meta charset='utf-8'></head><body><main><h1>codecs — Codec registry¶</h1><section><h2>Error Handlers¶</h2><table><thead><tr><th>Value</th><th>Meaning</th></tr></thead><tbody>"
    + "".join(f"<tr><td>'h{i}'</td><td>handler {i}</td></tr>" for i in range(5))
    + "</tbody></table></section><section><h2>Standard Encodings¶</h2><table><thead><tr><th>Codec</th><th>Aliases</th><th>Languages</th></tr></thead><tbody>"
    + "".join(f"<tr><td>cp{i}</td><td>ibm{i}</td><td>{_SPECIES[i % 3]}</td></tr>" for i in range(9))
    + "</tbody></table></section><section><h2>Text Transforms¶</h2><table><thead><tr><th>Value</th><th>Meaning</th></tr></thead><tbody>"
    + "".join(f"<tr><td>'t{i}'</td><td>transform {i}</td></tr>" for i in range(3))
    + "</tbody></table></section></main></body></html>",
    # A manual's sections: each heading links only to its own anchor (Sphinx's "¶" permalink). Sections are no cards.
    "sections.html": "<html><head><meta charset='utf-8'></head><body><main>"
    + "".join(f"<section id='s{i}'><h2>Part {i}<a class='headerlink' href='#s{i}'>¶</a></h2><p>See <a href='item3.html'>item {i}</a>.</p></section>" for i in range(4))
    + "</main></body></html>",
    "item3.html": "<html><body><h1>Item 3</h1><table><tr><th>Title</th><td>Item 3</td></tr><tr><th>Views</th><td>104</td></tr><tr><th>Author</th><td>Ann</td></tr></table></body></html>",
}


@pytest.fixture(scope="module")
def reads(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[RecordBlock]]:
    folder = tmp_path_factory.mktemp("pages")
    for name, html in PAGES.items():
        (folder / name).write_text(html, encoding="utf-8")
    settings = Settings(workspace=tmp_path_factory.mktemp("truth") / "ws", embedder="hashing")

    async def go(base: str) -> dict[str, list[RecordBlock]]:
        async with Runtime(settings) as rt:
            guarded = await rt.browsers.new_context()
            page = await guarded.context.new_page()
            out = {}
            for name in PAGES:
                await page.goto(f"{base}/{name}", wait_until="load")
                out[name] = await read_records(page)
            await guarded.context.close()
            return out

    with serve_static(Path(folder)) as site:
        got = asyncio.run(go(site.url))
        return {f"{site.url}/{name}": blocks for name, blocks in got.items()}  # the rows link to these URLs


def _graph(reads: dict[str, list[RecordBlock]], names: list[str]) -> KnowledgeGraph:
    urls = {n: next(u for u in reads if u.endswith("/" + n)) for n in names}
    pages = [
        PageCapture(url=normalize_url(urls[n]), final_url=normalize_url(urls[n]), title=n, text="", depth=0, order=i, dom_hash=str(i), elements=[], records=reads[urls[n]])
        for i, n in enumerate(names)
    ]
    result = CrawlResult(start_url=pages[0].url, allowed_domains=["127.0.0.1"], pages=pages)
    kg = build_web_graph(result, GraphMeta(id="truth-test", kind="web"))
    if not any(True for _ in kg.nodes("record")):
        add_records(kg, result, {p.url: page_id(p.url) for p in pages})
    return kg


def _read(reads: dict[str, list[RecordBlock]], name: str) -> list[RecordBlock]:
    return next(blocks for url, blocks in reads.items() if url.endswith("/" + name))


def _listing(kg: KnowledgeGraph, name: str) -> dict[str, object]:
    return next(n.attrs for n in kg.nodes("listing") if str(n.attrs["url"]).endswith(name))


def test_a_result_that_says_it_is_cut_is_never_complete(reads: dict[str, list[RecordBlock]]) -> None:
    block = next(b for b in _read(reads, "cut.html") if b.kind == "table")
    assert len(block.rows) == 1000 and block.pager is not None
    assert block.pager.truncation is not None and "more than 1,000 rows" in block.pager.truncation
    attrs = _listing(_graph(reads, ["cut.html"]), "cut.html")
    assert attrs["complete"] is False and "more than 1,000 rows" in str(attrs["completeness"])


def test_a_docs_chapter_link_an_anchor_and_prose_do_not_make_a_table_incomplete(reads: dict[str, list[RecordBlock]]) -> None:
    block = next(b for b in _read(reads, "chapter.html") if b.kind == "table")
    assert block.pager is not None and block.pager.next is None and block.pager.truncation is None
    assert str(block.pager.next_elsewhere).endswith("/constants.html")
    attrs = _listing(_graph(reads, ["chapter.html"]), "chapter.html")
    assert attrs["complete"] is True, attrs["completeness"]


def test_a_next_page_at_a_numbered_path_or_a_truncation_note_keeps_a_listing_incomplete(reads: dict[str, list[RecordBlock]]) -> None:
    paged = _listing(_graph(reads, ["list.html"]), "list.html")
    assert paged["complete"] is False, paged["completeness"]
    block = next(b for b in _read(reads, "short.html") if b.kind == "table")
    assert block.pager is not None and block.pager.truncation == "(truncated)"
    assert _listing(_graph(reads, ["short.html"]), "short.html")["complete"] is False


def test_a_stated_total_equal_to_the_rows_seen_proves_the_listing(reads: dict[str, list[RecordBlock]]) -> None:
    attrs = _listing(_graph(reads, ["whole.html"]), "whole.html")
    assert (attrs["complete"], attrs["total_stated"], attrs["records"]) == (True, 30, 30)
    assert "the site states 30 records and 30 were seen" in str(attrs["completeness"])


def test_a_page_of_exactly_a_common_cap_is_not_proven_whole(reads: dict[str, list[RecordBlock]]) -> None:
    attrs = _listing(_graph(reads, ["cap.html"]), "cap.html")
    assert attrs["records"] == 100 and attrs["complete"] is False and "common result limit" in str(attrs["completeness"])


def test_several_row_counts_on_one_page_state_no_total(reads: dict[str, list[RecordBlock]]) -> None:
    cards = next(b for b in _read(reads, "tables.html") if b.kind == "cards")
    assert cards.pager is not None and sorted(cards.pager.totals) == [150, 406, 560, 3376]
    assert cards.pager.stated_total is None


def test_a_calendar_grid_gives_no_records(reads: dict[str, list[RecordBlock]]) -> None:
    assert _read(reads, "calendar.html") == []


def test_values_relative_to_now_and_values_pages_disagree_on_are_not_fields(reads: dict[str, list[RecordBlock]]) -> None:
    kg = _graph(reads, ["news.html", "item3.html"])
    records = {str(r.attrs["fields"]["Title"]["raw"]): r for r in kg.nodes("record")}
    assert len(records) == 8
    assert all("Updated" not in r.attrs["fields"] and "Updated" in r.attrs["unstable"] for r in records.values())
    item3 = records["Item 3"]
    assert "Views" not in item3.attrs["fields"] and sorted(item3.attrs["unstable"]["Views"]) == ["103", "104"]
    assert item3.attrs["fields"]["Author"]["raw"] == "Ann"  # a field only the detail page shows is kept
    assert records["Item 4"].attrs["fields"]["Views"]["value"] == 104
    facts = graph_facts(kg, where={"Author": "Ann"})
    assert facts.total == 1 and facts.complete is False and "shows 'author' for 1 of its 8 records" in facts.completeness
    assert facts.note is not None and facts.note.startswith("partial:")
    whole = graph_facts(kg, where={"Title": "Item 5"})
    assert whole.total == 1 and whole.complete is True, whole.completeness


def test_each_table_of_a_manual_page_is_its_own_listing_named_by_its_heading(reads: dict[str, list[RecordBlock]]) -> None:
    tables = [b for b in _read(reads, "manual.html") if b.kind == "table"]
    assert [(b.title, len(b.rows)) for b in tables] == [("Error Handlers", 5), ("Standard Encodings", 9), ("Text Transforms", 3)]
    kg = _graph(reads, ["manual.html"])
    listings = sorted((n.attrs for n in kg.nodes("listing")), key=lambda a: str(a["table"]))
    assert [(a["table"], a["records"], a["complete"]) for a in listings] == [("Error Handlers", 5, True), ("Standard Encodings", 9, True), ("Text Transforms", 3, True)]
    assert {str(a["url"]) for a in listings} == {next(u for u in reads if u.endswith("/manual.html"))}  # each still lives at the page's URL
    assert len({str(a["key"]) for a in listings}) == 3
    where = {str(d.node.attrs["table"]): d.where for d in listing_data(kg)}
    assert where["Text Transforms"].startswith("in the table “Text Transforms” of the page ") and "manual.html" in where["Text Transforms"]


def test_sections_whose_headings_link_only_to_themselves_are_no_cards(reads: dict[str, list[RecordBlock]]) -> None:
    assert [b for b in _read(reads, "sections.html") if b.kind == "cards"] == []
    cards = next(b for b in _read(reads, "tables.html") if b.kind == "cards")  # headings linking to pages of their own still are
    assert len(cards.rows) == 4
