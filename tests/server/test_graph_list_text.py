"""graph_list answers a text-only client too: an empty workspace is said in words, not with no content at all."""

from __future__ import annotations

import json

import pytest
from fastmcp import Client
from mcp.types import TextContent

from taskloom.server.app import build_server
from taskloom.tools.settings import Settings


@pytest.mark.anyio
async def test_graph_list_on_an_empty_workspace_has_text_content(settings: Settings) -> None:
    async with Client(build_server(settings, profile="full")) as client:
        tool = next(t for t in await client.list_tools() if t.name == "graph_list")
        result = await client.call_tool("graph_list", {})
    assert result.structured_content == {"result": []} and result.data == []
    texts = [c.text for c in result.content if isinstance(c, TextContent)]
    assert len(texts) == 1 and texts[0].startswith("[]") and "graph_ingest_document" in texts[0]
    assert tool.output_schema is not None and tool.output_schema["properties"]["result"]["type"] == "array"
    assert tool.annotations is not None and tool.annotations.readOnlyHint is True


@pytest.mark.anyio
async def test_graph_list_text_is_the_listed_graphs_as_json(settings: Settings) -> None:
    from taskloom.tools.graph.service import GraphService

    (settings.workspace).mkdir(parents=True, exist_ok=True)
    note = settings.workspace.parent / "note.md"
    note.write_text("# Tides\n\nThe harbour has two tides a day.\n", encoding="utf-8")
    graph_id = GraphService(settings).ingest_document(note).graph_id
    async with Client(build_server(settings, profile="full")) as client:
        result = await client.call_tool("graph_list", {})
    [text] = [c.text for c in result.content if isinstance(c, TextContent)]
    assert [g["graph_id"] for g in json.loads(text)] == [graph_id] == [g.graph_id for g in result.data]
