"""The frontier on a real data browser (``sqlite-web -r`` over palmerpenguins): a listing seen whole, sort orders as views (crawled only with budget to spare).

Expected numbers come from the SQLite file (rows → pages of 50) and from the listing's HTML as served.
"""

from __future__ import annotations

import math
import re
import sqlite3
import urllib.request
from html import unescape
from urllib.parse import urljoin

import pytest

from taskloom.tools.graph.web.crawl import normalize_url
from taskloom.tools.graph.web.pipeline import WebIngestReport
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

from ...conftest import PENGUINS_DB

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MAX_PAGES = 30


def _crawl(url: str, workspace: object, contexts: int) -> tuple[WebIngestReport, list[str]]:
    runtime = Runtime(Settings(workspace=workspace, embedder="hashing", crawl_delay=0))  # type: ignore[arg-type]

    async def go() -> WebIngestReport:
        return await runtime.graphs.ingest_website(url + "/", max_pages=MAX_PAGES, max_depth=3, contexts=contexts)

    report = runtime.run(go)
    kg = runtime.graphs.load(report.graph_id)
    return report, [str(n.attrs["url"]) for n in kg.nodes("page")]


@pytest.fixture(scope="module")
def penguins_crawl(penguins_site: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, WebIngestReport, list[str]]:
    report, urls = _crawl(penguins_site, tmp_path_factory.mktemp("ws"), contexts=2)
    return penguins_site, report, urls


def test_every_page_of_the_listing_is_crawled(penguins_crawl: tuple) -> None:
    base, report, urls = penguins_crawl
    with sqlite3.connect(PENGUINS_DB) as db:
        rows = db.execute("select count(*) from penguins").fetchone()[0]
    pages = math.ceil(rows / 50)
    assert pages == 7
    listing = normalize_url(base + "/penguins/content/")
    expected = {listing} | {normalize_url(f"{listing}?page={n}") for n in range(2, pages + 1)}
    assert expected <= set(urls), sorted(expected - set(urls))
    assert not any(s.reason in ("timeout", "http_status", "redirected") for s in report.skipped.values()), report.skip_counts


def test_sort_orders_are_views_not_pages(penguins_crawl: tuple) -> None:
    base, report, urls = penguins_crawl
    listing = base + "/penguins/content/"
    html = urllib.request.urlopen(listing, timeout=10).read().decode()
    sorts = {normalize_url(urljoin(listing, unescape(h))) for h in re.findall(r'href="([^"]*ordering=[^"]*)"', html)}
    assert len(sorts) >= 17  # one per column and direction the listing offers
    crawled = sorts & set(urls)
    # view_cap (2) sort views while other pages wait; only budget nothing else could use goes to more of them
    pages = [u for u in urls if "#" not in u]  # app states carry a fragment
    assert len(crawled) <= 2 or len(pages) == MAX_PAGES, (len(crawled), len(pages))
    assert len(crawled) < len(sorts), "never every sort order: the budget ends first"
    for url in sorts - crawled:
        assert report.skipped[url].reason == "view_variant", (url, report.skipped.get(url))


def test_detail_pages_are_capped_per_template(penguins_crawl: tuple) -> None:
    _, report, urls = penguins_crawl
    rows = [u for u in urls if "/row/" in u and "#" not in u]  # app states carry a fragment
    assert sum("/row/" in u and "#" in u for u in urls) <= 2 * len(rows)
    assert 1 <= len(rows) <= 5, rows
    capped = [u for u, s in report.skipped.items() if s.reason == "template_cap"]
    assert any("/row/" in u for u in capped)


def test_same_crawl_gives_the_same_pages(penguins_crawl: tuple, tmp_path_factory: pytest.TempPathFactory) -> None:
    base, _, urls = penguins_crawl
    _, again = _crawl(base, tmp_path_factory.mktemp("ws2"), contexts=1)  # one context: the batches' order, not timing, decides
    assert again == urls
