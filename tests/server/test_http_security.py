"""``taskloom serve --http`` as a real process, attacked over real HTTP on loopback.

The matrix sends an MCP ``initialize`` POST with every mix of Origin (absent, loopback,
hostile), Host (loopback names, a DNS-rebinding name) and token (absent, wrong, right)
to servers bound on 127.0.0.1 (without and with a token) and on 0.0.0.0 (a generated
token; reached through 127.0.0.1 only), and checks each status against the rules:
bad Host or Origin → 403, token in force but not presented → 401, else 200 with an MCP
session. Then real MCP clients share one server: a second session cannot use the first
one's episode, nor can a sessionless (2026-07-28) client; sessionless clients have no
session to own by and act by explicit episode id. Last, a client advertising ``file:///`` as
its roots reaches nothing outside the server's roots, and without a token nothing that reads
gold, runs or files.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport

from taskloom.server.app import build_server
from taskloom.tools.environment.site import serve_static
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.settings import Settings

pytestmark = pytest.mark.integration

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "matrix", "version": "1"}},
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TOKEN_LINE = re.compile(r"bearer token \(shown once[^)]*\): (\S+)")
PAGE = """<!doctype html><html><head><title>Owned page</title></head>
<body><h1>Owned page</h1><button onclick="document.title='clicked'">Press me</button></body></html>"""


@dataclass
class Served:
    """A running ``taskloom serve --http`` process."""

    proc: subprocess.Popen[bytes]
    port: int
    stdout: Path
    stderr: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"  # loopback traffic only, whatever the bind address


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off", **extra)
    return env


@contextmanager
def serving(tmp: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """Run ``python -m taskloom.server.cli -w <tmp>/ws --embedder hashing serve --http --port <free> *args`` until the block ends."""
    tmp.mkdir(parents=True, exist_ok=True)
    port = free_port()
    out, err = tmp / "stdout.log", tmp / "stderr.log"
    cmd = [sys.executable, "-m", "taskloom.server.cli", "-w", str(tmp / "ws"), "--embedder", "hashing", "serve", "--http", "--port", str(port), *args]
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(cmd, env=_env(env or {}), cwd=tmp, stdout=o, stderr=e, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 600  # readiness is the event waited on; the limit only stops a hung server
        while True:
            if proc.poll() is not None:
                pytest.fail(f"server exited with {proc.returncode}: {err.read_text(errors='replace')}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"server neither listened on port {port} nor exited within 600 s")
                time.sleep(0.05)
        yield Served(proc, port, out, err)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def expected(origin: str, host: str, token: str, token_in_force: bool) -> int:
    """The rule under test, written independently of the server's code."""
    if host not in ("loopback", "configured"):
        return 403
    if origin not in ("absent", "loopback", "configured"):
        return 403
    if token_in_force and token != "right":
        return 401
    return 200


def test_http_matrix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    set_token = "matrix-token-0123456789"
    rows: list[tuple[str, str, str, str, str, int, int]] = []
    failures: list[str] = []
    configs = [
        ("127.0.0.1", "none", [], {}),
        ("127.0.0.1", "TASKLOOM_TOKEN", [], {"TASKLOOM_TOKEN": set_token}),
        ("0.0.0.0", "generated", ["--host", "0.0.0.0", "--allowed-host", "taskloom.test", "--allowed-origin", "https://app.example:8443"], {}),
    ]
    for i, (bind, token_source, args, env) in enumerate(configs):
        with serving(tmp_path / f"s{i}", *args, env=env) as served:
            # no wait needed: the server writes and flushes its announcement before it listens
            stderr = served.stderr.read_text(errors="replace")
            printed = TOKEN_LINE.findall(stderr)
            token = {"none": None, "TASKLOOM_TOKEN": set_token, "generated": printed[0] if printed else None}[token_source]
            if token_source == "generated":
                assert len(printed) == 1, f"the generated token must be printed exactly once on stderr:\n{stderr}"
                assert printed[0] not in served.stdout.read_text(errors="replace")
                assert len(printed[0]) >= 40
            else:
                assert printed == [], f"a token was printed although none was generated:\n{stderr}"
            origins = {"absent": None, "loopback": "http://localhost:5173", "hostile": "http://evil.example"}
            hosts = {"loopback": f"127.0.0.1:{served.port}", "rebinding": f"evil.example:{served.port}"}
            tokens: dict[str, str | None] = {"absent": None, "wrong": "Bearer not-the-token-at-all"}
            if token:
                tokens["right"] = f"Bearer {token}"
            cases = [(o, h, t) for o in origins for h in hosts for t in tokens]
            extra_hosts = {"loopback-v6": f"[::1]:{served.port}", "loopback-name": "localhost"}
            cases += [(("absent", h, "right" if token else "absent")) for h in extra_hosts]
            hosts.update(extra_hosts)
            if bind == "0.0.0.0":
                origins |= {"configured": "https://app.example:8443", "other-port": "https://app.example"}
                hosts |= {"configured": f"taskloom.test:{served.port}", "bind-address": f"0.0.0.0:{served.port}"}
                cases += [("configured", "loopback", "right"), ("other-port", "loopback", "right")]
                cases += [("absent", "configured", "right"), ("absent", "configured", "absent"), ("absent", "bind-address", "right")]
            else:
                origins["null"] = "null"
                cases.append(("null", "loopback", "absent"))
            with httpx.Client(timeout=30) as http:
                for origin, host, tok in cases:
                    headers = {**MCP_HEADERS, "Host": hosts[host]}
                    origin_value, authorization = origins[origin], tokens[tok]
                    if origin_value is not None:
                        headers["Origin"] = origin_value
                    if authorization is not None:
                        headers["Authorization"] = authorization
                    response = http.post(served.url, json=INITIALIZE, headers=headers)
                    host_kind = "loopback" if host.startswith("loopback") else host
                    want = expected(origin if origin != "loopback" else "loopback", host_kind, tok, token is not None)
                    shown_host = hosts[host].replace(str(served.port), "<port>")
                    rows.append((f"{bind} (token: {token_source})", origins[origin] or "-", shown_host, tok, token_source, response.status_code, want))
                    if response.status_code != want:
                        failures.append(f"{bind} Origin={origins[origin]} Host={hosts[host]} token={tok}: {response.status_code} (want {want}) {response.text[:200]}")
                    elif want == 200 and not response.headers.get("mcp-session-id"):
                        failures.append(f"{bind} {origin}/{host}/{tok}: 200 without an MCP session")
                    elif want == 401 and not response.headers.get("www-authenticate", "").startswith("Bearer"):
                        failures.append(f"{bind} {origin}/{host}/{tok}: 401 without WWW-Authenticate: Bearer")
                    elif want == 403 and not ("Host" in response.json()["reason"] or "Origin" in response.json()["reason"]):
                        failures.append(f"{bind} {origin}/{host}/{tok}: 403 that does not say why: {response.text}")
    table = ["", "HTTP matrix: POST /mcp (MCP initialize) to a real `taskloom serve --http`, connected through 127.0.0.1", ""]
    table.append(f"| {'server (bind, token)':<34} | {'Origin':<26} | {'Host':<22} | {'Authorization':<13} | status | expected |")
    table.append(f"|{'-' * 36}|{'-' * 28}|{'-' * 24}|{'-' * 15}|--------|----------|")
    for server, origin, host, tok, _, got, want in rows:
        table.append(f"| {server:<34} | {origin:<26} | {host:<22} | {tok:<13} | {got:<6} | {want:<8} |")
    counts = {code: sum(1 for r in rows if r[5] == code) for code in (200, 401, 403)}
    table.append(f"\n{len(rows)} requests: {counts[200]} × 200, {counts[401]} × 401, {counts[403]} × 403; mismatches: {len(failures)}")
    with capsys.disabled():
        print("\n".join(table))
    assert not failures, "\n".join(failures)
    assert counts[200] and counts[401] and counts[403]


def test_bad_allowed_origin_is_refused_at_start(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "taskloom.server.cli", "-w", str(tmp_path / "ws"), "--embedder", "hashing"]
    cmd += ["serve", "--http", "--port", str(free_port()), "--allowed-origin", "evil.example/path"]
    done = subprocess.run(cmd, env=_env({}), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--allowed-origin 'evil.example/path' is not an origin" in done.stderr
    assert "Traceback" not in done.stderr


async def _error(client: Client, tool: str, args: dict[str, object]) -> str:
    """Call a tool that must fail; the error text."""
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert result.is_error, f"{tool} succeeded for another session's episode: {result.structured_content}"
    return " ".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.anyio
async def test_second_http_session_cannot_use_first_sessions_episode(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(PAGE, encoding="utf-8")
    token = "two-clients-token-42"
    auth = {"Authorization": f"Bearer {token}"}
    with serve_static(site) as static, serving(tmp_path / "server", "--token", token) as served:
        async with (
            Client(StreamableHttpTransport(served.url, headers=auth), timeout=60, mode="legacy") as a,
            Client(StreamableHttpTransport(served.url, headers=auth), timeout=60, mode="legacy") as b,
            Client(StreamableHttpTransport(served.url, headers=auth), timeout=60) as sessionless,
        ):
            started = await a.call_tool("env_start", {"url": f"{static.url}/index.html"})
            episode = started.structured_content["episode_id"]
            assert "Press me" in started.structured_content["snapshot"]

            refusals = {
                "browser_snapshot": await _error(b, "browser_snapshot", {"episode_id": episode}),
                "browser_click": await _error(b, "browser_click", {"element": "Press me button", "ref": "e3", "episode_id": episode}),
                "browser_navigate": await _error(b, "browser_navigate", {"url": f"{static.url}/index.html", "episode_id": episode}),
                "doc_search": await _error(b, "doc_search", {"query": "page", "episode_id": episode}),
                "env_answer": await _error(b, "env_answer", {"answer": "hijacked", "episode_id": episode}),
                "env_close": await _error(b, "env_close", {"episode_id": episode}),
            }
            refusals["browser_snapshot (sessionless client)"] = await _error(sessionless, "browser_snapshot", {"episode_id": episode})
            for tool, text in refusals.items():
                assert f"episode_id '{episode}': that episode belongs to another session; start your own with env_start" in text, (tool, text)
            # B without an id has no episode of its own yet; it is not handed A's.
            assert "no episode" in await _error(b, "browser_snapshot", {})

            own = await b.call_tool("env_start", {"url": f"{static.url}/index.html"})
            b_episode = own.structured_content["episode_id"]
            assert b_episode != episode
            assert (await b.call_tool("browser_snapshot", {})).structured_content["url"].endswith("/index.html")
            assert "belongs to another session" in await _error(a, "browser_snapshot", {"episode_id": b_episode})

            # A sessionless (2026-07-28) client has no session to own by: it keeps working by explicit id.
            assert sessionless.protocol_version == "2026-07-28" and a.protocol_version != "2026-07-28"
            loose = (await sessionless.call_tool("env_start", {"url": f"{static.url}/index.html"})).structured_content["episode_id"]
            assert "Press me" in (await sessionless.call_tool("browser_snapshot", {"episode_id": loose})).structured_content["snapshot"]
            assert "belongs to another session" in await _error(a, "browser_snapshot", {"episode_id": loose})
            await sessionless.call_tool("env_close", {"episode_id": loose})

            # A still owns its episode and finishes it; nothing B tried reached it.
            snapshot = await a.call_tool("browser_snapshot", {"episode_id": episode})
            assert "Press me" in snapshot.structured_content["snapshot"]
            await a.call_tool("env_answer", {"answer": "from A", "episode_id": episode})
            closed = await a.call_tool("env_close", {"episode_id": episode})
            await b.call_tool("env_close", {})
        path = Path(closed.structured_content["trajectory"])
    record = load_trajectory(path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert [line["answer"] for line in lines if line["kind"] == "answer"] == ["from A"]  # B's answer never landed
    assert record.closed is not None and record.closed.status == "closed"
    assert [a.name for a in record.actions] == ["navigate", "snapshot"], record.actions  # A's own; none of B's


@pytest.mark.anyio
async def test_second_http_session_cannot_drive_first_sessions_desktop(tmp_path: Path) -> None:
    with serving(tmp_path / "server", "--enable-desktop") as served:
        async with (
            Client(StreamableHttpTransport(served.url), timeout=60, mode="legacy") as a,
            Client(StreamableHttpTransport(served.url), timeout=60, mode="legacy") as b,
        ):
            episode = (await a.call_tool("env_start", {"environment": "desktop"})).structured_content["episode_id"]
            refusals = [
                await _error(b, "desktop_screenshot", {"episode_id": episode}),
                await _error(b, "desktop_click", {"episode_id": episode, "x": 10, "y": 10}),
                await _error(b, "env_answer", {"answer": "hijacked", "episode_id": episode}),
                await _error(b, "env_close", {"episode_id": episode}),
            ]
            assert all("belongs to another session" in text for text in refusals), refusals
            shot = await a.call_tool("desktop_screenshot", {"episode_id": episode})
            assert shot.content[0].type == "image"
            closed = await a.call_tool("env_close", {"episode_id": episode})
    record = load_trajectory(Path(closed.structured_content["trajectory"]))
    assert [a.name for a in record.actions] == ["screenshot"] and record.answer is None  # A's screenshot only; B's click and answer never landed


@pytest.mark.anyio
async def test_http_clients_cannot_widen_the_roots_and_need_a_token_for_gold(tmp_path: Path) -> None:
    """A client advertising ``file:///`` as its roots reaches nothing outside the server's roots over HTTP,
    with or without a token; without one, what reads gold, runs or files is refused; in memory (as over stdio) the
    client's roots still count."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.md"
    secret.write_text("# Secret\n\nThe vault code is 4711 and nobody outside the roots may read it.\n", encoding="utf-8")
    victim = outside / "victim.json"
    victim.write_text("{}", encoding="utf-8")
    everything = ["file:///"]
    token = "roots-probe-token-0042"
    with serving(tmp_path / "tokened", "--token", token) as served:
        async with Client(StreamableHttpTransport(served.url, headers={"Authorization": f"Bearer {token}"}), roots=everything, timeout=60, mode="legacy") as client:
            read = await _error(client, "graph_ingest_document", {"path": str(secret)})
            shadow = await _error(client, "graph_ingest_document", {"path": "/etc/shadow"})
            wrote = await _error(client, "graph_export", {"graph_id": "any-graph", "path": str(victim), "overwrite": True})
            listed = await client.call_tool("tasks_list", {})  # with the token, gold tools answer
    for text in (read, shadow, wrote):
        assert "outside the allowed roots" in text and "over HTTP the roots a client advertises do not count" in text, text
    assert victim.read_text(encoding="utf-8") == "{}"
    assert not listed.is_error

    with serving(tmp_path / "tokenless") as served:
        async with Client(StreamableHttpTransport(served.url), roots=everything, timeout=60, mode="legacy") as client:
            refused = {tool: await _error(client, tool, args) for tool, args in [
                ("graph_ingest_document", {"path": str(secret)}),
                ("tasks_list", {}),
                ("tasks_get", {"task_id": "doc-0000"}),
                ("eval_run", {"run_id": "run-1"}),
                ("graph_export", {"graph_id": "any-graph", "path": str(victim), "overwrite": True}),
            ]}  # fmt: skip
            with pytest.raises(Exception, match="needs a bearer token"):
                await client.read_resource("taskloom://tasks/doc-0000")
            graphs = await client.call_tool("graph_list", {})  # what reads no gold and no file still answers
        stderr = served.stderr.read_text(errors="replace")
    for tool, text in refused.items():
        assert f"{tool} reads task gold, runs or files; over HTTP it needs a bearer token" in text and "--token" in text, (tool, text)
    assert graphs.structured_content == {"result": []}
    assert "without a token, what reads task gold, runs or files is refused over HTTP" in stderr, stderr

    server = build_server(Settings(workspace=tmp_path / "memory-ws", embedder="hashing"))
    async with Client(server, roots=[outside.as_uri()], mode="legacy") as client:  # in memory, as over stdio: the client is the user
        report = await client.call_tool("graph_ingest_document", {"path": str(secret)})
    assert report.structured_content["nodes"] > 0
