"""Change-state tasks on Trac (issue 33): crawl without changing it, create-a-ticket goals checked on Trac's own exports.

One crawl and one generation per module (the pipeline's replay stage resets Trac's state
before every episode); every kept gold is replayed once more in a fresh state and checked
against ``trac.db`` itself; other correct routes pass and wrong end states fail.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.async_api import Page

from taskloom.tools.evaluate.appstate import RecordCheck, column_key
from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.web.create import create_forms
from taskloom.tools.generate.web.paths import replay_web_task
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Task

from .conftest import route_passes

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # one Trac crawl (~50 s) and its replays: about 2.5 min for the file

#: Enough for /newticket (depth 1) and the query and report pages whose exports the checks read (depth 2).
TRAC_CRAWL: dict[str, Any] = {"max_pages": 30, "max_depth": 2, "max_states": 0, "click_budget": 0}


def _counts(db: Path) -> tuple[int, int]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT count(*) FROM ticket").fetchone()[0], con.execute("SELECT count(*) FROM ticket_change").fetchone()[0]


@dataclass
class TracRun:
    kg: KnowledgeGraph
    settings: Settings
    before: tuple[int, int]
    after: tuple[int, int]
    crawl_s: float
    tasks: list[Task]
    report: GenerationReport


@pytest.fixture(scope="module")
def trac(trac_site: Any, tmp_path_factory: pytest.TempPathFactory) -> TracRun:
    """Trac crawled once and its change goals generated through the whole pipeline (replayed, each in a fresh state)."""
    trac_site.state.reset()
    settings = Settings(workspace=tmp_path_factory.mktemp("trac") / "ws", embedder="hashing", crawl_delay=0, record_screenshots=False)

    async def go() -> TracRun:
        async with Runtime(settings) as rt:
            before = _counts(trac_site.db)
            began = time.perf_counter()
            graph_id = (await rt.graphs.ingest_website(trac_site.url + "/", **TRAC_CRAWL)).graph_id
            crawl_s = time.perf_counter() - began
            after = _counts(trac_site.db)
            rt.episodes.state_reset = trac_site.state.reset
            result = await rt.task_service().generate(graph_id, count=6, seed=5, use_llm=False, generator="web-change")
            tasks = [rt.tasks.load(i) for i in result.task_ids]
            return TracRun(rt.graphs.load(graph_id), settings, before, after, crawl_s, tasks, result.report)

    return asyncio.run(go())


def _creates(run: TracRun) -> list[Task]:
    return [t for t in run.tasks if t.quality.get("change", {}).get("kind") == "create"]


def test_crawl_submits_no_form_and_finds_the_create_form(trac: TracRun) -> None:
    assert trac.before == trac.after, f"the crawl changed Trac: (tickets, changes) {trac.before} -> {trac.after}"
    forms = create_forms(trac.kg)
    assert [f.page_url.rsplit("/", 1)[-1] for f in forms] == ["newticket"]
    assert column_key(str(forms[0].key.attrs["name"])) == "summary" and forms[0].noun == "ticket"


def test_create_goals_state_the_outcome_and_replay_in_a_fresh_state(trac: TracRun) -> None:
    creates = _creates(trac)
    print(f"crawl {trac.crawl_s:.1f} s; generator {trac.report.generator}; stages {trac.report.stages}")
    for task in creates:
        print(task.instruction, "|", task.start_url, "|", [(c.kind, c.value) for c in task.success])
    assert len(creates) >= 3, trac.report.model_dump_json()[:2000]
    for task in creates:
        assert task.quality["replay"]["ok"] is True and task.gold_trajectory
        assert all(c.kind == "record" for c in task.success)
        assert "click" not in task.instruction.lower() and "select" not in task.instruction.lower()
        goal = task.quality["change"]
        assert next(iter(goal["key"].values())) in task.instruction
        assert all(f"“{v}”" in task.instruction for v in goal["values"].values())


def _truth(db: Path, task: Task) -> tuple[int, dict[str, str]]:
    goal = task.quality["change"]
    title = next(iter(goal["key"].values()))
    with sqlite3.connect(db) as con:
        con.row_factory = sqlite3.Row
        rows = con.execute("SELECT * FROM ticket WHERE summary = ?", (title,)).fetchall()
        total = con.execute("SELECT count(*) FROM ticket").fetchone()[0]
    assert total == 301, f"{total} tickets after one create"
    return len(rows), {k: str(rows[0][k]) for k in goal["values"]} if rows else {}


def test_every_gold_is_true_in_tracs_database(trac: TracRun, trac_site: Any) -> None:
    async def go() -> None:
        async with Runtime(trac.settings) as rt:
            rt.episodes.state_reset = trac_site.state.reset
            for task in _creates(trac):
                _, dropped = await replay_web_task(task.model_copy(deep=True), rt.episodes)
                assert dropped is None, dropped
                found, fields = _truth(trac_site.db, task)
                assert found == 1 and fields == task.quality["change"]["values"], (task.instruction, fields)

    asyncio.run(go())


def _fill(task: Task, reverse: bool) -> Callable[[Page], Any]:
    """Trac's own form filled by label, in the other order."""
    goal = task.quality["change"]

    async def route(page: Page) -> None:
        await page.goto(goal["form"])
        items = list(goal["values"].items())
        for label, value in reversed(items) if reverse else items:
            await page.get_by_label(label.capitalize() + ":", exact=True).select_option(label=value)
        await page.get_by_label("Summary:", exact=True).fill(next(iter(goal["key"].values())))
        await page.get_by_role("button", name="Create ticket").click()
        await page.wait_for_load_state("load")

    return route


def _by_url(task: Task, values: dict[str, str], times: int = 1) -> Callable[[Page], Any]:
    """The new-ticket URL with its fields as parameters (Trac pre-fills the form from them), committed ``times`` times."""
    goal = task.quality["change"]

    async def route(page: Page) -> None:
        for _ in range(times):
            await page.goto(goal["form"] + "?" + urlencode({"summary": next(iter(goal["key"].values())), **values}))
            await page.get_by_role("button", name="Create ticket").click()
            await page.wait_for_load_state("load")

    return route


def test_other_routes_pass_and_wrong_end_states_fail(trac: TracRun, trac_site: Any) -> None:
    task = max(_creates(trac), key=lambda t: len(t.quality["change"]["values"]))
    values = task.quality["change"]["values"]
    label, value = next(iter(values.items()))
    options = next(c for c in create_forms(trac.kg)[0].choices if column_key(str(c.attrs["name"])) == label).attrs["options"]
    wrong = {**values, label: next(o for o in options if o != value and not o.startswith("("))}

    def passes(route: Callable[[Page], Any]) -> bool:
        trac_site.state.reset()
        return asyncio.run(route_passes(task, route))

    assert passes(_fill(task, reverse=True)), "the form filled in another order"
    assert passes(_by_url(task, values)), "a URL with parameters"
    assert not passes(_by_url(task, wrong)), f"a wrong {label}"
    assert not passes(_by_url(task, values, times=2)), "the ticket created twice"
    assert not passes(lambda page: page.wait_for_timeout(10)), "nothing done"
    first = RecordCheck.parse(task.success[0].value)
    trac_site.state.reset()
    with sqlite3.connect(trac_site.db) as con:
        listed = con.execute("SELECT count(*) FROM ticket WHERE status != 'closed'").fetchone()[0]  # the broadest export lists the open tickets
    assert first.count == 1 and first.total == listed + 1


def test_reset_restores_the_seeded_state_quickly(trac_site: Any) -> None:
    trac_site.state.reset()
    with sqlite3.connect(trac_site.db) as con:
        con.execute("DELETE FROM ticket WHERE id > 250")
    con.close()
    assert _counts(trac_site.db)[0] == 250
    took = trac_site.state.reset()
    assert _counts(trac_site.db)[0] == 300
    print(f"reset: {took * 1000:.0f} ms")
    assert took < 1.0


def test_create_goals_are_deterministic(trac: TracRun, trac_site: Any) -> None:
    from taskloom.tools.generate.web.change import _task
    from taskloom.tools.generate.web.create import Export, create_tasks

    exports = [Export(url=trac_site.url + "/report/1?format=csv", columns=["ticket", "summary", "component", "milestone", "type"], rows=[{"summary": "x"}])]
    one, _ = create_tasks(trac.kg, exports, 7, 3, trac_site.url + "/", _task)
    two, _ = create_tasks(trac.kg, exports, 7, 3, trac_site.url + "/", _task)
    assert [t.model_dump() for t in one] == [t.model_dump() for t in two] and len(one) == 3
