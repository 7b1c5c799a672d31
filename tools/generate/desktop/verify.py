"""Desktop verification: every candidate's gold replayed in a fresh session (display, bus, application, home folder).

A candidate is kept only when its checks fail on the seeded files (no no-op) and pass after its
gold replay (a question: no answer fails, the gold answer after the replay passes, :mod:`.answers`);
a kept task records the replay's trajectory as its gold trajectory.
"""

from __future__ import annotations

from pathlib import Path

from ...environment.desktop import DesktopEpisodes, EnvironmentUnavailable
from ...environment.desktop_checks import holds_at_start
from ...environment.desktop_tasks import replay_gold
from ...errors import TaskloomError
from ...tasks.model import Task
from ..filter.stages import Dropped, GenerationReport
from .answers import is_answer_task, replay_answer, unanswered_passes

__all__ = ["verify_desktop_tasks"]


async def verify_desktop_tasks(tasks: list[Task], root: Path, report: GenerationReport) -> list[Task]:
    """The candidates whose gold passes in a fresh episode (trajectories under ``root``); the others dropped with the reason."""
    episodes = DesktopEpisodes(root, screenshot_after=False)
    kept, noop = [], []
    for task in tasks:
        asked = is_answer_task(task)  # a question changes no file: its no-op is "no answer passes"
        if unanswered_passes(task) if asked else holds_at_start(task):
            noop.append(task.id)
            reason = "an empty answer already passes" if asked else "its checks already hold on the seeded files"
            report.dropped.append(Dropped(task_id=task.id, stage="no-op", reason=reason))
            continue
        try:
            closed = await replay_answer(task, episodes, f"gold-{task.id}") if asked else (await replay_gold(task, episodes, f"gold-{task.id}"))[0]
        except EnvironmentUnavailable:
            raise  # no display or application: every candidate would fail alike
        except TaskloomError as exc:
            report.dropped.append(Dropped(task_id=task.id, stage="replay", reason=f"a gold step failed: {exc}"))
            continue
        if not closed.success:
            failed = [c.observed for c in closed.checks or [] if not c.ok] or [closed.reason or "no verdict"]
            report.dropped.append(Dropped(task_id=task.id, stage="replay", reason=f"the checks failed after the gold replay: {'; '.join(failed)[:300]}"))
            continue
        task.gold_trajectory = str(root / f"gold-{task.id}" / "trajectory.jsonl")
        task.quality["replay"] = {"ok": True, "criteria": len(task.success)}
        kept.append(task)
    report.stage("no-op", len(tasks), len(tasks) - len(noop))
    report.stage("replay", len(tasks) - len(noop), len(kept))
    return kept
