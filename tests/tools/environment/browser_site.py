"""The example site served for the browser MCP tests, and the helpers those tests call tools with.

The site (examples/site) is served on 127.0.0.1 by ``http.server``; every request it gets is
logged, and a canary server on 127.0.0.2 (another host, same machine) must never get any.
"""

from __future__ import annotations

import functools
import http.server
import io
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastmcp import Client
from fastmcp.client.client import CallToolResult
from mcp.types import TextContent

from taskloom.tools.environment.trajectory import Trajectory, load_trajectory
from taskloom.tools.settings import Settings

SITE = Path(__file__).resolve().parents[3] / "examples" / "site"
CHROMIUM = Path("/usr/bin/chromium")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass
class Served:
    """One HTTP server and every request it received as (Host header, path)."""

    server: http.server.ThreadingHTTPServer
    requests: list[tuple[str, str]] = field(default_factory=list)

    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/"


class _LoggingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a directory and records each request on the server's ``Served``.

    ``/probe.html`` is a synthetic page that tries to reach the canary (image, fetch, iframe)
    and example.org, to check the domain fence covers sub-resources, not just navigations.
    """

    served: Served
    canary: Served | None = None

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - signature from the base class
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.served.requests.append((self.headers.get("Host", ""), self.path))
        if self.path.startswith("/probe.html") and self.canary is not None:
            canary = self.canary.base
            body = (
                "<!doctype html><html><head><title>Probe</title>"
                f'<link rel="stylesheet" href="{canary}probe.css"></head><body>'
                "<h1>Probe page</h1>"
                f'<img src="{canary}probe.png" alt="canary image">'
                f'<iframe src="{canary}probe-frame.html" title="canary frame"></iframe>'
                '<iframe src="https://example.org/" title="outside frame"></iframe>'
                f'<script>fetch("{canary}probe-fetch").catch(() => {{}});'
                'fetch("https://example.org/probe").catch(() => {});'
                "document.body.dataset.probed = 'yes';</script>"
                "<p>Probe done</p></body></html>"
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


def serve(host: str, directory: Path, canary: Served | None = None) -> tuple[Served, threading.Thread]:
    """Serve ``directory`` on ``host`` at a free port, in a daemon thread."""

    class Handler(_LoggingHandler):
        pass

    Handler.canary = canary
    server = http.server.ThreadingHTTPServer((host, 0), functools.partial(Handler, directory=str(directory)))
    served = Served(server)
    Handler.served = served
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return served, thread


@contextmanager
def serve_answers(answer: Callable[[str], tuple[bytes, str]]) -> Iterator[str]:
    """Serve on 127.0.0.1 (a free port, a daemon thread) what ``answer(path)`` gives: (body, content type); yields the base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
            body, kind = answer(self.path)
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@dataclass
class Site:
    """The served example site and the canary server it must never reach."""

    site: Served
    canary: Served

    @property
    def base(self) -> str:
        return self.site.base


def ref_of(snapshot: str, role: str, name: str) -> str:
    """The ref the snapshot shows for the element with this role and accessible name (any ref form)."""
    match = re.search(rf'^\s*- {re.escape(role)} "{re.escape(name)}"[^\n]*?\[ref=([^\]]+)\]', snapshot, re.M)
    assert match, f"no {role} {name!r} in snapshot:\n{snapshot}"
    return match.group(1)


async def act(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    """Call a tool that must succeed; its structured result."""
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert not result.is_error, f"{tool}({args}) failed: {text_of(result)}"
    assert result.structured_content is not None
    return result.structured_content


async def refused(client: Client, tool: str, **args: Any) -> str:
    """Call a tool that must fail with a readable one-line message (never a traceback); the message."""
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert result.is_error, f"{tool}({args}) unexpectedly succeeded: {result.structured_content}"
    message = text_of(result)
    assert message.strip(), f"{tool} failed with an empty message"
    assert "Traceback" not in message and 'File "' not in message, message
    assert "\n" not in message.strip(), f"multi-line error from {tool}: {message!r}"
    return message


def text_of(result: CallToolResult) -> str:
    """The text parts of a tool result, joined."""
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def trajectory_path(settings: Settings, episode_id: str) -> Path:
    """Where the recorder put an episode's trajectory (the agent profile does not say)."""
    return Path(settings.workspace).resolve() / "runs" / "episodes" / episode_id / "trajectory.jsonl"


def trajectory_of(settings: Settings, episode_id: str) -> Trajectory:
    return load_trajectory(trajectory_path(settings, episode_id))


def pixels(png: bytes) -> bytes:
    """A PNG's RGB pixels, to compare images regardless of encoding."""
    from PIL import Image

    return Image.open(io.BytesIO(png)).convert("RGB").tobytes()
