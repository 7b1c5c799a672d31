"""Why an episode failed, in words, with who failed: the agent, or Taskloom itself.

Every unsuccessful episode gets a reason (the report, ``runs show`` and ``summary.json``
read :attr:`EpisodeResult.reason`): a crash says whether the agent's code or Taskloom's
server failed; an episode that ran to its end but missed says which criterion held
not (expected vs observed), that no answer was given, or that the answer was wrong.
"""

from __future__ import annotations

import re
from pathlib import Path

from fastmcp.exceptions import ToolError

from ..tools.environment.trajectory import Trajectory
from ..tools.errors import InputError, NotFoundError
from ..tools.evaluate.model import EpisodeResult
from ..tools.tasks.model import Task

__all__ = ["crash_reason", "failure_reason"]

#: How FastMCP words a tool failure whose details it masks: an unexpected exception inside Taskloom's server.
_MASKED = re.compile(r"^Error calling tool '([^']+)'$")
_LONGEST = 600
#: The package's root (the repository root is the package ``taskloom``).
_ROOT = Path(__file__).resolve().parents[1]
#: Folders of the repository that are not Taskloom's running code (agents and tests written against it).
_NOT_OURS = frozenset({"tests", "examples", "bench", ".venv"})


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def _raised_in(exc: BaseException) -> str | None:
    """Which part of Taskloom the innermost Taskloom frame of ``exc``'s traceback is in: 'agent' (harness/agents), 'taskloom', or None."""
    where, tb = None, exc.__traceback__
    while tb is not None:
        path = Path(tb.tb_frame.f_code.co_filename).resolve()
        parts = path.relative_to(_ROOT).parts if path.is_relative_to(_ROOT) else ()
        if parts[:2] == ("harness", "agents"):
            where = "agent"
        elif parts and parts[0] not in _NOT_OURS:
            where = "taskloom"
        tb = tb.tb_next
    return where


def crash_reason(exc: BaseException) -> str:
    """The reason for an attempt that raised ``exc``, labelled ``agent error:``, ``Taskloom error:`` or ``input error:``.

    A tool error whose details the server masked is Taskloom's (an unexpected exception in
    a tool); any other tool error, and an agent process that failed, are the agent's; an
    :class:`InputError` is the run's input (a bad replay source, a missing task); anything
    else is placed by where it was raised: in an agent's code, or in Taskloom's.
    """
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    if isinstance(exc, ToolError) and (masked := _MASKED.match(text)):
        return f"Taskloom error: the server failed inside tool {masked.group(1)!r} (an internal error, masked for the agent; see the server log)"
    if isinstance(exc, ToolError):
        return f"agent error: a tool call failed and the agent did not recover ({first})"
    from .agents.command import AgentProcessError  # raised by the harness, but the agent's own process failed

    if isinstance(exc, AgentProcessError):
        return f"agent error: {first}"
    if isinstance(exc, (InputError, NotFoundError)):
        return f"input error: {_first_line(exc)}"
    if _raised_in(exc) == "taskloom":
        return f"Taskloom error: {_first_line(exc)}"
    return f"agent error: the agent crashed ({_first_line(exc)})"


def failure_reason(task: Task, result: EpisodeResult, trajectory: Trajectory | None) -> str | None:
    """``result.reason``, or for an unsuccessful episode without one, what went wrong; None for a success."""
    if result.success or result.reason:
        return result.reason
    parts = [f"{c.kind}: expected {c.expected}, observed {c.observed}" for c in result.criteria if not c.ok]
    if task.gold_answer is not None:
        if result.answer is None:
            parts.append("no answer was given (the agent never called env_answer, nor ended with one)")
        elif not any(c for c in result.criteria if not c.ok):
            scores = ", ".join(f"{k} {v:g}" for k, v in sorted(result.scores.items()) if k in ("exact_match", "f1", "numeric", "judge_quality"))
            parts.append(f"the answer {result.answer[:200]!r} does not match the task's answer" + (f" ({scores})" if scores else ""))
    closed = trajectory.closed if trajectory is not None else None
    if closed is not None and closed.reason:
        parts.append(f"episode closed: {closed.reason}")
    if not parts and trajectory is not None and trajectory.actions and trajectory.actions[-1].error:
        parts.append(f"the agent's last action failed: {trajectory.actions[-1].error}")
    if not parts and closed is not None and closed.checks is None:
        parts.append("the task has no success criteria to check and no answer to compare")
    if not parts:
        parts.append("unsuccessful without a recorded cause (no failed criterion, no answer expected)")
    text = "; ".join(parts)
    return text if len(text) <= _LONGEST else text[: _LONGEST - 1] + "…"
