"""Verifying desktop question tasks (:mod:`taskloom.tools.environment.desktop_answers`) the way the harness scores them.

A question task changes no file, so the file no-op rule does not apply to it; its counterpart is
"answering nothing passes": an episode closed with no answer, or an empty one, scored by
:func:`~taskloom.tools.evaluate.episode.evaluate_episode` (the harness's own scoring) must fail.
The gold replay opens the file in a fresh session, carries out the gold steps (which wait until
the application itself shows the answer), gives the gold answer and closes; the recorded
trajectory must then score as a success.
"""

from __future__ import annotations

from ...environment.desktop import DesktopEpisodes
from ...environment.desktop_tasks import replay_gold
from ...environment.trajectory import CloseRecord, EpisodeRecord, Trajectory, load_trajectory
from ...errors import InputError
from ...evaluate.episode import evaluate_episode
from ...tasks.model import Task

__all__ = ["is_answer_task", "unanswered_passes", "replay_answer"]


def is_answer_task(task: Task) -> bool:
    """Whether ``task`` is decided by its answer (a question about a file) rather than by the files it leaves."""
    return task.kind == "desktop" and task.gold_answer is not None


def unanswered_passes(task: Task) -> bool:
    """Whether an episode closed on the start state with no answer, or an empty one, would score as a success."""
    episode = EpisodeRecord(episode_id="no-answer", env="desktop", task_id=task.id, agent="nothing")
    closed = CloseRecord(status="closed", checks=None, success=None)
    return any(
        evaluate_episode(task, Trajectory(episode=episode, actions=[], answer=answer, closed=closed), "nothing").success for answer in (None, "", " ")
    )


async def replay_answer(task: Task, episodes: DesktopEpisodes, episode_id: str) -> CloseRecord:
    """Replay the gold in a fresh session, answer the gold answer, close; the close record with ``success`` as the harness scores it."""
    if task.desktop is None or task.gold_answer is None:
        raise InputError(f"task {task.id!r} is not a desktop question")
    closed, env = await replay_gold(task, episodes, episode_id, answer=task.gold_answer)
    result = evaluate_episode(task, load_trajectory(env.recorder.path), "gold-replay")
    reason = None if result.success else f"the gold answer {task.gold_answer!r} scored {result.scores} on the replayed trajectory"
    return closed.model_copy(update={"success": result.success, "reason": reason})
