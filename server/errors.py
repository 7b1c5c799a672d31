"""The one place where Taskloom's own errors become MCP errors.

Tools and resources raise :class:`~taskloom.tools.errors.TaskloomError` with a
message meant for the caller; this middleware passes that message through as a
``ToolError``/``ResourceError``. Everything else stays masked by the server's
``mask_error_details=True`` — a caller never sees a stack trace.
"""

from __future__ import annotations

import logging
from typing import Any

from fastmcp.exceptions import ResourceError, ToolError
from fastmcp.server.middleware import Middleware, MiddlewareContext
from pydantic import ValidationError

from ..tools.errors import InputError, TaskloomError
from ..tools.security.disk import disk_full

__all__ = ["TaskloomErrors", "quiet_expected_errors"]


def _taskloom_cause(exc: BaseException) -> TaskloomError | None:
    """The TaskloomError behind ``exc``; an invalid model built inside a tool counts as bad input, a full disk as DiskFullError."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, TaskloomError):
            return seen
        full = disk_full(seen)
        if full is not None:
            return full
        if isinstance(seen, ValidationError):
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in seen.errors())
            return InputError(f"invalid arguments: {problems}")
        seen = seen.__cause__ or seen.__context__
    return None


class _ExpectedErrorFilter(logging.Filter):
    """Log a tool call that failed with a TaskloomError as one warning line, not a crash with a traceback.

    The parent server repeats every mounted tool's failure as a bare "Error calling
    tool" line with no detail; that echo is dropped.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.exc_info and record.levelno >= logging.ERROR and record.getMessage().startswith("Error calling tool"):
            return False  # the parent server's echo of a mounted tool's error, already logged by the sub-server
        if record.exc_info and record.exc_info[1] is not None and _taskloom_cause(record.exc_info[1]):
            record.msg = f"{record.getMessage()}: {_taskloom_cause(record.exc_info[1])}"
            record.args = ()
            record.exc_info = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def quiet_expected_errors() -> None:
    """Install the filter on fastmcp's log handlers (idempotent)."""
    for handler in logging.getLogger("fastmcp").handlers:
        if not any(isinstance(f, _ExpectedErrorFilter) for f in handler.filters):
            handler.addFilter(_ExpectedErrorFilter())


async def _translated(context: MiddlewareContext[Any], call_next: Any, error: type[Exception]) -> Any:
    try:
        return await call_next(context)
    except Exception as exc:
        cause = _taskloom_cause(exc)
        if cause is None:
            raise
        raise error(str(cause)) from cause


class TaskloomErrors(Middleware):
    """Turn TaskloomErrors raised under a tool or resource into readable MCP errors."""

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        return await _translated(context, call_next, ToolError)

    async def on_read_resource(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        return await _translated(context, call_next, ResourceError)
