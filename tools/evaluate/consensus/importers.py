"""Trajectories from files: ours, Online-Mind2Web result folders, and JSONL action sequences (AgentSynth, InSTA).

Every importer returns :class:`AgentTrajectory` objects in a stable order (sorted paths / file
order). A trajectory whose outcome is unknown is handled by ``unknown``: ``"skip"`` (default)
drops it, ``"fail"`` counts it as failed, ``"error"`` raises :class:`InputError`.

**Ours** (:func:`load_ours`): ``trajectory.jsonl`` files written by the recorder; the outcome is
``closed.success`` (None when the task had no criteria or the episode did not close).

**Online-Mind2Web** (:func:`load_online_mind2web`): a results folder with one sub-folder per task::

    <root>/<task_id>/result.json    {"task_id": "...", "task": "...", "action_history": ["[button]  Search -> CLICK", ...],
                                     "final_result_response": "...", <outcome>}
    <root>/<task_id>/trajectory/    screenshots (ignored)

``task_id`` defaults to the folder name. The outcome is the first present of ``success`` (bool),
``predicted_label`` (1 success, 0 failure, as WebJudge writes), ``result_status`` / ``status``
(``success``/``succeeded``/``completed``/``pass``/``passed`` or ``failure``/``failed``/``fail``/
``error``/``timeout``). A ``labels`` file overrides it: JSON ``{task_id: label}`` or JSON Lines of
``{"task_id", "predicted_label"}`` (by the ``.jsonl`` suffix); label 2 (Online-Mind2Web's "not executable") skips the task.
Actions are free text, canonicalised by rules (:func:`canonicalize_text`).

**JSONL** (:func:`load_jsonl`), one object per line::

    {"id": "...", "task_id": "...", "agent": "...", "model": "...", "success": true,
     "actions": ["pyautogui.click(600, 475)", "Type \\"dune\\" into search", {"action": "click", "text": "Search", "element": "button"}, ...]}

``id`` defaults to ``<file stem>:<line>``, ``agent`` to the ``agent`` argument or the file stem.
The outcome is ``success`` (bool), else ``reward``/``label``/``score`` (> 0 is success). The
action list is ``actions`` or ``action_history``. A string action is free text (AgentSynth logs
pyautogui calls, which the rules parse); an object action names its kind in ``action``,
``action_key`` (InSTA), ``name`` or ``type``, with fields ``text``, ``element``/``target_element_type``,
``value``/``key_sequence`` (typed text, or the option of a select), ``option``, ``url``, ``key``,
``x``, ``y``, ``direction`` and optionally ``necessary`` (bool); an object with an unknown kind but a
``description`` is canonicalised from the description, otherwise it becomes ``other(…)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar

from ...environment.trajectory import load_trajectory
from ...errors import InputError, NotFoundError
from ...registry import Registry
from ...security.roots import Roots
from .canonicalize import FIELDS, canonicalize_text, from_trajectory, make_action
from .model import AgentTrajectory, CanonicalAction

__all__ = ["Unknown", "load_ours", "load_online_mind2web", "load_labels", "load_jsonl", "action_from_object", "importers", "importer", "Importer"]

Importer = Callable[[Path, Roots], list[AgentTrajectory]]
#: Trajectory importers by source format: ``import(path, roots) -> trajectories``, where ``roots``
#: bounds the folders a search may visit. Another package adds one through ``taskloom.importers``.
importers: Registry[list[AgentTrajectory]] = Registry("importer", modules=("taskloom.tools.evaluate.consensus.importers",), label="trajectory format")
F = TypeVar("F", bound=Importer)


def importer(name: str) -> Callable[[F], F]:
    """Register a trajectory importer ``(path, roots) -> list[AgentTrajectory]`` under ``name``."""
    return importers.register(name)

Unknown = Literal["skip", "fail", "error"]
_OK = {"success", "succeeded", "successful", "completed", "complete", "pass", "passed", "true", "1"}
_BAD = {"failure", "failed", "fail", "error", "timeout", "incomplete", "false", "0"}
_NAMES = {"action", "action_key", "name", "type"}


def _outcome(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value > 0
    if isinstance(value, str):
        low = value.strip().lower()
        return True if low in _OK else False if low in _BAD else None
    return None


def _resolve(success: bool | None, unknown: Unknown, what: str) -> bool | None:
    if success is not None:
        return success
    if unknown == "error":
        raise InputError(f"{what} has no outcome (success/failure); label it, or pass unknown='skip' or 'fail'.")
    return False if unknown == "fail" else None


def load_ours(paths: Path | Iterable[Path], *, unknown: Unknown = "skip") -> list[AgentTrajectory]:
    """Our trajectory files: a ``trajectory.jsonl``, a folder searched recursively for them, or several of either."""
    items = [paths] if isinstance(paths, Path) else list(paths)
    files: list[Path] = []
    for p in items:
        if p.is_dir():
            files.extend(sorted(p.rglob("trajectory.jsonl")))
        elif p.is_file():
            files.append(p)
        else:
            raise NotFoundError(f"{p} does not exist; pass a trajectory.jsonl file or a folder containing some.")
    out = []
    for f in files:
        traj = load_trajectory(f)
        success = _resolve(traj.closed.success if traj.closed else None, unknown, str(f))
        if success is not None:
            out.append(from_trajectory(traj, success=success))
    return out


def load_labels(path: Path) -> dict[str, int]:
    """Outcome labels by task id: a ``.jsonl`` file of ``{"task_id", "predicted_label"}`` lines (WebJudge), or
    JSON — an object ``{task_id: label}`` or a list of such rows."""
    text = path.read_text(encoding="utf-8")
    try:
        data = [json.loads(line) for line in text.splitlines() if line.strip()] if path.suffix == ".jsonl" else json.loads(text)
        if isinstance(data, dict):
            return {str(k): int(v) for k, v in data.items()}
        return {str(r["task_id"]): int(r["predicted_label"]) for r in data}
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise InputError(
            f"{path}: labels must be JSON Lines of {{'task_id', 'predicted_label'}} or a JSON object {{task_id: label}} with integer labels ({exc!r})."
        ) from exc


def _actions(items: Any, where: str) -> list[CanonicalAction]:
    if not isinstance(items, list):
        raise InputError(f"{where}: the action list must be a JSON array, got {type(items).__name__}.")
    out = []
    for item in items:
        if isinstance(item, str):
            if item.strip():
                out.append(canonicalize_text(item))
        elif isinstance(item, dict):
            out.append(action_from_object(item))
        else:
            raise InputError(f"{where}: an action must be a string or an object, got {item!r}.")
    return out


def load_online_mind2web(root: Path, agent: str | None = None, *, labels: Path | None = None, unknown: Unknown = "skip") -> list[AgentTrajectory]:
    """Every ``<root>/<task>/result.json`` as one trajectory of ``agent`` (default: the folder name of ``root``)."""
    if not root.is_dir():
        raise NotFoundError(f"{root} is not a folder; pass the results folder that holds one sub-folder per task.")
    overrides = load_labels(labels) if labels is not None else {}
    name = agent or root.name
    out = []
    for result in sorted(root.glob("*/result.json")):
        where = str(result)
        try:
            data = json.loads(result.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"{where} is not valid JSON: {exc}") from exc
        task_id = str(data.get("task_id") or result.parent.name)
        if task_id in overrides:
            if overrides[task_id] not in (0, 1):
                continue
            success: bool | None = overrides[task_id] == 1
        else:
            raw = next((data[k] for k in ("success", "predicted_label", "result_status", "status") if k in data), None)
            success = _outcome(raw)
        success = _resolve(success, unknown, where)
        if success is None:
            continue
        actions = _actions(data.get("action_history", []), where)
        out.append(AgentTrajectory(id=f"{name}/{task_id}", task_id=task_id, agent=name, actions=actions, success=success))
    return out


def action_from_object(obj: dict[str, Any]) -> CanonicalAction:
    """A structured action object (see the module notes) as a canonical action."""
    raw = next((str(obj[k]) for k in ("action", "action_key", "name", "type") if isinstance(obj.get(k), str)), "")
    name = raw.strip().lower()
    name = {"goto": "navigate", "back": "go_back", "go_back": "go_back", "select_option": "select", "fill": "type", "input": "type", "press_key": "press"}.get(name, name)
    necessary = obj.get("necessary") if isinstance(obj.get("necessary"), bool) else None
    source = json.dumps(obj, ensure_ascii=False, sort_keys=True)
    if name not in FIELDS or name == "other":
        if isinstance(obj.get("description"), str):
            act = canonicalize_text(obj["description"])
            return act.model_copy(update={"necessary": necessary})
        return make_action("other", {"text": source}, confidence=0.1, source=source, necessary=necessary)
    fields: dict[str, Any] = {k: v for k, v in obj.items() if k not in _NAMES and isinstance(v, str | int | float) and not isinstance(v, bool)}
    if "element" not in fields and "target_element_type" in fields:
        fields["element"] = fields["target_element_type"]
    typed = fields.get("value", fields.get("key_sequence"))
    if name == "type" and "text" not in fields:
        fields["text"] = typed
    if name == "select" and "option" not in fields:
        fields["option"] = typed if typed is not None else fields.get("text")
        if fields.get("text") == fields["option"]:
            fields.pop("text", None)
    allowed = FIELDS[name]
    return make_action(name, {k: v for k, v in fields.items() if k in allowed}, confidence=0.9, source=source, necessary=necessary)


def load_jsonl(path: Path, *, agent: str | None = None, unknown: Unknown = "skip") -> list[AgentTrajectory]:
    """One trajectory per line of a JSON Lines file (see the module notes)."""
    if not path.is_file():
        raise NotFoundError(f"{path} does not exist; pass a .jsonl file with one trajectory per line.")
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where} is not valid JSON: {exc}") from exc
        if not isinstance(obj, dict):
            raise InputError(f"{where}: each line must be a JSON object.")
        raw = next((obj[k] for k in ("success", "reward", "label", "score") if k in obj), None)
        success = _resolve(_outcome(raw), unknown, where)
        if success is None:
            continue
        items = obj.get("actions", obj.get("action_history", []))
        out.append(
            AgentTrajectory(
                id=str(obj.get("id") or f"{path.stem}:{number}"),
                task_id=str(obj["task_id"]) if obj.get("task_id") is not None else None,
                agent=str(obj.get("agent") or agent or path.stem),
                model=str(obj["model"]) if obj.get("model") is not None else None,
                actions=_actions(items, where),
                success=success,
            )
        )
    return out


@importer("ours")
def import_ours(path: Path, roots: Roots) -> list[AgentTrajectory]:
    """Taskloom trajectories: a ``trajectory.jsonl``, or a folder searched for them (outcome from the close record)."""
    files = list(roots.walk(path, "trajectory.jsonl")) if path.is_dir() else [path]
    return [from_trajectory(load_trajectory(f)) for f in files]


@importer("mind2web")
def import_mind2web(path: Path, roots: Roots) -> list[AgentTrajectory]:
    """Online-Mind2Web result folders (one sub-folder per task with a ``result.json``)."""
    return load_online_mind2web(path)


@importer("jsonl")
def import_jsonl(path: Path, roots: Roots) -> list[AgentTrajectory]:
    """JSON Lines action sequences, one trajectory per line (AgentSynth, InSTA)."""
    return load_jsonl(path)
