"""Allowed roots seen from an MCP tool: the server's roots, widened by the client's advertised roots.

A client that declared the ``roots`` capability (handshake-era protocol) is asked for
its roots only when a path falls outside the server's own, so ordinary calls cost
nothing. Clients on the 2026-07-28 protocol have no back-channel for the request;
for them the server's configured roots are the whole set.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

import anyio
from fastmcp import Context
from mcp.shared.exceptions import MCPError

from .roots import OutsideRoots, Roots, roots_from_uris

__all__ = ["client_roots", "within_roots"]

T = TypeVar("T")
log = logging.getLogger(__name__)
ROOTS_TIMEOUT_S = 5.0


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
    """``check(roots)``; when the path is outside them, ``check`` again with the client's roots added."""
    try:
        return check(roots)
    except OutsideRoots:
        extra = roots_from_uris(await client_roots(ctx))
        if not extra:
            raise
        return check(roots.with_roots(extra))
