"""Crawled sites shared by the generator tests: each crawl runs once per test session and options.

``penguins_graph`` is the sqlite-web penguins browser crawled with 40 pages, depth 3 and no
clicks or app states (it covers the 7 listing pages); ``penguins_crawl(**options)`` crawls it
with other options (cached by options), e.g. ``penguins_crawl(max_pages=70, max_depth=4,
view_cap=30, max_states=0, click_budget=0)``. Tests may generate and store tasks in a crawl's
workspace; they must not change its graph.
"""

from __future__ import annotations

import asyncio
import csv
import importlib.resources
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.async_api import Page, async_playwright

import pytest

from taskloom.tools.browser.pool import CHROMIUM_ARGS, find_chromium
from taskloom.tools.evaluate.checks import check_criteria
from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Task

#: A number the CSV writer left with a binary-float tail (``-26.695430000000002``, ``8.3945900000000009``).
_FLOAT_TAIL = re.compile(r"-?\d+\.\d*(?:0{6,}|9{6,})\d")


def penguin_rows() -> list[dict[str, str]]:
    """palmerpenguins' penguins-raw.csv, the truth the site's tasks are checked against, with float tails written as the shortest decimal (as the site shows them)."""
    with (importlib.resources.files("palmerpenguins") / "data" / "penguins-raw.csv").open(newline="", encoding="utf-8") as handle:
        return [{k: repr(float(v)) if _FLOAT_TAIL.fullmatch(v) else v for k, v in row.items()} for row in csv.DictReader(handle)]


#: The crawl lookup, compare and find tests share: enough for the penguins listing's 7 pages.
PENGUINS_CRAWL: dict[str, Any] = {"max_pages": 40, "max_depth": 3, "max_states": 0, "click_budget": 0}


@dataclass
class CrawledSite:
    """One crawl: the site's base URL, the workspace and settings it was stored with, and its graph."""

    base: str
    workspace: Path
    settings: Settings
    graph_id: str
    kg: KnowledgeGraph


def crawl(base: str, start: str, workspace: Path, **options: Any) -> CrawledSite:
    """Crawl ``start`` into ``workspace`` (hashing embedder, no delay, no screenshots) and load the graph."""
    settings = Settings(workspace=workspace, embedder="hashing", crawl_delay=0, record_screenshots=False)

    async def go() -> tuple[str, KnowledgeGraph]:
        async with Runtime(settings) as runtime:
            graph_id = (await runtime.graphs.ingest_website(start, **options)).graph_id
            return graph_id, runtime.graphs.load(graph_id)

    graph_id, kg = asyncio.run(go())
    return CrawledSite(base, workspace, settings, graph_id, kg)


@pytest.fixture(scope="session")
def penguins_crawl(penguins_site: str, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., CrawledSite]:
    """A function crawling the penguins browser with the given options, once per distinct options in the session."""
    cache: dict[tuple[tuple[str, Any], ...], CrawledSite] = {}

    def get(**options: Any) -> CrawledSite:
        key = tuple(sorted(options.items()))
        if key not in cache:
            cache[key] = crawl(penguins_site, penguins_site + "/", tmp_path_factory.mktemp("penguins") / "ws", **options)
        return cache[key]

    return get


@pytest.fixture(scope="session")
def penguins_graph(penguins_crawl: Callable[..., CrawledSite]) -> CrawledSite:
    """The penguins browser crawled with :data:`PENGUINS_CRAWL`, shared by the whole session."""
    return penguins_crawl(**PENGUINS_CRAWL)


async def route_passes(task: Task, route: Callable[[Page], Any]) -> bool:
    """Whether the task's criteria all hold after ``route`` (another way than the gold) runs from its start page in a fresh browser."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()
            await page.goto(task.start_url or "")
            await route(page)
            await page.wait_for_load_state("load")
            return all(r.ok for r in await check_criteria(page, task.success, [], grace_s=0.5))
        finally:
            await browser.close()


#: Enough for /newticket (depth 1), the query and report pages whose exports the checks read and one ticket's page (depth 2).
TRAC_CRAWL: dict[str, Any] = {"max_pages": 50, "max_depth": 2, "max_states": 0, "click_budget": 0}
#: Enough for the new-issue form (depth 1) and the index and search pages whose CSV exports the checks read (depth 2).
ROUNDUP_CRAWL: dict[str, Any] = {"max_pages": 30, "max_depth": 2, "max_states": 0, "click_budget": 0}
SEEDED = 200  # tests/data/roundup-issues.csv


def trac_counts(db: Path) -> tuple[int, ...]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT count(*) FROM ticket").fetchone()[0], con.execute("SELECT count(*) FROM ticket_change").fetchone()[0]


def roundup_counts(db: Path) -> tuple[int, ...]:
    with sqlite3.connect(db) as con:
        counts = tuple(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("_issue", "_msg", "issue__journal", "_user"))
    con.close()
    return counts


@dataclass
class AppRun:
    """A tracker crawled once (its database's row counts before and after) and its change goals generated through the whole pipeline."""

    kg: KnowledgeGraph
    settings: Settings
    before: tuple[int, ...]
    after: tuple[int, ...]
    crawl_s: float
    tasks: list[Task]
    report: GenerationReport


TracRun = RoundupRun = AppRun


def _crawl_app(site: Any, workspace: Path, crawl: dict[str, Any], count: int, counts: Callable[[Path], tuple[int, ...]]) -> AppRun:
    """Crawl ``site`` from its seeded state and generate ``web-change`` goals (each replayed in a fresh state)."""
    site.state.reset()
    settings = Settings(workspace=workspace, embedder="hashing", crawl_delay=0, record_screenshots=False)

    async def go() -> AppRun:
        async with Runtime(settings) as rt:
            before = counts(site.db)
            began = time.perf_counter()
            graph_id = (await rt.graphs.ingest_website(site.url + "/", **crawl)).graph_id
            crawl_s = time.perf_counter() - began
            after = counts(site.db)
            rt.episodes.state_reset = site.state.reset
            result = await rt.task_service().generate(graph_id, count=count, seed=5, use_llm=False, generator="web-change")
            tasks = [rt.tasks.load(i) for i in result.task_ids]
            return AppRun(rt.graphs.load(graph_id), settings, before, after, crawl_s, tasks, result.report)

    return asyncio.run(go())


@pytest.fixture(scope="session")
def trac(trac_site: Any, tmp_path_factory: pytest.TempPathFactory) -> AppRun:
    """Trac crawled once and its change goals generated through the whole pipeline (replayed, each in a fresh state)."""
    return _crawl_app(trac_site, tmp_path_factory.mktemp("trac") / "ws", TRAC_CRAWL, 12, trac_counts)


@pytest.fixture(scope="session")
def roundup(roundup_site: Any, tmp_path_factory: pytest.TempPathFactory) -> AppRun:
    """Roundup crawled once and its change goals generated through the whole pipeline (replayed, each in a fresh state)."""
    return _crawl_app(roundup_site, tmp_path_factory.mktemp("roundup") / "ws", ROUNDUP_CRAWL, 10, roundup_counts)
