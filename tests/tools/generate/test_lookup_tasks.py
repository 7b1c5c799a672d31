"""Lookup tasks (web-lookup) on the penguins data browser, checked against palmerpenguins' penguins-raw.csv and the served HTML."""

from __future__ import annotations

import asyncio
import urllib.request
from typing import Any

import pytest

from taskloom.tools.evaluate.metrics import answer_scores, answer_success
from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.registry import GenerationRequest, generators
from taskloom.tools.generate.web.lookup import listing_data, lookup_task, start_page
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Task

from .conftest import penguin_rows

pytestmark = pytest.mark.integration
PENGUINS = penguin_rows()


@pytest.fixture(scope="module")
def crawled(penguins_graph: Any) -> Any:
    """The data browser crawled with a budget that covers its 7 content pages (the session's shared crawl, see conftest)."""
    return penguins_graph


def _generate(kg: KnowledgeGraph, seed: int, count: int = 10) -> tuple[list[Task], GenerationReport]:
    report = GenerationReport()
    request = GenerationRequest(kg, count, None, None, seed, None, None, Settings(), report)  # type: ignore[arg-type]
    tasks, hops = asyncio.run(generators.get("web-lookup").factory(request))
    assert hops == {"web-lookup": 8}
    return tasks, report


def _rows(identify: dict[str, str]) -> list[dict[str, str]]:
    return [row for row in PENGUINS if all(row.get(label) == value for label, value in identify.items())]


def _penguin_tasks(tasks: list[Task]) -> list[Task]:
    return [t for t in tasks if set(t.quality["lookup"]["identify"]) <= set(PENGUINS[0]) and t.quality["lookup"]["field"] in PENGUINS[0]]


def _html(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode("utf-8"))


def test_lookup_answers_match_the_csv_row_the_instruction_names(crawled: Any) -> None:
    tasks, report = _generate(crawled.kg, seed=0)
    penguins = _penguin_tasks(tasks)
    assert len(penguins) >= 3, [t.instruction for t in tasks]
    assert len({t.id for t in tasks}) == len(tasks) and len({t.instruction for t in tasks}) == len(tasks)
    assert len({t.quality["lookup"]["field"] for t in penguins}) >= 3  # the questions are spread over fields
    for task in penguins:
        goal = task.quality["lookup"]
        rows = _rows(goal["identify"])
        assert len(rows) == 1, (task.instruction, goal["identify"], len(rows))  # the named values identify one record
        assert goal["field"] not in goal["identify"]
        truth = rows[0][goal["field"]]
        assert truth != "NA"
        if task.answer_kind == "number":
            assert answer_success(task, answer_scores(task, truth)), (task.instruction, task.gold_answer, truth)
            assert float(goal["value"]) == pytest.approx(float(truth))
        else:
            assert task.gold_answer == truth
        for value in goal["identify"].values():  # the instruction names every identifying value (a long one shortened)
            assert value.split(" (")[0].lower() in task.instruction.lower(), (value, task.instruction)
        assert task.type == "lookup" and task.provenance.generator == "web-lookup" and task.evidence == [goal["record"]]
        assert task.success == [] and task.gold_steps[0].action == "navigate"
        assert goal["raw"] in _html(goal["answer_page"])  # the answer is on the page the gold steps open
        assert report.generator["tasks"] == len(tasks)


def test_content_listing_dominates_and_labels_read_as_the_site_shows_them(crawled: Any) -> None:
    """The schema listing (columns with data type, null and key flags) gives no task beside a content listing; reversed labels are quoted."""
    tasks, report = _generate(crawled.kg, seed=0, count=10)
    structure = set(report.generator["structure_listings"])
    schema = next(n.id for n in crawled.kg.nodes("listing") if "Data type" in (n.attrs.get("columns") or []))
    content = next(n.id for n in crawled.kg.nodes("listing") if "Body Mass (g)" in (n.attrs.get("columns") or []))
    assert schema in structure and content not in structure
    on_schema = [t for t in tasks if t.quality["lookup"]["listing"] == schema]
    assert on_schema == [] and len(tasks) >= 10
    assert tasks[0].quality["lookup"]["listing"] == content  # the content listing's questions come first
    for task in tasks:
        text = task.instruction.lower()
        assert "date egg" not in text or "“date egg” value" in text, task.instruction
        assert "delta 13 c" not in text or "“delta 13 c” value" in text, task.instruction
    assert any("body mass" in t.instruction or "flipper length" in t.instruction or "culmen" in t.instruction for t in tasks)


def test_no_lookup_starts_on_a_page_showing_its_record(crawled: Any) -> None:
    tasks, _ = _generate(crawled.kg, seed=3)
    for task in _penguin_tasks(tasks):
        start = _html(task.start_url or "")
        shown = [v for v in task.quality["lookup"]["identify"].values() if v in start]
        assert len(shown) < len(task.quality["lookup"]["identify"]), (task.start_url, task.instruction)
        assert task.start_url != task.quality["lookup"]["answer_page"]


def test_example_question_and_answer_scoring(crawled: Any) -> None:
    """The issue's example record: Gentoo N12A1 in PAL0809 weighs 5,100 g; its id alone matches two records."""
    assert len([r for r in PENGUINS if r["Individual ID"] == "N12A1"]) > 1
    data = next(d for d in listing_data(crawled.kg) if "Body Mass (g)" in d.stats)
    record = next(
        r
        for r in data.records
        if r.attrs["fields"]["Individual ID"]["raw"] == "N12A1" and r.attrs["fields"]["studyName"]["raw"] == "PAL0809" and r.attrs["fields"]["Species"]["raw"].startswith("Gentoo")
    )
    start = start_page(crawled.kg)
    assert start is not None
    task = lookup_task(crawled.kg, data, record, "Body Mass (g)", start, seed=0)
    assert task is not None
    assert len(_rows(task.quality["lookup"]["identify"])) == 1
    assert "body mass" in task.instruction and "N12A1" in task.instruction
    assert task.answer_kind == "number"
    for good in ("5100", "5,100 g", "It weighed 5100 grams."):
        assert answer_success(task, answer_scores(task, good)), good
    for bad in ("4100", "5,400 g", "N12A1", ""):
        assert not answer_success(task, answer_scores(task, bad)), bad


def test_same_seed_same_tasks_and_seeds_vary_them(crawled: Any) -> None:
    first, _ = _generate(crawled.kg, seed=7)
    again, _ = _generate(crawled.kg, seed=7)
    other, _ = _generate(crawled.kg, seed=8)
    assert [t.model_dump() for t in first] == [t.model_dump() for t in again]
    assert {t.id for t in first} != {t.id for t in other}


def test_lookup_tasks_survive_the_generation_pipeline(crawled: Any) -> None:
    runtime = Runtime(Settings(workspace=crawled.workspace, embedder="hashing", crawl_delay=0, record_screenshots=False))

    async def go() -> list[Task]:
        async with runtime:
            service = runtime.task_service()
            result = await service.generate(crawled.graph_id, count=4, seed=1, use_llm=False, generator="web-lookup")
            return [service.get(i) for i in result.task_ids]

    kept = asyncio.run(go())
    assert len(_penguin_tasks(kept)) >= 3, [t.instruction for t in kept]
    assert all(t.quality["replay"]["ok"] for t in kept)
