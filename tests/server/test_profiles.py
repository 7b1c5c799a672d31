"""Server profiles: ``agent`` shows an agent under test only env_* and browser_*; ``full`` shows everything.

Also the ``taskloom serve --profile`` command: a bad profile is a usage error naming the choices (exit 2), and
an agent-profile server spawned over stdio (the harness's setup: one agent per server process)
can run a browser episode on the example site.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from taskloom.server.app import build_server
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.settings import Settings
from taskloom.tools.environment.site import serve_static

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "examples" / "site"
TASKLOOM = Path(sys.executable).parent / "taskloom"
CHROMIUM = Path("/usr/bin/chromium")

ENV_TOOLS = {"env_start", "env_answer", "env_close"}
BROWSER_TOOLS = {
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_select_option",
    "browser_hover",
    "browser_press_key",
    "browser_navigate",
    "browser_navigate_back",
    "browser_wait_for",
    "browser_scroll",
    "browser_take_screenshot",
    "browser_drag",
    "browser_fill_form",
    "browser_tabs",
    "browser_handle_dialog",
    "browser_file_upload",
    "browser_console_messages",
    "browser_network_requests",
    "browser_network_request",
    "browser_drop",
    "browser_resize",
    "browser_find",
    "browser_emulate_media",
    "browser_close",
}
DOC_TOOLS = {"doc_search", "doc_read"}
GRAPH_TOOLS = {
    "graph_ingest_document",
    "graph_list",
    "graph_stats",
    "graph_search",
    "graph_node",
    "graph_neighbors",
    "graph_path",
    "graph_sample_subgraph",
    "graph_export",
    "graph_delete",
}


def server_env(workspace: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(
        TASKLOOM_WORKSPACE=str(workspace),
        TASKLOOM_EMBEDDER="hashing",
        FASTMCP_SHOW_SERVER_BANNER="false",
        FASTMCP_CHECK_FOR_UPDATES="off",
    )
    return env



@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    with serve_static(SITE) as site:
        yield site.url + "/"


@pytest.fixture
def agent_server(settings: Settings) -> Any:
    return build_server(settings, profile="agent")


@pytest.fixture
def full_server(settings: Settings) -> Any:
    return build_server(settings, profile="full")


@pytest.mark.anyio
async def test_agent_profile_shows_only_env_and_browser_tools(agent_server: Any) -> None:
    async with Client(agent_server) as client:
        names = {t.name for t in await client.list_tools()}
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        instructions = client.instructions
    assert names == ENV_TOOLS | BROWSER_TOOLS | DOC_TOOLS
    assert all(n.startswith(("env_", "browser_", "doc_")) for n in names)
    assert not any(n.startswith(("graph_", "desktop_")) for n in names)
    assert resources == []
    assert templates == []
    assert instructions and "env_start" in instructions
    assert "graph" not in instructions.lower()  # nothing about tools the agent does not have


@pytest.mark.anyio
async def test_full_profile_shows_graphs_environment_and_resources(full_server: Any) -> None:
    async with Client(full_server) as client:
        names = {t.name for t in await client.list_tools()}
        resources = {str(r.uri) for r in await client.list_resources()}
        templates = {t.uriTemplate for t in await client.list_resource_templates()}
        prompts = {p.name for p in await client.list_prompts()}
        instructions = client.instructions
    assert GRAPH_TOOLS <= names
    assert ENV_TOOLS | BROWSER_TOOLS | DOC_TOOLS <= names
    assert not any(n.startswith("desktop_") for n in names)  # only with enable_desktop
    assert resources == {"taskloom://graphs", "taskloom://runs"}
    assert {"taskloom://graphs/{graph_id}", "taskloom://graphs/{graph_id}/nodes/{node_id*}"} <= templates
    assert {
        "taskloom://tasks/{task_id}", "taskloom://runs/{run_id}", "taskloom://runs/{run_id}/trajectories/{trajectory_id}",
        "taskloom://consensus/{task_id}", "taskloom://reports/{run_id}",
    } <= templates
    assert {"tasks_compose", "eval_answer", "eval_trajectory", "eval_run", "consensus_build", "consensus_analyze", "report_render"} <= names
    assert {"solve_web_task", "solve_document_task", "judge_answer", "judge_trajectory", "generate_tasks"} <= prompts
    assert all(t.startswith("taskloom://") for t in templates)
    assert instructions and "graph_ingest_document" in instructions and "env_start" in instructions


def test_serve_with_unknown_profile_exits_2_with_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(TASKLOOM), "serve", "--profile", "bogus"],
        env=server_env(tmp_path / "ws"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "bogus" in result.stderr and "'full'" in result.stderr and "'agent'" in result.stderr  # the choices, from the Literal option
    assert "Traceback" not in result.stderr
    assert result.stdout == ""  # stdout is the MCP channel; nothing may be printed there


@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
@pytest.mark.anyio
async def test_agent_profile_over_stdio_runs_an_episode(tmp_path: Path, site_url: str) -> None:
    workspace = tmp_path / "ws"
    transport = StdioTransport(
        command=str(TASKLOOM),
        args=["serve", "--profile", "agent"],
        env=server_env(workspace),
        cwd=str(tmp_path),
        log_file=tmp_path / "stderr.log",
    )
    async with Client(transport, timeout=60) as client:
        names = {t.name for t in await client.list_tools()}
        started = (await client.call_tool("env_start", {"url": site_url + "index.html"})).structured_content
        looked = (await client.call_tool("browser_snapshot", {})).structured_content  # no episode_id: bound to this process
        closed = (await client.call_tool("env_close", {})).structured_content
        after = await client.call_tool("browser_snapshot", {}, raise_on_error=False)
    assert names == ENV_TOOLS | BROWSER_TOOLS | DOC_TOOLS
    assert started is not None and looked is not None and closed is not None
    assert started["title"] == "Harbourside Library"
    assert "[ref=e" in started["snapshot"]
    assert looked["url"] == site_url + "index.html"
    assert 'searchbox "Search the catalogue"' in looked["snapshot"]
    assert closed["episode_id"] == started["episode_id"]
    assert after.is_error and "env_start" in after.content[0].text
    assert closed["trajectory"] is None  # the agent profile names no workspace path
    path = workspace.resolve() / "runs" / "episodes" / closed["episode_id"] / "trajectory.jsonl"  # TASKLOOM_WORKSPACE chose the workspace
    trajectory = load_trajectory(path)
    assert [a.name for a in trajectory.actions] == ["navigate", "snapshot"]
    assert trajectory.closed is not None and trajectory.closed.status == "closed"
    assert "Traceback" not in (tmp_path / "stderr.log").read_text(encoding="utf-8", errors="replace")
