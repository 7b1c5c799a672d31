"""Which caller an MCP request comes from: the key episodes are bound to and owned by."""

from __future__ import annotations

import hashlib

from fastmcp import Context

__all__ = ["binding"]


def binding(ctx: Context) -> str | None:
    """What an episode started from this request is bound to.

    Over stdio and in memory a server process serves one client, so episodes bind to
    the process. Over HTTP they bind to the ``mcp-session-id`` when the client has one;
    sessionless HTTP requests (protocol 2026-07-28) bind to their bearer token when they
    carry one (the harness serves each command agent's episode behind a token of its
    own), else must pass ``episode_id``. The key is
    also the episode's owner: another key naming it by id is refused (sessionless
    requests share the key None, so they reach each other's episodes by id).
    """
    if ctx.transport in ("sse", "streamable-http"):
        request = ctx.request_context.request if ctx.request_context is not None else None
        session = request.headers.get("mcp-session-id") if request is not None else None
        if session:
            return f"http:{session}"
        bearer = request.headers.get("authorization") if request is not None else None  # sessionless: the token is the caller
        return f"bearer:{hashlib.sha256(bearer.encode()).hexdigest()[:32]}" if bearer else None
    return "process"
