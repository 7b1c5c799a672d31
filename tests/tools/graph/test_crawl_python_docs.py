"""Crawl of the Python 3.11 docs (Debian's python3.11-doc, served on 127.0.0.1): no page lost, every skip explained.

Expectations come from the HTML files on disk (titles, the links each page holds), not from the crawler.
"""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from urllib.parse import unquote, urljoin

import pytest

from taskloom.tools.graph.web.crawl import normalize_url
from taskloom.tools.graph.web.pipeline import WebIngestReport
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DOCS = Path("/usr/share/doc/python3.11/html")
MAX_PAGES = 30


@pytest.fixture(scope="module")
def docs_crawl(python_docs_site: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, WebIngestReport, list[dict], list[dict]]:
    runtime = Runtime(Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing", crawl_delay=0))

    async def go() -> WebIngestReport:
        return await runtime.graphs.ingest_website(python_docs_site + "/library/index.html", max_pages=MAX_PAGES, max_depth=2, contexts=2)

    report = runtime.run(go)
    kg = runtime.graphs.load(report.graph_id)
    pages = [dict(n.attrs) for n in kg.nodes("page")]
    return python_docs_site, report, pages, [dict(n.attrs) for n in kg.nodes("listing")]


def _file(base: str, url: str) -> Path:
    path = url[len(base) :].split("?")[0].split("#")[0] or "/"
    return DOCS / (path.lstrip("/") + ("index.html" if path.endswith("/") else ""))


def _hrefs(html_file: Path, page_url: str) -> set[str]:
    html = html_file.read_text(encoding="utf-8")
    return {unquote(normalize_url(urljoin(page_url, unescape(h)))) for h in re.findall(r'<a [^>]*href="([^"]+)"', html)}


def test_budget_is_filled_and_no_page_is_lost(docs_crawl: tuple) -> None:
    base, report, pages, _ = docs_crawl
    assert report.pages == MAX_PAGES + report.states, report.skip_counts
    lost = {u: s for u, s in report.skipped.items() if s.reason in ("timeout", "error", "http_status", "redirected")}
    assert not lost, lost
    assert report.screenshot_errors == 0
    urls = {p["url"] for p in pages}
    assert base + "/library/stdtypes.html" in urls  # the longest page, lost to a full-page screenshot timeout before
    for p in pages:
        if not p.get("state"):
            title = re.search(r"<title>(.*?)</title>", _file(base, p["url"]).read_text(encoding="utf-8"), re.S)
            assert title and p["title"] == unescape(title.group(1)).strip(), p["url"]


def test_every_skipped_url_has_a_reason_that_holds(docs_crawl: tuple) -> None:
    base, report, pages, _ = docs_crawl
    counts = report.skip_counts
    assert counts.get("out_of_domain", 0) > 0 and counts.get("budget", 0) > 0, counts
    assert sum(counts.values()) == len(report.skipped)
    linked = set()
    for p in pages:
        if not p.get("state"):
            linked |= _hrefs(_file(base, p["url"]), p["url"])
    for url, skip in report.skipped.items():
        if skip.reason == "out_of_domain":
            assert not url.startswith(base) and url.startswith("http"), url
            assert unquote(url) in linked, url  # a link of a crawled page, as the HTML on disk has it (the browser %-escapes)
        elif skip.reason in ("budget", "depth", "template_cap"):
            assert url.startswith(base) and _file(base, url).exists(), (url, skip)
        elif skip.reason == "duplicate_content":
            assert skip.detail.split()[-1] in {p["url"] for p in pages}, skip
    crawled = {p["url"] for p in pages}
    assert not crawled & set(report.skipped)


def test_every_table_of_a_docs_page_is_seen_whole(docs_crawl: tuple) -> None:
    """A docs page shows all its tables: Sphinx's rel=next (the next chapter), an anchor named "next" (next()) and prose saying "truncated" cut none."""
    base, _, _, listings = docs_crawl
    assert len(listings) >= 5
    incomplete = {str(a["url"]): a["completeness"] for a in listings if not a["complete"]}
    assert not incomplete, incomplete
    functions = next(a for a in listings if a["url"] == base + "/library/functions.html")
    html = (DOCS / "library" / "functions.html").read_text(encoding="utf-8")
    body_rows = [len(re.findall(r"<tr", t)) for t in re.findall(r"<tbody.*?</tbody>", html, re.S)]
    assert functions["records"] == max(body_rows)  # the index of built-in functions, row by row


def test_each_table_of_a_docs_page_is_a_listing_of_its_own_rows(docs_crawl: tuple) -> None:
    """Tables are not merged: per crawled page, the listings' record counts are the body row counts of its headed tables (HTML on disk).

    Rows linking into sections of one page (``math.trunc`` and ``math.floor`` → ``math.html#…``) are records of their own.
    """
    base, _, pages, listings = docs_crawl
    checked = 0
    for url in sorted({str(a["url"]) for a in listings}):
        html = _file(base, url).read_text(encoding="utf-8")
        headed = [t for t in re.findall(r"<table.*?</table>", html, re.S) if len(re.findall(r"<th[ >]", t.split("</thead>")[0])) >= 2]  # a header of 2+ columns
        want = sorted(len(re.findall(r"<tr", re.search(r"<tbody.*?</tbody>", t, re.S).group(0))) for t in headed)  # type: ignore[union-attr]
        got = sorted(int(a["records"]) for a in listings if a["url"] == url and a["columns"] != ["title"])
        assert got == want, url
        checked += len(want) > 1
    stdtypes = [a for a in listings if a["url"] == base + "/library/stdtypes.html" and a.get("table")]
    assert len(stdtypes) >= 10 and "Comparisons" in {a["table"] for a in stdtypes}
    assert checked >= 2
