"""End-state checks of desktop tasks, read on the episode's home folder (never on the controls used).

Criterion kinds: ``file_content`` (JSON ``{"path", "content"}``: the file holds exactly that text,
one final newline ignored), ``path_state`` (JSON ``{"path", "state"}`` with state ``file``,
``folder`` or ``absent``), ``sheet_cells`` (a workbook's cell values, :mod:`.sheet_cells`), and
``app_setting`` (JSON ``{"path", "setting", "value"}``: the application's saved setting, a
``group/key`` of the GSettings keyfile the session keeps beside the home folder, holds that value;
``path`` is the keyfile's path in the settings folder). Paths are relative to the home folder. A
task whose checks already hold on its seeded files rewards doing nothing: :func:`holds_at_start`
finds those by seeding a scratch folder the way an episode does (home and settings) and checking it.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from ..errors import InputError
from ..tasks.model import SuccessCriterion, Task
from .desktop_session import APPS, home_path, seed_home
from .sheet_cells import check_sheet
from .trajectory import CriterionResult

__all__ = ["DESKTOP_KINDS", "SETTINGS_KEYFILE", "file_checks", "holds_at_start", "file_content", "path_state", "app_setting", "read_settings"]

DESKTOP_KINDS = ("file_content", "path_state", "sheet_cells", "app_setting")
#: The GSettings keyfile of a session (``GSETTINGS_BACKEND=keyfile``), in its settings folder ``config`` beside ``home``.
SETTINGS_KEYFILE = "glib-2.0/settings/keyfile"
STATES = ("file", "folder", "absent")


def file_content(path: str, content: str) -> SuccessCriterion:
    """The criterion "``path`` holds exactly ``content``"."""
    return SuccessCriterion(kind="file_content", value=json.dumps({"path": path, "content": content}))


def path_state(path: str, state: str) -> SuccessCriterion:
    """The criterion "``path`` is a file / a folder / absent"."""
    if state not in STATES:
        raise InputError(f"path state {state!r} is not one of {', '.join(STATES)}")
    return SuccessCriterion(kind="path_state", value=json.dumps({"path": path, "state": state}))


def app_setting(setting: str, value: str) -> SuccessCriterion:
    """The criterion "the application's saved setting ``setting`` (``group/key``) is ``value``" (as the keyfile writes it: ``true``, ``4``)."""
    if "/" not in setting:
        raise InputError(f"setting {setting!r} is not 'group/key'")
    return SuccessCriterion(kind="app_setting", value=json.dumps({"path": SETTINGS_KEYFILE, "setting": setting, "value": value}))


def read_settings(config: Path) -> dict[str, str]:
    r"""The saved settings of a session's settings folder: ``group/key`` -> value as written (none when no keyfile).

    >>> import tempfile; folder = Path(tempfile.mkdtemp()); (folder / "glib-2.0" / "settings").mkdir(parents=True)
    >>> _ = (folder / SETTINGS_KEYFILE).write_text("[org/app/view]\nshow-lines=true\n[org/app/state]\nwidth=640\n")
    >>> read_settings(folder)
    {'org/app/view/show-lines': 'true', 'org/app/state/width': '640'}
    """
    file = config / SETTINGS_KEYFILE
    if not file.is_file():
        return {}
    found, group = {}, ""
    for line in file.read_text(errors="replace").splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1]
        elif "=" in line and group and not line.startswith("#"):
            key, value = line.split("=", 1)
            found[f"{group}/{key.strip()}"] = value.strip()
    return found


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
    if criterion.kind == "app_setting":
        found = read_settings(home.parent / "config").get(spec["setting"])
        shown = "not set (the default)" if found is None else repr(found)
        return CriterionResult(criterion=criterion, ok=found == spec["value"], observed=f"{spec['setting']} is {shown}")
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
    """Whether all the task's checks already hold on its seeded files and settings (such a task would reward doing nothing)."""
    with tempfile.TemporaryDirectory(prefix="taskloom-noop-") as folder:
        home = Path(folder) / "home"
        home.mkdir()
        seed_home(home, task.desktop.files if task.desktop else {})
        app = APPS.get(task.desktop.app) if task.desktop else None
        if app is not None and app.settings:  # the settings a session starts with
            keyfile = Path(folder) / "config" / SETTINGS_KEYFILE
            keyfile.parent.mkdir(parents=True)
            keyfile.write_text(app.settings)
        return all(r.ok for r in file_checks(task.success, home))
