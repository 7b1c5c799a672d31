"""Task DAGs: resources from verified tasks, edges by matching resources, intent groups, composites, replay on the example site."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from taskloom.tools.environment.canonical import canonical
from taskloom.tools.environment.site import serve_static
from taskloom.tools.environment.trajectory import EpisodeRecord, Recorder, Target, load_trajectory
from taskloom.tools.errors import InputError
from taskloom.tools.generate.compose.consistency import check_consistency
from taskloom.tools.generate.compose.dag import compose_dags, page_resource, resource_edges, subtask_from_task, verify_composite
from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.web.paths import task_from_path, verify_web_tasks
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.dag import Dag
from taskloom.tools.tasks.model import GoldStep, Provenance, Resource, SuccessCriterion, Subtask, Task
from taskloom.tools.workspace import Workspace

SITE = "http://shop.test"


def _click(selector: str, text: str, element: str = "link") -> GoldStep:
    return GoldStep(action="click", selector=selector, canonical=canonical("click", text=text, element=element))


def _web(task_id: str, start: str, steps: list[GoldStep], success: list[SuccessCriterion], title: str, phrase: str) -> Task:
    return Task(id=task_id, kind="web", type="t", instruction=f"On the page “{title}”, {phrase}.", start_url=SITE + start, allowed_domains=["shop.test"],
                gold_steps=steps, success=success, provenance=Provenance(graph_id="g1", generator="template"))


def _url(pattern: str) -> SuccessCriterion:
    return SuccessCriterion(kind="url_matches", value=pattern)


def _visible(selector: str) -> SuccessCriterion:
    return SuccessCriterion(kind="element_state", value=selector, state="visible")


HOME = _web("t1-home", "/index.html", [_click("#m", "Mystery")], [_url(r"/search\.html\?genre=mystery$")], "Home", "open “Mystery”")
LIST = _web("t2-list", "/search.html?genre=mystery", [_click("#r1", "The Lantern Keeper's Secret")], [_url(r"/book\.html\?id=b01$")], "Mystery", "open “The Lantern Keeper's Secret”")
AUTHOR = _web("t3-author", "/book.html?id=b01", [_click("#book-author", "Margaret Oyelaran")], [_url(r"/search\.html\?q=Margaret\+Oyelaran$")],
              "Lantern", "open “Margaret Oyelaran”")
TAB = _web("t4-tab", "/book.html?id=b01", [_click("#tab-reviews", "Reviews", "tab")], [_visible("#panel-reviews")], "Lantern", "switch to the “Reviews” tab")
LOAN = _web("t5-loan", "/book.html?id=b01", [_click("#request-loan", "Request a loan", "button")], [_visible("#loan-dialog")], "Lantern", "open “Request a loan”")
CRUMB = _web("t6-crumb", "/book.html?id=b01", [_click("#crumb-genre", "Mystery")], [_url(r"/search\.html\?genre=mystery$")], "Lantern", "open “Mystery”")
FEATURED = _web("t7-featured", "/", [_click("#f1", "The Lantern Keeper's Secret")], [_url(r"/book\.html\?id=b01$")], "Home", "open “The Lantern Keeper's Secret”")
OTHER = _web("t8-other", "/search.html?q=Margaret+Oyelaran", [_click("#r7", "Tide Tables")], [_url(r"/book\.html\?id=b07$")], "Search", "open “Tide Tables”")
SEARCH = _web("t9-search", "/", [GoldStep(action="type", selector="#q", text="sea", submit=True, node_id="search_box:1",
                                        canonical=canonical("type", text="sea", element="Search the catalogue"))], [_url(r"[?&]q=sea")], "Home", "search for “sea”")
FACT = Task(id="d1-fact", kind="document", type="extraction", instruction="Which word names the bay in the guide?", gold_answer="Sea",
            provenance=Provenance(graph_id="doc-g", generator="template"))


def test_pages_are_typed_resources_by_url() -> None:
    assert page_resource(SITE + "/book.html?id=b01#top") == Resource(kind="detail_page", name=SITE + "/book.html?id=b01")
    assert page_resource(SITE + "/search.html?genre=poetry").kind == "result_list"
    assert page_resource(SITE + "/catalogue/") == Resource(kind="result_list", name=SITE + "/catalogue/")
    assert page_resource(SITE + "/index.html") == Resource(kind="page_state", name=SITE + "/")
    assert page_resource(SITE + "/item?product_id=9").kind == "detail_page"


def test_tasks_become_subtasks_with_resources_and_checks() -> None:
    home, tab, search, fact = (subtask_from_task(t) for t in (HOME, TAB, SEARCH, FACT))
    assert home.inputs == [Resource(kind="page_state", name=SITE + "/")]
    assert home.outputs == [Resource(kind="result_list", name=SITE + "/search.html?genre=mystery")]
    assert [(c.kind, c.value) for c in home.checks] == [("url_matches", r"/search\.html\?genre=mystery$")]  # outcomes only, never the click
    assert home.category == "home" and tab.category == "book" and home.source_task == "t1-home"
    assert tab.inputs == [Resource(kind="detail_page", name=SITE + "/book.html?id=b01")]
    assert tab.outputs == [Resource(kind="page_state", name=SITE + "/book.html?id=b01 #panel-reviews visible")]
    assert search.inputs == [Resource(kind="page_state", name=SITE + "/"), Resource(kind="document_fact", name="sea")]
    assert search.outputs == [Resource(kind="search_query", name="sea")]  # no replay: where the search lands is unknown
    assert [(c.kind, c.value) for c in search.checks] == [("url_matches", r"[?&]q=sea")]
    assert fact.inputs == [Resource(kind="file", name="doc-g")] and fact.outputs == [Resource(kind="document_fact", name="sea")]
    with pytest.raises(InputError, match="neither a web task with gold steps"):
        subtask_from_task(HOME.model_copy(update={"gold_steps": []}))


def test_a_verified_replay_supplies_the_pages_a_subtask_reaches(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path / "ep", EpisodeRecord(episode_id="ep-1", env="browser", start_url=SITE + "/"))
    now = time.time()
    recorder.action(name="navigate", canonical="navigate(url='x')", url_before="about:blank", url_after=SITE + "/", t_start=now, t_end=now)
    recorder.action(name="type", canonical=SEARCH.gold_steps[0].canonical or "", url_before=SITE + "/", url_after=SITE + "/search.html?q=sea",
                    target=Target(role="searchbox", name="Search the catalogue"), t_start=now, t_end=now)
    recorder.close()
    search = subtask_from_task(SEARCH.model_copy(update={"gold_trajectory": str(recorder.path)}))
    assert search.outputs == [Resource(kind="search_query", name="sea"), Resource(kind="result_list", name=SITE + "/search.html?q=sea")]


def test_an_edge_exactly_where_an_output_matches_an_input() -> None:
    subs = [subtask_from_task(t) for t in (HOME, LIST, TAB, LOAN, CRUMB, FEATURED, SEARCH, FACT)]
    assert resource_edges(subs) == [
        ("t1-home", "t2-list"),
        ("t2-list", "t4-tab"), ("t2-list", "t5-loan"), ("t2-list", "t6-crumb"),
        ("t6-crumb", "t2-list"),
        ("t7-featured", "t4-tab"), ("t7-featured", "t5-loan"), ("t7-featured", "t6-crumb"),
        ("d1-fact", "t9-search"),
    ]
    a = Subtask(id="a", instruction="a", outputs=[Resource(kind="result_list", name="u")])
    same_name_other_kind = Subtask(id="b", instruction="b", inputs=[Resource(kind="detail_page", name="u")])
    other_name = Subtask(id="c", instruction="c", inputs=[Resource(kind="result_list", name="v")])
    assert resource_edges([a, same_name_other_kind, other_name]) == []


def _dump(tasks: list[Task]) -> list[dict]:
    return [t.model_dump(mode="json") for t in tasks]


def test_one_intent_group_becomes_a_composite_with_navigation_and_checks() -> None:
    report = asyncio.run(compose_dags([TAB, AUTHOR, LIST, HOME], count=5, seed=0))
    assert len(report.tasks) == 1 and report.dropped == [], report
    task = report.tasks[0]
    assert [s.source_task for s in task.subtasks] == ["t1-home", "t2-list", "t3-author", "t4-tab"]
    assert [s.id for s in task.subtasks] == ["s1", "s2", "s3", "s4"]
    assert task.dag == [("s1", "s2"), ("s2", "s3"), ("s2", "s4")]
    assert task.orders == [["s1", "s2", "s3", "s4"], ["s1", "s2", "s4", "s3"]] and task.order_count == 2
    assert [(s.action, s.selector or s.text) for s in task.gold_steps] == [
        ("click", "#m"), ("click", "#r1"), ("click", "#book-author"), ("navigate", SITE + "/book.html?id=b01"), ("click", "#tab-reviews")]
    assert [(c.kind, c.value) for c in task.success] == [("element_state", "#panel-reviews")]  # no literal action; earlier outcomes per subtask
    assert all(c.on_state for s in task.subtasks for c in s.checks)
    assert {d: v["value"] for d, v in task.complexity.items()} == {"dependency": 3, "instruction": 4, "knowledge": 3, "hierarchy": 3, "branch": 2}
    assert (task.kind, task.type, task.difficulty, task.start_url) == ("composite", "task_graph", "medium", SITE + "/index.html")
    assert task.provenance.generator == "compose-dag" and task.allowed_domains == ["shop.test"]
    assert all(s.intent == task.quality["intent"] for s in task.subtasks)
    assert check_consistency(task)[0] and task.quality["consistency"]["style"] == "natural"
    for source in (HOME, LIST, AUTHOR, TAB):
        for value in source.instruction.split("“")[1:]:
            assert "“" + value.split("”")[0] + "”" in task.instruction


def test_composition_is_deterministic_and_keeps_the_rules() -> None:
    pool = [HOME, LIST, AUTHOR, TAB, LOAN, CRUMB, FEATURED, OTHER, SEARCH, FACT]
    first = asyncio.run(compose_dags(pool, count=10, seed=4))
    again = asyncio.run(compose_dags(list(reversed(pool)), count=10, seed=4))
    assert _dump(first.tasks) == _dump(again.tasks) and first.stats == again.stats
    clicked_only = _web("t0-click", "/", [_click("#x", "X")], [SuccessCriterion(kind="clicked", value="X")], "Home", "click “X”")
    refused = asyncio.run(compose_dags([clicked_only, *pool], count=5, seed=0))
    assert ("t0-click", "no outcome check: its success criteria only name a literal action") in refused.dropped and refused.stats["no_outcome_check"] == 1
    assert len(first.tasks) >= 2 and first.stats["pool"] == 10
    assert len({tuple(sorted(s.source_task or "" for s in t.subtasks)) for t in first.tasks}) == len(first.tasks)
    for task in first.tasks:
        ids = [s.id for s in task.subtasks]
        assert task.dag == resource_edges(task.subtasks)
        Dag(ids, task.dag)  # acyclic
        outputs = [(r.kind, r.name) for s in task.subtasks for r in s.outputs]
        assert len(outputs) == len(set(outputs)), "a resource has two producers"
        linked = {n for e in task.dag for n in e}
        assert linked == set(ids) and 2 <= len(ids) <= 8
        assert check_consistency(task)[0]
    fact_dag = next(t for t in first.tasks if any(s.category == "document" for s in t.subtasks))
    assert [s.source_task for s in fact_dag.subtasks] == ["d1-fact", "t9-search"] and fact_dag.complexity["knowledge"]["value"] == 2
    assert [s.action for s in fact_dag.gold_steps] == ["type"] and fact_dag.start_url == SITE + "/"
    big = asyncio.run(compose_dags(pool, count=10, seed=4, min_nodes=4))
    assert big.tasks and all(len(t.subtasks) >= 4 for t in big.tasks) and big.stats["too_small"] >= 1


def test_capability_selects_composites_by_complexity() -> None:
    pool = [HOME, LIST, AUTHOR, TAB, LOAN, OTHER]
    found = asyncio.run(compose_dags(pool, count=3, seed=0, capability="Dependency Identification"))
    assert found.tasks and all(t.complexity["dependency"]["value"] >= 4 for t in found.tasks)
    assert all("dependency_identification" in t.capabilities for t in found.tasks)
    none = asyncio.run(compose_dags(pool, count=3, seed=0, capability="parallel_planning"))
    assert none.tasks == [] and none.stats["capability_mismatch"] >= 1
    with pytest.raises(InputError, match="unknown capability"):
        asyncio.run(compose_dags(pool, capability="telepathy"))
    with pytest.raises(InputError, match="min_nodes"):
        asyncio.run(compose_dags(pool, min_nodes=5, max_nodes=3))


# -- the example site, a real browser ----------------------------------------------------------


@pytest.fixture(scope="module")
def site_graph(tmp_path_factory: pytest.TempPathFactory, crawl_site: Callable[..., str]) -> Iterator[tuple[KnowledgeGraph, Path, str]]:
    workspace = tmp_path_factory.mktemp("ws")
    runtime = Runtime(Settings(workspace=workspace, embedder="hashing", crawl_delay=0))
    with serve_static() as site:
        graph_id = crawl_site(runtime, site.url)
        yield runtime.graphs.load(graph_id), workspace, site.url


def _by_selector(kg: KnowledgeGraph, selector: str, kind: str, page: str | None = None) -> tuple[str, str, str]:
    for edge in kg.edges(kind):
        node = kg.node(edge.source)
        seen = node.attrs.get("pages") or [node.attrs.get("page_url", "")]
        if node.attrs.get("selector") == selector and (page is None or any(str(p).endswith(page) for p in seen)):
            return (edge.source, kind, edge.target)
    raise AssertionError(f"no {selector} -{kind}-> edge")


def _page(kg: KnowledgeGraph, suffix: str) -> str:
    return next(n.id for n in kg.nodes("page") if str(n.attrs["url"]).endswith(suffix))


@pytest.mark.integration
def test_composites_from_verified_site_tasks_replay_to_success(site_graph: tuple[KnowledgeGraph, Path, str]) -> None:
    kg, workspace, url = site_graph
    specs = [  # one book page (produced by a result link) and four subtasks on it; two of them leave the page
        ([_by_selector(kg, "#result-link-b01", "navigates_to")], "search.html"),
        ([_by_selector(kg, "#tab-reviews", "opens")], "book.html?id=b01"),
        ([_by_selector(kg, "#request-loan", "opens")], "book.html?id=b01"),
        ([_by_selector(kg, "#crumb-genre", "navigates_to", "id=b01")], "book.html?id=b01"),
        ([_by_selector(kg, "#footer-about", "navigates_to", "id=b01")], "book.html?id=b01"),
        ([_by_selector(kg, "#footer-genres", "navigates_to")], None),
    ]
    candidates = [task_from_path(kg, path, f"p{i}", "dag-part", seed=1, start_page=_page(kg, start) if start else None) for i, (path, start) in enumerate(specs)]
    assert all(candidates)
    ws = Workspace(workspace)

    async def go() -> tuple[list[Task], object, list[Task]]:
        async with Runtime(Settings(workspace=ws.root, embedder="hashing"), screenshots=False) as runtime:
            episodes = runtime.episodes
            checked = GenerationReport()
            verified = await verify_web_tasks([t for t in candidates if t], episodes, checked)
            assert len(verified) == len(specs), checked.dropped
            report = await compose_dags(verified, count=3, seed=0, episodes=episodes)
            broken = report.tasks[0].model_copy(deep=True, update={"success": [*report.tasks[0].success, SuccessCriterion(kind="text_present", value="No such text")]})
            reason = await verify_composite(broken, episodes)
            return verified, report, [broken] if reason and "text_present" in reason else []

    verified, report, rejected = asyncio.run(go())
    assert report.tasks, report  # type: ignore[attr-defined]
    assert rejected, "a composite with an unmet criterion must fail its replay"
    tasks: list[Task] = report.tasks  # type: ignore[attr-defined]
    book = next(t for t in tasks if len(t.subtasks) == 5)
    assert book.dag == [("s1", "s2"), ("s1", "s3"), ("s1", "s4"), ("s1", "s5")] and book.order_count == 24
    assert 1 <= sum(s.action == "navigate" for s in book.gold_steps) <= 4  # back to the book page after leaving it or opening the dialog
    for task in tasks:
        assert task.quality["replay"]["ok"] and task.start_url and task.start_url.startswith(url)
        replay = load_trajectory(Path(task.gold_trajectory or ""))
        assert [a.name for a in replay.actions][1:] == [("select_option" if s.action == "select_option" else s.action) for s in task.gold_steps]
        assert all(a.error is None for a in replay.actions)
        assert replay.closed is not None and replay.closed.success is True
        watched = {c for s in task.subtasks for c in (f"{k.kind}|{k.value}|{k.state or ''}" for k in s.checks if k.on_state)}
        assert watched <= {h for a in replay.actions for h in (a.holds or [])}
