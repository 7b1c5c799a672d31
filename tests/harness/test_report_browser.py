"""The run report explains failures, checked in a real browser: filter to failures, open one, read its failed criterion.

A real run (the oracle on two hand-written tasks of the served example site, with screenshots, a HAR
file and a trace) is rendered; Chromium opens ``report.html`` from ``file://``.
"""

from __future__ import annotations

import os

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from fastmcp import Client

from taskloom.harness.finish import RunReport
from taskloom.server.app import build_server
from taskloom.tools.environment.site import serve_static
from taskloom.tools.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from small_run import MISSING, small_run  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [pytest.mark.integration, pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")]


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with serve_static() as served:
        yield served.url + "/"


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory, site: str) -> tuple[Settings, RunReport]:
    settings = Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing", record_screenshots=True)
    return settings, small_run(settings, site, "explained", record=["har", "trace"])


def test_filter_to_failures_open_one_and_see_the_failed_criterion(finished: tuple[Settings, RunReport]) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    _, report = finished
    requested: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda r: requested.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(report.html.as_uri())
            episodes = page.locator("details.episode")
            assert episodes.count() == 2 and page.locator("details.episode:visible").count() == 2
            page.select_option("select[data-filter=outcome]", "unsuccessful")
            visible = page.locator("details.episode:visible")
            assert visible.count() == 1 and page.locator("#filter-count").inner_text() == "1 of 2 episodes shown"
            assert page.locator("section.task[data-task-id=passing]").is_hidden()
            index = page.locator(".task-entry:visible")
            assert index.count() == 1 and "when the library is open on Sundays <b>late</b>" in index.inner_text()  # keyed by instruction, as text
            failed = visible.first
            verdict = failed.locator("table.verdict")
            assert not verdict.is_visible()
            failed.locator("summary").click()
            assert verdict.is_visible()
            bad = verdict.locator("tr.failed")
            assert bad.count() == 1
            cells = [bad.locator("td").nth(i).inner_text() for i in range(4)]
            assert cells == ["text_present", f"text {MISSING!r} on the page", "text not found on the page", "failed"]
            held = verdict.locator("tr.held").inner_text()
            assert "url_matches" in held and "/about.html" in held
            assert failed.locator("table.answers").inner_text().count("/about.html") == 1  # the final URL
            thumbs = failed.locator("img.thumb")
            assert thumbs.count() == failed.locator("ol.steps li").count() >= 2
            assert all(thumbs.nth(i).evaluate("img => img.complete && img.naturalWidth > 0") for i in range(thumbs.count()))
            assert failed.locator("figure.last img").evaluate("img => img.complete && img.naturalWidth > 0")
            links = {failed.locator("a.file").nth(i).get_attribute("data-kind"): failed.locator("a.file").nth(i).evaluate("a => a.href") for i in range(3)}
            assert set(links) == {"trajectory", "HAR", "trace"}
            assert all(Path(unquote(urlparse(href).path)).is_file() for href in links.values())
            shot = Path(os.environ.get("TASKLOOM_REPORT_SHOT") or report.html.with_name("failure-view.png"))
            failed.scroll_into_view_if_needed()
            page.screenshot(path=str(shot), full_page=False)  # the failure view as a person sees it (TASKLOOM_REPORT_SHOT: where)
            assert shot.stat().st_size > 10_000
            page.select_option("select[data-filter=outcome]", "")
            page.select_option("select[data-filter=family]", "web-find")
            assert [e.get_attribute("data-task-id") for e in page.locator("details.episode:visible").all()] == ["passing"]
            page.select_option("select[data-filter=family]", "")
            page.select_option("select[data-filter=level]", "2")
            assert [e.get_attribute("data-task-id") for e in page.locator("details.episode:visible").all()] == ["failing"]
            page.select_option("select[data-filter=level]", "")
            page.select_option("select[data-filter=agent]", "oracle")
            assert page.locator("details.episode:visible").count() == 2
            page.locator("section.task[data-task-id=passing] a.episode-link").click()  # a task's outcome row opens its episode
            assert page.locator("details.episode[data-task-id=passing]").get_attribute("open") is not None
            assert page.locator("details.episode b, .toc b, section.task b").count() == 0
        finally:
            browser.close()
    assert errors == []
    assert requested and all(url.startswith("file://") for url in requested)


def test_results_keep_every_criterion_expected_beside_observed(finished: tuple[Settings, RunReport]) -> None:
    from taskloom.harness.store import RunStore
    from taskloom.tools.workspace import Workspace

    settings, _ = finished
    results = {r.task_id: r for r in RunStore(Workspace(settings.workspace), "explained").results()}
    failing = results["failing"]
    assert [(c.kind, c.ok) for c in failing.criteria] == [("url_matches", True), ("text_present", False)]
    assert failing.criteria[1].expected == f"text {MISSING!r} on the page" and failing.final_url and failing.final_url.endswith("/about.html")
    assert results["passing"].success and [c.ok for c in results["passing"].criteria] == [True]


def test_an_agent_cannot_open_the_report_from_its_browser(finished: tuple[Settings, RunReport], site: str) -> None:
    """The report holds gold answers: the agent profile has no resources, and its browser is fenced to the task's site."""
    settings, report = finished

    async def go() -> tuple[list[object], str]:
        async with Client(build_server(settings, profile="agent")) as client:
            resources = [*await client.list_resources(), *await client.list_resource_templates()]
            await client.call_tool("env_start", {"task_id": "failing"})
            answer = await client.call_tool("browser_navigate", {"url": report.html.as_uri()}, raise_on_error=False)
            await client.call_tool("env_close", {})
            return resources, " ".join(getattr(c, "text", "") for c in answer.content)

    resources, said = asyncio.run(go())
    assert resources == []
    assert "Taskloom run" not in said and MISSING not in said
