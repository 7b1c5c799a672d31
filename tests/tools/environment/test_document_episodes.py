"""Document episodes through a real MCP client: an agent searches and reads the task's document, every step recorded."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from taskloom.server.app import build_server
from taskloom.tools.environment.mcp import Bound
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.generate.service import TaskService
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings
from taskloom.tools.tasks import Task, TaskStore
from taskloom.tools.workspace import Workspace

GUIDE = Path(__file__).resolve().parents[3] / "examples" / "documents" / "field-guide.md"


@pytest.fixture
def document_task(settings: Settings) -> Task:
    graphs = GraphService(settings)
    graph_id = graphs.ingest_document(GUIDE).graph_id
    service = TaskService(graphs)  # document tasks need no episode manager
    result = asyncio.run(service.generate(graph_id, count=3, seed=1, verify=False))
    assert result.task_ids, "the field guide yields document tasks"
    return TaskStore(Workspace(settings.workspace)).load(result.task_ids[0])


def _data(result: Any) -> Any:
    return result.structured_content.get("result", result.structured_content)


@pytest.mark.anyio
async def test_an_agent_reads_a_document_task_and_answers(settings: Settings, document_task: Task) -> None:
    async with Client(build_server(settings, profile="agent")) as client:
        started = (await client.call_tool("env_start", {"task_id": document_task.id})).structured_content
        assert started["instruction"] == document_task.instruction
        assert "gold_answer" not in started and "evidence" not in started
        episode = started["episode_id"]
        hits = _data(await client.call_tool("doc_search", {"query": document_task.instruction, "k": 3, "episode_id": episode}))
        assert 1 <= len(hits) <= 3 and all(h["node_id"] and h["preview"] for h in hits)
        node = (await client.call_tool("doc_read", {"node_id": hits[0]["node_id"], "episode_id": episode})).structured_content
        assert node["node_id"] == hits[0]["node_id"] and node["text"]
        with pytest.raises(ToolError, match="document task"):
            await client.call_tool("browser_snapshot", {"episode_id": episode})
        with pytest.raises(ToolError, match="no node"):
            await client.call_tool("doc_read", {"node_id": "nope", "episode_id": episode})
        await client.call_tool("env_answer", {"answer": "forty-two", "episode_id": episode})
        await client.call_tool("env_close", {"episode_id": episode})
    path = settings.workspace / "runs" / "episodes" / episode / "trajectory.jsonl"
    trajectory = load_trajectory(path)
    assert trajectory.episode.env == "document" and trajectory.episode.task_id == document_task.id
    assert [a.name for a in trajectory.actions] == ["search", "read", "read"]
    assert trajectory.actions[2].error == "no such node"
    assert trajectory.answer == "forty-two" and trajectory.closed is not None


@pytest.mark.anyio
async def test_a_bound_server_opens_its_task_and_records_the_agent(settings: Settings, document_task: Task, tmp_path: Path) -> None:
    bound = Bound(task_id=document_task.id, agent="explorer", model="none")
    async with Client(build_server(settings, profile="agent", bound=bound, episodes_dir=tmp_path / "eps")) as client:
        with pytest.raises(ToolError, match="bound to task"):
            await client.call_tool("env_start", {"url": "http://127.0.0.1:1/"})
        started = (await client.call_tool("env_start", {})).structured_content
        await client.call_tool("env_close", {})
    trajectory = load_trajectory(tmp_path / "eps" / started["episode_id"] / "trajectory.jsonl")
    assert trajectory.episode.task_id == document_task.id
    assert (trajectory.episode.agent, trajectory.episode.model) == ("explorer", "none")
