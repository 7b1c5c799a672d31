"""A click that opens a new tab: its URL is recorded as ``navigated_to`` with ``new_tab``, the tab closed, in-fence URLs crawled."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from taskloom.tools.browser import BrowserPool
from taskloom.tools.environment.site import serve_static
from taskloom.tools.graph.web.crawl import CrawlOptions, CrawlResult, crawl

pytestmark = pytest.mark.integration

INDEX = """<!doctype html><html><head><title>Reports</title></head><body><main>
<h1>Reports</h1>
<button type="button" id="open-report" onclick="window.open('report.html', '_blank')">Open the yearly report</button>
<button type="button" id="open-partner" onclick="window.open('http://partner.invalid/page', '_blank')">Visit the partner</button>
</main></body></html>"""
REPORT = "<!doctype html><html><head><title>Yearly report</title></head><body><main><h1>Yearly report</h1><p>Only reachable through a new tab.</p></main></body></html>"


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> CrawlResult:
    root: Path = tmp_path_factory.mktemp("tabs")
    (root / "index.html").write_text(INDEX, encoding="utf-8")
    (root / "report.html").write_text(REPORT, encoding="utf-8")

    async def go(url: str) -> CrawlResult:
        pool = BrowserPool()
        try:
            return await crawl(CrawlOptions(start_url=url + "/", max_pages=5, max_depth=2, delay=0, screenshots=False), pool)
        finally:
            await pool.close()

    with serve_static(root) as site:
        return asyncio.run(go(site.url))


def test_a_new_tab_is_recorded_and_followed(result: CrawlResult) -> None:
    start = result.pages[0]
    effects = {c.trigger: c for c in start.clicks}
    report = effects["#open-report"]
    assert report.new_tab and report.navigated_to == start.final_url + "report.html", effects
    assert [p.title for p in result.pages] == ["Reports", "Yearly report"]
    assert result.pages[1].depth == 1


def test_a_new_tab_outside_the_fence_is_reported_not_followed(result: CrawlResult) -> None:
    partner = {c.trigger: c for c in result.pages[0].clicks}["#open-partner"]
    assert partner.new_tab and partner.navigated_to == "http://partner.invalid/page", partner
    assert result.skipped["http://partner.invalid/page"].reason == "out_of_domain"
