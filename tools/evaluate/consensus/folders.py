"""Online-Mind2Web-style result folders: one ``result.json`` per run, with the layout detected from the paths.

Accepted layouts (``<run>`` folders are numbers, optionally prefixed: ``0``, ``run_2``, ``attempt-3``)::

    <root>/result.json                           one run of one task
    <root>/<task>/result.json                    one run per task (Online-Mind2Web's own layout)
    <root>/<task>/<run>/result.json              repeated runs of each task
    <root>/<agent>/<task>/result.json            several agents, one run per task
    <root>/<agent>/<task>/<run>/result.json      several agents, repeated runs

A ``task_id`` inside ``result.json`` that names a folder of the path fixes which folder is the
task (folders above it name the agent, below it the run); otherwise a numbered last folder is
the run. ``run`` / ``run_id`` / ``attempt`` / ``trial`` / ``run_index`` in the JSON override the
folder's run number. Several runs of one agent on one task without distinct numbers are numbered
0, 1, … in path order. Actions come from ``action_history`` (Online-Mind2Web), ``action_reprs``
(Mind2Web) or ``actions``; a run without any of them is imported with no actions and counted.

The outcome and who gave it (:data:`~.model.VerdictSource`): a labels file (a judge) first, then
``predicted_label`` (WebJudge: a judge), then ``success`` / ``result_status`` / ``status`` (the
agent's own claim). Labels rows may name ``agent`` and ``run`` (or ``attempt``) besides
``task_id``: the most specific row wins; a task-level label given to repeated runs is noted.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import InputError, NotFoundError
from .model import AgentTrajectory, CanonicalAction, VerdictSource
from .reports import ImportLog

__all__ = ["LAYOUTS", "ACTION_KEYS", "find_results", "place", "load_labels", "label_for", "read_result_folders"]

LAYOUTS = (
    "<root>/<task>/result.json", "<root>/<task>/<run>/result.json", "<root>/<agent>/<task>/result.json",
    "<root>/<agent>/<task>/<run>/result.json", "<root>/result.json",
)  # fmt: skip
ACTION_KEYS = ("action_history", "action_reprs", "actions")
_RUN = re.compile(r"(?:run|attempt|trial|try|rep|repeat|seed|sample|iter)?[ _-]?(\d{1,4})", re.I)
_RUN_KEYS = ("run", "run_id", "run_index", "attempt", "trial")
_OUTCOME_KEYS: tuple[tuple[str, VerdictSource], ...] = (("predicted_label", "judge"), ("success", "agent"), ("result_status", "agent"), ("status", "agent"))
_MAX_DEPTH = 3  # folders between the root and a result.json
_GENERIC = {"runs", "results", "result", "output", "outputs", "logs", "data"}  # folder names that do not name an agent

ParseAll = Callable[[Any, str, ImportLog], list[CanonicalAction]]


def find_results(root: Path, log: ImportLog, name: str = "result.json", extra_depth: int = 0) -> list[Path]:
    """Every file ``name`` at most three folders (plus ``extra_depth``) below ``root`` (sorted); a clear error when there is none."""
    depth = _MAX_DEPTH + 1 + extra_depth
    if log.options.roots is not None:
        found = list(log.options.roots.walk(root, name, depth=depth))
    else:
        found = sorted(p for p in root.rglob(name) if len(p.relative_to(root).parts) <= depth)
    found = [p for p in found if len(p.relative_to(root).parts) <= depth]
    if found:
        return sorted(found)
    others = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.json"))[:3] if root.is_dir() else []
    seen = f"; it holds {', '.join(others)} (a BrowserGym or JSON Lines log? try those formats)" if others else "; it holds no .json file"
    layouts = [layout.replace("result.json", name) for layout in LAYOUTS]
    raise NotFoundError(f"0 runs found in {root}: expected " + " or ".join(layouts) + seen)


def _run_number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    m = _RUN.fullmatch(str(value).strip()) if isinstance(value, str) else None
    return int(m.group(1)) if m else None


def place(root: Path, result: Path, data: dict[str, Any]) -> tuple[str | None, str, int | None, str]:
    """``(agent folder, task id, run, layout)`` of one run file ``result`` (see the module notes)."""
    parts = result.parent.relative_to(root).parts
    task_id = str(data["task_id"]) if data.get("task_id") not in (None, "") else None
    if task_id is not None and task_id in parts:
        i = len(parts) - 1 - parts[::-1].index(task_id)
    elif len(parts) >= 2 and _RUN.fullmatch(parts[-1]):
        i = len(parts) - 2
    else:
        i = len(parts) - 1
    before, after = parts[: max(i, 0)], parts[i + 1 :] if i >= 0 else ()
    task = task_id or (parts[i] if parts else root.name)
    run = next((n for k in _RUN_KEYS if (n := _run_number(data.get(k))) is not None), None)
    if run is None and after:
        run = _run_number(after[-1])
    layout = "/".join(["<root>", *["<agent>"] * len(before), *(["<task>"] if parts else []), *["<run>"] * len(after), result.name])
    return ("/".join(before) or None), task, run, layout


def load_labels(path: Path) -> dict[str, int]:
    """Outcome labels keyed ``task``, ``task#run``, ``agent/task`` or ``agent/task#run``: a ``.jsonl`` file of
    ``{"task_id", "predicted_label"[, "agent"][, "run"]}`` lines (WebJudge), or JSON — an object ``{key: label}`` or a list of such rows."""
    text = path.read_text(encoding="utf-8")
    try:
        data = [json.loads(line) for line in text.splitlines() if line.strip()] if path.suffix == ".jsonl" else json.loads(text)
        if isinstance(data, dict):
            return {str(k): int(v) for k, v in data.items()}
        out = {}
        for r in data:
            run = next((n for k in _RUN_KEYS if (n := _run_number(r.get(k))) is not None), None)
            key = (f"{r['agent']}/" if r.get("agent") else "") + str(r["task_id"]) + (f"#{run}" if run is not None else "")
            out[key] = int(r["predicted_label"])
        return out
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(
            f"{path}: labels must be JSON Lines of {{'task_id', 'predicted_label'}} (optionally 'agent', 'run') or a JSON object "
            f"{{task_id: label}} with integer labels ({exc!r})."
        ) from exc


def label_for(labels: dict[str, int], agent: str, task: str, run: int | None) -> tuple[int, bool] | None:
    """The most specific label of a run and whether it was given for the run itself (not only its task)."""
    keys = ([f"{agent}/{task}#{run}", f"{task}#{run}"] if run is not None else []) + [f"{agent}/{task}", task]
    for i, key in enumerate(keys):
        if key in labels:
            return labels[key], run is not None and i < 2
    return None


def _number_runs(rows: list[dict[str, Any]]) -> None:
    """Give repeated runs of one agent on one task distinct numbers (path order) when the logs do not."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["agent"], row["task"])].append(row)
    for group in groups.values():
        numbers = [r["run"] for r in group]
        if len(group) > 1 and (None in numbers or len(set(numbers)) < len(numbers)):
            for n, row in enumerate(group):
                row["run"] = n


def _read_json_run(path: Path, log: ImportLog) -> tuple[Path, dict[str, Any]] | None:
    """A ``result.json``: where it sits in the layout (itself) and its object; None (skipped with the reason) when unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        log.skip(str(path), f"invalid JSON: {exc}")
        return None
    if not isinstance(data, dict):
        log.skip(str(path), "not a run: the JSON is not an object")
        return None
    return path, data


#: Reads one run file: ``(path, log) -> (the path as placed in the layout, the run's object)``, or None when skipped.
ReadRun = Callable[[Path, ImportLog], tuple[Path, dict[str, Any]] | None]


def read_result_folders(
    root: Path, parse_all: ParseAll, agent: str | None, labels: Path | None, log: ImportLog, *, name: str = "result.json",
    read: ReadRun = _read_json_run, extra_depth: int = 0,
) -> list[AgentTrajectory]:  # fmt: skip
    """The runs under ``root`` (see the module notes); ``parse_all(items, where, log)`` reads an action list.

    Other run files than ``result.json`` (``name``) are read by ``read``, which says where each sits in the layout.
    """
    if not root.is_dir():
        raise NotFoundError(f"{root} is not a folder; pass the results folder: " + " or ".join(x.replace("result.json", name) for x in LAYOUTS))
    overrides = load_labels(labels) if labels is not None else {}
    default = agent or log.options.agent or (root.resolve().parent.name if root.name in _GENERIC else root.name)
    rows: list[dict[str, Any]] = []
    for result in find_results(root, log, name, extra_depth):
        where = str(result)
        got = read(result, log)
        if got is None:
            continue
        placed, data = got
        folder, task, run, layout = place(root, placed, data)
        log.layouts[layout] += 1
        name = agent or log.options.agent or (str(data["agent"]) if data.get("agent") else None) or folder or default
        rows.append({"agent": name, "task": task, "run": run, "where": where, "data": data})
    _number_runs(rows)
    per_task_labels = 0
    out = []
    for row in rows:
        data, where, task, run, name = row["data"], row["where"], row["task"], row["run"], row["agent"]
        found = label_for(overrides, name, task, run)
        source: VerdictSource | None
        raw: Any
        if found is not None:
            label, exact = found
            per_task_labels += run is not None and not exact
            if label not in (0, 1):
                log.skip(where, f"label {label}: not executable")
                continue
            raw, source = label == 1, "judge"
        else:
            verdict = next(((k, who) for k, who in _OUTCOME_KEYS if k in data), None)
            raw, source = (data[verdict[0]], verdict[1]) if verdict else (None, None)
        success, status = log.outcome(raw, where)
        if success is None:
            continue
        key = next((k for k in ACTION_KEYS if k in data), None)
        if key is None:
            log.no_action_list += 1
        actions = parse_all(data[key], where, log) if key else []
        instruction = next((data[k] for k in ("task", "confirmed_task", "instruction") if isinstance(data.get(k), str)), None)
        out.append(AgentTrajectory(
            id=f"{name}/{task}" + (f"#{run}" if run is not None else ""), task_id=task, agent=name, run=run, actions=actions, success=success,
            status=status, instruction=instruction, verdict_source=source, source=where,
        ))  # fmt: skip
    if per_task_labels:
        log.note(f"{per_task_labels} repeated runs took their task's label (the labels name no run): give 'run' in the labels to judge each run")
    runs = Counter((t.agent, t.task_id) for t in out)
    if any(n > 1 for n in runs.values()):
        log.note(f"repeated runs: {sum(n > 1 for n in runs.values())} agent-task pairs with 2-{max(runs.values())} runs each")
    return out
