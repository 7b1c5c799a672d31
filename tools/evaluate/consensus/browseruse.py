"""browser-use run histories: the ``history.json`` an ``Agent``'s ``AgentHistoryList.save_to_file`` writes.

Each step of ``history`` holds the model's ``action`` list (``{"click": {"index": 4}}``), the page
state it acted on (``state.url``) and, per action, the element it touched
(``state.interacted_element``: tag, attributes, accessible name ``ax_name``, bounds). An element is
identified by its role (from the tag: ``A`` → link, ``BUTTON`` → button, ``INPUT`` → textbox …)
and its accessible name, never by ``index``: browser-use numbers elements afresh in every state.
Actions that only read the page (``extract``, ``find_text``, ``screenshot``, file reads …) are
counted as observations; ``done`` is the run's answer, and its ``success`` is the agent's own
verdict on the run (a labels file overrides it).

Runs are laid out as result folders (:mod:`.folders`) with ``history.json`` as the run file:
``<root>/<agent>/<task>/<run>/history.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .canonicalize import make_action
from .folders import read_result_folders
from .model import AgentTrajectory, CanonicalAction
from .reports import ImportLog

__all__ = ["history_actions", "load_histories", "READ_ONLY_ACTIONS"]

#: browser-use actions that read the page or files without acting on the page.
READ_ONLY_ACTIONS = frozenset({
    "extract", "find_text", "screenshot", "search_page", "find_elements", "dropdown_options", "read_file", "write_file",
    "replace_file", "save_as_pdf", "switch", "close",
})  # fmt: skip
_ROLES = {"a": "link", "button": "button", "select": "combobox", "textarea": "textbox", "option": "option", "img": "img", "summary": "button"}
_INPUT_ROLES = {"checkbox": "checkbox", "radio": "radio", "submit": "button", "button": "button", "search": "searchbox", "range": "slider"}


def _role(element: dict[str, Any]) -> str | None:
    attributes = element.get("attributes") or {}
    if attributes.get("role"):
        return str(attributes["role"])
    tag = str(element.get("node_name") or "").lower()
    if tag == "input":
        return _INPUT_ROLES.get(str(attributes.get("type") or "").lower(), "textbox")
    return _ROLES.get(tag, tag or None)


def _name(element: dict[str, Any] | None) -> str | None:
    if not element:
        return None
    attributes = element.get("attributes") or {}
    found = element.get("ax_name") or attributes.get("aria-label") or attributes.get("title") or attributes.get("placeholder") or attributes.get("name")
    return str(found) if found else None


def _action(name: str, params: dict[str, Any], element: dict[str, Any] | None, source: str) -> CanonicalAction:
    label = _name(element)
    if name == "navigate":
        return make_action("navigate", {"url": params.get("url")}, confidence=1.0, source=source)
    if name == "click":
        if element is None and params.get("coordinate_x") is not None:
            return make_action("click", {"x": params.get("coordinate_x"), "y": params.get("coordinate_y")}, confidence=1.0, source=source)
        return make_action("click", {"text": label, "element": _role(element) if element else None}, confidence=1.0, source=source)
    if name == "input":
        return make_action("type", {"text": params.get("text"), "element": label}, confidence=1.0, source=source)
    if name == "select_dropdown":
        return make_action("select", {"option": params.get("text"), "element": label}, confidence=1.0, source=source)
    if name == "send_keys":
        return make_action("press", {"key": params.get("keys")}, confidence=1.0, source=source)
    if name == "scroll":
        return make_action("scroll", {"direction": "down" if params.get("down", True) else "up"}, confidence=1.0, source=source)
    if name in ("go_back", "wait"):
        return make_action(name, {}, confidence=1.0, source=source)
    if name == "done":
        return make_action("answer", {"text": params.get("text")}, confidence=1.0, source=source)
    return make_action(name, {k: v for k, v in params.items() if isinstance(v, str | int | float)}, confidence=0.5, source=source)


def history_actions(steps: Any, log: ImportLog, where: str) -> list[CanonicalAction]:
    """The actions of one history's steps (see the module notes); read-only actions are counted in ``log.observations``."""
    if not isinstance(steps, list):
        log.skip(where, "not a browser-use history: 'history' is not a list")
        return []
    out: list[CanonicalAction] = []
    for step in steps:
        output = step.get("model_output") if isinstance(step, dict) else None
        if not isinstance(output, dict):
            continue  # a step that failed before the model answered: no action was taken
        state = step.get("state") or {}
        actions = output.get("action") or []
        elements = state.get("interacted_element") or [None] * len(actions)
        for act, element in zip(actions, [*elements, *[None] * (len(actions) - len(elements))]):
            if not isinstance(act, dict) or len(act) != 1:
                log.skip(where, f"not an action: {act!r}"[:200])
                continue
            (name, params), = act.items()
            if name in READ_ONLY_ACTIONS:
                log.observations += 1
                continue
            source = f"{name} {json.dumps(params, sort_keys=True)}"
            out.append(_action(name, params if isinstance(params, dict) else {}, element if isinstance(element, dict) else None, source).model_copy(
                update={"url": state.get("url")}
            ))  # fmt: skip
    return out


def _outcome(steps: list[Any]) -> bool | None:
    """The agent's own verdict: ``success`` of the last result that says the run is done."""
    for step in reversed(steps):
        for result in reversed(step.get("result") or []) if isinstance(step, dict) else []:
            if isinstance(result, dict) and result.get("is_done"):
                return result.get("success") if isinstance(result.get("success"), bool) else None
    return None


def _read_history_run(path: Path, log: ImportLog) -> tuple[Path, dict[str, Any]] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        log.skip(str(path), f"invalid JSON: {exc}")
        return None
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        log.skip(str(path), "not a browser-use history: no 'history' list")
        return None
    run: dict[str, Any] = {"actions": data["history"]}
    done = _outcome(data["history"])
    if done is not None:
        run["success"] = done
    return path, run


def load_histories(root: Path, agent: str | None = None, *, labels: Path | None = None, log: ImportLog) -> list[AgentTrajectory]:
    """Every browser-use ``history.json`` under ``root`` (layouts: :mod:`.folders` with ``history.json``)."""
    return read_result_folders(root, lambda steps, where, lg: history_actions(steps, lg, where), agent, labels, log, name="history.json", read=_read_history_run)
