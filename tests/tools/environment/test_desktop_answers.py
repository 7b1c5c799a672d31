"""The "find information in a file and answer" desktop family: golds re-derived by a second route, ties and visible answers dropped,
answers scored by the harness's own evaluation (empty and wrong fail), and one gold replay through the desktop verifier.

The second route reads each seeded workbook with Gnumeric's `ssconvert` (to CSV) and each seeded text file as text, and answers
every question again from its instruction alone. The replay needs the shared desktop stack (Xvfb, dbus, openbox, gnumeric,
Debian's python3 with gir1.2-atspi-2.0), which the Makefile's `system` target installs.
"""

from __future__ import annotations

import asyncio
import csv
import io
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from taskloom.tools.environment.desktop_a11y import DEBIAN_PYTHON
from taskloom.tools.environment.desktop_answers import answer_tasks, sheet_questions, text_questions
from taskloom.tools.environment.desktop_checks import holds_at_start
from taskloom.tools.environment.desktop_sheet import WORKBOOKS
from taskloom.tools.environment.trajectory import CloseRecord, EpisodeRecord, Trajectory, load_trajectory
from taskloom.tools.evaluate.episode import evaluate_episode
from taskloom.tools.generate.desktop.answers import unanswered_passes
from taskloom.tools.generate.desktop.verify import verify_desktop_tasks
from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.tasks.model import Task

ATSPI = os.path.exists(DEBIAN_PYTHON) and subprocess.run([DEBIAN_PYTHON, "-c", "import gi; gi.require_version('Atspi', '2.0')"], capture_output=True).returncode == 0
DESKTOP = pytest.mark.skipif(not all(shutil.which(b) for b in ("Xvfb", "xauth", "dbus-daemon", "openbox", "xprop")) or not ATSPI, reason="needs Xvfb, dbus, openbox, gir1.2-atspi-2.0")


@pytest.fixture(scope="module")
def sheets() -> list[Task]:
    return answer_tasks("gnumeric", seed=0, count=1000)


@pytest.fixture(scope="module")
def texts() -> list[Task]:
    return answer_tasks("mousepad", seed=0, count=1000)


def ssconvert_rows(task: Task, folder: Path) -> list[list[str]]:
    """The seeded workbook as the episode seeds it, converted to CSV by Gnumeric's ssconvert (not our reader)."""
    assert task.desktop is not None and shutil.which("ssconvert"), "install gnumeric (make system)"
    (path,) = task.desktop.open_files
    (folder / path).write_text(task.desktop.files[path])
    env = {**os.environ, "GSETTINGS_BACKEND": "memory", "HOME": str(folder)}
    subprocess.run(["ssconvert", "-T", "Gnumeric_stf:stf_csv", str(folder / path), str(folder / f"{path}.csv")], check=True, capture_output=True, env=env)
    return list(csv.reader(io.StringIO((folder / f"{path}.csv").read_text())))


def rederive_sheet(task: Task, rows: list[list[str]]) -> str:
    """Answer the question from its instruction and the CSV alone."""
    header, body = rows[0], [r for r in rows[1:] if any(r)]
    column = re.search(r"(?:value in the|total of the) (.+?) column|what is the (.+?) value of the row for (.+)\? Answer", task.instruction)
    assert column, task.instruction
    col = header.index(column[1] or column[2])
    values = [float(r[col]) for r in body]
    op = (task.provenance.template or "").split("/")[-1]
    if op == "total":
        return f"{sum(values):.2f}"
    if op == "lookup":
        return next(r[col] for r in body if r[0] == column[3])
    best = min(values) if op == "min_row" else max(values)
    winners = [r[0] for r, v in zip(body, values) if v == best]
    assert len(winners) == 1, f"a tie was asked: {task.instruction}"
    return winners[0]


def rederive_text(task: Task) -> str:
    assert task.desktop is not None
    (path,) = task.desktop.open_files
    lines = task.desktop.files[path].splitlines()
    if "How many lines" in task.instruction:
        return str(len(lines))
    match = re.search(r"right (after|before) the line '(.+)'\?", task.instruction)
    assert match, task.instruction
    i = lines.index(match[2])
    return lines[i + 1] if match[1] == "after" else lines[i - 1]


def score(task: Task, answer: str | None) -> bool:
    """The harness's verdict on an episode that closed (no file criteria) with ``answer``."""
    trajectory = Trajectory(episode=EpisodeRecord(episode_id="e", env="desktop", task_id=task.id), answer=answer, closed=CloseRecord(checks=None))
    result = evaluate_episode(task, trajectory, "probe")
    assert result.task_kind == "desktop" and result.answer == answer
    return result.success


def test_every_gold_is_rederived_from_ssconvert_csv_and_the_text(sheets: list[Task], texts: list[Task], tmp_path: Path) -> None:
    assert {t.provenance.template for t in sheets} == {"file_answer/min_row", "file_answer/max_row", "file_answer/total", "file_answer/lookup"}
    assert {t.provenance.template for t in texts} == {"file_answer/line_after", "file_answer/line_before", "file_answer/line_count"}
    converted: dict[str, list[list[str]]] = {}
    for task in sheets:
        assert task.desktop is not None and task.desktop.app == "gnumeric" and task.provenance.graph_id == "desktop:gnumeric"
        path = task.desktop.open_files[0]
        if path not in converted:
            converted[path] = ssconvert_rows(task, tmp_path)
        again = rederive_sheet(task, converted[path])
        if task.answer_kind == "number":
            assert float(again) == pytest.approx(float(task.gold_answer or "nan"), abs=0.005), task.instruction
        else:
            assert again == task.gold_answer, task.instruction
    assert len(converted) == 5
    for task in texts:
        assert task.desktop is not None and task.desktop.app == "mousepad" and rederive_text(task) == task.gold_answer, task.instruction


def test_ties_and_visible_answers_are_dropped_with_a_reason_and_choice_is_seeded(sheets: list[Task], texts: list[Task]) -> None:
    _, dropped = sheet_questions()
    ties = [d for d in dropped if d.reason.startswith("a tie")]
    assert {(d.about, d.op) for d in ties} == {("Rent", "min"), ("Rent", "max")} and "January, February, March" in ties[0].reason  # 950 three times
    assert not any("Rent" in t.instruction and "_row" in str(t.provenance.template) for t in sheets)
    _, dropped_text = text_questions()
    assert dropped_text and all("shows in the instruction" in d.reason for d in dropped_text)
    for task in sheets + texts:
        assert task.gold_answer and task.gold_answer.lower() not in task.instruction.lower().replace(".gnumeric", "").replace(".txt", "")
        assert task.success == [] and task.public()["instruction"] == task.instruction and not {"gold_answer", "gold_steps", "desktop"} & set(task.public())
    first = answer_tasks("gnumeric", seed=0, count=6)
    assert [t.id for t in first] == [t.id for t in answer_tasks("gnumeric", seed=0, count=6)] != [t.id for t in answer_tasks("gnumeric", seed=1, count=6)]
    assert len({t.provenance.template for t in first}) == 4  # the kinds of question in turn, not 6 lookups


def test_the_harness_scoring_fails_empty_and_wrong_answers_and_passes_the_gold(sheets: list[Task], texts: list[Task]) -> None:
    total = next(t for t in sheets if t.provenance.template == "file_answer/total")
    row = next(t for t in sheets if t.provenance.template == "file_answer/min_row")
    line = next(t for t in texts if t.provenance.template == "file_answer/line_after")
    for task in (total, row, line):
        assert holds_at_start(task)  # no file criterion: the file no-op rule would drop it, so the verifier asks the answer rule instead
        assert not unanswered_passes(task)
        assert score(task, task.gold_answer) and not score(task, None) and not score(task, "") and not score(task, "I don't know")
    gold = float(total.gold_answer or "nan")
    assert score(total, f"{gold:.3f}") and score(total, f"The total is {gold:,.2f}.")  # rounding and words around the number pass
    assert total.desktop is not None
    column = re.search(r"total of the (.+?) column", total.instruction)
    assert column
    _, header, data = WORKBOOKS[total.desktop.open_files[0]]
    smallest = min(  # the total less its smallest row: a row left out of the sum
        float(r[header.index(column[1])]) for r in data
    )
    assert not score(total, f"{gold * 1.05:.2f}") and not score(total, f"{gold - smallest:.2f}") and not score(total, "about 600 or 500")
    assert row.desktop is not None
    others = [str(r[0]) for r in WORKBOOKS[row.desktop.open_files[0]][2] if r[0] != row.gold_answer]  # every other row's label
    assert len(others) >= 4
    assert not any(score(row, other) for other in others) and score(row, f" {row.gold_answer.upper() if row.gold_answer else ''} ")
    named = re.search(r"the line '(.+)'", line.instruction)
    assert named and not score(line, named[1])  # the line the question names is not the one after it


@DESKTOP
def test_the_verifier_replays_a_question_in_gnumeric_and_keeps_it(sheets: list[Task], tmp_path: Path) -> None:
    task = next(t for t in sheets if t.provenance.template == "file_answer/total")
    report = GenerationReport()
    kept = asyncio.run(verify_desktop_tasks([task], tmp_path, report))
    assert [t.id for t in kept] == [task.id] and report.stages["no-op"] == {"in": 1, "kept": 1} and not report.dropped, report.dropped
    gold = load_trajectory(Path(kept[0].gold_trajectory or ""))
    assert gold.answer == task.gold_answer and gold.closed and gold.closed.status == "closed"
    assert any(a.name == "type" and a.target and a.target.role == "textbox" for a in gold.actions)  # the range typed into the name box
    assert gold.actions[-1].error is None  # the last step waited until Gnumeric's status bar showed 'Sum = <gold>'
    assert evaluate_episode(task, gold, "gold-replay").success
