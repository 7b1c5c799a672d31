"""``env_start`` for desktop episodes: a desktop task's application on its seeded home folder, its criteria kept server side.

The agent gets the instruction and the application's first accessibility snapshot; the task (gold,
criteria) stays on the episode (:attr:`.desktop_refs.AppDesktopEnv.task`) and is checked on the home
folder when the episode closes, before the folder is removed.
"""

from __future__ import annotations

from .desktop import DesktopEnv, DesktopEpisodes
from .desktop_a11y import format_tree
from .desktop_refs import AppDesktopEnv
from .manager import EpisodeManager, StartedEpisode

__all__ = ["start_desktop"]

BARE = "(desktop: call desktop_screenshot to see the screen)"


def start_desktop(
    desktops: DesktopEpisodes, episodes: EpisodeManager, episode_id: str, task_id: str | None,
    agent: str | None = None, model: str | None = None, max_steps: int | None = None,
) -> tuple[DesktopEnv, StartedEpisode]:
    """Start ``episode_id``: the task's application and files for a desktop task, else a bare display."""
    public = episodes.public_task(task_id) if task_id else None  # refuses a malformed or missing id
    task = episodes.private_task(task_id) if task_id else None
    setup = task.desktop if task is not None and task.kind == "desktop" else None
    if setup is not None:
        env = desktops.start(episode_id, task_id=task_id, agent=agent, model=model, app=setup.app, files=setup.files, open_files=setup.open_files)
    else:
        env = desktops.start(episode_id, task_id=task_id, agent=agent, model=model)
    env.recorder.limit = max_steps
    snapshot = BARE
    if isinstance(env, AppDesktopEnv):
        env.task = task
        snapshot = "\n".join(format_tree(env.tree.snapshot()[1])) or BARE
    started = StartedEpisode(
        episode_id=episode_id, url="", title=env.session.window if isinstance(env, AppDesktopEnv) else "desktop",
        instruction=public.instruction if public else None, snapshot=snapshot, trajectory=str(env.recorder.path),
    )
    return env, started
