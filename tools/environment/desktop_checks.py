"""End-state checks of desktop tasks, read on the episode's home folder (never on the controls used).

Two criterion kinds: ``file_content`` (JSON ``{"path", "content"}``: the file holds exactly that text,
one final newline ignored) and ``path_state`` (JSON ``{"path", "state"}`` with state ``file``,
``folder`` or ``absent``) and ``sheet_cells`` (a workbook's cell values, :mod:`.sheet_cells`). Paths are relative to the home folder. A task whose checks already hold
on its seeded files rewards doing nothing: :func:`holds_at_start` finds those by seeding a scratch
folder the way an episode does and checking it.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from ..errors import InputError
from ..tasks.model import SuccessCriterion, Task
from .desktop_session import home_path, seed_home
from .sheet_cells import check_sheet
from .trajectory import CriterionResult

__all__ = ["DESKTOP_KINDS", "file_checks", "holds_at_start", "file_content", "path_state"]

DESKTOP_KINDS = ("file_content", "path_state", "sheet_cells")
STATES = ("file", "folder", "absent")


def file_content(path: str, content: str) -> SuccessCriterion:
    """The criterion "``path`` holds exactly ``content``"."""
    return SuccessCriterion(kind="file_content", value=json.dumps({"path": path, "content": content}))


def path_state(path: str, state: str) -> SuccessCriterion:
    """The criterion "``path`` is a file / a folder / absent"."""
    if state not in STATES:
        raise InputError(f"path state {state!r} is not one of {', '.join(STATES)}")
    return SuccessCriterion(kind="path_state", value=json.dumps({"path": path, "state": state}))


def _spec(criterion: SuccessCriterion) -> dict[str, str]:
    if criterion.kind not in DESKTOP_KINDS:
        raise InputError(f"a desktop task is checked on files; criterion kind {criterion.kind!r} is not one of {', '.join(DESKTOP_KINDS)}")
    spec = json.loads(criterion.value)
    if not isinstance(spec, dict) or not isinstance(spec.get("path"), str):
        raise InputError(f"criterion {criterion.value!r} names no path")
    return spec


def _state(file: Path) -> str:
    return "folder" if file.is_dir() else "file" if file.exists() else "absent"


def check(criterion: SuccessCriterion, home: Path) -> CriterionResult:
    """One criterion checked on the files under ``home``, with what was found."""
    spec = _spec(criterion)
    path = spec["path"]
    file = home_path(home, path)
    if criterion.kind == "sheet_cells":
        return check_sheet(criterion, file)
    if criterion.kind == "path_state":
        found = _state(file)
        return CriterionResult(criterion=criterion, ok=found == spec["state"], observed=f"{path} is {'a ' if found != 'absent' else ''}{found}")
    try:
        text = file.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        return CriterionResult(criterion=criterion, ok=False, observed=f"{path} could not be read: {exc}")
    ok = text.removesuffix("\n") == str(spec["content"]).removesuffix("\n")
    return CriterionResult(criterion=criterion, ok=ok, observed=f"{path} holds {len(text)} characters: {text[:300]!r}")


def file_checks(criteria: list[SuccessCriterion], home: Path) -> list[CriterionResult]:
    """Each criterion checked on the files under ``home`` (the episode's home folder)."""
    return [check(c, home) for c in criteria]


def holds_at_start(task: Task) -> bool:
    """Whether all the task's checks already hold on its seeded files (such a task would reward doing nothing)."""
    with tempfile.TemporaryDirectory(prefix="taskloom-noop-") as folder:
        home = Path(folder)
        seed_home(home, task.desktop.files if task.desktop else {})
        return all(r.ok for r in file_checks(task.success, home))
