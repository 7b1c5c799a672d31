"""Playwright MCP session logs: every tool call an agent made through the real ``@playwright/mcp``.

Run with ``--save-session``, the package writes ``<output-dir>/session-<ms>/session.md``, one
section per tool call::

    ### Tool call: browser_click
    - Args
    ```json
    {"element": "Go button", "target": "e5"}
    ```
    - Result
    ```json
    {"code": "await page.getByRole('button', { name: 'Go' }).click();", "page": "- Page URL: http://…/b.html\\n- Page Title: Books", …}
    ```

An action is read from the result's ``code``, the Playwright code the tool ran, with
:func:`~.parsers.parse_code`: the element's role and name as the page gave them, not the agent's
words (a ``browser_type`` with ``submit`` ran two statements: two actions). The agent's own
description (``element``) becomes the action's hint. The page of an action is the last
``Page URL`` a result reported before it. Calls that only look (snapshot, screenshot, console,
network, tab list, wait) are not actions and are counted as observations; a call whose result
has no code is read from its tool name and arguments (confidence 0.5). A call the package refused
(an unknown ref, bad arguments) is not in its log.

Runs are laid out as result folders (:mod:`.folders`) with ``session.md`` as the run file and the
``session-<ms>`` folder the package adds skipped: ``<root>/<agent>/<task>/<run>/session-<ms>/session.md``
(or ``…/<run>/session.md``). A session log holds no outcome: give one with a labels file
(``--labels``), or a ``result.json`` with ``success`` beside ``session.md`` or its session folder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .canonicalize import make_action
from .folders import read_result_folders
from .model import AgentTrajectory, CanonicalAction
from .parsers import parse_code
from .reports import ImportLog

__all__ = ["read_session", "session_actions", "load_sessions", "OBSERVATION_TOOLS"]

#: Tools that read the page without acting on it.
OBSERVATION_TOOLS = frozenset({
    "browser_snapshot", "browser_take_screenshot", "browser_console_messages", "browser_network_requests", "browser_network_request",
    "browser_wait_for", "browser_tabs", "browser_find", "browser_install", "browser_resize", "browser_emulate_media",
})  # fmt: skip
_CALL = re.compile(r"^### Tool call: (\S+)\s*$", re.M)
_BLOCK = re.compile(r"^- (Args|Result)\n```json\n(.*?)\n```$", re.M | re.S)
_PAGE_URL = re.compile(r"- Page URL: (\S+)")
_SESSION_FOLDER = re.compile(r"session-\d+")
#: Tool → action name when a call has no code to read (it failed before running any).
_BY_TOOL = {
    "browser_navigate": "navigate", "browser_navigate_back": "go_back", "browser_click": "click", "browser_hover": "hover",
    "browser_type": "type", "browser_select_option": "select", "browser_press_key": "press", "browser_drag": "drag",
    "browser_fill_form": "type", "browser_file_upload": "upload", "browser_handle_dialog": "dialog", "browser_close": "close",
}  # fmt: skip


def read_session(text: str) -> list[dict[str, Any]]:
    """The tool calls of a ``session.md``: ``{"tool", "args", "result"}`` each (``result`` is None when the log has none).

    >>> calls = read_session('### Tool call: browser_navigate\\n- Args\\n```json\\n{"url": "http://a/"}\\n```\\n')
    >>> calls == [{"tool": "browser_navigate", "args": {"url": "http://a/"}, "result": None}]
    True
    """
    heads = list(_CALL.finditer(text))
    calls = []
    for i, head in enumerate(heads):
        body = text[head.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        blocks = {kind: json.loads(raw) for kind, raw in _BLOCK.findall(body)}
        calls.append({"tool": head.group(1), "args": blocks.get("Args") or {}, "result": blocks.get("Result")})
    return calls


def _from_arguments(tool: str, args: dict[str, Any]) -> CanonicalAction:
    name = _BY_TOOL.get(tool, tool.removeprefix("browser_"))
    fields = {"text": args.get("element"), "url": args.get("url"), "key": args.get("key"), "value": args.get("text")}
    if isinstance(args.get("values"), list) and args["values"]:
        fields["option"] = str(args["values"][0])
    return make_action(name, fields, confidence=0.5, source=f"{tool} {json.dumps(args, sort_keys=True)}")


def session_actions(calls: list[dict[str, Any]], log: ImportLog, where: str) -> list[CanonicalAction]:
    """The actions of one session's tool calls (see the module notes); observations are counted in ``log.observations``."""
    out: list[CanonicalAction] = []
    page: str | None = None
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
            log.skip(where, f"not a tool call: {call!r}"[:200])
            continue
        tool, args, result = call["tool"], call.get("args") or {}, call.get("result") or {}
        if tool in OBSERVATION_TOOLS:
            log.observations += 1
        else:
            code = result.get("code") if isinstance(result, dict) else None
            statements = [s for s in str(code or "").splitlines() if s.strip().startswith("await ")]
            acts = [a for a in (parse_code(s) for s in statements) if a is not None] or [_from_arguments(tool, args)]
            hint = args.get("element") if isinstance(args.get("element"), str) else None
            out.extend(a.model_copy(update={"url": page, "hint": hint}) for a in acts)
        found = _PAGE_URL.search(str(result.get("page") or "")) if isinstance(result, dict) else None
        if found:
            page = found.group(1)
    return out


def _read_session_run(path: Path, log: ImportLog) -> tuple[Path, dict[str, Any]] | None:
    """A ``session.md`` as a run: placed as if its ``session-<ms>`` folder were not there, with a ``result.json`` beside it merged in."""
    try:
        calls = read_session(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        log.skip(str(path), f"not a Playwright MCP session log: {exc}")
        return None
    folder = path.parent.parent if _SESSION_FOLDER.fullmatch(path.parent.name) else path.parent
    data: dict[str, Any] = {"actions": calls}
    for beside in (path.parent / "result.json", folder / "result.json"):
        if beside.is_file():
            try:
                extra = json.loads(beside.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                log.skip(str(beside), f"invalid JSON: {exc}")
                return None
            if isinstance(extra, dict):
                data.update({k: v for k, v in extra.items() if k != "actions"})
            break
    return folder / path.name, data


def load_sessions(root: Path, agent: str | None = None, *, labels: Path | None = None, log: ImportLog) -> list[AgentTrajectory]:
    """Every Playwright MCP session log under ``root`` (layouts: :mod:`.folders` with ``session.md``)."""
    return read_result_folders(
        root, lambda calls, where, lg: session_actions(calls, lg, where), agent, labels, log, name="session.md", read=_read_session_run, extra_depth=1
    )
