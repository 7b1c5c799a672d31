"""Trajectories: what an agent did in an environment, recorded durably as it happens.

A trajectory file is JSON Lines: one ``episode`` header, then ``action`` records
(each fsynced before the action's result returns to the agent), an optional
``answer`` and a final ``close``. A crash loses at most the action in flight.

Over MCP, each action also records the tool the agent called (``tool``), and once the tool has
answered, an ``observation`` record holds the text the agent received for it (:class:`ToolCall`,
set around every tool call by :class:`~taskloom.tools.environment.observe.RecordObservations`);
:func:`load_trajectory` joins it to its action.
"""

from __future__ import annotations

import json
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..tasks.model import SuccessCriterion
from ..errors import InputError, TaskloomError
from ..workspace import append_jsonl

__all__ = [
    "TRAJECTORY_VERSION",
    "Target",
    "EpisodeRecord",
    "ActionRecord",
    "AnswerRecord",
    "CloseRecord",
    "CriterionResult",
    "Trajectory",
    "Recorder",
    "StepLimitReached",
    "load_trajectory",
    "ToolCall",
    "CALL",
    "OBSERVATION_LIMIT",
]

TRAJECTORY_VERSION = 1


CloseStatus = Literal["closed", "timeout", "error"]
OBSERVATION_LIMIT = 200_000  #: characters of a tool's answer kept in an observation record


@dataclass
class ToolCall:
    """The MCP tool call in progress: its name, and the actions recorded while it ran (recorder, index)."""

    tool: str
    recorded: list[tuple[Recorder, int]] = field(default_factory=list)


#: The tool call the current task (or a thread started from it) is serving; None outside MCP tool calls.
CALL: ContextVar[ToolCall | None] = ContextVar("taskloom_tool_call", default=None)

class Target(BaseModel):
    """The element an action acted on, as the page described it at the time."""

    role: str | None = Field(None, description="ARIA role, e.g. 'button'.")
    name: str | None = Field(None, description="Accessible name.")
    text: str | None = Field(None, description="Visible text (shortened).")
    selector: str | None = Field(None, description="A CSS selector matching exactly this element.")
    ref: str | None = Field(None, description="Snapshot ref, e.g. 'e12'.")
    x: float | None = Field(None, description="Screen x (desktop actions).")
    y: float | None = Field(None, description="Screen y (desktop actions).")


class EpisodeRecord(BaseModel):
    """First line: which episode, environment, task and agent."""

    kind: Literal["episode"] = "episode"
    version: int = TRAJECTORY_VERSION
    episode_id: str
    env: Literal["browser", "desktop", "document"]
    task_id: str | None = None
    agent: str | None = None
    model: str | None = None
    start_url: str | None = None
    t: float = Field(default_factory=time.time, description="Unix time the episode started.")


class ActionRecord(BaseModel):
    """One action, recorded whether it succeeded or failed."""

    kind: Literal["action"] = "action"
    index: int = Field(description="0-based position in the trajectory.")
    name: str = Field(description="Tool name without prefix, e.g. 'click', 'type', 'navigate'.")
    args: dict[str, Any] = Field(default_factory=dict, description="Arguments as the agent gave them.")
    canonical: str = Field(description="Canonical form, e.g. click(text='Search', element='button').")
    target: Target | None = None
    url_before: str | None = None
    url_after: str | None = None
    t_start: float
    t_end: float
    screenshot: str | None = Field(None, description="Path of a screenshot taken after the action, relative to the episode folder.")
    error: str | None = Field(None, description="What went wrong, as told to the agent; None on success.")
    thought: str | None = Field(None, description="The agent's stated reason, when it gave one.")
    holds: list[str] | None = Field(
        None, description="Composite tasks: keys (criterion_key) of the watched state checks that held after this action."
    )
    tool: str | None = Field(None, description="The MCP tool the agent called for it (browser_click, env_act …); None outside MCP.")
    observation: str | None = Field(None, description="The text the tool answered the agent (from the observation record written after it).")


class AnswerRecord(BaseModel):
    """The agent's final answer."""

    kind: Literal["answer"] = "answer"
    answer: str
    source: Literal["tool", "last_message"] | None = Field(None, description="How it was given: env_answer (tool), or the agent's last message read by the harness.")
    t: float = Field(default_factory=time.time)


class CriterionResult(BaseModel):
    """One success criterion's verdict, with what was observed."""

    criterion: SuccessCriterion
    ok: bool
    observed: str


class CloseRecord(BaseModel):
    """Last line: how the episode ended and, for a task with criteria, the final-state verdicts."""

    kind: Literal["close"] = "close"
    status: CloseStatus = "closed"
    reason: str | None = None
    checks: list[CriterionResult] | None = Field(None, description="The task's success criteria checked on the final page (never shown to the agent).")
    success: bool | None = Field(None, description="All criteria held; None when the task has none or was not checked.")
    final_url: str | None = Field(None, description="Browser episodes: the page the episode ended on.")
    final_text: str | None = Field(None, description="Browser episodes: that page's visible text (first 4,000 characters), for judges.")
    screenshot: str | None = Field(None, description="Browser episodes of a task not known to have succeeded: the final page's screenshot, relative to the episode folder.")
    t: float = Field(default_factory=time.time)


class Trajectory(BaseModel):
    """A whole trajectory as loaded back from its file."""

    version: int = TRAJECTORY_VERSION
    episode: EpisodeRecord
    actions: list[ActionRecord] = Field(default_factory=list)
    answer: str | None = None
    closed: CloseRecord | None = None

    @property
    def id(self) -> str:
        return self.episode.episode_id


class StepLimitReached(TaskloomError):
    """The episode has used all the actions it is allowed."""


class Recorder:
    """Appends records to one trajectory file, each fsynced before ``append`` returns."""

    def __init__(self, folder: Path, episode: EpisodeRecord) -> None:
        self.folder = folder
        self.path = folder / "trajectory.jsonl"
        self.screenshots = folder / "screenshots"
        self.screenshots.mkdir(parents=True, exist_ok=True)
        self.count = 0
        self.limit: int | None = None  # actions allowed (a harness step limit); None: no limit
        self._lock = threading.Lock()  # index and line stay together when an action is written from a thread
        append_jsonl(self.path, episode.model_dump(mode="json"))

    def check_limit(self) -> None:
        """Refuse a new action once the step limit is used up."""
        if self.limit is not None and self.count >= self.limit:
            raise StepLimitReached(f"the step limit of {self.limit} actions is used up; call env_answer (if needed) and env_close")

    def action(self, **fields: Any) -> ActionRecord:
        """Record one action (index assigned here) and return the record; safe to call from a worker thread."""
        call = CALL.get()
        with self._lock:
            record = ActionRecord(index=self.count, **({"tool": call.tool} if call is not None else {}), **fields)
            append_jsonl(self.path, record.model_dump(mode="json", exclude={"observation"}))
            self.count += 1
        if call is not None:
            call.recorded.append((self, record.index))
        return record

    def observation(self, index: int, tool: str, text: str) -> None:
        """Record what tool ``tool`` answered the agent for action ``index`` (cut to :data:`OBSERVATION_LIMIT` characters)."""
        cut = text if len(text) <= OBSERVATION_LIMIT else text[:OBSERVATION_LIMIT] + f"\n[… {len(text) - OBSERVATION_LIMIT} more characters]"
        with self._lock:
            append_jsonl(self.path, {"kind": "observation", "action": index, "tool": tool, "text": cut})

    def answer(self, text: str) -> AnswerRecord:
        record = AnswerRecord(answer=text, source="tool")
        append_jsonl(self.path, record.model_dump(mode="json"))
        return record

    def close(
        self,
        status: CloseStatus = "closed",
        reason: str | None = None,
        checks: list[CriterionResult] | None = None,
        final_url: str | None = None,
        final_text: str | None = None,
        screenshot: str | None = None,
    ) -> CloseRecord:
        record = CloseRecord(
            status=status, reason=reason, checks=checks, success=None if checks is None else all(c.ok for c in checks),
            final_url=final_url, final_text=final_text, screenshot=screenshot,
        )
        append_jsonl(self.path, record.model_dump(mode="json"))
        return record

    def screenshot_path(self, label: str) -> tuple[Path, str]:
        """(absolute path, path relative to the episode folder) for the next screenshot."""
        name = f"{self.count:04d}-{label}.png"
        return self.screenshots / name, f"screenshots/{name}"


def load_trajectory(path: Path) -> Trajectory:
    """Read a trajectory file; a torn last line (crash mid-write) is ignored."""
    episode: EpisodeRecord | None = None
    actions: list[ActionRecord] = []
    answer: str | None = None
    closed: CloseRecord | None = None
    observed: dict[int, str] = {}
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not a trajectory file: not UTF-8 text (byte {exc.start}); give a trajectory.jsonl") from None
    except OSError as exc:
        raise InputError(f"{path} cannot be read ({exc.strerror or exc}); give a trajectory.jsonl") from None
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(data, dict):
            continue
        kind = data.get("kind")
        if kind == "episode":
            episode = EpisodeRecord.model_validate(data)
        elif kind == "action":
            actions.append(ActionRecord.model_validate(data))
        elif kind == "answer":
            answer = AnswerRecord.model_validate(data).answer
        elif kind == "close":
            closed = CloseRecord.model_validate(data)
        elif kind == "observation" and isinstance(data.get("action"), int) and isinstance(data.get("text"), str):
            observed[data["action"]] = data["text"]
    if episode is None:
        raise InputError(f"{path} is not a trajectory file (no episode header line); give a trajectory.jsonl that Taskloom recorded")
    actions = [a.model_copy(update={"observation": observed[a.index]}) if a.index in observed else a for a in actions]
    return Trajectory(episode=episode, actions=actions, answer=answer, closed=closed)
