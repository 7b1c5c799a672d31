"""App states of single-page apps, explored in a real browser: TodoMVC (npm) and a same-URL wiki (tests/data/spa).

explore_states runs on a page of the runtime's browser pool, fenced to the site's origin,
with its own reload (a fresh load) and read (an extraction of the page as a PageCapture).
Each state's ``via`` is replayed independently by the test, in a new browser context,
with plain Playwright calls, and must show the text the state's capture holds.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from taskloom.tools.browser import EnvironmentUnavailable, find_chromium
from taskloom.tools.environment.site import serve_static
from taskloom.tools.graph.web.crawl import PageCapture, normalize_url
from taskloom.tools.graph.web.extract import EXTRACT_JS, ElementInfo
from taskloom.tools.graph.web.states import SAMPLE_TEXT, AppState, StateAction, explore_states, state_url
from taskloom.tools.runtime import Runtime
from taskloom.tools.security.origin import OriginFence
from taskloom.tools.settings import Settings

SPA = Path(__file__).resolve().parents[2] / "data" / "spa"


def _chromium() -> str | None:
    try:
        return find_chromium()
    except EnvironmentUnavailable:
        return None


pytestmark = [pytest.mark.integration, pytest.mark.skipif(_chromium() is None, reason="needs Chromium (Debian's chromium package)")]


async def _explore(url: str, tmp: Path, budget: int, fruitless: set[Any] | None = None) -> tuple[list[PageCapture], list[str], list[str]]:
    """States of ``url``; each state's text when replayed in a new context; the requests that went out."""
    async with Runtime(Settings(workspace=tmp, embedder="hashing")) as rt:
        guarded = await rt.browsers.new_context(fence=OriginFence.for_site(url))
        page = await guarded.context.new_page()
        await page.goto(url, wait_until="load")
        data = await page.evaluate(EXTRACT_JS)
        final = normalize_url(page.url)

        def capture_of(found: dict[str, Any], state: AppState | None, order: int) -> PageCapture:
            elements = [ElementInfo.model_validate(e) for e in found["elements"]]
            digest = hashlib.sha1(f"{found['title']}\n{found['text']}".encode()).hexdigest()[:16]
            at = state_url(state) if state else final
            return PageCapture(url=at, final_url=final, title=found["title"], text=found["text"], depth=0, order=order, dom_hash=digest, elements=elements, state=state)

        base = capture_of(data, None, 0)

        async def reload() -> None:
            await page.goto(final, wait_until="load")

        async def read(state: AppState) -> PageCapture:
            return capture_of(await page.evaluate(EXTRACT_JS), state, 1)

        states = await explore_states(page, base, reload, read, budget, fruitless)
        replayed = []
        for capture in states:  # an independent replay: a new context (empty storage), plain Playwright
            assert capture.state is not None
            other = await rt.browsers.new_context(fence=OriginFence.for_site(url))
            fresh = await other.context.new_page()
            await fresh.goto(final, wait_until="load")
            for action in capture.state.via:
                if action.kind == "route":
                    await fresh.evaluate("(r) => { location.hash = r; }", action.value)
                elif action.kind == "fill_enter":
                    await fresh.fill(action.selector, action.value or "")
                    await fresh.press(action.selector, "Enter")
                else:
                    await fresh.click(action.selector)
                await asyncio.sleep(0.2)
            replayed.append(await fresh.evaluate("() => document.body.innerText"))
            await other.context.close()
        await guarded.context.close()
        return states, replayed, list(guarded.requested)


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# ------------------------------------------------------------------ TodoMVC


@pytest.fixture(scope="module")
def todo_states(todomvc_site: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[PageCapture], list[str], list[str]]:
    return asyncio.run(_explore(todomvc_site + "/", tmp_path_factory.mktemp("todo"), budget=8))


def test_todomvc_states_include_all_active_and_completed_after_adding_an_item(todo_states: tuple[list[PageCapture], list[str], list[str]]) -> None:
    states, _, _ = todo_states
    vias = [[(a.kind, a.value) for a in c.state.via] for c in states if c.state]
    assert vias[0] == [("fill_enter", SAMPLE_TEXT)]  # breadth-first: the only thing a fresh TodoMVC offers is its input
    added = states[0]
    assert SAMPLE_TEXT in added.text and "1 item left" in added.text  # the all view shows the new item
    routes = {via[-1][1]: via for via in vias if via[-1][0] == "route"}
    assert {"/active", "/completed"} <= set(routes), vias
    for capture in states:
        assert capture.state and capture.state.via[0].kind == "fill_enter"  # nothing differs before an item exists
    by_via = {tuple((a.kind, a.value) for a in c.state.via): c for c in states if c.state}
    completed_view = by_via.get((("fill_enter", SAMPLE_TEXT), ("route", "/completed")))
    assert completed_view is not None and SAMPLE_TEXT not in completed_view.text and "1 item left" in completed_view.text
    active_views = [c for c in states if c.state and c.state.via[-1].value == "/active"]
    assert active_views and all(SAMPLE_TEXT not in c.text and "0 items left" in c.text for c in active_views)  # every item was completed first


def test_todomvc_states_are_distinct_and_replay(todo_states: tuple[list[PageCapture], list[str], list[str]]) -> None:
    states, replayed, requested = todo_states
    assert 4 <= len(states) <= 8
    assert len({c.state.key for c in states if c.state}) == len(states)
    assert len({c.url for c in states}) == len(states)
    for capture, text in zip(states, replayed):
        assert _words(text) == _words(capture.text), capture.state
    for capture in states:
        assert capture.state and not any(re.search(r"clear|delete|destroy", a.name + a.selector, re.I) for a in capture.state.via)
    origin = normalize_url(states[0].final_url).rsplit("/", 1)[0]
    assert requested and all(r.startswith(origin) for r in requested)


# ------------------------------------------------------------------ a same-URL wiki


class _Entries(HTMLParser):
    """The wiki's entries on disk: data-entry name → text of its section in the template."""

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[str, str] = {}
        self.current: str | None = None
        self.in_template = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "template":
            self.in_template = True
        if self.in_template and tag == "section":
            self.current = dict(attrs)["data-entry"]
            self.entries[self.current] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.current = None

    def handle_data(self, data: str) -> None:
        if self.current:
            self.entries[self.current] += " " + data


def test_wiki_entries_opened_by_same_url_links_are_distinct_states(tmp_path: Path) -> None:
    parser = _Entries()
    parser.feed((SPA / "index.html").read_text())
    entries = {name: _words(text) for name, text in parser.entries.items()}
    with serve_static(SPA) as site:
        states, replayed, requested = asyncio.run(_explore(site.url + "/", tmp_path, budget=10))
    shown = {}
    for capture in states:
        opened = [name for name, text in entries.items() if text in _words(capture.text)]
        assert len(opened) == 1, (capture.state, capture.text)
        shown[opened[0]] = capture
    assert set(shown) == set(entries) - {"home"}  # home is what a fresh load shows: not a new state
    for capture in shown.values():
        assert capture.state and len(capture.state.via) == 1 and capture.state.via[0].kind == "click"
        assert capture.state.route is None and capture.url.startswith(capture.final_url + "#state-")
    assert all(isinstance(a, StateAction) and "delete" not in a.name.lower() and a.name not in ("Help", "Seabirds elsewhere") for c in states if c.state for a in c.state.via)
    for capture, text in zip(states, replayed):
        assert _words(text) == _words(capture.text)
    assert not any("example.org" in r for r in requested)


# ------------------------------------------------------------------ end to end: states in the web graph


def test_todomvc_ingest_stores_states_as_pages_with_transitions(todomvc_site: str, tmp_path: Path) -> None:
    async def go() -> Any:
        async with Runtime(Settings(workspace=tmp_path, embedder="hashing", crawl_delay=0)) as rt:
            report = await rt.graphs.ingest_website(todomvc_site + "/", max_pages=2, max_depth=1)
            return rt.graphs.load(report.graph_id)

    kg = asyncio.run(go())
    pages = {n.id: n for n in kg.nodes("page")}
    base = next(n for n in pages.values() if "#" not in str(n.attrs.get("url", "")))
    states = {nid: n for nid, n in pages.items() if "#" in str(n.attrs.get("url", ""))}
    assert len(states) >= 4, [n.attrs.get("url") for n in pages.values()]
    texts = [n.text for n in states.values()]
    assert any(SAMPLE_TEXT in t and "1 item left" in t for t in texts)  # the all view after adding an item
    assert any(SAMPLE_TEXT not in t and "1 item left" in t for t in texts)  # the completed view with one active item
    transitions = [(u, v) for u, v, k in kg.g.edges(keys=True) if k == "transitions"]
    assert transitions and {v for _, v in transitions} == set(states)
    assert all(u in pages for u, _ in transitions) and any(u == base.id for u, _ in transitions)


def test_a_link_naming_the_page_itself_is_no_state_but_an_app_control_is(tmp_path: Path) -> None:
    """A table of contents' "#" link named as the page (title or heading) only scrolls: it is not explored; a "#" control that changes the page is."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        "<!doctype html><meta charset=\"utf-8\"><title>csv — CSV File Reading — Docs</title><h1>csv — CSV File Reading¶</h1>"
        "<nav><a href='#' id='self'>csv — CSV File Reading</a> <a href='#' id='more'>Show the example</a></nav>"
        "<main><p>Reading comma-separated values.</p><p id='example' hidden>import csv; rows = list(csv.reader(f))</p></main>"
        "<script>document.getElementById('more').onclick = (e) => { e.preventDefault(); document.getElementById('example').hidden = false; };</script>",
        encoding="utf-8",
    )
    tried: set[Any] = set()  # first actions that showed nothing new: the self link would be one, had it been tried
    with serve_static(site) as served:
        states, _, _ = asyncio.run(_explore(served.url + "/index.html", tmp_path / "ws", budget=5, fruitless=tried))
    assert [[a.name for a in c.state.via] for c in states if c.state] == [["Show the example"]]
    assert "csv.reader" in states[0].text
    assert not any(name == "csv — CSV File Reading" for _, _, name, _ in tried)


def test_site_chrome_gives_one_state_and_a_page_control_one_per_page(tmp_path: Path) -> None:
    """A help panel every page opens alike is site chrome: its state is stored with the first page only; a control whose change differs per page is explored on each."""
    site = tmp_path / "site"
    site.mkdir()
    chrome = (
        "<header><button id='help'>Show help</button><p id='tip' hidden>Press ? for shortcuts.</p></header>"
        "<script>document.getElementById('help').onclick = () => { document.getElementById('tip').hidden = false; };"
        "document.getElementById('more').onclick = () => { document.getElementById('extra').hidden = false; };</script>"
    )
    for name, kind, extra, link in (("a", "cats", "Cats sleep sixteen hours a day.", "b"), ("b", "dogs", "Dogs hear four times farther.", "a")):
        (site / f"{name}.html").write_text(
            f"<!doctype html><meta charset='utf-8'><title>About {kind}</title><main><h1>About {kind}</h1><a href='{link}.html'>next</a>"
            f"<button id='more'>Read more</button><p id='extra' hidden>{extra}</p></main>" + chrome.replace("<script>", "<script>", 1),
            encoding="utf-8",
        )
    with serve_static(site) as served:
        settings = Settings(workspace=tmp_path / "ws", embedder="hashing", crawl_delay=0, record_screenshots=False)

        async def go() -> dict[str, list[str]]:
            async with Runtime(settings) as rt:
                report = await rt.graphs.ingest_website(served.url + "/a.html", max_pages=2, max_depth=1, contexts=1, click_budget=0)
                states = [n for n in rt.graphs.load(report.graph_id).nodes("page") if "#" in str(n.attrs["url"])]
                return {page: [n.text for n in states if f"/{page}.html#" in str(n.attrs["url"])] for page in ("a", "b")}

        texts = asyncio.run(go())
    assert any("Press ? for shortcuts." in t for t in texts["a"]), texts  # the chrome's state, with the first page
    assert not any("Press ? for shortcuts." in t for t in texts["b"]), texts  # not again, alone or combined
    assert any("Cats sleep" in t for t in texts["a"]) and any("Dogs hear" in t for t in texts["b"]), texts  # each page's own control: on both
