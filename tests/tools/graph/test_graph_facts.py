"""``graph_facts`` (MCP, through a real fastmcp client) and ``taskloom graph facts`` (the console script) over a crawled example site, compared with its books.json."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from taskloom.server.app import build_server
from taskloom.tools.environment.site import serve_static
from taskloom.tools.graph.model import GraphMeta
from taskloom.tools.graph.service import GraphService
from taskloom.tools.graph.web.build import build_web_graph, page_id
from taskloom.tools.graph.web.crawl import CrawlOptions, CrawlResult, crawl
from taskloom.tools.graph.web.records import add_records
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]
BOOKS = json.loads((ROOT / "examples" / "site" / "data" / "books.json").read_text(encoding="utf-8"))
TASKLOOM = Path(sys.executable).parent / "taskloom"
FIELD_GUIDE = ROOT / "examples" / "documents" / "field-guide.md"


@dataclass
class Stored:
    settings: Settings
    web: str
    document: str


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    """The example site crawled (book pages included) and stored as a web graph, beside a document graph."""
    settings = Settings(
        workspace=tmp_path_factory.mktemp("facts") / "ws", embedder="hashing", crawl_delay=0, allow_roots=[ROOT / "examples"]
    )

    async def go(url: str) -> CrawlResult:
        async with Runtime(settings) as rt:
            return await crawl(
                CrawlOptions(start_url=url, max_pages=40, max_depth=2, delay=0, screenshots=False, click_budget=0, max_states=0),
                rt.browsers,
            )

    with serve_static() as site:
        result = asyncio.run(go(site.url + "/index.html"))
    kg = build_web_graph(result, GraphMeta(id="example-site-facts", name="example site", kind="web", sources=[result.start_url]))
    if not any(True for _ in kg.nodes("record")):  # while build_web_graph does not add them itself
        add_records(kg, result, {p.url: page_id(p.url) for p in result.pages})
    service = GraphService(settings)
    service.store.save(kg)
    document = service.ingest_document(FIELD_GUIDE).graph_id
    return Stored(settings, kg.id, document)


def _book_records(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Records whose detail page is a book page, by book id."""
    return {r["detail_url"].rsplit("=", 1)[1]: r for r in records if r["detail_url"] and "book.html?id=" in r["detail_url"]}


async def _call(server: Any, args: dict[str, Any]) -> tuple[bool, Any]:
    async with Client(server) as client:
        result = await client.call_tool("graph_facts", args, raise_on_error=False)
        return result.is_error, result.structured_content if not result.is_error else result.content[0].text


def test_graph_facts_over_mcp_lists_book_records_like_books_json(stored: Stored) -> None:
    server = build_server(stored.settings)
    error, data = asyncio.run(_call(server, {"graph_id": stored.web, "limit": 500}))
    assert not error, data
    books = {b["id"]: b for b in BOOKS}
    found = _book_records(data["records"])
    opened = [r for r in found.values() if "ISBN" in r["fields"]]  # book pages the crawl opened
    assert len(opened) >= 3, sorted(found)
    for record in opened:
        book = books[record["detail_url"].rsplit("=", 1)[1]]
        fields = record["fields"]
        assert fields["ISBN"]["value"] == book["isbn"] and fields["Genre"]["value"] == book["genre"]
        assert fields["Year"] == {"value": book["year"], "type": "number", "unit": None, "raw": str(book["year"])}
        assert fields["Copies"]["value"] == book["copies"]
        if "title" in fields:  # also shown as a card on a listing: one record, merged
            assert fields["title"]["value"] == book["title"] and len(record["pages"]) >= 2
    search = [lf for lf in data["listings"] if lf["url"].endswith("/search.html")]
    assert len(search) == 1 and search[0]["total_stated"] == len(BOOKS) and search[0]["pages_total"] == -(-len(BOOKS) // 8)
    assert search[0]["complete"] == (search[0]["pages_seen"] == search[0]["pages_total"])


def test_graph_facts_filters(stored: Stored) -> None:
    server = build_server(stored.settings)
    book = BOOKS[0]
    error, data = asyncio.run(_call(server, {"graph_id": stored.web, "where": {"isbn": book["isbn"]}}))
    assert not error and data["total"] == 1 and data["records"][0]["detail_url"].endswith("book.html?id=" + book["id"])
    error, data = asyncio.run(_call(server, {"graph_id": stored.web, "query": book["title"].upper(), "limit": 1}))
    assert not error and data["total"] >= 1 and len(data["records"]) == 1
    assert all(book["title"].casefold() in json.dumps(r["fields"], ensure_ascii=False).casefold() for r in data["records"])
    search = next(lf for lf in data["listings"] if lf["url"].endswith("/search.html"))
    error, data = asyncio.run(_call(server, {"graph_id": stored.web, "listing": search["url"], "limit": 500}))
    assert not error and data["total"] == search["records"] and all(search["listing_id"] in r["listings"] for r in data["records"])


def test_graph_facts_clear_errors_and_notes(stored: Stored) -> None:
    server = build_server(stored.settings)
    error, text = asyncio.run(_call(server, {"graph_id": "no-such-graph"}))
    assert error and "no-such-graph" in text
    error, text = asyncio.run(_call(server, {"graph_id": stored.web, "where": {"no such field": "x"}}))
    assert error and "no such field" in text and "isbn" in text
    error, text = asyncio.run(_call(server, {"graph_id": stored.web, "listing": "listing:nope"}))
    assert error and "listing:nope" in text and "known listings" in text
    error, data = asyncio.run(_call(server, {"graph_id": stored.document}))
    assert not error and data["records"] == [] and data["total"] == 0 and "document graph" in data["note"]


def _cli(stored: Stored, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(TASKLOOM_WORKSPACE=str(stored.settings.workspace), TASKLOOM_EMBEDDER="hashing")
    return subprocess.run([str(TASKLOOM), "graph", "facts", *args], env=env, capture_output=True, text=True, timeout=120)


def test_taskloom_graph_facts_cli(stored: Stored) -> None:
    book = BOOKS[0]
    done = _cli(stored, stored.web, "--where", f"ISBN={book['isbn']}")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["total"] == 1 and data["records"][0]["fields"]["Shelf"]["value"] == book["shelf"]
    bad = _cli(stored, stored.web, "--where", "no equals sign")
    assert bad.returncode != 0 and "FIELD=VALUE" in bad.stderr + bad.stdout and "Traceback" not in bad.stderr
