"""Second routes to compare and lookup golds (``confirm_gold``): kept when re-derived, dropped with the reason otherwise.

Real material: the penguins data browser (stable, sortable) and a small page served on
127.0.0.1 whose scores are drawn by its script from today's date (a value that changes with
the clock, as a calendar or a "days left" column does). Each is crawled in Chromium and its
candidates confirmed in a fresh browser context with the clock 45 days ahead.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from taskloom.tools.environment.site import serve_static
from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.registry import GenerationRequest, generators
from taskloom.tools.generate.web.confirm import confirm_gold
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Task

from .conftest import crawl

pytestmark = pytest.mark.integration

#: 24 records drawn by script; each score grows with a step drawn from the date, so it changes with the clock.
DATED = """<!doctype html><html><head><title>Scores</title></head><body><main><h1>Team scores</h1>
<p id="count"></p><table><thead><tr><th>Name</th><th>Group</th><th>Score</th></tr></thead><tbody id="rows"></tbody></table>
<script>
const step = 2 + Math.floor(Date.now() / 86400000) % 7;  // 45 days on, 45 % 7 = 3: the step always changes
const groups = ["North", "South", "East"];
let html = "";
for (let i = 0; i < 24; i++) html += `<tr><td>Team ${String(i + 1).padStart(2, "0")}</td><td>${groups[i % 3]}</td><td>${10 + (i % 8 + 1) * step + i}</td></tr>`;
document.getElementById("rows").innerHTML = html;
document.getElementById("count").textContent = "24 rows";
</script></main></body></html>"""


def _candidates(kg: KnowledgeGraph, family: str, seed: int = 0, count: int = 12) -> list[Task]:
    request = GenerationRequest(kg, count, None, None, seed, None, None, Settings(), GenerationReport())  # type: ignore[arg-type]
    tasks, _ = asyncio.run(generators.get(family).factory(request))
    return tasks


def _confirm(settings: Settings, kg: KnowledgeGraph, tasks: list[Task]) -> tuple[list[Task], GenerationReport]:
    report = GenerationReport()

    async def go() -> list[Task]:
        async with Runtime(settings) as rt:
            return await confirm_gold(kg, tasks, rt.browsers, report)

    return asyncio.run(go()), report


def test_penguin_golds_are_confirmed_by_a_second_read_and_the_sites_sort(penguins_graph: Any) -> None:
    site = penguins_graph
    tasks = _candidates(site.kg, "web-compare") + _candidates(site.kg, "web-lookup", count=4)
    assert sum("compare" in t.quality for t in tasks) >= 6 and sum("lookup" in t.quality for t in tasks) >= 2
    kept, report = _confirm(site.settings, site.kg, [t.model_copy(deep=True) for t in tasks])
    assert [t.id for t in kept] == [t.id for t in tasks], report.dropped  # a stable site: every gold holds on both routes
    assert all(any("clock +45 days" in r for r in t.quality["confirmed"]) for t in kept)
    assert report.stages["confirm"] == {"in": len(tasks), "kept": len(tasks)}


def test_a_gold_the_recount_does_not_give_is_dropped(penguins_graph: Any) -> None:
    site = penguins_graph
    candidates = _candidates(site.kg, "web-compare")
    counts = [t.model_copy(deep=True) for t in candidates if t.quality["compare"]["op"] == "count"]
    assert counts, ([t.quality["compare"]["op"] for t in candidates], [(n.attrs["url"], n.attrs["records"], n.attrs["completeness"]) for n in site.kg.nodes("listing")])
    task = counts[0]
    task.gold_answer = str(int(str(task.gold_answer)) + 1)
    kept, report = _confirm(site.settings, site.kg, [task])
    assert kept == [] and [d.stage for d in report.dropped] == ["routes_disagree"]
    assert f"not '{task.gold_answer}'" in report.dropped[0].reason


def test_scores_drawn_from_the_date_are_dropped_as_volatile(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text(DATED, encoding="utf-8")
    with serve_static(tmp_path / "site") as served:
        site = crawl(served.url, served.url + "/", tmp_path / "ws", max_pages=3, max_states=0, click_budget=0)
        listing = next(site.kg.nodes("listing"))
        assert listing.attrs["complete"] and listing.attrs["records"] == 24
        tasks = [t for t in _candidates(site.kg, "web-compare", count=16) if t.quality["compare"].get("measure") == "Score" or t.quality["compare"]["op"] == "count"]
        # a range, sum or mean of scores grows with the step (the largest score by at least 6 per step, the smallest by 1 or 2)
        moved = [t for t in tasks if t.quality["compare"]["op"] in ("range", "sum", "mean") and t.quality["compare"].get("measure") == "Score"]
        assert moved, [t.instruction for t in tasks]
        kept, report = _confirm(site.settings, site.kg, moved)
    assert kept == [] and {d.stage for d in report.dropped} == {"volatile"}, report.dropped
    assert all("clock 45 days on" in d.reason for d in report.dropped)
