"""A run survives its agents: one that crashes or hangs ends its own episode with the reason, the others go on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from taskloom.harness.service import Harness
from taskloom.harness.store import RunStore
from taskloom.server.app import build_server
from taskloom.tools.errors import InputError
from taskloom.tools.generate.service import TaskService
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings
from taskloom.tools.tasks import Task, TaskStore
from taskloom.tools.workspace import Workspace

GUIDE = Path(__file__).resolve().parents[2] / "examples" / "documents" / "field-guide.md"


@pytest.fixture
def document_task(settings: Settings) -> Task:
    graphs = GraphService(settings)
    graph_id = graphs.ingest_document(GUIDE).graph_id
    ids = asyncio.run(TaskService(graphs).generate(graph_id, count=1, seed=4, verify=False)).task_ids
    return TaskStore(Workspace(settings.workspace)).load(ids[0])


@pytest.mark.integration
def test_a_crashing_and_a_hanging_agent_fail_alone(settings: Settings, document_task: Task, tmp_path: Path, agent_dir: Path, agent_python: str) -> None:
    hang = agent_dir / "hang.py"  # the command agent runs sandboxed: its script must be readable by the agent user
    hang.write_text("import time\ntime.sleep(60)\n")
    hang.chmod(0o644)
    broken = tmp_path / "broken.jsonl"  # exists (inside the allowed roots) but is no trajectory: the replay crashes mid-run
    broken.write_text('{"kind": "noise"}\n', encoding="utf-8")
    agents = [f"replay:source={broken},name=broken", f"command:name=sleeper,cmd={agent_python} {hang}", "oracle"]
    asyncio.run(Harness(settings, build_server).run([document_task], agents, run_id="rough", timeout_s=4, concurrency=3))
    results = {r.agent: r for r in RunStore(Workspace(settings.workspace), "rough").results()}
    assert set(results) == {"broken", "sleeper", "oracle"}
    assert results["broken"].status == "crashed" and "broken.jsonl is not a trajectory file" in (results["broken"].reason or "")
    assert results["sleeper"].status == "timeout" and not results["sleeper"].success
    assert results["oracle"].status == "finished" and results["oracle"].success


def test_bad_agents_are_refused_before_anything_runs(settings: Settings, document_task: Task) -> None:
    harness = Harness(settings, build_server)
    for agents, message in ((["wizard"], "unknown agent kind"), (["explorer:speed=2"], "does not take speed"), (["oracle", "oracle"], "must differ")):
        with pytest.raises(InputError, match=message):
            asyncio.run(harness.run([document_task], agents))
    assert not (settings.workspace / "runs").exists() or not list((settings.workspace / "runs").glob("*/run.json"))
