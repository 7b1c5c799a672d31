"""The "compute something in the spreadsheet and save it" family (Gnumeric): generation without no-ops, checks on the saved workbook, one gold replay.

The checks read workbooks with Gnumeric's ``ssconvert`` and the replay runs Gnumeric itself: the Makefile's `system` target installs
`gnumeric`, so these tests fail (not skip) without it. The replay, like the other desktop tests, needs the shared desktop stack
(Xvfb, dbus, openbox, Debian's python3 with gir1.2-atspi-2.0).
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import pytest

from taskloom.tools.environment.desktop import DesktopEpisodes
from taskloom.tools.environment.desktop_a11y import DEBIAN_PYTHON
from taskloom.tools.environment.desktop_checks import file_checks, holds_at_start
from taskloom.tools.environment.desktop_gold import run_gold
from taskloom.tools.environment.desktop_refs import AppDesktopEnv
from taskloom.tools.environment.desktop_session import seed_home
from taskloom.tools.environment.desktop_sheet import WORKBOOKS, sheet_tasks
from taskloom.tools.environment.desktop_tasks import EpisodeDriver
from taskloom.tools.environment.sheet_cells import parse_cell
from taskloom.tools.tasks.model import Task

ATSPI = os.path.exists(DEBIAN_PYTHON) and subprocess.run([DEBIAN_PYTHON, "-c", "import gi; gi.require_version('Atspi', '2.0')"], capture_output=True).returncode == 0
DESKTOP = pytest.mark.skipif(not all(shutil.which(b) for b in ("Xvfb", "xauth", "dbus-daemon", "openbox", "xprop")) or not ATSPI, reason="needs Xvfb, dbus, openbox, gir1.2-atspi-2.0")


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    assert shutil.which("ssconvert") and shutil.which("gnumeric"), "install gnumeric (make system)"
    return sheet_tasks(seed=0, count=9)


def by_op(tasks: list[Task], op: str) -> Task:
    return next(t for t in tasks if t.provenance.template == f"compute_sheet/{op}")


def spec(task: Task) -> dict:
    return json.loads(task.success[0].value)


def write_values(home: Path, task: Task, values: dict[str, float | str]) -> Path:
    """Another route to the end state: the seeded table plus ``values`` as plain CSV, converted to the task's workbook by ssconvert."""
    assert task.desktop is not None
    (path,) = task.desktop.open_files
    _, header, rows = WORKBOOKS[path]
    table = [[str(v) for v in header], *[[str(v) for v in r] for r in rows]]
    for ref, value in values.items():
        row, col = parse_cell(ref)
        while len(table) <= row:
            table.append([])
        table[row] += [""] * (col + 1 - len(table[row]))
        table[row][col] = str(value)
    out = io.StringIO()
    csv.writer(out).writerows(table)
    (home / "route.csv").write_text(out.getvalue())
    subprocess.run(["ssconvert", str(home / "route.csv"), str(home / path)], check=True, capture_output=True, env={**os.environ, "GSETTINGS_BACKEND": "memory"})
    return home / path


def test_generation_is_seeded_computed_from_the_data_and_has_no_noops(tasks: list[Task]) -> None:
    assert [t.id for t in tasks] == [t.id for t in sheet_tasks(seed=0, count=9)] != [t.id for t in sheet_tasks(seed=1, count=9)]
    assert {t.provenance.template for t in tasks} == {"compute_sheet/aggregate", "compute_sheet/count_above", "compute_sheet/new_column"}
    for task in tasks:
        assert task.desktop and task.desktop.app == "gnumeric" and task.provenance.graph_id == "desktop:gnumeric" and not holds_at_start(task)
        (path,) = task.desktop.open_files
        assert path in task.instruction and [c.kind for c in task.success] == ["sheet_cells"] and task.success[0].on_state
        public = json.dumps(task.public())
        assert "sheet_cells" not in public and "gold" not in public and "ctrl" not in task.instruction.lower()
    aggregate = by_op(tasks, "aggregate")
    (rule,) = spec(aggregate)["rules"]
    _, header, rows = WORKBOOKS[spec(aggregate)["path"]]
    column = [float(r[parse_cell(rule["cells"][0])[1]]) for r in rows]
    expected = {"sum": sum(column), "average": statistics.mean(column), "max": max(column), "min": min(column)}[rule["op"]]
    assert spec(aggregate)["cells"] == {rule["cell"]: pytest.approx(expected)} and len(rule["cells"]) == len(rows)  # computed from the seeded data
    added = by_op(tasks, "new_column")
    cells = spec(added)["cells"]
    title = next(ref for ref, v in cells.items() if isinstance(v, str))
    assert len(cells) == len(WORKBOOKS[spec(added)["path"]][2]) + 1 and parse_cell(title) == (0, len(WORKBOOKS[spec(added)["path"]][1]))  # every row, first free column


def test_checks_fail_on_the_seeded_and_wrong_files_and_pass_another_route(tasks: list[Task], tmp_path: Path) -> None:
    for op in ("aggregate", "new_column"):
        task = by_op(tasks, op)
        assert task.desktop is not None
        home = tmp_path / op
        seed_home(home, task.desktop.files)
        (start,) = file_checks(task.success, home)
        assert not start.ok and "holds ''" in start.observed  # the seeded workbook never passes
        right = {ref: value for ref, value in spec(task)["cells"].items()}
        write_values(home, task, right)
        (ok,) = file_checks(task.success, home)
        assert ok.ok, ok.observed
        number = next(ref for ref, value in right.items() if not isinstance(value, str))
        write_values(home, task, {**right, number: float(right[number]) + 1})
        (wrong,) = file_checks(task.success, home)
        assert not wrong.ok and f"{number} holds" in wrong.observed
    rule = spec(task)["rules"][0]  # the right number beside changed data fails the recomputation from the saved cells
    write_values(home, task, {**right, rule["cells"][0]: 1})
    (changed,) = file_checks(task.success, home)
    assert not changed.ok and f"of the saved {rule['cells'][0]}" in changed.observed


@DESKTOP
def test_gold_replays_in_gnumeric_and_the_saved_workbook_passes(tasks: list[Task], tmp_path: Path) -> None:
    task = by_op(tasks, "new_column")
    assert task.desktop is not None
    episodes = DesktopEpisodes(tmp_path, screenshot_after=False)
    started = time.perf_counter()
    env = episodes.start(task.id, task_id=task.id, app="gnumeric", files=task.desktop.files, open_files=task.desktop.open_files)
    print(f"gnumeric episode start (display, bus, openbox, gnumeric, accessibility tree): {time.perf_counter() - started:.2f} s")
    assert isinstance(env, AppDesktopEnv)
    env.task = task
    try:
        asyncio.run(run_gold(EpisodeDriver(env), task.gold_steps))
    finally:
        closed = episodes.close(task.id)
    assert closed.success is True and closed.checks and closed.checks[0].ok, closed.checks
