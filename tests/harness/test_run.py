"""The harness end to end on the example site and the field guide: oracle + explorers, evaluation, consensus, report, resume."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client

from taskloom.harness.service import Harness
from taskloom.server.app import build_server
from taskloom.harness.store import RunStore
from taskloom.tools.environment.manager import FINAL_SCREENSHOT
from taskloom.tools.environment.site import serve_static
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks import Task, TaskStore
from taskloom.tools.workspace import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "examples" / "documents" / "field-guide.md"
AGENTS = ["oracle", "explorer", "explorer:seed=1,explore=0.5,name=wanderer"]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, list[Task]]]:
    """A workspace with verified web tasks on the (served) example site, document tasks on the field guide,
    and composites made through the ``tasks_compose`` tool: a chain up to level 3 and a task DAG."""
    settings = Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing", crawl_delay=0, record_screenshots=False)
    runtime = Runtime(settings, screenshots=False)
    graphs = runtime.graphs
    with serve_static() as site:

        async def prepare() -> None:
            async with runtime:
                web = await graphs.ingest_website(site.url + "/index.html", max_pages=6, max_depth=2)
                service = runtime.task_service(runtime.episode_manager(settings.workspace / "runs" / "gen"))
                await service.generate(web.graph_id, count=6, seed=0)
                await service.generate(graphs.ingest_document(GUIDE).graph_id, count=2, seed=0)
                async with Client(build_server(settings)) as client:
                    chain = (await client.call_tool("tasks_compose", {"graph_id": web.graph_id, "mode": "walk", "count": 1, "levels": 3})).structured_content
                    dag = (await client.call_tool("tasks_compose", {"graph_id": web.graph_id, "mode": "pages", "count": 1})).structured_content
                    exported = (await client.call_tool("tasks_export", {"kind": "composite"})).structured_content
                assert chain["task_ids"] and dag["task_ids"], (chain, dag)
                assert [row["level"] for row in chain["levels"]] == list(range(1, len(chain["levels"]) + 1))
                assert exported["count"] == len(chain["task_ids"]) + len(dag["task_ids"])

        asyncio.run(prepare())
        store = TaskStore(Workspace(settings.workspace))
        web = [t for t in store.list(kind="web")][:3]  # a few short web tasks; the composites cover the rest
        tasks = web + store.list(kind="document") + store.list(kind="composite")
        assert {t.kind for t in tasks} == {"web", "document", "composite"}
        assert {t.type for t in tasks if t.kind == "composite"} == {"chained", "task_graph"}
        yield settings, tasks


def test_oracle_and_explorers_run_evaluate_and_report(world: tuple[Settings, list[Task]]) -> None:
    settings, tasks = world
    seen: list[tuple[int, int]] = []
    report = asyncio.run(Harness(settings, build_server).run(tasks, AGENTS, concurrency=2, max_steps=24, timeout_s=60, run_id="r1", progress=lambda r, d, t: seen.append((d, t))))
    results = RunStore(Workspace(settings.workspace), "r1").results()
    assert len(results) == len(tasks) * len(AGENTS) and seen[-1] == (len(results), len(results))
    oracle = [r for r in results if r.agent == "oracle"]
    assert all(r.success and r.status == "finished" for r in oracle), [(r.task_id, r.reason, r.scores) for r in oracle if not r.success]
    for result in results:
        assert result.trajectory and Path(result.trajectory).is_file()
        trajectory = load_trajectory(Path(result.trajectory))
        assert trajectory.episode.agent == result.agent and trajectory.episode.task_id == result.task_id
        assert trajectory.closed is not None and result.steps == len(trajectory.actions)
        if result.task_kind == "document":
            assert {"exact_match", "f1", "rouge_l"} <= set(result.scores)
        else:
            assert trajectory.closed.success is result.success  # the server's final-state verdict is the result
            assert "criteria" in result.scores
            kept = (Path(result.trajectory).parent / FINAL_SCREENSHOT).is_file()  # screenshots are off: only a failure keeps its last page
            assert kept is (not result.success) and (trajectory.closed.screenshot is not None) is (not result.success), (result.task_id, result.agent)
        if result.task_kind == "composite":
            assert {"cr", "lc"} <= set(result.scores)
            if result.agent == "oracle":
                assert result.scores["cr"] == 1.0, result.task_id  # every subtask completed, in the graph evaluator's eyes
    def actions(agent: str, task_id: str) -> list[str]:
        result = next(r for r in results if r.agent == agent and r.task_id == task_id)
        return [a.canonical for a in load_trajectory(Path(result.trajectory or "")).actions]

    web_ids = [t.id for t in tasks if t.kind != "document"]
    assert any(len(actions("explorer", t)) >= 2 for t in web_ids), "the explorer acts on what it sees"
    assert any(actions("explorer", t) != actions("wanderer", t) for t in web_ids), "different seeds and exploration give different trajectories"
    assert set(report.consensus) == {t.id for t in tasks}
    for task_id, path in report.consensus.items():
        graph = json.loads(path.read_text())
        visits = sum(n["visits"] for n in graph["nodes"] if n["kind"] == "start")
        assert visits == len(AGENTS), task_id  # every agent's trajectory of the task is in its graph
    html = report.html.read_text()
    assert all(t.id in html for t in tasks) and all(a in html for a in ("oracle", "explorer", "wanderer"))
    summary = json.loads(report.summary_json.read_text())
    assert summary["summary"]["episodes"] == len(results)
    assert summary["summary"]["successes"] == sum(r.success for r in results)
    by_agent = {row["agent"]: row for row in summary["summary"]["per_agent"]}
    assert by_agent["oracle"]["success_rate"] == 1.0


def _env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(settings.to_env(), FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off")
    return env


def test_a_killed_run_resumes_to_the_same_results(world: tuple[Settings, list[Task]]) -> None:
    settings, tasks = world
    store = RunStore(Workspace(settings.workspace), "killed")
    cmd = [sys.executable, "-m", "taskloom.server.cli", "run", "--run-id", "killed", "-j", "1", "--max-steps", "12", "--timeout", "60"]
    cmd += [arg for a in AGENTS[:2] for arg in ("--agent", a)]
    web = [t for t in tasks if t.kind == "web"]
    cmd += [arg for t in web for arg in ("--task", t.id)]
    proc = subprocess.Popen(cmd, env=_env(settings), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(store.results()) < 2:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = store.done()
    assert 2 <= len(before) < len(web) * 2, "the run was killed mid-way"
    resumed = subprocess.run([sys.executable, "-m", "taskloom.server.cli", "run", "--resume", "killed"], env=_env(settings), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    results = {(r.task_id, r.agent): r for r in store.results()}
    assert len(results) == len(web) * 2
    lines = store.results_path.read_text().splitlines()
    assert len(lines) == len(results), "nothing that finished was redone"
    clean = {(r.task_id, r.agent): r for r in RunStore(Workspace(settings.workspace), "r1").results() if r.agent in ("oracle", "explorer") and r.task_kind == "web"}
    assert {k: (r.success, r.steps, r.answer) for k, r in results.items()} == {k: (r.success, r.steps, r.answer) for k, r in clean.items()}


def test_replay_repeats_gold_trajectories(world: tuple[Settings, list[Task]]) -> None:
    settings, tasks = world
    web = [t for t in tasks if t.kind == "web"]
    asyncio.run(Harness(settings, build_server).run(web, ["replay:source=gold"], run_id="replayed", max_steps=12, timeout_s=60))
    results = RunStore(Workspace(settings.workspace), "replayed").results()
    assert len(results) == len(web) and all(r.success for r in results), [(r.task_id, r.reason) for r in results if not r.success]
    for result, task in zip(sorted(results, key=lambda r: r.task_id), sorted(web, key=lambda t: t.id)):
        gold = [a.canonical for a in load_trajectory(Path(task.gold_trajectory or "")).actions]
        replayed = [a.canonical for a in load_trajectory(Path(result.trajectory or "")).actions]
        assert replayed == gold  # the same actions, the opening navigation included (env_start does it, once)
