"""The "organise files" desktop family in real pcmanfm: generation without no-ops, wrong end states failing on the home folder.

Its gold replays (one per operation) run in tests/harness/test_desktop_oracle.py, where generation verifies them and the oracle repeats them.

Needs Xvfb, dbus, openbox, pcmanfm and Debian's python3 with gir1.2-atspi-2.0 (the Makefile's `system` target installs them).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from taskloom.tools.environment.desktop import DesktopEpisodes
from taskloom.tools.environment.desktop_a11y import DEBIAN_PYTHON
from taskloom.tools.environment.desktop_checks import file_checks, holds_at_start
from taskloom.tools.environment.desktop_gold import find_line, parse_snapshot, run_gold
from taskloom.tools.environment.desktop_organise import HOME_FILES, organise_tasks
from taskloom.tools.environment.desktop_refs import AppDesktopEnv
from taskloom.tools.environment.desktop_tasks import EpisodeDriver
from taskloom.tools.tasks.model import GoldStep, Task

ATSPI = os.path.exists(DEBIAN_PYTHON) and subprocess.run([DEBIAN_PYTHON, "-c", "import gi; gi.require_version('Atspi', '2.0')"], capture_output=True).returncode == 0
DESKTOP = pytest.mark.skipif(
    not all(shutil.which(b) for b in ("Xvfb", "xauth", "dbus-daemon", "openbox", "pcmanfm")) or not ATSPI, reason="needs Xvfb, dbus, openbox, pcmanfm, gir1.2-atspi-2.0"
)


def by_op(op: str) -> Task:
    return next(t for t in organise_tasks(seed=0, count=9) if t.provenance.template == f"organise_files/{op}")


def test_generation_is_seeded_checks_only_paths_and_has_no_noops() -> None:
    tasks = organise_tasks(seed=0, count=9)
    assert [t.id for t in tasks] == [t.id for t in organise_tasks(seed=0, count=9)] != [t.id for t in organise_tasks(seed=1, count=9)]
    assert {t.provenance.template for t in tasks} == {"organise_files/rename", "organise_files/move", "organise_files/make_folder"}
    for task in tasks:
        assert task.desktop and task.desktop.app == "pcmanfm" and task.desktop.files == HOME_FILES and not holds_at_start(task)
        assert {c.kind for c in task.success} <= {"file_content", "path_state"} and all(c.on_state for c in task.success)
        assert "path_state" not in json.dumps(task.public()) and "gold" not in json.dumps(task.public())
    rename = by_op("rename")
    assert [json.loads(c.value)["state"] for c in rename.success if c.kind == "path_state"] == ["absent"]  # the old name must be gone


def test_snapshot_lines_parse_names_values_and_escapes() -> None:
    text = '- window "home" [ref=e1]:\n  - textbox [focused] [ref=e9]: a\\nb\n  - img [ref=e53]: notes.txt\n  - button "Save" [disabled] [ref=e4]'
    lines = parse_snapshot(text)
    assert [(x.role, x.name, x.ref, x.value) for x in lines] == [("window", "home", "e1", None), ("textbox", "", "e9", "a\nb"), ("img", "", "e53", "notes.txt"), ("button", "Save", "e4", None)]
    assert find_line(lines, "role=img text=notes.txt").ref == "e53" and find_line(lines, "role=button text=Save").states == ["disabled"]
    assert find_line(lines, "role=img text=other.txt") is None


@DESKTOP
def test_wrong_end_states_fail(tmp_path: Path) -> None:
    move = by_op("move")
    assert move.desktop is not None
    episodes = DesktopEpisodes(tmp_path, screenshot_after=False)
    env = episodes.start("wrong", app="pcmanfm", files=move.desktop.files, open_files=["."])
    assert isinstance(env, AppDesktopEnv)
    home = env.session.home
    try:
        assert not any(c.ok for c in file_checks(move.success, home))  # the start state fails both checks
        copy = [s.model_copy(update={"text": "ctrl+c"}) if s.text == "ctrl+x" else s for s in move.gold_steps]  # copy instead of move
        asyncio.run(run_gold(EpisodeDriver(env), copy))
        placed, gone = file_checks(move.success, home)
        assert placed.ok and not gone.ok and "is a file" in gone.observed
        rename = by_op("rename")
        (name,) = [s.text for s in rename.gold_steps if s.action == "type"]
        wrong = [s.model_copy(update={"text": "elsewhere.txt"}) if s.action == "type" else s for s in rename.gold_steps if s.action != "wait_for"]
        asyncio.run(run_gold(EpisodeDriver(env), [GoldStep(action="press_key", text="alt+up"), *wrong]))  # back home, then rename to another name
        assert not all(c.ok for c in file_checks(rename.success, home)) and name != "elsewhere.txt"
        edit = find_line(parse_snapshot(env.snapshot()), "role=menu text=Edit")  # a GTK 2 menu's open entries are read too (visible, not "showing")
        assert edit is not None and "menuitem" not in env.snapshot()
        env.click_element(edit.ref)
        assert find_line(parse_snapshot(env.snapshot()), "role=menuitem text=Select All") is not None, env.snapshot()
        env.press("esc")
        assert "menuitem" not in env.snapshot()
    finally:
        closed = episodes.close("wrong")
    assert closed.success is None and not home.exists()  # no task on this episode: no verdict; its home is removed
