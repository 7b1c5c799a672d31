"""The MCP Inspector CLI (npm, pinned by tests/data/fetch-mcp-inspector.sh) lists every tool of ``taskloom serve``: an independent client sees what ours sees."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from fastmcp import Client

from taskloom.server.app import build_server
from taskloom.tools.settings import Settings

pytestmark = pytest.mark.integration
TASKLOOM = Path(sys.executable).parent / "taskloom"
ROOT = Path(__file__).resolve().parents[2]
FETCH = ROOT / "tests" / "data" / "fetch-mcp-inspector.sh"
INSPECTOR = ROOT / "tests" / "data" / "cache" / "mcp-inspector" / "node_modules" / ".bin" / "mcp-inspector"


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm, which `make setup` installs")
def test_inspector_cli_lists_every_tool(tmp_path: Path) -> None:
    profile = "full"  # the agent profile's list is checked in test_profiles.py; one Inspector start is enough
    subprocess.run(["bash", str(FETCH)], check=True)  # `make test-data` installed it: a no-op then
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(TASKLOOM_WORKSPACE=str(tmp_path / "ws"), TASKLOOM_EMBEDDER="hashing", FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off")
    command = [str(INSPECTOR), "--cli", str(TASKLOOM), "serve", "--profile", profile, "--method", "tools/list"]
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    listed = {tool["name"] for tool in json.loads(done.stdout)["tools"]}

    async def ours() -> set[str]:
        async with Client(build_server(Settings(workspace=tmp_path / "ws", embedder="hashing"), profile="full")) as client:
            return {t.name for t in await client.list_tools()}

    expected = anyio.run(ours)
    assert listed == expected
    assert {"env_start", "browser_click", "doc_search"} <= listed
    assert {"graph_ingest_document", "tasks_generate"} <= listed
