"""The "edit a file" desktop task family: generation without no-ops, gold replay in real mousepad, checks on the saved file.

Needs the desktop session's programs (see test_desktop_app.py); the generation test runs without them.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from taskloom.tools.environment.desktop import DesktopEpisodes
from taskloom.tools.environment.desktop_a11y import DEBIAN_PYTHON, find_role
from taskloom.tools.environment.desktop_refs import AppDesktopEnv
from taskloom.tools.environment.desktop_tasks import SEED_FILES, edit_file_tasks, file_checks, holds_at_start, replay_gold
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.tasks.files import read_task_file

ATSPI = Path(DEBIAN_PYTHON).exists() and subprocess.run([DEBIAN_PYTHON, "-c", "import gi; gi.require_version('Atspi', '2.0')"], capture_output=True).returncode == 0
DESKTOP = pytest.mark.skipif(
    not all(shutil.which(b) for b in ("Xvfb", "xauth", "dbus-daemon", "openbox", "mousepad")) or not ATSPI, reason="needs Xvfb, dbus, openbox, mousepad, gir1.2-atspi-2.0"
)


def test_generation_is_seeded_changes_every_file_and_round_trips(tmp_path: Path) -> None:
    tasks = edit_file_tasks(seed=0, count=10)
    assert [t.id for t in tasks] == [t.id for t in edit_file_tasks(seed=0, count=10)] != [t.id for t in edit_file_tasks(seed=1, count=10)]
    assert len({t.id for t in tasks}) == 10 and {t.provenance.template for t in tasks} >= {"edit_file/rewrite", "edit_file/append_line", "edit_file/delete_line"}
    for task in tasks:
        assert task.kind == "desktop" and task.desktop and task.desktop.app == "mousepad" and not holds_at_start(task)
        (path,) = task.desktop.open_files
        assert path in SEED_FILES and path in task.instruction and task.desktop.files[path].splitlines() == SEED_FILES[path]
        assert json.loads(task.success[0].value)["path"] == path and task.success[0].on_state
        public = json.dumps(task.public())
        assert "file_content" not in public and "gold" not in public
    (tmp_path / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    assert read_task_file(tmp_path / "tasks.jsonl") == tasks


@DESKTOP
def test_gold_replays_pass_on_the_saved_file(tmp_path: Path) -> None:
    tasks = edit_file_tasks(seed=0, count=10)
    picked = [next(t for t in tasks if t.provenance.template == f"edit_file/{op}") for op in ("rewrite", "delete_line")]
    episodes = DesktopEpisodes(tmp_path, screenshot_after=False)
    for task in picked:
        closed, _ = asyncio.run(replay_gold(task, episodes, task.id))
        assert closed.success is True and closed.checks and all(c.ok for c in closed.checks), closed
        trajectory = load_trajectory(tmp_path / task.id / "trajectory.jsonl")
        assert trajectory.episode.task_id == task.id and trajectory.closed and trajectory.closed.success
        typed = next(a for a in trajectory.actions if a.name == "type")
        assert typed.target and typed.target.role == "textbox" and typed.error is None
        assert [a.canonical for a in trajectory.actions if a.name == "hotkey"] == ["hotkey(keys='ctrl+s')"]


@DESKTOP
def test_doing_nothing_or_the_wrong_edit_fails(tmp_path: Path) -> None:
    task = next(t for t in edit_file_tasks(seed=0, count=10) if t.provenance.template == "edit_file/delete_line")
    assert task.desktop is not None
    episodes = DesktopEpisodes(tmp_path, screenshot_after=False)
    env = episodes.start("wrong", app="mousepad", files=task.desktop.files, open_files=task.desktop.open_files)
    assert isinstance(env, AppDesktopEnv)
    try:
        (nothing,) = file_checks(task.success, env.session.home)
        assert not nothing.ok and "holds" in nothing.observed  # the start state never passes
        box = find_role(env.tree.snapshot()[1], "textbox")
        assert box is not None
        env.type(box.ref, "something else entirely")
        env.hotkey("ctrl", "s")
        (path,) = task.desktop.open_files
        deadline = time.monotonic() + 5
        while (env.session.home / path).read_text() != "something else entirely" and time.monotonic() < deadline:
            time.sleep(0.05)
        (wrong,) = file_checks(task.success, env.session.home)
        assert not wrong.ok and "something else entirely" in wrong.observed
    finally:
        episodes.close_all()
