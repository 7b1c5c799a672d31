"""``taskloom serve`` as a real process: over stdio, and over streamable HTTP on loopback.

``python -m taskloom.server.cli`` does not work (the package has no ``__main__``), so
the console script next to the interpreter is used.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
FIELD_GUIDE = ROOT / "examples" / "documents" / "field-guide.md"
TASKLOOM = Path(sys.executable).parent / "taskloom"
TOOL_NAMES = {
    "graph_ingest_document",
    "graph_ingest_website",
    "graph_list",
    "graph_stats",
    "graph_search",
    "graph_facts",
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
        TASKLOOM_ALLOW_ROOTS=json.dumps([str(Path(__file__).resolve().parents[2] / "examples")]),
        FASTMCP_SHOW_SERVER_BANNER="false",
        FASTMCP_CHECK_FOR_UPDATES="off",
    )
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.anyio
async def test_stdio_lists_tools_ingests_and_searches(tmp_path: Path) -> None:
    transport = StdioTransport(
        command=str(TASKLOOM),
        args=["serve"],
        env=server_env(tmp_path / "ws"),
        cwd=str(tmp_path),
        log_file=tmp_path / "stderr.log",
    )
    async with Client(transport, timeout=60) as client:
        names = {t.name for t in await client.list_tools()}
        report = await client.call_tool("graph_ingest_document", {"path": str(FIELD_GUIDE)})
        graph_id = report.structured_content["graph_id"]
        hits = await client.call_tool("graph_search", {"graph_id": graph_id, "query": "rain gauge", "k": 3, "node_types": ["table", "paragraph"]})
    assert {n for n in names if n.startswith("graph_")} == TOOL_NAMES
    assert graph_id.startswith("field-guide-")
    found = hits.structured_content["result"]
    assert len(found) == 3
    assert {h["type"] for h in found} <= {"table", "paragraph"}
    assert (tmp_path / "ws" / "graphs" / f"{graph_id}.json").is_file()  # the env var chose the workspace


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A ``taskloom serve --http`` process over an empty workspace, listening; terminated afterwards.

    Shared by the module's HTTP tests, which only read.
    """
    tmp_path = tmp_path_factory.mktemp("http")
    port = free_port()
    log = open(tmp_path / "http.log", "wb")
    proc = subprocess.Popen(
        [str(TASKLOOM), "serve", "--http", "--port", str(port)],
        env=server_env(tmp_path / "ws"),
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    try:
        # Wait for the server's own readiness (it listens) or its exit, however long a busy machine takes to start it;
        # the limit only keeps a hung server from hanging the suite.
        deadline = time.monotonic() + 600
        while True:
            if proc.poll() is not None:
                pytest.fail(f"server exited with {proc.returncode}: {(tmp_path / 'http.log').read_text(errors='replace')}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"server neither listened on port {port} nor exited within 600 s")
                time.sleep(0.05)
        yield proc, port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


@pytest.mark.anyio
async def test_http_lists_tools_and_lists_graphs(http_server: tuple[subprocess.Popen[bytes], int]) -> None:
    _, port = http_server
    async with Client(f"http://127.0.0.1:{port}/mcp", timeout=300) as client:  # a busy machine answers late, not never
        names = {t.name for t in await client.list_tools()}
        listed = await client.call_tool("graph_list", {})
    assert {n for n in names if n.startswith("graph_")} == TOOL_NAMES
    assert listed.structured_content == {"result": []}


def test_http_binds_loopback_only(http_server: tuple[subprocess.Popen[bytes], int]) -> None:
    proc, port = http_server
    listening = [c for c in psutil.Process(proc.pid).net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
    assert [c.laddr.port for c in listening] == [port]
    assert {c.laddr.ip for c in listening} == {"127.0.0.1"}
