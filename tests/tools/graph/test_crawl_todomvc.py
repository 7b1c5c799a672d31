"""Crawl a real third-party single-page app, TodoMVC's VanillaJS example, into a web graph.

The app comes from the npm package ``todomvc@0.1.1`` (``tests/data/fetch-todomvc.sh``, run on
demand), is served by ``http.server`` on 127.0.0.1 and crawled by ``GraphService.ingest_website``
in Debian's Chromium. With no todos (every crawl context starts with empty localStorage) the app
shows only its header; ``#main`` and ``#footer`` are ``display: none``, so the filter links, the
toggle-all checkbox and "Clear completed" are extracted with ``visible`` False.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from taskloom.tools.browser import CHROMIUM_ARGS, EnvironmentUnavailable, find_chromium
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.graph.service import GraphService
from taskloom.tools.graph.web.crawl import normalize_url
from taskloom.tools.graph.web.pipeline import WebIngestReport
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.environment.site import serve_static

sync_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[3]
FETCH = ROOT / "tests" / "data" / "fetch-todomvc.sh"
SITE = ROOT / "tests" / "data" / "cache" / "todomvc-vanillajs"


def _chromium() -> str | None:
    try:
        return find_chromium()
    except EnvironmentUnavailable:
        return None


CHROMIUM = _chromium()
pytestmark = [pytest.mark.integration, pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (Debian's chromium package)")]



@pytest.fixture(scope="module")
def todomvc() -> Path:
    """The VanillaJS example folder, fetched with npm when not cached yet."""
    if not (SITE / "index.html").is_file():
        if shutil.which("npm") is None:
            pytest.skip("TodoMVC is not cached and npm is not installed to fetch it")
        subprocess.run(["bash", str(FETCH)], check=True)
    return SITE


@pytest.fixture(scope="module")
def base_url(todomvc: Path) -> Iterator[str]:
    with serve_static(todomvc) as site:
        yield site.url + "/"


@dataclass
class Crawled:
    report: WebIngestReport
    kg: KnowledgeGraph
    again: WebIngestReport
    kg_again: KnowledgeGraph
    graphs_after: int


@pytest.fixture(scope="module")
def crawled(base_url: str, tmp_path_factory: pytest.TempPathFactory) -> Crawled:
    """Two crawls of the app into the same workspace: the second replaces the first."""
    settings = Settings(workspace=tmp_path_factory.mktemp("todomvc") / "ws", embedder="hashing", crawl_delay=0)

    async def run() -> Crawled:
        async with Runtime(settings) as runtime:
            first = runtime.graphs
            report = await first.ingest_website(base_url, max_pages=10, max_depth=2)
            kg = first.load(report.graph_id)
            second = GraphService(settings, runtime.browsers)  # a fresh service on the same browser
            again = await second.ingest_website(base_url, max_pages=10, max_depth=2)
            return Crawled(report, kg, again, second.load(again.graph_id), len(second.list_graphs()))

    return asyncio.run(run())


def _nodes(kg: KnowledgeGraph, kind: str) -> list[tuple[str, dict]]:
    return [(n, d) for n, d in kg.g.nodes(data=True) if d["type"] == kind]


def _containers(kg: KnowledgeGraph, node_id: str) -> list[str]:
    return [s for s, _, key in kg.g.in_edges(node_id, keys=True) if key == "contains"]


def _selector_of(elements: dict[str, dict], text: str) -> str:
    (selector,) = [d["attrs"]["selector"] for d in elements.values() if d["text"] == text]
    return selector


def _page_id(kg: KnowledgeGraph) -> str:
    """The plain load's page node (app states are page nodes too, their URLs carry a #fragment)."""
    ((page_id, _),) = [(n, d) for n, d in _nodes(kg, "page") if "#" not in d["attrs"]["url"]]
    return page_id


def _base_url(kg: KnowledgeGraph) -> str:
    return str(kg.g.nodes[_page_id(kg)]["attrs"]["url"])


def test_one_page_with_the_app_title(crawled: Crawled, base_url: str) -> None:
    """The filter links are in-page hash routes (#/, #/active, #/completed): one page, nothing left the host."""
    report = crawled.report
    assert report.blocked == 0
    assert report.start_url == normalize_url(base_url)
    pages = [(n, d) for n, d in _nodes(crawled.kg, "page") if "#" not in d["attrs"]["url"]]  # app states aside
    assert len(pages) == 1
    _, page = pages[0]
    assert page["attrs"]["url"] == normalize_url(base_url)
    title = page["attrs"]["title"]
    assert "VanillaJS" in title or "TodoMVC" in title, title
    assert "todos" in page["text"]


def test_new_todo_is_an_input_in_the_header(crawled: Crawled) -> None:
    kg = crawled.kg
    found = [(n, d) for n, d in kg.g.nodes(data=True) if d["text"] == "What needs to be done?" and d["attrs"].get("page_url") == _base_url(kg)]
    assert len(found) == 1, found
    node_id, data = found[0]
    assert data["type"] == "input"
    assert data["attrs"]["selector"] == "#new-todo"
    assert data["attrs"]["visible"] is True
    (container,) = _containers(kg, node_id)
    page_id = _page_id(kg)
    assert container == page_id or kg.g.nodes[container]["type"] == "region"
    if container != page_id:  # the <header id="header"> landmark, itself on the page
        assert kg.g.nodes[container]["attrs"]["selector"] == "#header"
        assert _containers(kg, container) == [page_id]


def test_filter_links_are_hidden_link_nodes_in_the_footer(crawled: Crawled, base_url: str) -> None:
    kg = crawled.kg
    page_id = _page_id(kg)
    links = {d["text"]: (n, d) for n, d in _nodes(kg, "link")}
    footers = [n for n, d in _nodes(kg, "region") if d["attrs"]["selector"] == "#footer"]
    footer = [n for n in footers if kg.g.nodes[n]["attrs"]["page_url"] == _base_url(kg)]  # regions are per page (and app state)
    assert len(footer) == 1
    for name, route in (("All", "#/"), ("Active", "#/active"), ("Completed", "#/completed")):
        assert name in links, sorted(links)
        node_id, data = links[name]
        assert data["attrs"]["href"] == base_url + route
        assert footer[0] in _containers(kg, node_id) and set(_containers(kg, node_id)) <= set(footers)
        # A hash route is the same page: the link navigates to the one page node.
        assert (node_id, page_id) in {(s, t) for s, t, key in kg.g.out_edges(node_id, keys=True) if key == "navigates_to"}


def test_other_controls_and_external_links(crawled: Crawled) -> None:
    kg = crawled.kg
    by_selector = {d["attrs"].get("selector"): d for _, d in kg.g.nodes(data=True)}
    assert by_selector["#toggle-all"]["type"] == "checkbox"
    assert by_selector["#toggle-all"]["text"] == "Mark all as complete"
    assert by_selector["#clear-completed"]["type"] == "button"
    external = {d["attrs"]["href"] for _, d in _nodes(kg, "link") if "127.0.0.1" not in d["attrs"]["href"]}
    assert external == {"http://twitter.com/oscargodson", "https://github.com/cburgmer", "http://todomvc.com/"}
    # Seen as links, never followed: no page of theirs, so no navigates_to edge.
    for node_id, data in _nodes(kg, "link"):
        if data["attrs"]["href"] in external:
            assert [key for *_, key in kg.g.out_edges(node_id, keys=True)] == []


def test_every_selector_matches_exactly_one_element_on_the_live_page(crawled: Crawled, base_url: str) -> None:
    base = _base_url(crawled.kg)
    elements = {n: d for n, d in crawled.kg.g.nodes(data=True) if d["type"] not in ("page", "option") and base in d["attrs"].get("pages", [d["attrs"].get("page_url")])}
    assert len(elements) >= 10
    missing = [n for n, d in elements.items() if not d["attrs"].get("selector")]
    assert not missing
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(base_url, wait_until="load")
            page.wait_for_function("document.querySelector('#todo-count').textContent.length > 0")
            counts = {d["attrs"]["selector"]: page.locator(d["attrs"]["selector"]).count() for d in elements.values()}
            assert {s: c for s, c in counts.items() if c != 1} == {}
            assert page.locator(_selector_of(elements, "What needs to be done?")).get_attribute("placeholder") == "What needs to be done?"
            assert page.locator(_selector_of(elements, "Completed")).get_attribute("href") == "#/completed"
        finally:
            browser.close()


def test_a_second_crawl_gives_identical_ids(crawled: Crawled) -> None:
    assert crawled.again.graph_id == crawled.report.graph_id
    assert crawled.graphs_after == 1  # replaced, not added
    assert set(crawled.kg_again.g.nodes) == set(crawled.kg.g.nodes)
    assert set(crawled.kg_again.g.edges(keys=True)) == set(crawled.kg.g.edges(keys=True))
    assert crawled.again.node_types == crawled.report.node_types
