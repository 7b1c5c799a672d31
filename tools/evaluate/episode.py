"""Score one episode: a task, the trajectory an agent left, and how the episode ended → :class:`EpisodeResult`.

Rule-based and offline: document answers by the answer metrics; web and composite
tasks by the success criteria the server checked on the final page when the episode
closed (recorded in the trajectory's close record); composite tasks also by the graph
evaluator's Coverage Rate and Logical Consistency (0 when the episode left no trajectory).
LLM judges are optional extras.
"""

from __future__ import annotations

from ..environment.trajectory import Trajectory
from ..llm.client import LLM
from ..tasks.model import Task
from .judge import judge_answer, judge_trajectory
from .metrics import answer_scores, answer_success
from .model import EpisodeResult, EpisodeStatus
from .progress import evaluate_progress

__all__ = ["evaluate_episode", "judge_episode"]


def evaluate_episode(
    task: Task,
    trajectory: Trajectory | None,
    agent: str,
    status: EpisodeStatus = "finished",
    reason: str | None = None,
    duration_s: float | None = None,
    run_id: str | None = None,
    trajectory_path: str | None = None,
) -> EpisodeResult:
    """The result of one episode; without a trajectory (the agent never started one) it is a failure."""
    scores: dict[str, float] = {}
    success = False
    answer = trajectory.answer if trajectory else None
    if trajectory is not None and trajectory.closed is None and status == "finished":
        status, reason = "failed", reason or "the episode was never closed (no final-state check)"
    if task.kind == "document":
        if task.gold_answer is not None:
            scores = answer_scores(task, answer)
            success = answer is not None and answer_success(task, scores)
    elif trajectory is not None and trajectory.closed is not None and trajectory.closed.checks is not None:
        checks = trajectory.closed.checks
        scores["criteria"] = sum(c.ok for c in checks) / len(checks) if checks else 1.0
        success = bool(trajectory.closed.success)
    if task.kind in ("web", "composite", "desktop") and task.gold_answer is not None:  # a question about the site or a file: the answer decides, with any state criteria
        answered = answer_scores(task, answer)
        scores.update(answered)
        closed = trajectory is not None and trajectory.closed is not None
        success = answer is not None and answer_success(task, answered) and (success if task.success else closed)
    if task.kind == "composite" and task.subtasks:  # no trajectory (the episode crashed before one): nothing was completed
        scores.update(cr=0.0, lc=0.0, subtasks_completed=0.0)
        if trajectory is not None:
            progress = evaluate_progress(task, trajectory)
            scores.update(cr=progress.cr, lc=progress.lc, subtasks_completed=progress.completed / max(progress.total, 1))
    actions = trajectory.actions if trajectory else []
    if duration_s is None and trajectory is not None:
        end = trajectory.closed.t if trajectory.closed else (actions[-1].t_end if actions else trajectory.episode.t)
        duration_s = max(0.0, end - trajectory.episode.t)
    return EpisodeResult(
        run_id=run_id,
        task_id=task.id,
        task_kind=task.kind,
        task_type=task.type,
        difficulty=task.difficulty,
        level=task.level,
        agent=agent,
        model=trajectory.episode.model if trajectory else None,
        trajectory=trajectory_path,
        status=status,
        reason=reason,
        success=success and status == "finished",
        answer=answer,
        scores={k: round(v, 6) for k, v in scores.items()},
        steps=len(actions),
        duration_s=round(duration_s or 0.0, 3),
    )


async def judge_episode(result: EpisodeResult, task: Task, trajectory: Trajectory, llm: LLM) -> EpisodeResult:
    """Add LLM-judge scores (``judge_*``) to a result: answer quality for documents; for web tasks, success judged
    from the instruction, the actions and the final page the server recorded at close (never the gold)."""
    scores = dict(result.scores)
    if task.kind == "document":
        verdict = await judge_answer(llm, task, trajectory.answer)
        scores.update(judge_quality=verdict.quality, judge_relevance=verdict.relevance, judge_completeness=verdict.completeness)
    else:
        closed = trajectory.closed
        final_url = (closed.final_url if closed else None) or (trajectory.actions[-1].url_after if trajectory.actions else trajectory.episode.start_url)
        judged = await judge_trajectory(llm, task, trajectory.actions, final_url or "", (closed.final_text if closed else None) or "", answer=trajectory.answer)
        scores.update(judge_success=float(judged.success), judge_progress=judged.progress)
    return result.model_copy(update={"scores": scores})
