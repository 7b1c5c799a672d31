"""The agent profile's tool surface, pinned: names, parameters, required fields, annotations and output schemas.

Every tool of both profiles (agent and full) is described and annotated. An agent under
test sees exactly the agent tools; a change to them changes what every agent
and every prompt written for Playwright MCP can do, so it must be deliberate. When the
change is intended, refresh the snapshot and commit it with the change:

    TASKLOOM_UPDATE_SCHEMA_SNAPSHOT=1 .venv/bin/pytest tests/server/test_agent_tool_schema.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from taskloom.server.app import build_server
from taskloom.tools.environment.browser_mcp import LEFT_OUT
from taskloom.tools.settings import Settings

SNAPSHOT = Path(__file__).parent / "data" / "agent_tools.json"
REFRESH = "TASKLOOM_UPDATE_SCHEMA_SNAPSHOT"
#: Tools that run page JavaScript or code (current and older names): never offered to an agent under test. Which tools of the
#: real package are offered is checked against its own tools/list in tests/tools/environment/test_playwright_mcp_reference.py.
NO_CODE = {*LEFT_OUT, "browser_evaluate", "browser_run_code", "browser_run_code_unsafe"}


def _surface(tools: list[Any]) -> dict[str, Any]:
    """What is pinned of each tool."""
    out = {}
    for tool in sorted(tools, key=lambda t: t.name):
        schema = tool.input_schema or {}
        annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
        out[tool.name] = {
            "title": tool.title,
            "parameters": sorted(schema.get("properties", {})),
            "required": sorted(schema.get("required", [])),
            "annotations": {k: v for k, v in sorted(annotations.items()) if k.endswith("Hint")},
            "output_schema": sorted((tool.output_schema or {}).get("properties", {})),
        }
    return out


async def _tools(settings: Settings, profile: str = "agent") -> list[Any]:
    async with Client(build_server(settings, profile=profile)) as client:
        return list(await client.list_tools())


@pytest.mark.anyio
async def test_agent_tools_match_the_snapshot(settings: Settings) -> None:
    surface = _surface(await _tools(settings))
    if os.environ.get(REFRESH) == "1":
        SNAPSHOT.write_text(json.dumps(surface, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert SNAPSHOT.is_file(), f"no {SNAPSHOT}; create it with {REFRESH}=1 (see this file's docstring)"
    pinned = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    added, removed = sorted(set(surface) - set(pinned)), sorted(set(pinned) - set(surface))
    changed = sorted(name for name in set(surface) & set(pinned) if surface[name] != pinned[name])
    assert not (added or removed or changed), (
        f"the agent profile's tools changed (added {added}, removed {removed}, changed {changed}); if that is deliberate, "
        f"refresh the snapshot with {REFRESH}=1 .venv/bin/pytest {Path(__file__).relative_to(Path.cwd()) if Path(__file__).is_relative_to(Path.cwd()) else __file__} "
        "and commit tests/server/data/agent_tools.json with the change"
    )


@pytest.mark.anyio
async def test_the_agent_profile_offers_no_javascript(settings: Settings) -> None:
    names = {t.name for t in await _tools(settings)}
    assert "browser_click" in names and not names & NO_CODE
    assert all(name.split("_")[0] in {"env", "browser", "doc"} for name in names), sorted(names)


@pytest.mark.anyio
@pytest.mark.parametrize("profile", ["agent", "full"])
async def test_every_tool_and_parameter_is_described_and_annotated(settings: Settings, profile: str) -> None:
    undescribed = []
    for tool in await _tools(settings, profile):
        schema = tool.input_schema or {}
        assert tool.description and tool.description.strip(), f"{tool.name} has no description"
        assert tool.annotations is not None and tool.annotations.readOnlyHint is not None and tool.annotations.openWorldHint is not None, tool.name
        if not tool.annotations.readOnlyHint:
            assert tool.annotations.destructiveHint is not None, f"{tool.name}: an acting tool must say whether it is destructive"
        objects = [(tool.name, schema), *((f"{tool.name}/{name}", sub) for name, sub in schema.get("$defs", {}).items())]
        for where, node in objects:
            for name, prop in node.get("properties", {}).items():
                if not prop.get("description"):
                    undescribed.append(f"{where}.{name}")
    assert not undescribed, f"parameters without a description: {undescribed}"


@pytest.mark.anyio
async def test_annotations_say_which_tools_reach_websites(settings: Settings) -> None:
    tools = {t.name: t.annotations for t in await _tools(settings)}
    for name in ("browser_navigate", "browser_click", "browser_type", "browser_select_option", "browser_fill_form", "browser_tabs", "env_start"):
        assert tools[name] is not None and tools[name].openWorldHint is True, name
    for name in ("browser_snapshot", "browser_take_screenshot", "browser_console_messages", "browser_network_requests", "doc_search", "doc_read"):
        assert tools[name] is not None and tools[name].readOnlyHint is True and tools[name].openWorldHint is False, name
    for name in ("browser_click", "browser_handle_dialog", "browser_fill_form", "env_close"):
        assert tools[name] is not None and tools[name].destructiveHint is True, name
    assert tools["browser_navigate"] is not None and tools["browser_navigate"].destructiveHint is False


@pytest.mark.anyio
async def test_the_screenshot_tool_has_an_output_schema(settings: Settings) -> None:
    shot = next(t for t in await _tools(settings) if t.name == "browser_take_screenshot")
    assert shot.output_schema is not None and {"format", "url", "bytes", "marks"} <= set(shot.output_schema["properties"])
