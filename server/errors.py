"""The one place where Taskloom's own errors become MCP errors.

Tools and resources raise :class:`~taskloom.tools.errors.TaskloomError` with a
message meant for the caller; this middleware passes that message through as a
``ToolError``/``ResourceError``. Everything else stays masked by the server's
``mask_error_details=True`` — a caller never sees a stack trace.
"""

from __future__ import annotations

from typing import Any

from fastmcp.exceptions import ResourceError, ToolError
from fastmcp.server.middleware import Middleware, MiddlewareContext

from ..tools.errors import TaskloomError

__all__ = ["TaskloomErrors"]


def _taskloom_cause(exc: BaseException) -> TaskloomError | None:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, TaskloomError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


class TaskloomErrors(Middleware):
    """Turn TaskloomErrors raised under a tool or resource into readable MCP errors."""

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        try:
            return await call_next(context)
        except Exception as exc:
            cause = _taskloom_cause(exc)
            if cause is None:
                raise
            raise ToolError(str(cause)) from cause

    async def on_read_resource(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        try:
            return await call_next(context)
        except Exception as exc:
            cause = _taskloom_cause(exc)
            if cause is None:
                raise
            raise ResourceError(str(cause)) from cause
