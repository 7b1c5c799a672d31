"""``taskloom bridge URL``: relay a stdio MCP client to a Taskloom server over streamable HTTP.

For agents whose MCP client only starts stdio servers: the harness serves each
episode's server over loopback HTTP and, with ``command:transport=stdio``, names this
command in the agent's MCP config. The bridge runs as the agent's user, reads no
settings, holds no workspace path, and takes the server's bearer token from
``TASKLOOM_BRIDGE_TOKEN`` (never from the command line, where ``ps`` would show it).
It keeps one MCP session to the server for its whole life (episodes belong to the
session that started them) and exits when its stdin closes.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import anyio
import typer

from ...tools.errors import InputError
from .common import run

__all__ = ["bridge", "TOKEN_ENV"]

TOKEN_ENV = "TASKLOOM_BRIDGE_TOKEN"


def _check(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"URL {url!r} is not an http(s) URL; give the server's MCP endpoint, e.g. http://127.0.0.1:8765/mcp")
    return url


async def _relay(url: str, token: str | None) -> None:
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport
    from fastmcp.server import create_proxy

    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with Client(StreamableHttpTransport(url, headers=headers), timeout=300) as client:
        proxy = create_proxy(client, name="taskloom-bridge")  # a connected client: one backend session, reused
        await proxy.run_async(transport="stdio", show_banner=False)


def bridge(url: str = typer.Argument(..., help="The server's MCP endpoint, e.g. http://127.0.0.1:8765/mcp.")) -> None:
    """Relay MCP over stdio to a Taskloom HTTP server (token from TASKLOOM_BRIDGE_TOKEN)."""
    os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
    os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
    checked = run(_check, url)
    run(anyio.run, _relay, checked, os.environ.get(TOKEN_ENV) or None)
