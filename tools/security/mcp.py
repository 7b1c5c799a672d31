"""Allowed roots and gold seen from an MCP request: who the caller is decides what it may touch.

Over stdio (and in memory) the client is the user who started the server: a client that
declared the ``roots`` capability (handshake-era protocol) is asked for its roots when a
path falls outside the server's own, and those roots widen the allowed set (so ordinary
calls cost nothing). Clients on the 2026-07-28 protocol have no back-channel for the
request; for them the server's configured roots are the whole set.

Over HTTP the client is whoever reaches the port, so the roots it advertises never
count: only the workspace and ``--allow-root`` folders do (:func:`within_roots`). And
without a bearer token, the tools, resources and prompts that read task gold, runs or
files are refused (:class:`GoldNeedsToken`); :class:`~.http_guard.HttpGuard` marks each
request whose token it checked (:data:`~.http_guard.BEARER_CHECKED`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from fastmcp import Context
from fastmcp.exceptions import PromptError, ResourceError, ToolError
from fastmcp.server.middleware import Middleware, MiddlewareContext
from mcp.shared.exceptions import MCPError

from .http_guard import BEARER_CHECKED
from .roots import OutsideRoots, Roots, roots_from_uris

__all__ = ["GoldNeedsToken", "client_roots", "over_http", "token_checked", "within_roots", "GOLD_TOOLS", "GOLD_RESOURCES", "GOLD_PROMPTS"]

T = TypeVar("T")
log = logging.getLogger(__name__)
ROOTS_TIMEOUT_S = 5.0
HTTP_TRANSPORTS = frozenset({"sse", "streamable-http"})

#: Tools that read task gold, runs or files (by name or namespace prefix): refused over HTTP without a token.
GOLD_TOOLS = ("tasks_", "eval_", "consensus_", "report_", "graph_ingest_document", "graph_export")
#: Resources holding gold or runs (URI prefixes).
GOLD_RESOURCES = ("taskloom://tasks", "taskloom://runs", "taskloom://consensus", "taskloom://reports")
#: Prompts that show gold or read a file.
GOLD_PROMPTS = frozenset({"judge_answer", "judge_trajectory"})
_NEEDS_TOKEN = (
    "over HTTP it needs a bearer token: restart the server with --token (or TASKLOOM_TOKEN) and send "
    "'Authorization: Bearer <token>', or connect over stdio"
)


def _request(ctx: Context | None) -> Any:
    """The HTTP request behind an MCP call (a Starlette Request), or None."""
    if ctx is None or ctx.request_context is None:
        return None
    return getattr(ctx.request_context, "request", None)


def over_http(ctx: Context | None) -> bool:
    """Whether the MCP call came over HTTP (not stdio, not in memory)."""
    return ctx is not None and (ctx.transport in HTTP_TRANSPORTS or _request(ctx) is not None)


def token_checked(ctx: Context | None) -> bool:
    """Whether the call came over HTTP with a bearer token the server checked."""
    request = _request(ctx)
    state = request.scope.get("state") if request is not None else None
    return isinstance(state, dict) and state.get(BEARER_CHECKED) is True


async def client_roots(ctx: Context | None) -> list[str]:
    """The ``file://`` roots the MCP client advertises (empty when it declares none or cannot be asked)."""
    if ctx is None or ctx.request_context is None:
        return []
    session = ctx.session
    capabilities = session.client_capabilities
    if capabilities is None or capabilities.roots is None or not session.can_send_request:
        return []
    try:
        with anyio.fail_after(ROOTS_TIMEOUT_S):
            result = await session.list_roots()
    except (MCPError, TimeoutError, OSError, anyio.BrokenResourceError) as exc:
        log.warning("the client declared roots but did not list them (%s); using the server's roots", exc)
        return []
    return [str(root.uri) for root in result.roots]


async def within_roots(ctx: Context | None, roots: Roots, check: Callable[[Roots], T]) -> T:
    """``check(roots)``; when the path is outside them, ``check`` again with the client's roots added (never over HTTP)."""
    try:
        return check(roots)
    except OutsideRoots as exc:
        if over_http(ctx):
            raise OutsideRoots(f"{exc}; over HTTP the roots a client advertises do not count") from None
        extra = roots_from_uris(await client_roots(ctx))
        if not extra:
            raise
        return check(roots.with_roots(extra))


class GoldNeedsToken(Middleware):
    """Over HTTP without a bearer token, refuse the tools, resources and prompts that read task gold, runs or files.

    On loopback a server needs no token by default, and then any local process (an agent
    under test among them) could reach it; these calls say what to do instead.
    """

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        name = str(context.message.name)
        if name.startswith(GOLD_TOOLS) and self._tokenless(context):
            raise ToolError(f"{name} reads task gold, runs or files; {_NEEDS_TOKEN}")
        return await call_next(context)

    async def on_read_resource(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        uri = str(context.message.uri)
        if uri.startswith(GOLD_RESOURCES) and self._tokenless(context):
            raise ResourceError(f"{uri} holds task gold or runs; {_NEEDS_TOKEN}")
        return await call_next(context)

    async def on_get_prompt(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        name = str(context.message.name)
        if name in GOLD_PROMPTS and self._tokenless(context):
            raise PromptError(f"prompt {name} shows task gold or reads a file; {_NEEDS_TOKEN}")
        return await call_next(context)

    @staticmethod
    def _tokenless(context: MiddlewareContext[Any]) -> bool:
        ctx = context.fastmcp_context
        return over_http(ctx) and not token_checked(ctx)
