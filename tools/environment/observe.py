"""What each MCP tool call answered the agent, recorded with the actions it made.

:class:`RecordObservations` wraps every ``tools/call``: it sets :data:`~.trajectory.CALL` to the
tool's name while the tool runs, so each action the episode records carries the tool the agent
called, and when the tool has answered it writes the answer's text (or the error the agent was
told) as an ``observation`` record beside each of those actions. ATIF exports read both
(:mod:`taskloom.tools.evaluate.atif`), so a transcript shows the MCP tool, its arguments and what
the agent saw, not Taskloom's internal action names.
"""

from __future__ import annotations

from typing import Any

from fastmcp.server.middleware import Middleware, MiddlewareContext

from .trajectory import CALL, ToolCall

__all__ = ["RecordObservations", "answer_text"]


def answer_text(result: Any) -> str:
    """The text a tool result gives the agent: its text parts, one per line (images are named, not inlined)."""
    parts = []
    for item in getattr(result, "content", None) or []:
        text = getattr(item, "text", None)
        parts.append(text if isinstance(text, str) else f"[{getattr(item, 'type', 'content')}]")
    return "\n".join(parts)


class RecordObservations(Middleware):
    """Tag the actions of each tool call with the tool, and record what the tool answered (see the module notes)."""

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        call = ToolCall(tool=str(getattr(context.message, "name", "") or "unknown"))
        token = CALL.set(call)
        try:
            result = await call_next(context)
        except Exception as exc:
            for recorder, index in call.recorded:
                recorder.observation(index, call.tool, f"error: {exc}")
            raise
        finally:
            CALL.reset(token)
        text = answer_text(result)
        for recorder, index in call.recorded:
            recorder.observation(index, call.tool, text)
        return result
