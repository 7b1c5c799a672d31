"""The evaluation tools through a real MCP client: eval_answer, eval_trajectory, eval_run, consensus_*, report_render, resources."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from taskloom.harness.service import Harness
from taskloom.server.app import build_server
from taskloom.tools.generate.service import TaskService
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings
from taskloom.tools.tasks import Task, TaskStore
from taskloom.tools.workspace import Workspace

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "examples" / "documents" / "field-guide.md"
FIXTURES = ROOT / "tests" / "data" / "consensus"


@pytest.fixture
def document_tasks(settings: Settings) -> list[Task]:
    graphs = GraphService(settings)
    graph_id = graphs.ingest_document(GUIDE).graph_id
    result = asyncio.run(TaskService(graphs).generate(graph_id, count=3, seed=2, verify=False))
    store = TaskStore(Workspace(settings.workspace))
    return [store.load(i) for i in result.task_ids]


def _data(result: Any) -> Any:
    content = result.structured_content
    return content["result"] if set(content) == {"result"} else content


@pytest.mark.anyio
async def test_eval_answer_scores_gold_and_wrong_answers(settings: Settings, document_tasks: list[Task]) -> None:
    task = document_tasks[0]
    async with Client(build_server(settings)) as client:
        gold = _data(await client.call_tool("eval_answer", {"task_id": task.id, "answer": task.gold_answer}))
        wrong = _data(await client.call_tool("eval_answer", {"task_id": task.id, "answer": "purple elephants"}))
        with pytest.raises(ToolError, match="no LLM"):
            await client.call_tool("eval_answer", {"task_id": task.id, "answer": "x", "judge": True})
    assert gold["success"] and gold["scores"]["exact_match"] == 1.0 and gold["scores"]["f1"] == 1.0
    assert not wrong["success"] and wrong["scores"]["exact_match"] == 0.0


@pytest.mark.anyio
async def test_a_run_is_scored_reported_and_readable_as_resources(settings: Settings, document_tasks: list[Task]) -> None:
    harness = Harness(settings, build_server)
    await harness.run(document_tasks, ["oracle", "explorer"], run_id="docs", max_steps=6, timeout_s=60)
    async with Client(build_server(settings)) as client:
        summary = _data(await client.call_tool("eval_run", {"run_id": "docs"}))
        rendered = _data(await client.call_tool("report_render", {"run_id": "docs"}))
        run = json.loads((await client.read_resource("taskloom://runs/docs"))[0].text)
        episode = Path(run["results"][0]["trajectory"]).parent.name
        trajectory = json.loads((await client.read_resource(f"taskloom://runs/docs/trajectories/{episode}"))[0].text)
        html = (await client.read_resource("taskloom://reports/docs"))[0].text
        graph = json.loads((await client.read_resource(f"taskloom://consensus/{document_tasks[0].id}"))[0].text)
        verdict = _data(await client.call_tool("eval_trajectory", {"task_id": run["results"][0]["task_id"], "path": run["results"][0]["trajectory"]}))
    assert summary["episodes"] == 2 * len(document_tasks)
    oracle = next(row for row in summary["per_agent"] if row["agent"] == "oracle")
    assert oracle["success_rate"] == 1.0
    assert rendered["consensus_graphs"] == len(document_tasks) and Path(rendered["html"]).is_file()
    assert trajectory["episode"]["episode_id"] == episode
    assert "<html" in html.lower() and document_tasks[0].id in html
    assert graph["summary"]["trajectories"] == 2
    assert verdict["result"]["success"] == run["results"][0]["success"]


@pytest.mark.anyio
async def test_consensus_from_imported_data_is_built_and_analysed(settings: Settings) -> None:
    async with Client(build_server(settings)) as client:
        result = _data(await client.call_tool("consensus_build", {"paths": [str(FIXTURES / "insta.jsonl")], "source": "jsonl"}))
        built = result["graphs"]
        assert built and all(b["trajectories"] >= 1 for b in built)
        assert result["imported"]["imported"] + len(result["imported"]["skipped"]) == result["imported"]["found"] >= 1
        analysis = _data(await client.call_tool("consensus_analyze", {"task_id": built[0]["task_id"]}))
        with pytest.raises(ToolError, match="no consensus graph"):
            await client.call_tool("consensus_analyze", {"task_id": "never-built"})
    assert analysis["agents"] and analysis["strategy_entropy"] >= 0.0
    assert Path(built[0]["path"]).is_file()
