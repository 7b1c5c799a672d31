"""Client-authored tasks: tasks_draft → tasks_submit through a real MCP client, with the server's checks."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastmcp import Client

from taskloom.server.app import build_server
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings

GUIDE = Path(__file__).resolve().parents[3] / "examples" / "documents" / "field-guide.md"


@pytest.fixture
def server_and_graph(settings: Settings) -> tuple[object, str]:
    graph_id = GraphService(settings).ingest_document(GUIDE).graph_id
    return build_server(settings), graph_id


@pytest.mark.anyio
async def test_draft_then_grounded_submission_is_stored(server_and_graph: tuple[object, str]) -> None:
    server, graph_id = server_and_graph
    async with Client(server) as client:
        draft = (await client.call_tool("tasks_draft", {"graph_id": graph_id, "template_id": "table_qa_cell", "seed": 1})).structured_content
        assert draft["template_id"] == "table_qa_cell" and draft["nodes"] and "evidence" in draft["instructions"]
        cell = next(n for n in draft["nodes"] if n["type"] == "table_cell" and n["text"])
        submitted = (await client.call_tool("tasks_submit", {
            "graph_id": graph_id, "template_id": "table_qa_cell",
            "question": "What does the sensor table say in this cell of the table?", "answer": cell["text"], "evidence": [cell["id"]],
        })).structured_content
        assert submitted["accepted"] is True, submitted["problems"]
        listed = (await client.call_tool("tasks_list", {})).structured_content["result"]
        again = (await client.call_tool("tasks_submit", {
            "graph_id": graph_id, "template_id": "table_qa_cell",
            "question": "What does the sensor table say in this cell of the table?", "answer": cell["text"], "evidence": [cell["id"]],
        })).structured_content
    assert [t["id"] for t in listed] == [submitted["task"]["id"]]
    assert submitted["task"]["provenance"]["generator"] == "client"
    assert again["accepted"] is False and "near-duplicate" in again["problems"][0]


@pytest.mark.anyio
async def test_ungrounded_or_unknown_evidence_is_refused_with_reasons(server_and_graph: tuple[object, str]) -> None:
    server, graph_id = server_and_graph
    async with Client(server) as client:
        draft = (await client.call_tool("tasks_draft", {"graph_id": graph_id, "template_id": "table_qa_cell", "seed": 2})).structured_content
        node = draft["nodes"][0]["id"]
        made_up = (await client.call_tool("tasks_submit", {
            "graph_id": graph_id, "template_id": "table_qa_cell", "question": "Which planet hosts the station?",
            "answer": "Jupiter orbiting laboratory", "evidence": [node],
        })).structured_content
        missing = (await client.call_tool("tasks_submit", {
            "graph_id": graph_id, "template_id": "table_qa_cell", "question": "Which planet hosts the station?",
            "answer": "x", "evidence": ["paragraph:99999"],
        })).structured_content
        unknown = await client.call_tool("tasks_draft", {"graph_id": graph_id, "template_id": "nope"}, raise_on_error=False)
    assert made_up["accepted"] is False and "not grounded" in made_up["problems"][0] and "jupiter" in made_up["problems"][0]
    assert missing["accepted"] is False and "paragraph:99999" in missing["problems"][0]
    assert unknown.is_error and "templates:" in unknown.content[0].text
