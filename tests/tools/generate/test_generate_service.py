"""tasks_generate end to end through a real MCP client: document tasks grounded in evidence, web tasks replayed."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from taskloom.server.app import build_server
from taskloom.tools.environment.site import serve_static
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.generate.service import GenerateResult
from taskloom.tools.generate.web.paths import Verdict, replay_web_task
from taskloom.tools.graph.service import GraphService
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Task
from taskloom.tools.tasks import TaskStore
from taskloom.tools.workspace import Workspace

pytestmark = pytest.mark.integration
GUIDE = Path(__file__).resolve().parents[3] / "examples" / "documents" / "field-guide.pdf"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


async def _generate(settings: Settings, graph_id: str, **args: object) -> dict:
    async with Client(build_server(settings)) as client:
        result = await client.call_tool("tasks_generate", {"graph_id": graph_id, **args})
        return result.structured_content


def test_document_tasks_are_grounded_and_reproducible(tmp_path: Path) -> None:
    runs = []
    for name in ("a", "b"):
        settings = Settings(workspace=tmp_path / name, embedder="hashing")
        graph_id = GraphService(settings).ingest_document(GUIDE).graph_id
        result = asyncio.run(_generate(settings, graph_id, count=8, seed=5))
        tasks = TaskStore(Workspace(settings.workspace)).list()
        runs.append((result, [t.model_dump(mode="json") for t in tasks]))
        kg = GraphService(settings).load(graph_id)
        assert 1 <= len(tasks) <= 8 and result["report"]["kept"] == len(tasks)
        for task in tasks:
            evidence = _norm(" ".join(kg.node(n).text for n in task.evidence))
            if task.answer_kind == "text":
                parts = [p for p in re.split(r"\n|; ", task.gold_answer or "") if p.strip()]
                assert all(_norm(p) in evidence for p in parts), (task.type, task.gold_answer)
    assert runs[0][1] == runs[1][1]  # same document, settings and seed: identical task set
    assert set(runs[0][0]["report"]["stages"]) >= {"reachability", "dedup", "coverage"}


async def _generate_verifying_all(settings: Settings, graph_id: str, **args: Any) -> GenerateResult:
    """Generation that replays every candidate before selecting (as on a Ray cluster: a replayer given)."""
    async with Runtime(settings) as runtime:

        async def every_one(tasks: list[Task]) -> list[Verdict]:
            return [await replay_web_task(task, runtime.episodes) for task in tasks]

        return await runtime.task_service().generate(graph_id, use_llm=False, replay=every_one, **args)


def test_web_tasks_are_kept_only_when_their_replay_succeeds(tmp_path: Path, crawl_site: Callable[..., str]) -> None:
    settings = Settings(workspace=tmp_path, embedder="hashing", crawl_delay=0, record_screenshots=False)
    with serve_static() as site:
        graph_id = crawl_site(Runtime(settings), site.url)
        result = asyncio.run(_generate(settings, graph_id, count=5, seed=2))
        stored = TaskStore(Workspace(tmp_path)).list(kind="web")
        every = Settings(workspace=tmp_path / "every", embedder="hashing", crawl_delay=0, record_screenshots=False)
        shutil.copytree(tmp_path / "graphs", every.workspace / "graphs")
        whole = asyncio.run(_generate_verifying_all(every, graph_id, count=5, seed=2))
    report = result["report"]
    # Verifying only the candidates the selection reached keeps what verifying all of them, then selecting, keeps.
    assert report["unverified"] > 0 and whole.report.unverified == 0 and whole.report.candidates == report["candidates"]
    assert result["task_ids"] == whole.task_ids
    assert report["stages"]["replay"]["kept"] >= len(stored) >= 3
    assert any(d["stage"] == "replay" for d in report["dropped"]) or report["stages"]["replay"]["in"] == report["stages"]["replay"]["kept"]
    assert len({t.type for t in stored}) >= 2
    for task in stored:
        assert task.start_url and task.start_url.startswith(site.url)
        assert (task.success or task.gold_answer) and task.gold_steps and task.quality["replay"]["ok"]  # an outcome to check: a state or an answer
        assert task.quality["style"]["style"] == "goal"
        replay = load_trajectory(Path(task.gold_trajectory or ""))
        assert [a.name for a in replay.actions][1:] == [s.action for s in task.gold_steps]
        assert all(a.error is None for a in replay.actions)
        public = json.dumps(task.public())
        assert all(step.selector not in public for step in task.gold_steps if step.selector)
        assert "gold_answer" not in task.public() and "success" not in task.public()
