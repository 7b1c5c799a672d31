"""Reach-a-view tasks (web-view) on real sites: sort views checked against palmerpenguins' CSV, filter views against books.json.

Other routes than the gold (clicking a column header, the search page's filter form, a
typed URL with extra parameters) pass; the opposite order or another genre fails. On the
harbour site (``harbour_site``: its data is the truth), pagination, facet toggles and export
links are never views, and records are never named by a file name or a column of codes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlparse

import pytest
from playwright.async_api import Page

from taskloom.tools.environment.site import serve_static
from taskloom.tools.generate.web.find import subject_noun
from taskloom.tools.generate.web.phrasing import column_noun, detail_noun, path_noun
from taskloom.tools.generate.web.style import instruction_style
from taskloom.tools.generate.web.views import view_tasks
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Task

from .conftest import penguin_rows, route_passes
from .harbour_site import VESSELS, serve_harbour

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]
BOOKS = json.loads((ROOT / "examples" / "site" / "data" / "books.json").read_text(encoding="utf-8"))
#: The default view_cap: budget the other pages leave goes to sort views, both directions of a field first.
PENGUIN_CRAWL: dict[str, Any] = {"max_pages": 50, "max_depth": 4, "max_states": 0, "click_budget": 0}


@dataclass
class Site:
    base: str
    kg: KnowledgeGraph
    tasks: list[Task]
    settings: Settings
    graph_id: str


def _crawl(tmp: Path, url: str, **options: Any) -> tuple[Settings, str, KnowledgeGraph]:
    settings = Settings(workspace=tmp / "ws", embedder="hashing", crawl_delay=0, record_screenshots=False)

    async def go() -> tuple[str, KnowledgeGraph]:
        async with Runtime(settings) as rt:
            graph_id = (await rt.graphs.ingest_website(url, **options)).graph_id
            return graph_id, rt.graphs.load(graph_id)

    graph_id, kg = asyncio.run(go())
    return settings, graph_id, kg


@pytest.fixture(scope="module")
def penguins(penguins_site: str, tmp_path_factory: pytest.TempPathFactory) -> Site:
    settings, graph_id, kg = _crawl(tmp_path_factory.mktemp("view-penguins"), penguins_site + "/", **PENGUIN_CRAWL)
    return Site(penguins_site, kg, view_tasks(kg, 0, 30)[0], settings, graph_id)


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serve_static() as site:
        settings, graph_id, kg = _crawl(
            tmp_path_factory.mktemp("view-example"), site.url + "/index.html", max_pages=30, max_depth=3, max_states=0, click_budget=0
        )
        yield Site(site.url, kg, view_tasks(kg, 0, 30)[0], settings, graph_id)


@pytest.fixture(scope="module")
def harbour(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serve_harbour() as base:
        tmp = tmp_path_factory.mktemp("view-harbour")
        settings, graph_id, kg = _crawl(tmp, base + "/", max_pages=50, max_depth=3, max_states=0, click_budget=0)
        yield Site(base, kg, view_tasks(kg, 0, 30)[0], settings, graph_id)


def _query(task: Task) -> dict[str, str]:
    return dict(parse_qsl(urlparse(next(c.value for c in task.success if c.kind == "query_has")).query))


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def test_penguin_sort_views_match_the_csv_order(penguins: Site) -> None:
    rows = penguin_rows()
    sorts = [t for t in penguins.tasks if t.quality["target"]["kind"] == "sort"]
    assert len(sorts) >= 3
    assert len({t.instruction for t in sorts}) == len(sorts)
    for task in sorts:
        target = task.quality["target"]
        field, direction = target["field"], target["direction"]
        assert field in rows[0] and field != "id"
        assert task.type == "view" and instruction_style(task.instruction).style == "goal"
        assert task.start_url != task.gold_steps[0].text and "ordering" not in task.start_url
        values = [v for r in rows if (v := _number(r[field])) is not None]
        if values and len(values) > len(rows) / 2:  # a numeric field: the phrase says which end comes first
            assert ("from highest to lowest" if direction == "desc" else "from lowest to highest") in task.instruction
            if target["first"] is not None:
                assert float(target["first"]) == (max(values) if direction == "desc" else min(values))
                text = next((c for c in task.success if c.kind == "text_present"), None)  # only when the start does not show it
                assert text is None or (text.value == target["first"] and text.scope == "main" and text.whole_words)
        # sqlite-web orders by column number, minus for descending
        column = list(rows[0]).index(field) + 2  # the table's first column is its row id
        assert _query(task) == {"ordering": f"{'-' if direction == 'desc' else ''}{column}"}


def _header_clicks(base: str, field: str, times: int) -> Any:
    async def route(page: Page) -> None:
        await page.goto(base + "/penguins/content/")
        for _ in range(times):
            async with page.expect_navigation():
                await page.locator("thead a", has_text=field).first.click()  # a sorted column's name gains an arrow

    return route


def _typed(url: str) -> Any:
    async def route(page: Page) -> None:
        await page.goto(url)

    return route


def test_sorted_by_header_clicks_or_a_typed_url_and_the_opposite_order_fails(penguins: Site) -> None:
    sorts = [t for t in penguins.tasks if t.quality["target"]["kind"] == "sort"]
    ascending = next(t for t in sorts if t.quality["target"]["direction"] == "asc")
    field = ascending.quality["target"]["field"]
    view = next(c.value for c in ascending.success if c.kind == "query_has")
    assert asyncio.run(route_passes(ascending, _header_clicks(penguins.base, field, 1)))
    assert asyncio.run(route_passes(ascending, _typed(view + "&page=1")))
    assert not asyncio.run(route_passes(ascending, _header_clicks(penguins.base, field, 2)))  # descending
    assert not asyncio.run(route_passes(ascending, _typed(penguins.base + "/penguins/content/")))  # the default order
    descending = next((t for t in sorts if t.quality["target"]["direction"] == "desc"), None)
    if descending is not None:
        field = descending.quality["target"]["field"]
        assert asyncio.run(route_passes(descending, _header_clicks(penguins.base, field, 2)))
        assert not asyncio.run(route_passes(descending, _header_clicks(penguins.base, field, 1)))


def _slug(genre: str) -> str:
    return genre.lower().replace(" ", "-")


def test_example_filter_views_name_a_genre_and_are_checked_on_their_query(example: Site) -> None:
    filters = [t for t in example.tasks if t.quality["target"]["kind"] == "filter"]
    assert len(filters) >= 3
    genres = {_slug(b["genre"]): b["genre"] for b in BOOKS}
    for task in filters:
        query = _query(task)
        assert len(query) == 1 and task.start_url and "genre" not in task.start_url and "available" not in task.start_url
        assert instruction_style(task.instruction).style == "goal" and not task.instruction.lower().startswith("on the page")
        if "genre" in query:
            assert query["genre"] in genres and genres[query["genre"]].lower() in task.instruction.lower()


def _form_route(base: str, genre: str) -> Any:
    async def route(page: Page) -> None:
        await page.goto(base + "/search.html")
        await page.get_by_role("combobox", name="Genre").select_option(label=genre)
        async with page.expect_navigation():
            await page.get_by_role("button", name="Apply filters").click()

    return route


def test_a_genre_view_is_reached_through_the_filter_form_and_another_genre_fails(example: Site) -> None:
    task = next(t for t in example.tasks if "genre" in _query(t))
    genre = next(b["genre"] for b in BOOKS if _slug(b["genre"]) == _query(task)["genre"])
    other = next(b["genre"] for b in BOOKS if b["genre"] != genre)
    assert asyncio.run(route_passes(task, _form_route(example.base, genre)))
    assert asyncio.run(route_passes(task, _typed(f"{example.base}/search.html?available=1&genre={_slug(genre)}&page=1")))
    assert not asyncio.run(route_passes(task, _form_route(example.base, other)))
    assert not asyncio.run(route_passes(task, _typed(f"{example.base}/genres.html?genre={_slug(genre)}")))


def test_generated_through_the_service_with_replay(example: Site) -> None:
    async def go() -> list[Task]:
        async with Runtime(example.settings) as rt:
            service = rt.task_service()
            result = await service.generate(example.graph_id, count=4, seed=1, generator="web-view", use_llm=False)
            no_op = result.report.stages["no_op"]
            assert no_op["kept"] == no_op["in"], result.report.dropped
            return [service.get(i) for i in result.task_ids]

    stored = asyncio.run(go())  # the example fixture keeps the site up for the whole module
    assert len(stored) >= 3
    for task in stored:
        assert task.quality["replay"]["ok"] and task.quality["style"]["style"] == "goal"


# --------------------------------------------------------------------------- harbour site: what is never a view, and what records are called


def test_pagination_facet_toggles_and_exports_are_never_views(harbour: Site) -> None:
    # the crawl met all of them: a "Next page" cursor link, two facet toggles, an export preview, type filters, a sort
    urls = {str(p.attrs["url"]) for p in harbour.kg.nodes("page")}
    for marker in ("_next=", "_facet=type", "facet=port", "as=csv", "type=ferry", "_sort=length"):
        assert any(marker in u for u in urls), marker
    types = {v[1].lower(): v[1] for v in VESSELS}
    filters = [t for t in harbour.tasks if t.quality["target"]["kind"] == "filter"]
    sorts = [t for t in harbour.tasks if t.quality["target"]["kind"] == "sort"]
    assert len(filters) == 3 and sorts
    for task in harbour.tasks:
        criteria = " ".join(c.value for c in task.success) + " " + task.gold_steps[0].text
        assert not any(k in criteria for k in ("_next", "_facet", "facet=", "as=csv")), (task.instruction, criteria)
        assert not any(w in task.instruction.lower() for w in ("next", "facet", "csv", "download", "page")), task.instruction
        assert "the vessels" in task.instruction or "of vessels" in task.instruction, task.instruction
    for task in filters:  # a restriction by a field's value, said in words: the type the site's data has
        ((key, value),) = _query(task).items()
        assert key == "type" and value in types and f"type {types[value]}" in task.instruction.replace("type is", "type"), task.instruction
    for task in sorts:
        assert _query(task) in ({"_sort": "length"}, {"_sort_desc": "length"}) and "length" in task.instruction
        assert ("lowest to highest" if "_sort" in _query(task) else "highest to lowest") in task.instruction
    skipped = view_tasks(harbour.kg, 0, 30)[1]["skipped"]
    assert skipped.get("an export format, not a view")
    assert skipped.get("not a restriction by a field's value: the value names a column, not a value (a toggle)")


def test_records_are_not_named_by_a_file_name_or_a_column_of_codes(harbour: Site) -> None:
    # /fleet.sqlite/ lists boats whose first column is "code" (KS-01 …): neither the file nor the column names them
    assert subject_noun(harbour.kg, harbour.base + "/fleet.sqlite/") is None
    assert subject_noun(harbour.kg, harbour.base + "/vessels/") == "vessels"


@pytest.mark.parametrize(
    "url, noun",
    [
        ("http://h/db.sqlite", None),
        ("http://h/catalogue.sqlite/", None),
        ("http://h/data/books.csv", None),
        ("http://h/heldout-vega", None),  # a database's name
        ("http://h/heldout-vega/la_riots", None),  # never the database above a table that is not a plain noun
        ("http://h/heldout-vega/airports_fts", None),  # a search index
        ("http://h/heldout-vega/airports", "airport"),
        ("http://h/penguins/content/?page=2", "penguin"),
        ("http://h/genres.html", "genre"),
    ],
)
def test_path_nouns(url: str, noun: str | None) -> None:
    assert path_noun(url) == noun


def test_column_and_detail_nouns() -> None:
    assert column_noun("code", ["Harbour", "Quay", "Slipway"]) is None
    assert column_noun("iata", ["ABQ", "00M", "BOS"]) is None  # a column of codes is a property, not what the rows are
    assert column_noun("Country", ["France", "Peru", "Chad"]) == "country"
    assert detail_noun(["http://h/book.html?id=b01", "http://h/book.html?id=b02"]) == "book"
    assert detail_noun(["http://h/fleet.sqlite/KS-01", "http://h/fleet.sqlite/OS-02"]) is None
