"""Web tasks from the example site's graph: built from graph paths, verified by replay in a real browser."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from taskloom.tools.environment.site import serve_static
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.web.paths import task_from_path, verify_web_tasks
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import SuccessCriterion, Task
from taskloom.tools.workspace import Workspace

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def site_graph(tmp_path_factory: pytest.TempPathFactory, crawl_site: Callable[..., str]) -> Iterator[tuple[KnowledgeGraph, Path]]:
    workspace = tmp_path_factory.mktemp("ws")
    runtime = Runtime(Settings(workspace=workspace, embedder="hashing", crawl_delay=0))
    with serve_static() as site:
        graph_id = crawl_site(runtime, site.url)
        yield runtime.graphs.load(graph_id), workspace


def _edge(kg: KnowledgeGraph, kind: str, source_type: str, name: str | None = None) -> tuple[str, str, str]:
    for edge in kg.edges(kind):
        node = kg.node(edge.source)
        if node.type.value == source_type and (name is None or node.attrs.get("name") == name):
            return (edge.source, kind, edge.target)
    raise AssertionError(f"no {source_type} -{kind}-> edge named {name!r}")


def _paths(kg: KnowledgeGraph) -> dict[str, list[tuple[str, str, str]]]:
    fills = _edge(kg, "fills", "search_box", "Search the catalogue")
    submits = next((fills[2], "submits", e.target) for e in kg.edges("submits") if e.source == fills[2])
    return {
        "search": [fills, submits],
        "modal": [_edge(kg, "opens", "button", "Request a loan")],
        "tab": [_edge(kg, "opens", "tab", "Details")],
        "filter": [_edge(kg, "filters", "filter", "Genre")],
        "navigate": [next((e.source, "navigates_to", e.target) for e in kg.edges("navigates_to") if kg.node(e.source).attrs.get("name") == "Genres")],
    }


def _verify(tasks: list[Task], workspace: Path, report: GenerationReport) -> list[Task]:
    ws = Workspace(workspace)

    async def go() -> list[Task]:
        async with Runtime(Settings(workspace=ws.root, embedder="hashing"), screenshots=False) as runtime:
            return await verify_web_tasks(tasks, runtime.episodes, report)

    return asyncio.run(go())


def test_paths_become_tasks_that_replay_to_success(site_graph: tuple[KnowledgeGraph, Path]) -> None:
    kg, workspace = site_graph
    tasks = {name: task_from_path(kg, path, name, name, seed=1) for name, path in _paths(kg).items()}
    assert all(tasks.values()), [k for k, v in tasks.items() if v is None]
    search = tasks["search"]
    assert search.gold_steps[0].action == "type" and search.gold_steps[0].submit
    assert search.success[0].kind == "url_matches" and "q=" in search.success[0].value
    assert [c.kind for c in tasks["modal"].success][:1] == ["element_state"]
    assert tasks["filter"].gold_steps[0].action == "select_option"
    report = GenerationReport()
    kept = _verify(list(tasks.values()), workspace, report)
    assert [t.type for t in kept] == list(tasks), report.dropped
    for task in kept:
        trajectory = load_trajectory(Path(task.gold_trajectory or ""))
        assert [a.name for a in trajectory.actions][0] == "navigate"
        assert all(a.error is None for a in trajectory.actions)
        assert len(trajectory.actions) == 1 + len(task.gold_steps)


def test_a_task_whose_criteria_fail_is_dropped_at_replay(site_graph: tuple[KnowledgeGraph, Path]) -> None:
    kg, workspace = site_graph
    task = task_from_path(kg, _paths(kg)["navigate"], "navigate", "navigate", seed=1)
    assert task is not None
    planted = task.model_copy(update={"id": "web-planted", "success": [SuccessCriterion(kind="text_present", value="This text is on no page")]})
    report = GenerationReport()
    assert _verify([planted], workspace, report) == []
    assert report.dropped[0].stage == "replay" and "text_present" in report.dropped[0].reason


def test_same_seed_same_task(site_graph: tuple[KnowledgeGraph, Path]) -> None:
    kg, _ = site_graph
    path = _paths(kg)["search"]
    assert task_from_path(kg, path, "search", "search", seed=7) == task_from_path(kg, path, "search", "search", seed=7)
