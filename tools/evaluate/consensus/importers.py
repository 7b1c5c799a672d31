"""Trajectories from files, one registered importer per format, each reporting what it skipped and why.

Formats: ``ours`` (our recorder), ``abp`` (Agent Browser Protocol free text in Online-Mind2Web
result folders), ``mind2web`` (``[tag] text -> OP`` in the same folders), ``browsergym``
(BrowserGym action calls: AgentRewardBench / AgentLab JSON), ``code`` (Playwright calls, JSON
Lines), ``jsonl`` (free text or action objects, JSON Lines), ``playwright-mcp`` (the session logs
of the real ``@playwright/mcp``: :mod:`.sessions`), ``browser-use`` (browser-use's run histories: :mod:`.browseruse`). Every importer returns
:class:`AgentTrajectory` objects in a stable order (sorted paths / file order) and records each
item it skips in an :class:`~.reports.ImportLog`. A trajectory whose outcome is not a known
success or failure is handled by ``unknown`` (:class:`~.reports.ImportLog.outcome`): ``"error"``
raises :class:`InputError`, ``"skip"`` skips it with the reason, ``"fail"``/``"success"`` map it.
The library loaders below default to ``"skip"``; the registered importers (CLI, MCP) to ``"error"``.

**Agent Browser Protocol** (:func:`load_result_folders` with :func:`~.parsers.parse_abp`): the same
folder layout as Online-Mind2Web, ``result_status`` ``success`` / ``error_max_turns`` (a failure),
actions like ``Click at (600, 475)``, ``Scroll (delta_x=0, delta_y=550)``, ``Press ENTER``.

**BrowserGym** (:func:`load_browsergym`): JSON files, one trajectory each, searched recursively;
actions from ``actions`` / ``action_history`` (a list of calls) or from the "Action History:" of
``input_text`` (AgentRewardBench); the outcome from ``success``, ``reward``,
``trajectory_info.summary_info.cum_reward`` or ``cum_reward``; the task id from ``task_id`` or the
file name (``webarena.306.json`` → ``webarena.306``); the agent from ``agent`` or the folder name;
the instruction from ``goal``.

**Ours** (:func:`load_ours`): ``trajectory.jsonl`` files written by the recorder; the outcome is
``closed.success`` (None when the task had no criteria or the episode did not close).

**Online-Mind2Web** (:func:`load_online_mind2web`): result folders, one ``result.json`` per run::

    <root>/<task_id>/result.json    {"task_id": "...", "task": "...", "action_history": ["[button]  Search -> CLICK", "-> PRESS: Enter", ...],
                                     "final_result_response": "...", <outcome>}
    <root>/<task_id>/trajectory/    screenshots (ignored)

or with agent and run folders (``<root>/<agent>/<task>/<run>/result.json``: every layout in
:mod:`.folders`, which also says how runs are numbered). ``task_id`` defaults to the folder name; the
actions are ``action_history`` or Mind2Web's ``action_reprs``. The outcome is ``predicted_label``
(1 success, 0 failure, as WebJudge writes: a judge's verdict), else ``success`` / ``result_status``
/ ``status`` (the agent's own claim). A ``labels`` file overrides it: JSON ``{task_id: label}`` or
JSON Lines of ``{"task_id", "predicted_label"}`` (by the ``.jsonl`` suffix), optionally per ``agent``
and ``run``; label 2 (Online-Mind2Web's "not executable") skips the run. Actions are free text,
canonicalised by rules (:func:`canonicalize_text`: tagged ``[tag] text -> OP: value`` and tagless ``-> OP: value``).

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
from typing import Any, TypeVar

from ...environment.trajectory import load_trajectory
from ...errors import InputError, NotFoundError
from ...registry import Registry
from .canonicalize import FIELDS, canonicalize_text, from_trajectory, make_action
from .model import AgentTrajectory, CanonicalAction
from .folders import load_labels, read_result_folders
from .parsers import browsergym_steps, name_hint, parse_abp, parse_browsergym, parse_code
from .reports import ImportLog, ImportOptions, Unknown
from .browseruse import load_histories
from .sessions import load_sessions

__all__ = [
    "Unknown", "load_ours", "run_outcome", "load_online_mind2web", "load_result_folders", "load_browsergym", "load_labels", "load_jsonl",
    "action_from_object", "importers", "importer", "Importer", "Parse",
]  # fmt: skip

Importer = Callable[[Path, ImportLog], list[AgentTrajectory]]
Parse = Callable[[str], CanonicalAction | None]
#: Trajectory importers by source format: ``import(path, log) -> trajectories``; ``log.options`` holds the
#: user's choices (unknown statuses, agent name, allowed roots) and ``log.skip`` records what is left out.
#: Another package adds one through ``taskloom.importers``.
importers: Registry[list[AgentTrajectory]] = Registry("importer", modules=("taskloom.tools.evaluate.consensus.importers",), label="trajectory format")
F = TypeVar("F", bound=Importer)


def importer(name: str) -> Callable[[F], F]:
    """Register a trajectory importer ``(path, log) -> list[AgentTrajectory]`` under ``name``."""
    return importers.register(name)


_NAMES = {"action", "action_key", "name", "type"}


def _log(log: ImportLog | None, unknown: Unknown) -> ImportLog:
    return log if log is not None else ImportLog(ImportOptions(unknown=unknown))


def _parse_all(items: Any, where: str, parse: Parse, log: ImportLog) -> list[CanonicalAction]:
    if not isinstance(items, list):
        raise InputError(f"{where}: the action list must be a JSON array, got {type(items).__name__}.")
    out = []
    for item in items:
        if isinstance(item, str):
            if not item.strip():
                continue
            act = parse(item)
            if act is None:
                log.markers += 1
            else:
                out.append(act)
        elif isinstance(item, dict):
            out.append(action_from_object(item))
        else:
            raise InputError(f"{where}: an action must be a string or an object, got {item!r}.")
    return out


def _free_text(text: str) -> CanonicalAction | None:
    return canonicalize_text(text)


def run_outcome(path: Path, runs: dict[Path, dict[tuple[str, str], bool]] | None = None) -> bool | None:
    """The outcome a Taskloom run recorded for the episode whose trajectory is ``path``, or None.

    A run keeps each episode's trajectory at ``runs/{run}/episodes/{task}/{agent}/{episode}/trajectory.jsonl``
    and its verdict in ``runs/{run}/results.jsonl`` (document answers are scored there, not
    in the trajectory). ``runs`` caches each run's verdicts by (task, agent); the last line wins.
    """
    folders = Path(path).resolve().parents
    if len(folders) < 5 or folders[3].name != "episodes":
        return None
    run, task, agent = folders[4], folders[2].name, folders[1].name
    if runs is None or run not in runs:
        verdicts: dict[tuple[str, str], bool] = {}
        try:
            lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            lines = []
        for line in lines:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line (the run was killed mid-write)
            if isinstance(row, dict) and isinstance(row.get("success"), bool):
                verdicts[(str(row.get("task_id")), str(row.get("agent")))] = row["success"]
        if runs is None:
            return verdicts.get((task, agent))
        runs[run] = verdicts
    return runs[run].get((task, agent))


def load_ours(paths: Path | Iterable[Path], *, unknown: Unknown = "skip", log: ImportLog | None = None) -> list[AgentTrajectory]:
    """Our trajectory files: a ``trajectory.jsonl``, a folder searched recursively for them, or several of either.

    An episode closed without a verdict of its own (a document task, scored by its run) takes
    the verdict its run recorded (:func:`run_outcome`); only one without either is an unknown outcome.
    """
    log = _log(log, unknown)
    items = [paths] if isinstance(paths, Path) else list(paths)
    files: list[Path] = []
    for p in items:
        if p.is_dir():
            files.extend(log.options.roots.walk(p, "trajectory.jsonl") if log.options.roots else sorted(p.rglob("trajectory.jsonl")))
        elif p.is_file():
            files.append(p)
        else:
            raise NotFoundError(f"{p} does not exist; pass a trajectory.jsonl file or a folder containing some.")
    out = []
    runs: dict[Path, dict[tuple[str, str], bool]] = {}
    for f in files:
        try:
            traj = load_trajectory(f)
        except InputError as exc:
            log.skip(str(f), f"unreadable: {exc}")
            continue
        verdict = traj.closed.success if traj.closed is not None and traj.closed.success is not None else run_outcome(f, runs)
        raw = None if verdict is None else ("success" if verdict else "failure")
        success, status = log.outcome(raw, str(f))
        if success is not None:
            out.append(from_trajectory(traj, success=success).model_copy(update={"status": status, "verdict_source": "reference", "source": str(f)}))
    return out


def _read_json(path: Path, log: ImportLog) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        log.skip(str(path), f"invalid JSON: {exc}")
        return None


def load_result_folders(
    root: Path, parse: Parse = _free_text, agent: str | None = None, *, labels: Path | None = None, unknown: Unknown = "skip", log: ImportLog | None = None
) -> list[AgentTrajectory]:
    """Every run under ``root`` in Online-Mind2Web result folders (layouts: :mod:`.folders`), actions read by ``parse``.

    The agent defaults to its folder in the layout, else the folder name of ``root``; ``0 runs found`` is an error naming the layouts expected.
    """
    log = _log(log, unknown)
    return read_result_folders(root, lambda items, where, lg: _parse_all(items, where, parse, lg), agent, labels, log)


def load_online_mind2web(root: Path, agent: str | None = None, *, labels: Path | None = None, unknown: Unknown = "skip", log: ImportLog | None = None) -> list[AgentTrajectory]:
    """Online-Mind2Web result folders with ``[tag] text -> OP`` (or other free-text) actions; see :func:`load_result_folders`."""
    return load_result_folders(root, _free_text, agent, labels=labels, unknown=unknown, log=log)


def _summary_reward(data: dict[str, Any]) -> Any:
    info = data.get("trajectory_info")
    summary = info.get("summary_info") if isinstance(info, dict) else None
    if isinstance(summary, dict) and "cum_reward" in summary:
        return summary["cum_reward"]
    return next((data[k] for k in ("success", "reward", "cum_reward", "status") if k in data), None)


def load_browsergym(path: Path, *, unknown: Unknown = "skip", log: ImportLog | None = None) -> list[AgentTrajectory]:
    """BrowserGym trajectories: a JSON file, or a folder searched recursively for them (see the module notes)."""
    log = _log(log, unknown)
    if path.is_dir():
        files = list(log.options.roots.walk(path, "*.json")) if log.options.roots else sorted(path.rglob("*.json"))
    elif path.is_file():
        files = [path]
    else:
        raise NotFoundError(f"{path} does not exist; pass a BrowserGym trajectory JSON file or a folder of them.")
    out = []
    for f in files:
        where = str(f)
        data = _read_json(f, log)
        if data is None:
            continue
        if not isinstance(data, dict):
            log.skip(where, "not a trajectory: the JSON is not an object")
            continue
        items = data.get("actions", data.get("action_history"))
        reasons: list[str] = []
        if items is None and isinstance(data.get("input_text"), str):
            steps = browsergym_steps(data["input_text"])
            items, reasons = [a for a, _ in steps], [r for a, r in steps if a.strip() and a.strip() != "None"]
        if items is None:
            log.skip(where, "no actions: neither actions, action_history nor an input_text with an Action History")
            continue
        success, status = log.outcome(_summary_reward(data), where)
        if success is None:
            continue
        task_id = str(data.get("task_id") or f.name.removesuffix(".json"))
        agent = str(data.get("agent") or log.options.agent or f.parent.name)
        goal = data["goal"].strip() if isinstance(data.get("goal"), str) else None
        actions = _parse_all(items, where, parse_browsergym, log)
        if len(reasons) == len(actions):  # each action with its reasoning: the names the agent gives its targets
            actions = [a.model_copy(update={"hint": name_hint(r, a, goal or "")}) for a, r in zip(actions, reasons)]
        out.append(AgentTrajectory(
            id=f"{agent}/{task_id}", task_id=task_id, agent=agent, actions=actions, success=success, status=status, instruction=goal,
            verdict_source="reference", source=where,
        ))  # fmt: skip
    return out


def action_from_object(obj: dict[str, Any]) -> CanonicalAction:
    """A structured action object (see the module notes) as a canonical action."""
    raw = next((str(obj[k]) for k in ("action", "action_key", "name", "type") if isinstance(obj.get(k), str)), "")
    name = raw.strip().lower()
    name = {"goto": "navigate", "back": "go_back", "go_back": "go_back", "select_option": "select", "fill": "type", "input": "type", "press_key": "press"}.get(name, name)
    necessary = obj.get("necessary") if isinstance(obj.get("necessary"), bool) else None
    source = json.dumps(obj, ensure_ascii=False, sort_keys=True)
    if name not in FIELDS or name == "other":
        text = next((obj[k] for k in ("description", "action") if isinstance(obj.get(k), str) and obj[k].strip()), None)
        if text is not None:  # a described action, or a logged action line with its page ({"action": "-> CLICK", "url": …})
            act = canonicalize_text(text)
            url = obj.get("url") if isinstance(obj.get("url"), str) else None
            return act.model_copy(update={"necessary": necessary, "url": act.url or url})
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


def load_jsonl(path: Path, *, agent: str | None = None, unknown: Unknown = "skip", parse: Parse = _free_text, log: ImportLog | None = None) -> list[AgentTrajectory]:
    """One trajectory per line of a JSON Lines file (see the module notes); string actions read by ``parse``."""
    log = _log(log, unknown)
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
            log.skip(where, f"invalid JSON: {exc}")
            continue
        if not isinstance(obj, dict):
            log.skip(where, "not a trajectory: the line is not a JSON object")
            continue
        raw = next((obj[k] for k in ("success", "reward", "label", "score", "status", "result_status") if k in obj), None)
        success, status = log.outcome(raw, where)
        if success is None:
            continue
        items = obj.get("actions", obj.get("action_history", []))
        out.append(
            AgentTrajectory(
                id=str(obj.get("id") or f"{path.stem}:{number}"),
                task_id=str(obj["task_id"]) if obj.get("task_id") is not None else None,
                agent=str(obj.get("agent") or agent or log.options.agent or path.stem),
                model=str(obj["model"]) if obj.get("model") is not None else None,
                actions=_parse_all(items, where, parse, log),
                success=success,
                status=status,
                instruction=next((obj[k] for k in ("instruction", "task", "goal") if isinstance(obj.get(k), str)), None),
                source=where,
            )
        )
    return out


@importer("ours")
def import_ours(path: Path, log: ImportLog) -> list[AgentTrajectory]:
    """Taskloom trajectories: a ``trajectory.jsonl``, or a folder searched for them (outcome from the close record)."""
    return load_ours(path, log=log)


@importer("abp")
def import_abp(path: Path, log: ImportLog) -> list[AgentTrajectory]:
    """Agent Browser Protocol runs: Online-Mind2Web result folders with free-text actions ("Click at (x, y)", "Scroll (…)")."""
    return load_result_folders(path, parse_abp, labels=log.options.labels, log=log)


@importer("mind2web")
def import_mind2web(path: Path, log: ImportLog) -> list[AgentTrajectory]:
    """Online-Mind2Web result folders (one sub-folder per task with a ``result.json``; ``[tag] text -> OP`` actions)."""
    return load_result_folders(path, _free_text, labels=log.options.labels, log=log)


@importer("browsergym")
def import_browsergym(path: Path, log: ImportLog) -> list[AgentTrajectory]:
    """BrowserGym action histories (``click('226')``, ``fill('823', 'best')``): AgentRewardBench / AgentLab JSON files."""
    return load_browsergym(path, log=log)


@importer("code")
def import_code(path: Path, log: ImportLog) -> list[AgentTrajectory]:
    """Code-style logs: JSON Lines whose actions are Playwright calls (``page.get_by_role('button', name='Go').click()``)."""
    return load_jsonl(path, parse=parse_code, log=log)


@importer("jsonl")
def import_jsonl(path: Path, log: ImportLog) -> list[AgentTrajectory]:
    """JSON Lines action sequences, one trajectory per line (AgentSynth, InSTA): free text or action objects."""
    return load_jsonl(path, log=log)


@importer("playwright-mcp")
def import_playwright_mcp(path: Path, log: ImportLog) -> list[AgentTrajectory]:
    """Playwright MCP session logs (``@playwright/mcp --save-session``: ``session-<ms>/session.md``), one run per session."""
    return load_sessions(path, labels=log.options.labels, log=log)


@importer("browser-use")
def import_browser_use(path: Path, log: ImportLog) -> list[AgentTrajectory]:
    """browser-use run histories (``AgentHistoryList.save_to_file``: ``history.json``), one run per file."""
    return load_histories(path, labels=log.options.labels, log=log)
