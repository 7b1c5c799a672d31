"""Outcome criteria on real pages: each kind passes on a correct state reached by two routes and fails on a wrong one.

Pages: the bundled example site and TodoMVC, driven by plain Playwright calls. Then
``verify_web_tasks`` on hand-built tasks through the real episode manager: no-ops and
answers not shown at the end are dropped.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page

from taskloom.tools.browser import BrowserPool

from taskloom.tools.environment.site import serve_static
from taskloom.tools.evaluate.checks import check_criteria
from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.web.paths import verify_web_tasks
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import GoldStep, Provenance, SuccessCriterion, Task

pytestmark = pytest.mark.integration
SITE = Path(__file__).resolve().parents[3] / "examples" / "site"
BOOKS: list[dict[str, Any]] = json.loads((SITE / "data" / "books.json").read_text())


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with serve_static() as served:
        yield served.url


def _run(body: Callable[[Page], Awaitable[None]]) -> None:
    async def go() -> None:
        pool = BrowserPool()  # the project's Chromium, plain Playwright calls on its page
        try:
            page = await (await pool.browser()).new_page()
            await body(page)
        finally:
            await pool.close()

    asyncio.run(go())


async def _holds(page: Page, **fields: Any) -> bool:
    (result,) = await check_criteria(page, [SuccessCriterion(**fields)], [], grace_s=0)
    return result.ok


async def _settled(page: Page) -> None:
    await page.wait_for_load_state("load")
    await page.wait_for_timeout(150)  # the site's scripts render lists after load


# --------------------------------------------------------------------------- page_is, query_has


def test_page_is_accepts_fragments_index_html_and_query_order_and_rejects_other_pages(site: str) -> None:
    async def body(page: Page) -> None:
        about = f"{site}/about.html"
        await page.goto(f"{site}/index.html")
        await page.click("#nav-about")  # route 1: the navigation link
        await page.wait_for_url("**/about.html")
        assert await _holds(page, kind="page_is", value=about)
        await page.goto(f"{about}#hours-heading")  # route 2: typed, with a fragment
        assert await _holds(page, kind="page_is", value=about)
        assert not await _holds(page, kind="page_is", value=f"{about}#contact-heading")  # the fragment is the target
        assert not await _holds(page, kind="page_is", value=f"{site}/genres.html")
        await page.goto(f"{site}/")  # the folder and its index.html are one page
        assert await _holds(page, kind="page_is", value=f"{site}/index.html")
        assert not await _holds(page, kind="page_is", value=f"{site}/index.html?genre=poetry")

        view = f"{site}/search.html?genre=poetry&format=E-book"
        await page.goto(f"{site}/search.html")  # route 1: the filter form (it navigates on change)
        await page.select_option("#filter-genre", "poetry")
        await page.wait_for_url(re.compile(r"genre=poetry"))
        await page.check("#format-ebook")
        await page.wait_for_url(re.compile(r"format=E-book"))
        assert await _holds(page, kind="page_is", value=view)
        await page.goto(f"{site}/search.html?format=E-book&genre=poetry")  # route 2: typed, parameters reordered
        assert await _holds(page, kind="page_is", value=view)
        await page.goto(f"{site}/search.html?format=Book&genre=poetry")
        assert not await _holds(page, kind="page_is", value=view)

    _run(body)


def test_query_has_wants_these_parameters_and_leaves_the_others_free(site: str) -> None:
    async def body(page: Page) -> None:
        want = f"{site}/search.html?genre=poetry"
        await page.goto(f"{site}/search.html")
        await page.check("#filter-available")  # route 1: two filters, in the other order
        await page.wait_for_url(re.compile(r"available=1"))
        await page.select_option("#filter-genre", "poetry")
        await page.wait_for_url(re.compile(r"genre=poetry"))
        assert await _holds(page, kind="query_has", value=want)
        await page.goto(f"{site}/index.html")
        await page.click("#browse-button")  # route 2: the Browse menu
        await page.click("#menu-poetry")
        await page.wait_for_url(re.compile(r"genre=poetry"))
        assert await _holds(page, kind="query_has", value=want)
        await page.goto(f"{site}/search.html?genre=nature&available=1")
        assert not await _holds(page, kind="query_has", value=want)
        await page.goto(f"{site}/book.html?genre=poetry")  # the right parameter on another page
        assert not await _holds(page, kind="query_has", value=want)

    _run(body)


# --------------------------------------------------------------------------- text scope, whole words, roles


def _main_html(name: str) -> str:
    html = (SITE / name).read_text()
    return html[html.index("<main") : html.index("</main>")]


def test_text_in_the_main_content_as_whole_words(site: str) -> None:
    footer_only = "Partner libraries network"
    assert footer_only in (SITE / "about.html").read_text() and footer_only not in _main_html("about.html")
    assert "Sunday" in _main_html("about.html")

    async def body(page: Page) -> None:
        await page.goto(f"{site}/about.html")
        assert await _holds(page, kind="text_present", value=footer_only)
        assert not await _holds(page, kind="text_present", value=footer_only, scope="main")
        assert await _holds(page, kind="text_absent", value=footer_only, scope="main")
        assert await _holds(page, kind="text_present", value="sunday", scope="main", whole_words=True)
        assert await _holds(page, kind="text_present", value="Sund", scope="main")  # a substring …
        assert not await _holds(page, kind="text_present", value="Sund", scope="main", whole_words=True)  # … is not a word

    _run(body)


def test_element_state_by_role_and_exact_accessible_name(site: str) -> None:
    async def body(page: Page) -> None:
        await page.goto(f"{site}/search.html")
        assert await _holds(page, kind="element_state", value="role=button name=Apply filters", state="visible")
        assert not await _holds(page, kind="element_state", value="role=button name=Apply", state="visible")  # exact names only
        assert await _holds(page, kind="element_state", value="role=button name=Apply", state="hidden")
        genre = "role=combobox name=Genre"
        await page.select_option("#filter-genre", "history")  # route 1: choose in the form
        await page.wait_for_url(re.compile(r"genre=history"))
        assert await _holds(page, kind="element_state", value=genre, state="label=History")
        await page.goto(f"{site}/search.html?genre=history")  # route 2: typed URL; the form reflects it
        await _settled(page)
        assert await _holds(page, kind="element_state", value=genre, state="label=History")
        assert not await _holds(page, kind="element_state", value=genre, state="label=Poetry")
        assert not await _holds(page, kind="element_state", value="role=nosuchrole name=x", state="visible")

    _run(body)


# --------------------------------------------------------------------------- items


def test_items_of_a_filtered_listing_on_the_example_site(site: str) -> None:
    poetry_ebooks = {b["title"]: "shown" for b in BOOKS if b["genre"] == "Poetry" and b["format"] == "E-book"}
    nature_ebooks = {b["title"]: "shown" for b in BOOKS if b["genre"] == "Nature" and b["format"] == "E-book"}
    assert 1 <= len(poetry_ebooks) <= 8 and nature_ebooks and set(poetry_ebooks).isdisjoint(nature_ebooks)
    want = json.dumps(poetry_ebooks)

    async def body(page: Page) -> None:
        await page.goto(f"{site}/search.html?format=E-book&genre=poetry")
        await _settled(page)
        assert await _holds(page, kind="items", value=want)
        await page.goto(f"{site}/search.html")  # another route: the filter form
        await page.check("#format-ebook")
        await page.wait_for_url(re.compile(r"format=E-book"))
        await page.select_option("#filter-genre", "poetry")
        await page.wait_for_url(re.compile(r"genre=poetry"))
        await _settled(page)
        assert await _holds(page, kind="items", value=want)
        await page.goto(f"{site}/search.html?format=E-book&genre=nature")
        await _settled(page)
        assert not await _holds(page, kind="items", value=want)
        assert await _holds(page, kind="items", value=json.dumps(nature_ebooks))

    _run(body)


async def _add(page: Page, *texts: str) -> None:
    for text in texts:
        await page.fill("#new-todo", text)
        await page.press("#new-todo", "Enter")


def _toggle(text: str) -> str:
    return f"#todo-list li:has(label:text-is('{text}')) input.toggle"


def test_items_and_filters_on_todomvc(todomvc_site: str) -> None:
    todo = todomvc_site
    done = json.dumps({"Buy milk": "checked", "Call Anna": "unchecked"})

    async def route_one(page: Page) -> None:
        await page.goto(f"{todo}/index.html")
        assert not await _holds(page, kind="items", value=done)
        await _add(page, "Buy milk", "Call Anna")
        await page.click(_toggle("Buy milk"))
        assert await _holds(page, kind="items", value=done)
        assert not await _holds(page, kind="items", value=json.dumps({"Buy milk": "checked"}))  # an item is missing
        assert not await _holds(page, kind="items", value=json.dumps({"Buy milk": "unchecked", "Call Anna": "unchecked"}))
        assert await _holds(page, kind="items", value=json.dumps({"Buy milk": "shown", "Call Anna": "shown"}))
        await page.click("a[href='#/active']")  # only unfinished todos on screen
        await page.wait_for_function("() => document.querySelectorAll('#todo-list li').length === 1")  # the route re-renders the list (later under load)
        assert await _holds(page, kind="items", value=json.dumps({"Call Anna": "unchecked"}))
        assert await _holds(page, kind="page_is", value=f"{todo}/#/active")
        assert not await _holds(page, kind="page_is", value=f"{todo}/#/completed")
        # the main content (no main landmark): the app minus its header and footers
        assert await _holds(page, kind="text_present", value="Call Anna", scope="main", whole_words=True)
        assert await _holds(page, kind="text_absent", value="Double-click to edit a todo", scope="main")
        assert await _holds(page, kind="text_present", value="Double-click to edit a todo")

    async def route_two(page: Page) -> None:
        await page.goto(f"{todo}/")
        await _add(page, "Call Anna", "Buy milk")  # the other order, done with the keyboard
        await page.focus(_toggle("Buy milk"))
        await page.keyboard.press("Space")
        assert await _holds(page, kind="items", value=done)
        await page.goto(f"{todo}/index.html#/active")  # typed, with index.html
        await _settled(page)
        assert await _holds(page, kind="items", value=json.dumps({"Call Anna": "unchecked"}))
        assert await _holds(page, kind="page_is", value=f"{todo}/#/active")
        for box in ("Call Anna",):
            await page.click(_toggle(box))
        await page.goto(f"{todo}/#/")
        assert await _holds(page, kind="element_state", value="role=checkbox name=Mark all as complete", state="checked")

    _run(route_one)
    _run(route_two)


# --------------------------------------------------------------------------- verify_web_tasks: no-ops and visible answers


def _task(task_id: str, start: str, steps: list[GoldStep], success: list[SuccessCriterion], answer: str | None = None, kind: str = "text", **quality: Any) -> Task:
    return Task(
        id=task_id, kind="web", type="test", instruction="A goal.", start_url=start, gold_steps=steps, success=success, gold_answer=answer, answer_kind=kind,  # type: ignore[arg-type]
        provenance=Provenance(graph_id="g", generator="test"), quality=dict(quality),
    )


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[list[Task]], tuple[list[Task], GenerationReport]]]:
    workspace = tmp_path_factory.mktemp("ws")

    def verify(tasks: list[Task]) -> tuple[list[Task], GenerationReport]:
        report = GenerationReport()

        async def go() -> list[Task]:
            async with Runtime(Settings(workspace=workspace, embedder="hashing"), screenshots=False) as rt:
                return await verify_web_tasks(tasks, rt.episodes, report)

        return asyncio.run(go()), report

    yield verify


def test_replay_drops_no_ops_and_answers_not_shown(site: str, runtime: Callable[[list[Task]], tuple[list[Task], GenerationReport]]) -> None:
    home, about = f"{site}/index.html", f"{site}/about.html"
    saturday = re.search(r"Saturday</th><td>[^<]+</td><td>([^<]+)<", (SITE / "about.html").read_text())
    days = re.search(r"kept for (\d+) days", (SITE / "about.html").read_text())  # in an accordion site.js collapses
    titles = re.search(r"catalogue of (\d+) titles", _main_html("index.html"))
    assert saturday and days and titles and 'data-accordion' in (SITE / "about.html").read_text()
    to_about = [GoldStep(action="click", selector="#nav-about")]
    tasks = [
        # the criterion already holds where the agent starts: "open the home page" while on it
        _task("no-op", home, [GoldStep(action="click", selector="#nav-home")], [SuccessCriterion(kind="page_is", value=f"{site}/")]),
        _task("no-op-absent", about, to_about, [SuccessCriterion(kind="text_absent", value="No such words anywhere", scope="main")]),
        # a real goal whose answer is shown on the page reached
        _task("answer", home, to_about, [SuccessCriterion(kind="page_is", value=about)], saturday.group(1)),
        _task("answer-only", about, [GoldStep(action="click", selector="#nav-home")], [], titles.group(1) + ".0", "number"),
        # the answer is right but the gold route ends where it is not shown
        _task("not-shown", home, [GoldStep(action="click", selector="#nav-genres")], [], saturday.group(1)),
        _task("collapsed", home, to_about, [], days.group(1), "number"),  # on the page, but in a collapsed panel
        _task("not-shown-but-computed", home, [GoldStep(action="click", selector="#nav-genres")], [], "7", "number", answer_visible=False),
    ]
    kept, report = runtime(tasks)
    stages = {d.task_id: d.stage for d in report.dropped}
    assert stages == {"no-op": "no_op", "no-op-absent": "no_op", "not-shown": "answer_visible", "collapsed": "answer_visible"}, report.dropped
    assert [t.id for t in kept] == ["answer", "answer-only", "not-shown-but-computed"]
    assert kept[0].quality["answer_visible"] is True and kept[2].quality["answer_visible"] is False
    assert report.stages["no_op"] == {"in": 7, "kept": 5} and report.stages["replay"] == {"in": 5, "kept": 3}
    assert all(t.gold_trajectory and Path(t.gold_trajectory).is_file() for t in kept)
