"""Episodes as ATIF trajectories (Harbor's Agent Trajectory Interchange Format, ``ATIF-v1.4``).

One JSON document per episode: the task's instruction as the ``user`` step, then one
``agent`` step per recorded action (the MCP tool the agent called with its arguments, and an
observation holding the text that tool answered; for actions recorded outside MCP, Taskloom's
action name and where the browser went or the error the agent was told), then the answer as a
final ``agent`` message, and a ``system`` step with how the episode closed. Taskloom's own
fields (canonical action, target element, URLs, screenshot, per-action criterion holds,
the verdict and scores) ride in the ``extra`` objects ATIF provides, so nothing recorded
is lost and nothing outside the schema is invented.

The models below are Taskloom's own reading of the published schema (required fields,
ISO 8601 timestamps, ``step_id`` counting from 1, agent-only fields only on agent steps,
observation results pointing at a tool call of the same step); they validate what we
write. Gold answers and success criteria never appear in an ATIF file: the verdict does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..environment.trajectory import ActionRecord, Trajectory, load_trajectory
from ..errors import InputError
from ..workspace import atomic_write_text
from .model import EpisodeResult

__all__ = [
    "ATIF_VERSION",
    "AtifAgent",
    "AtifToolCall",
    "AtifObservationResult",
    "AtifObservation",
    "AtifStep",
    "AtifFinalMetrics",
    "AtifTrajectory",
    "to_atif",
    "atif_file_name",
    "AtifExport",
    "write_atif",
]

ATIF_VERSION: Literal["ATIF-v1.4"] = "ATIF-v1.4"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AtifAgent(_Strict):
    """The agent system that produced the trajectory."""

    name: str = Field(description="The agent's name in the run.")
    version: str = Field(description="The agent system's version (Taskloom's, for its built-in agents).")
    model_name: str | None = Field(None, description="The LLM the agent used, when it used one.")
    extra: dict[str, Any] | None = None


class AtifToolCall(_Strict):
    """One tool call: which tool, with which arguments."""

    tool_call_id: str
    function_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class AtifObservationResult(_Strict):
    """What one tool call returned (here: where the browser went, or the error told to the agent)."""

    source_call_id: str | None = None
    content: str | None = None


class AtifObservation(_Strict):
    """The results of a step's tool calls."""

    results: list[AtifObservationResult]


class AtifStep(_Strict):
    """One turn: the instruction (user), an action or answer (agent), or the episode's close (system)."""

    step_id: int = Field(ge=1)
    timestamp: str | None = Field(None, description="ISO 8601.")
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    message: str = ""
    reasoning_content: str | None = None
    tool_calls: list[AtifToolCall] | None = None
    observation: AtifObservation | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> AtifStep:
        if self.source != "agent" and (self.tool_calls or self.reasoning_content is not None or self.model_name is not None):
            raise ValueError(f"step {self.step_id}: tool_calls, reasoning_content and model_name belong on agent steps only")
        if self.timestamp is not None:
            datetime.fromisoformat(self.timestamp.replace("Z", "+00:00"))
        calls = {c.tool_call_id for c in self.tool_calls or []}
        for result in self.observation.results if self.observation else []:
            if result.source_call_id is not None and result.source_call_id not in calls:
                raise ValueError(f"step {self.step_id}: observation refers to tool call {result.source_call_id!r}, which the step does not make")
        return self


class AtifFinalMetrics(_Strict):
    """Totals over the trajectory."""

    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_steps: int | None = None
    extra: dict[str, Any] | None = None


class AtifTrajectory(_Strict):
    """A whole episode as one ATIF document."""

    schema_version: Literal["ATIF-v1.4"] = ATIF_VERSION
    session_id: str
    agent: AtifAgent
    steps: list[AtifStep] = Field(min_length=1)
    notes: str | None = None
    final_metrics: AtifFinalMetrics | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _numbered(self) -> AtifTrajectory:
        ids = [s.step_id for s in self.steps]
        if ids != list(range(1, len(ids) + 1)):
            raise ValueError(f"step_id must count 1, 2, 3, … in order; got {ids[:10]}")
        return self


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _action_step(step_id: int, action: ActionRecord, model: str | None) -> AtifStep:
    call = AtifToolCall(tool_call_id=f"call-{action.index}", function_name=action.tool or action.name, arguments=action.args)
    if action.observation is not None:  # what the MCP tool answered the agent
        content = action.observation
    else:  # recorded outside MCP (or before observations were recorded): what the record says
        content = f"error: {action.error}" if action.error else (f"now at {action.url_after}" if action.url_after else "ok")
    extra: dict[str, Any] = {"canonical": action.canonical, "action": action.name, "duration_s": round(action.t_end - action.t_start, 3)}
    for key in ("url_before", "url_after", "screenshot"):
        value = getattr(action, key)
        if value is not None:
            extra[key] = value
    if action.target is not None:
        extra["target"] = action.target.model_dump(mode="json", exclude_none=True)
    return AtifStep(
        step_id=step_id, timestamp=_iso(action.t_start), source="agent", model_name=model, message="", reasoning_content=action.thought,
        tool_calls=[call], observation=AtifObservation(results=[AtifObservationResult(source_call_id=call.tool_call_id, content=content)]), extra=extra,
    )


def to_atif(result: EpisodeResult, trajectory: Trajectory | None, instruction: str | None, agent_version: str) -> AtifTrajectory:
    """One episode as an ATIF trajectory.

    ``trajectory`` is the recorded episode (None when none was recorded, e.g. an agent that
    crashed before acting: the trajectory then holds the instruction and the close only);
    ``instruction`` is what the agent was told (None when the task is no longer stored).
    """
    steps: list[AtifStep] = []
    start = trajectory.episode.t if trajectory else None

    def add(**fields: Any) -> None:
        steps.append(AtifStep(step_id=len(steps) + 1, **fields))

    add(source="user", timestamp=None if start is None else _iso(start), message=instruction or f"(the instruction of task {result.task_id} is not stored)")
    for action in trajectory.actions if trajectory else []:
        steps.append(_action_step(len(steps) + 1, action, result.model))
    if result.answer is not None:
        add(source="agent", model_name=result.model, message=result.answer, extra={"kind": "answer"})
    closed = trajectory.closed if trajectory else None
    verdict: dict[str, Any] = {"status": result.status, "success": result.success, "scores": result.scores}
    if result.reason:
        verdict["reason"] = result.reason
    if closed is not None and closed.final_url:
        verdict["final_url"] = closed.final_url
    add(source="system", timestamp=None if closed is None else _iso(closed.t), message=f"episode {result.status}: {'success' if result.success else 'no success'}", extra=verdict)
    session = trajectory.episode.episode_id if trajectory else f"{result.run_id or 'run'}-{result.task_id}-{result.agent}"
    return AtifTrajectory(
        session_id=session,
        agent=AtifAgent(name=result.agent, version=agent_version, model_name=result.model),
        steps=steps,
        notes="Exported by Taskloom: one agent step per recorded action; the last (system) step holds the episode's verdict.",
        final_metrics=AtifFinalMetrics(total_steps=len(steps), extra={"actions": result.steps, "tokens": result.tokens, "duration_s": result.duration_s}),
        extra={
            "run_id": result.run_id, "task_id": result.task_id, "task_kind": result.task_kind, "task_type": result.task_type,
            "difficulty": result.difficulty, "level": result.level, "env": trajectory.episode.env if trajectory else None,
            "start_url": trajectory.episode.start_url if trajectory else None,
        },
    )


def atif_file_name(result: EpisodeResult) -> str:
    """``<task id>__<agent>.json``: one file per episode of a run."""
    safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in f"{result.task_id}__{result.agent}")
    return f"{safe}.json"



class AtifExport(BaseModel):
    """What an ATIF export wrote."""

    out: str = Field(description="The folder holding one <task>__<agent>.json per episode.")
    written: list[str] = Field(default_factory=list, description="File names written.")
    without_trajectory: list[str] = Field(default_factory=list, description="Episodes whose trajectory file was not found: exported with the instruction and verdict only.")


def write_atif(
    results: Sequence[EpisodeResult],
    out: Path,
    instructions: Mapping[str, str],
    locate: Callable[[EpisodeResult], Path | None],
    agent_version: str,
    overwrite: bool = False,
) -> AtifExport:
    """Write one ATIF file per episode under ``out``; ``locate`` finds an episode's trajectory file.

    Raises
    ------
    InputError
        A file to write exists and ``overwrite`` is off.
    """
    out.mkdir(parents=True, exist_ok=True)
    report = AtifExport(out=str(out))
    for result in results:
        target = out / atif_file_name(result)
        if target.exists() and not overwrite:
            raise InputError(f"{target} already exists; pass --overwrite to replace it, or choose another --out")
        path = locate(result)
        trajectory = load_trajectory(path) if path is not None else None
        if trajectory is None:
            report.without_trajectory.append(target.name)
        document = to_atif(result, trajectory, instructions.get(result.task_id), agent_version)
        atomic_write_text(target, document.model_dump_json(indent=1, exclude_none=True) + "\n")
        report.written.append(target.name)
    return report
