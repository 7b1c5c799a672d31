"""What an import did: the options it took, every trajectory skipped with its reason, the counts.

Nothing is dropped silently: an item that does not become a trajectory is a :class:`Skipped`
row, and ``imported + skipped`` is every item the importer found. Outcomes are mapped
explicitly (:data:`SUCCESS_STATUSES`, :data:`FAILURE_STATUSES`); any other status is an error
unless the user chose what it means (``unknown``: ``skip``, ``fail`` or ``success``).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...errors import InputError, NotFoundError
from ...security.roots import Roots
from .model import ACTION_KINDS, AgentTrajectory, CanonicalAction

__all__ = [
    "Unknown", "SUCCESS_STATUSES", "FAILURE_STATUSES", "map_status", "ImportOptions", "Skipped", "ImportReport", "ImportResult",
    "ImportLog", "TaskInfo", "load_task_info", "LOW_CONFIDENCE", "UNPARSED", "unparsed",
]  # fmt: skip

Unknown = Literal["error", "skip", "fail", "success"]
SUCCESS_STATUSES = frozenset({"success", "succeeded", "successful", "completed", "complete", "pass", "passed", "done", "true", "1"})
FAILURE_STATUSES = frozenset({
    "failure", "failed", "fail", "error", "timeout", "timed_out", "incomplete", "false", "0", "error_max_turns", "max_turns",
    "error_max_steps", "max_steps", "aborted", "cancelled", "canceled", "crashed",
})  # fmt: skip
#: Actions parsed with less confidence than this are counted as ``low_confidence`` in the report.
LOW_CONFIDENCE = 0.5
#: Actions at or below this confidence were not understood at all (``other(text=…)`` fallbacks): counted as ``unparsed``.
UNPARSED = 0.1


def unparsed(action: CanonicalAction) -> bool:
    """True for an action the parser did not understand (kept as ``other(text=…)``)."""
    return action.kind == "other" and action.confidence <= UNPARSED


def map_status(raw: Any) -> bool | None:
    """True / False for a known success / failure status (bools, numbers > 0, the listed words); None otherwise.

    >>> map_status("error_max_turns"), map_status(1.0), map_status("SUCCESS"), map_status("paused")
    (False, True, True, None)
    """
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int | float):
        return raw > 0
    if isinstance(raw, str):
        low = raw.strip().lower()
        return True if low in SUCCESS_STATUSES else False if low in FAILURE_STATUSES else None
    return None


class ImportOptions(BaseModel):
    """How to import: what an unknown status means, the agent name, a task file, labels, allowed roots."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    unknown: Unknown = Field("error", description="An outcome that is not a known success or failure: error (default), skip, fail or success.")
    agent: str | None = Field(None, description="Agent name for formats that do not name one (default: the folder or file name).")
    tasks: Path | None = Field(None, description="A task file (JSON list or JSON Lines) giving per-task instruction, level and reference length.")
    labels: Path | None = Field(None, description="Outcome labels by task id (WebJudge JSON Lines or a JSON object); they override the logs.")
    roots: Roots | None = Field(None, description="Folders a folder walk may visit (default: the path imported).")


class Skipped(BaseModel):
    """One item that did not become a trajectory, and why."""

    item: str
    reason: str


class ImportReport(BaseModel):
    """The counts of one import; ``imported + len(skipped)`` is every item found."""

    format: str
    paths: list[str]
    found: int = Field(description="Items found (runs, files or lines).")
    imported: int
    skipped: list[Skipped] = Field(default_factory=list)
    skip_reasons: dict[str, int] = Field(default_factory=dict, description="Skipped items per reason (the reason's first words).")
    statuses: dict[str, int] = Field(default_factory=dict, description="Imported trajectories per status as the logs wrote it.")
    outcomes: dict[str, int] = Field(default_factory=dict, description="Imported trajectories per mapped outcome: success, failure.")
    actions: int = 0
    kinds: dict[str, int] = Field(default_factory=dict, description="Actions per canonical kind.")
    low_confidence: int = Field(0, description=f"Actions parsed with confidence below {LOW_CONFIDENCE}.")
    llm_refined: int = Field(0, description="Low-confidence actions an LLM re-read with more confidence (import with the LLM option).")
    no_action_markers: int = Field(0, description="Entries that said 'no action' (e.g. BrowserGym's final None), not counted as actions.")
    observations: int = Field(0, description="Tool calls that only looked at the page (snapshots, screenshots, logs, waits), not counted as actions.")
    with_reference: int = Field(0, description="Imported trajectories with an external reference length.")
    tasks: int = 0
    agents: list[str] = Field(default_factory=list)
    runs_per_agent: dict[str, int] = Field(default_factory=dict, description="Imported runs per agent.")
    repeated: int = Field(0, description="Agent-task pairs with more than one run.")
    verdict_sources: dict[str, int] = Field(default_factory=dict, description="Imported runs per verdict source (agent, judge, reference, unknown).")
    layouts: dict[str, int] = Field(default_factory=dict, description="Folder layouts recognised (result folders), with how many runs each.")
    empty_runs: int = Field(0, description="Imported runs without a single action.")
    no_action_list: int = Field(0, description="Runs whose log holds no action list at all (imported with no actions).")
    unparsed: int = Field(0, description=f"Actions the parser did not understand (kept as other(text=…), confidence ≤ {UNPARSED}).")
    unparsed_examples: list[tuple[str, int]] = Field(default_factory=list, description="The most frequent unparsed action texts with their counts.")
    notes: list[str] = Field(default_factory=list, description="Things the user should know about this import (not errors).")


class ImportResult(BaseModel):
    """Trajectories and the report of their import."""

    trajectories: list[AgentTrajectory]
    report: ImportReport


@dataclass
class ImportLog:
    """Collects skips and no-action markers while an importer runs; :meth:`result` makes the report."""

    options: ImportOptions
    skipped: list[Skipped] = field(default_factory=list)
    markers: int = 0
    observations: int = 0
    layouts: Counter[str] = field(default_factory=Counter)
    no_action_list: int = 0
    notes: list[str] = field(default_factory=list)

    def skip(self, item: str, reason: str) -> None:
        self.skipped.append(Skipped(item=item, reason=reason))

    def note(self, text: str) -> None:
        self.notes.append(text)

    def outcome(self, raw: Any, item: str) -> tuple[bool | None, str | None]:
        """``(success, status)`` of a raw outcome under the ``unknown`` policy; success None means skipped (logged)."""
        numeric = isinstance(raw, int | float) and not isinstance(raw, bool)
        status = None if raw is None else f"reward {raw:g}" if numeric else str(raw).strip()
        mapped = map_status(raw)
        if mapped is not None:
            return mapped, status
        policy = self.options.unknown
        what = "no outcome" if raw is None else f"unknown status {status!r}"
        if policy == "error":
            raise InputError(
                f"{item}: {what}; known statuses are {sorted(SUCCESS_STATUSES)} (success) and {sorted(FAILURE_STATUSES)} (failure). "
                "Say what it means with unknown='skip', 'fail' or 'success' (CLI: --unknown)."
            )
        if policy == "skip":
            self.skip(item, what)
            return None, status
        return policy == "success", status

    def result(self, fmt: str, paths: list[Path], trajectories: list[AgentTrajectory]) -> ImportResult:
        trajectories = apply_task_info(trajectories, self.options.tasks)
        kinds = Counter(a.kind for t in trajectories for a in t.actions)
        missed = Counter(" ".join(a.source.split())[:120] for t in trajectories for a in t.actions if unparsed(a))
        pairs = Counter((t.agent, t.task_id) for t in trajectories)
        notes = list(self.notes)
        if missed:
            notes.append(f"{sum(missed.values())} actions were not understood and kept as other(text=…); the most frequent: {missed.most_common(1)[0][0]!r}")
        if empty := sum(not t.actions for t in trajectories):
            notes.append(f"{empty} runs have no actions" + (f" ({self.no_action_list} without any action list: expected action_history or action_reprs)" if self.no_action_list else ""))
        report = ImportReport(
            format=fmt, paths=[str(p) for p in paths], found=len(trajectories) + len(self.skipped), imported=len(trajectories),
            skipped=self.skipped, skip_reasons=dict(sorted(Counter(s.reason.split(":")[0].split("'")[0].strip() for s in self.skipped).items())),
            statuses=dict(sorted(Counter(t.status or "(none)" for t in trajectories).items())),
            outcomes={"success": sum(t.success for t in trajectories), "failure": sum(not t.success for t in trajectories)},
            actions=sum(kinds.values()), kinds={k: kinds[k] for k in ACTION_KINDS if kinds[k]},
            low_confidence=sum(a.confidence < LOW_CONFIDENCE for t in trajectories for a in t.actions), no_action_markers=self.markers,
            observations=self.observations,
            with_reference=sum(t.reference_steps is not None for t in trajectories), tasks=len({t.task_id for t in trajectories}),
            agents=sorted({t.agent for t in trajectories}), runs_per_agent=dict(sorted(Counter(t.agent for t in trajectories).items())),
            repeated=sum(n > 1 for n in pairs.values()), verdict_sources=dict(sorted(Counter(t.verdict_source or "unknown" for t in trajectories).items())),
            layouts=dict(self.layouts), empty_runs=sum(not t.actions for t in trajectories), no_action_list=self.no_action_list,
            unparsed=sum(missed.values()), unparsed_examples=missed.most_common(5), notes=notes,
        )  # fmt: skip
        return ImportResult(trajectories=trajectories, report=report)


class TaskInfo(BaseModel):
    """What a task file says of one task."""

    instruction: str | None = None
    level: str | None = None
    reference_steps: int | None = None


def load_task_info(path: Path) -> dict[str, TaskInfo]:
    """Per-task facts from a JSON list or JSON Lines of objects with ``task_id`` and any of
    ``reference_length``/``reference_steps``, ``level``, ``confirmed_task``/``instruction``/``task``/``goal``."""
    if not path.is_file():
        raise NotFoundError(f"no task file at {path}; pass a JSON list or JSON Lines of objects with task_id")
    text = path.read_text(encoding="utf-8")
    try:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()] if path.suffix == ".jsonl" else json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(rows, list) or not all(isinstance(r, dict) and r.get("task_id") is not None for r in rows):
        raise InputError(f"{path}: a task file is a list of objects, each with a task_id")
    out: dict[str, TaskInfo] = {}
    for row in rows:
        ref = row.get("reference_length", row.get("reference_steps"))
        text_of = next((row[k] for k in ("confirmed_task", "instruction", "task", "goal") if isinstance(row.get(k), str)), None)
        out[str(row["task_id"])] = TaskInfo(
            instruction=text_of, level=str(row["level"]) if row.get("level") is not None else None,
            reference_steps=int(ref) if isinstance(ref, int | float) and ref >= 1 else None,
        )  # fmt: skip
    return out


def apply_task_info(trajectories: list[AgentTrajectory], tasks: Path | None) -> list[AgentTrajectory]:
    """The trajectories with instruction, level and reference length filled in from a task file (logs keep their own instruction)."""
    if tasks is None:
        return trajectories
    info = load_task_info(tasks)
    out = []
    for t in trajectories:
        facts = info.get(t.task_id or "")
        if facts is None:
            out.append(t)
            continue
        out.append(t.model_copy(update={
            "instruction": t.instruction or facts.instruction, "level": facts.level or t.level,
            "reference_steps": facts.reference_steps or t.reference_steps,
        }))  # fmt: skip
    return out
