"""The per-episode part of a run's report: why each episode ended as it did.

For every episode: its verdict with each success criterion (expected beside observed), the
agent's answer beside the gold, the final URL, the steps (with thumbnails when screenshots were
recorded), the last screenshot (a failed episode's final page, kept even with screenshots off), and links to the trajectory, the HAR file and the Playwright
trace. Everything is read from the results and the files the run left; links are relative to
the report's folder, so the report opens from ``file://`` with the workspace beside it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

from pydantic import BaseModel, Field, ValidationError

from ..environment.manager import HAR_FILE, TRACE_FILE
from ..environment.trajectory import Trajectory, load_trajectory
from ..errors import TaskloomError
from .checks import verdicts
from .model import CriterionVerdict, EpisodeResult
from .summary import Outcome, TaskInfo, outcome_of

__all__ = ["MAX_STEPS_SHOWN", "EpisodeLink", "EpisodeView", "StepView", "Outcome", "episode_views", "outcome_of"]

#: Steps listed per episode; the rest are counted (the trajectory has them all).
MAX_STEPS_SHOWN = 200


class StepView(BaseModel):
    """One recorded action as the report lists it."""

    index: int
    action: str = Field(description="The canonical action, e.g. click(text='Search', element='button').")
    url: str | None = Field(None, description="The page after the action.")
    error: str | None = None
    thought: str | None = None
    thumbnail: str | None = Field(None, description="Link (relative to the report) to the screenshot taken after the action.")


class EpisodeLink(BaseModel):
    """A file of the episode, linked from the report."""

    label: str
    href: str
    hint: str | None = Field(None, description="How to open it, when a browser cannot (e.g. `playwright show-trace …`).")


class EpisodeView(BaseModel):
    """Everything the report shows about one episode."""

    anchor: str
    task_id: str
    task_anchor: str | None = None
    agent: str
    instruction: str = ""
    family: str = "unknown"
    kind: str
    level: int | None = None
    outcome: Outcome
    status: str
    reason: str | None = None
    answer: str | None = None
    gold: str | None = None
    final_url: str | None = None
    criteria: list[CriterionVerdict] = Field(default_factory=list)
    steps: list[StepView] = Field(default_factory=list)
    step_count: int = 0
    more_steps: int = Field(0, description="Steps of the trajectory not listed (past MAX_STEPS_SHOWN).")
    duration_s: float = 0.0
    scores: dict[str, float] = Field(default_factory=dict)
    last_screenshot: str | None = None
    links: list[EpisodeLink] = Field(default_factory=list)
    note: str | None = Field(None, description="Why the steps are missing, when the trajectory could not be read.")


def _href(path: Path, base: Path) -> str:
    """``path`` as a link relative to ``base`` (absolute ``file://`` when they share no root)."""
    try:
        relative = os.path.relpath(path.resolve(), base.resolve())
    except ValueError:
        return path.resolve().as_uri()
    return quote(Path(relative).as_posix())


def _load(path: Path) -> tuple[Trajectory | None, str | None]:
    try:
        return load_trajectory(path), None
    except (TaskloomError, OSError, ValueError, ValidationError) as exc:
        return None, f"the trajectory could not be read ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"


def _view(result: EpisodeResult, anchor: str, info: TaskInfo, task_anchor: str | None, out_dir: Path) -> EpisodeView:
    trajectory, note = None, None
    path = Path(result.trajectory) if result.trajectory else None
    if path is not None and path.is_file():
        trajectory, note = _load(path)
    elif path is not None:
        note = f"the trajectory file {path} is gone"
    closed = trajectory.closed if trajectory else None
    criteria = result.criteria or (verdicts(closed.checks) if closed and closed.checks else [])
    steps: list[StepView] = []
    links: list[EpisodeLink] = []
    last_shot, more = None, 0
    if trajectory is not None and path is not None:
        folder = path.parent
        shots = [folder / a.screenshot for a in trajectory.actions if a.screenshot and (folder / a.screenshot).is_file()]
        final = folder / closed.screenshot if closed is not None and closed.screenshot else None
        shots += [final] if final is not None and final.is_file() else []  # the final page, kept for a failed episode
        last_shot = _href(shots[-1], out_dir) if shots else None
        more = max(0, len(trajectory.actions) - MAX_STEPS_SHOWN)
        for action in trajectory.actions[:MAX_STEPS_SHOWN]:
            shot = folder / action.screenshot if action.screenshot else None
            thumb = _href(shot, out_dir) if shot is not None and shot.is_file() else None
            steps.append(StepView(index=action.index, action=action.canonical, url=action.url_after, error=action.error, thought=action.thought, thumbnail=thumb))
        links.append(EpisodeLink(label="trajectory", href=_href(path, out_dir)))
        if (folder / HAR_FILE).is_file():
            links.append(EpisodeLink(label="HAR", href=_href(folder / HAR_FILE, out_dir)))
        if (folder / TRACE_FILE).is_file():
            trace = folder / TRACE_FILE
            links.append(EpisodeLink(label="trace", href=_href(trace, out_dir), hint=f"playwright show-trace {trace.resolve()}"))
    final_url = result.final_url or (closed.final_url if closed else None) or (steps[-1].url if steps else None)
    return EpisodeView(
        anchor=anchor, task_id=result.task_id, task_anchor=task_anchor, agent=result.agent, instruction=info.instruction, family=info.family or result.task_type,
        kind=result.task_kind, level=result.level if result.level is not None else info.level, outcome=outcome_of(result), status=result.status,
        reason=result.reason, answer=result.answer, gold=info.gold_answer, final_url=final_url, criteria=criteria, steps=steps, step_count=result.steps,
        duration_s=result.duration_s, scores=dict(sorted(result.scores.items())), last_screenshot=last_shot, links=links, note=note,
        more_steps=more,
    )


def episode_views(
    results: Sequence[EpisodeResult], infos: Mapping[str, TaskInfo], task_anchors: Mapping[str, str], out_dir: Path
) -> list[EpisodeView]:
    """One view per result, ordered by task id then agent (then trajectory), anchored ``ep-1``, ``ep-2``, …"""
    ordered = sorted(results, key=lambda r: (r.task_id, r.agent, r.trajectory or "", r.model_dump_json()))
    return [
        _view(r, f"ep-{i}", infos.get(r.task_id, TaskInfo()), task_anchors.get(r.task_id), out_dir)
        for i, r in enumerate(ordered, start=1)
    ]
