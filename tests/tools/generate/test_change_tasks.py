"""Change-state tasks (web-change) on TodoMVC and the example site's loan-request form, replayed in a real browser."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from taskloom.tools.environment.gold import run_gold_steps
from taskloom.tools.environment.site import serve_static
from taskloom.tools.evaluate.checks import check_criteria
from taskloom.tools.generate.compose.flowcompose import FlowResult
from taskloom.tools.generate.compose.listchain import compose_list_chains, compose_list_graphs
from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.registry import GenerationRequest, generators
from taskloom.tools.generate.web.change import ITEM_TEXTS
from taskloom.tools.generate.web.paths import verify_web_tasks
from taskloom.tools.generate.web.style import gold_names, instruction_style
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import GoldStep, Task

pytestmark = pytest.mark.integration

BOOKS = {b["id"]: b for b in json.loads((Path(__file__).parents[3] / "examples" / "site" / "data" / "books.json").read_text(encoding="utf-8"))}


@dataclass
class Site:
    url: str
    workspace: Path
    kg: KnowledgeGraph
    tasks: list[Task]
    kept: list[Task]
    report: GenerationReport


def _crawl_and_generate(url: str, workspace: Path, max_pages: int, seed: int = 3, count: int = 6) -> Site:
    async def go() -> Site:
        async with Runtime(Settings(workspace=workspace, embedder="hashing", crawl_delay=0, record_screenshots=False)) as rt:
            ingest = await rt.graphs.ingest_website(url, max_pages=max_pages, max_depth=2, state_timeout=240)
            kg = rt.graphs.load(ingest.graph_id)
            report = GenerationReport()
            request = GenerationRequest(kg, count, None, None, seed, None, rt.graphs.embedder, rt.settings, report)
            tasks, _ = await generators.get("web-change").factory(request)
            kept = await verify_web_tasks([t.model_copy(deep=True) for t in tasks], rt.episodes, report)
            return Site(url, workspace, kg, tasks, kept, report)

    return asyncio.run(go())


@pytest.fixture(scope="module")
def todo(todomvc_site: str, tmp_path_factory: pytest.TempPathFactory) -> Site:
    return _crawl_and_generate(todomvc_site + "/", tmp_path_factory.mktemp("todo"), max_pages=2)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serve_static() as site:  # kept up: generation probes the form and the tests replay on it
        yield _crawl_and_generate(site.url + "/index.html", tmp_path_factory.mktemp("library"), max_pages=12, count=4)


def _outcome(site: Site, task: Task, steps: list[GoldStep]) -> list[Any]:
    """Run ``steps`` from the task's start page in a fresh episode; the criterion results at the end."""

    async def go() -> list[Any]:
        async with Runtime(Settings(workspace=site.workspace, embedder="hashing", record_screenshots=False), screenshots=False) as rt:
            episode, _ = await rt.episodes.start(url=task.start_url, task_id=None, agent="test")
            try:
                at_start = await check_criteria(episode.page, task.success, [], grace_s=0)
                assert not all(r.ok for r in at_start), "the start state already satisfies the criteria"
                await run_gold_steps(episode, steps)
                return await check_criteria(episode.page, task.success, [])
            finally:
                await rt.episodes.close(episode.id, status="closed")

    return asyncio.run(go())


def _holds(results: list[Any]) -> bool:
    return all(r.ok for r in results)


def _add(selector: str, text: str) -> GoldStep:
    return GoldStep(action="type", selector=selector, text=text, submit=True)


def _toggle(text: str) -> GoldStep:
    return GoldStep(action="click", selector=f'li:has-text("{text}") input[type=checkbox]')


# --------------------------------------------------------------------------- TodoMVC


def test_todomvc_gives_change_goals_that_replay(todo: Site) -> None:
    assert len(todo.kept) >= 3, [d.reason for d in todo.report.dropped]
    for task in todo.kept:
        assert task.type == "change" and task.provenance.template == "web-change"
        assert instruction_style(task.instruction, gold_names(task, todo.kg)).style == "goal", task.instruction
        assert not re.search(r"\b(?:click|press|Active|Completed|All)\b", task.instruction), task.instruction
        kinds = {c.kind for c in task.success}
        assert "items" in kinds and kinds <= {"items", "url_matches", "stored"}  # the outcome only: no criterion on controls
        goal = task.quality["change"]
        items = json.loads(next(c.value for c in task.success if c.kind == "items"))
        assert all(f"“{t}”" in task.instruction for t in goal["items"])
        # the visible items follow from the goal: the view keeps done items, open items, or all of them
        expected = {t: "checked" if t in goal["done"] else "unchecked" for t in goal["items"]}
        if goal["view"] == "open":
            expected = {t: s for t, s in expected.items() if s == "unchecked"}
            assert any(c.kind == "url_matches" and c.value.endswith("#/active$") for c in task.success)
        elif goal["view"] == "done":
            expected = {t: s for t, s in expected.items() if s == "checked"}
            assert any(c.kind == "url_matches" and c.value.endswith("#/completed$") for c in task.success)
        assert items == expected
        # the items the view hides are checked in the app's storage
        assert sorted(c.value for c in task.success if c.kind == "stored") == sorted(t for t in goal["items"] if t not in expected)
    assert {t.quality["change"]["view"] for t in todo.kept} >= {None, "open", "done"}


def test_todomvc_tasks_are_deterministic(todo: Site) -> None:
    async def again() -> list[Task]:
        request = GenerationRequest(todo.kg, 6, None, None, 3, None, None, Settings(workspace=todo.workspace), GenerationReport())  # type: ignore[arg-type]
        return (await generators.get("web-change").factory(request)).tasks

    first = [t for t in todo.tasks if t.quality["change"]["kind"] == "list"]
    assert [t.model_dump() for t in asyncio.run(again())] == [t.model_dump() for t in first]


def _task_with(todo: Site, view: str | None) -> Task:
    return next(t for t in todo.kept if t.quality["change"]["view"] == view)


def test_todomvc_another_route_passes(todo: Site) -> None:
    adder = todo.kept[0].gold_steps[0].selector or ""
    # a view task: open the view by URL first, add the items in reverse order, mark inside the view
    task = _task_with(todo, "open")
    goal = task.quality["change"]
    route = re.search(r"#(.*)\$$", next(c.value for c in task.success if c.kind == "url_matches"))
    assert route is not None
    steps = [GoldStep(action="navigate", text=task.start_url.split("#")[0] + "#" + route.group(1).replace("\\", ""))]
    steps += [_add(adder, t) for t in reversed(goal["items"])] + [_toggle(t) for t in goal["done"]]
    assert _holds(_outcome(todo, task, steps))
    # the plain task: mark everything at once through the items' own boxes in another order, then untick the open ones twice over
    task = _task_with(todo, None)
    goal = task.quality["change"]
    steps = [_add(adder, t) for t in goal["items"]] + [_toggle(t) for t in reversed(goal["items"])]
    steps += [_toggle(t) for t in goal["items"] if t not in goal["done"]]
    assert _holds(_outcome(todo, task, steps))


def test_todomvc_wrong_end_state_fails(todo: Site) -> None:
    task = _task_with(todo, None)
    goal = task.quality["change"]
    adder = task.gold_steps[0].selector or ""
    extra = [*task.gold_steps, _add(adder, "Walk the dog")]
    assert not _holds(_outcome(todo, task, extra))  # an extra item
    wrong = next(t for t in goal["items"] if t not in goal["done"])
    swapped = [_add(adder, t) for t in goal["items"]] + [_toggle(wrong)]
    assert not _holds(_outcome(todo, task, swapped))  # the wrong one marked
    task = _task_with(todo, "done")
    unfiltered = [s for s in task.gold_steps if s.node_id is None]  # everything but the view
    assert not _holds(_outcome(todo, task, unfiltered))  # right items, wrong view
    task = _task_with(todo, "open")
    goal = task.quality["change"]
    hidden_never_added = [s for s in task.gold_steps if (s.action == "type" and s.text not in goal["done"]) or s.node_id is not None]
    assert not _holds(_outcome(todo, task, hidden_never_added))  # the open view looks right, but the done items were never added


def _composed(site: Site, mode: str) -> FlowResult:
    async def go() -> FlowResult:
        async with Runtime(Settings(workspace=site.workspace, embedder="hashing", record_screenshots=False), screenshots=False) as rt:
            if mode == "chain":
                return await compose_list_chains(site.kg, rt.episodes, count=3, levels=6, seed=0)
            return await compose_list_graphs(site.kg, rt.episodes, count=2, seed=0)

    return asyncio.run(go())


@pytest.fixture(scope="module")
def todo_chains(todo: Site) -> FlowResult:
    return _composed(todo, "chain")


def test_todomvc_chains_reach_level_six_each_checked_on_the_whole_state(todo_chains: FlowResult) -> None:
    assert [c.reached for c in todo_chains.chains] == [6, 6, 6], todo_chains.chains
    assert len(todo_chains.tasks) == 18 and not todo_chains.dropped
    for task in todo_chains.tasks:
        assert task.level is not None and len(task.subtasks) == task.level and task.success == task.subtasks[-1].checks
        added = task.subtasks[0].instruction
        later = task.instruction.split("Then", 1)[1] if task.level > 1 else ""
        assert not [t for t in ITEM_TEXTS if f"“{t}”" in added and t in later], task.instruction  # later steps name items by where they stand
    six = next(t for t in todo_chains.tasks if t.level == 6)
    assert [c.kind for c in six.success] == ["items", "url_matches", "stored", "stored", "stored"]


def test_todomvc_chain_another_route_passes_and_a_wrong_state_fails(todo: Site, todo_chains: FlowResult) -> None:
    four = next(t for t in todo_chains.tasks if t.level == 4)
    a, b, c = re.findall(r"“([^”]+)”", four.subtasks[0].instruction)
    adder = four.gold_steps[0].selector or ""
    route = re.search(r"#(.*)\$$", next(x.value for x in four.success if x.kind == "url_matches"))
    assert route is not None
    by_url = [GoldStep(action="navigate", text=four.start_url.split("#")[0] + "#" + route.group(1).replace("\\", ""))]
    assert _holds(_outcome(todo, four, [*by_url, *(_add(adder, t) for t in (a, b, c)), _toggle(b), _toggle(c)]))  # the view first, by its URL
    assert not _holds(_outcome(todo, four, [*by_url, *(_add(adder, t) for t in (a, b, c)), _toggle(b), _toggle(a)]))  # the first marked, not the last
    six = next(t for t in todo_chains.tasks if t.level == 6 and t.id.startswith(four.id[:-3]))
    d = re.findall(r"“([^”]+)”", six.subtasks[5].instruction)[0]
    done_link = six.subtasks[4].gold_steps[0]
    detour = [*six.gold_steps[:-1], GoldStep(action="navigate", text=four.start_url.split("#")[0] + "#/"), _add(adder, d), done_link]
    assert _holds(_outcome(todo, six, detour))  # added from the full list, then back to the done view: the same state
    assert not _holds(_outcome(todo, six, six.gold_steps[:-1]))  # never added


def test_todomvc_task_graphs_hold_in_both_orders(todo: Site) -> None:
    graphs = _composed(todo, "dag")
    assert len(graphs.tasks) == 2 and not graphs.dropped, graphs.dropped
    for task in graphs.tasks:
        assert task.order_count == 2 and task.quality["replay"]["orders"] == 2
        assert sorted(task.dag) == [("s1", "s3"), ("s2", "s3")]
    assert {next(c.value for c in t.success if c.kind == "url_matches").split("#")[-1] for t in graphs.tasks} == {"/active$", "/completed$"}


# --------------------------------------------------------------------------- the example site's request form


def _form_tasks(site: Site) -> list[Task]:
    return [t for t in site.kept if t.quality["change"]["kind"] == "form"]


def test_library_form_goal_names_the_record_and_checks_the_outcome(library: Site) -> None:
    tasks = _form_tasks(library)
    assert tasks, [d.reason for d in library.report.dropped] + [library.report.generator]
    for task in tasks:
        navigate = task.gold_steps[0]
        book = BOOKS[parse_qs(urlparse(navigate.text or "").query)["id"][0]]
        goal = task.quality["change"]
        assert goal["subject"] == book["title"] and f"“{book['title']}”" in task.instruction
        assert urlparse(task.start_url).path in ("/", "/index.html")  # the home page, not the book's
        name, card = (goal["values"][s] for s in ("#loan-name", "#loan-card"))
        assert name in task.instruction and card in task.instruction and re.fullmatch(r"\d{8}", card)  # the hint says 8 digits
        assert instruction_style(task.instruction, gold_names(task, library.kg)).style == "goal", task.instruction
        kinds = [c.kind for c in task.success]
        assert kinds == ["page_is", "text_present"] and task.success[1].scope == "main" and task.success[1].whole_words
        assert task.success[1].value == "Requested"  # book.js writes it once a request is stored, whatever the branch
        assert goal["validates"] is True


def _by_search(task: Task) -> list[GoldStep]:
    """Another route: search for the title from the home page, open the result, choose a branch the gold leaves alone."""
    goal = task.quality["change"]
    book_id = parse_qs(urlparse(task.gold_steps[0].text or "").query)["id"][0]
    return [
        GoldStep(action="type", selector="#search-input", text=goal["subject"], submit=True),
        GoldStep(action="click", selector=f"#result-link-{book_id}"),
        GoldStep(action="click", selector="#request-loan"),
        GoldStep(action="type", selector="#loan-name", text=goal["values"]["#loan-name"]),
        GoldStep(action="type", selector="#loan-card", text=goal["values"]["#loan-card"]),
        GoldStep(action="select_option", selector="#loan-branch", text="Eastwharf"),
        GoldStep(action="click", selector="#loan-submit"),
    ]


def test_library_form_another_route_passes_and_invalid_card_fails(library: Site) -> None:
    task = _form_tasks(library)[0]
    assert _holds(_outcome(library, task, _by_search(task)))
    short = [s.model_copy(update={"text": (s.text or "")[:5]}) if s.selector == "#loan-card" else s for s in task.gold_steps]
    assert not _holds(_outcome(library, task, short))
    other = next(b for b in BOOKS.values() if b["title"] != task.quality["change"]["subject"])
    elsewhere = [task.gold_steps[0].model_copy(update={"text": re.sub(r"id=\w+", f"id={other['id']}", task.gold_steps[0].text or "")}), *task.gold_steps[1:]]
    assert not _holds(_outcome(library, task, elsewhere))  # another book requested

