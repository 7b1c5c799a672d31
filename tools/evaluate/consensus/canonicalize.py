"""Canonical actions from our recorded trajectories and from other agents' free-text action logs.

* **Recorded actions** already carry a canonical form (``ActionRecord.canonical``); it is parsed
  back into name and fields, with confidence 1.0. Pure observations — ``snapshot()`` and
  ``screenshot(…)`` (names in :data:`OBSERVATIONS`) — are skipped: they do not change the page,
  and agents that snapshot after every step would otherwise double their path lengths and
  merge into one hub node. Failed actions (``error`` set) are kept: trying is behaviour.
* **Free text** is parsed by ordered rules, each with a confidence: an already canonical string
  (1.0); Mind2Web ``[tag] text -> OP: value`` (0.95, 0.8 without element text); pyautogui calls
  (coordinates 0.5, keys/text/scroll 0.85–0.9); "scroll", "navigate/go to" (0.95 with a URL,
  0.5 without), "go back", "refresh", "wait"; typing, selecting, hovering and clicking with a
  quoted target (0.85–0.9), unquoted (0.6); "click at (x, y)" (0.4: coordinates carry no
  meaning across screens); anything else becomes ``other(text=…)`` with 0.1.
* :func:`canonicalize_llm` asks a model (structured output) only about texts whose rule
  confidence is below a bound and keeps the model's answer when it is more confident; a failed
  call keeps the rule result and is logged.

Field order is fixed per action (``click(text, element)``, ``type(text, element)``,
``select(option, element)``, …) to match what the browser recorder writes.
"""

from __future__ import annotations

import ast
import logging
import re
from typing import Any

import anyio
from pydantic import BaseModel, Field

from ...environment.canonical import canonical
from ...environment.trajectory import Trajectory
from ...llm.client import LLM, LLMError, LLMUnavailable
from ...llm.templates import render_prompt
from .model import ActionKind, ActionTarget, AgentTrajectory, CanonicalAction

__all__ = [
    "OBSERVATIONS",
    "FIELDS",
    "KINDS",
    "typed_fields",
    "parse_canonical",
    "make_action",
    "from_trajectory",
    "canonicalize_text",
    "LLMConversion",
    "canonicalize_llm",
]

log = logging.getLogger(__name__)

OBSERVATIONS = frozenset({"snapshot", "screenshot", "take_screenshot"})
FIELDS: dict[str, tuple[str, ...]] = {
    "click": ("text", "element", "id", "selector", "x", "y"),
    "dblclick": ("text", "element", "id", "selector", "x", "y"),
    "type": ("text", "element", "id", "selector"),
    "select": ("option", "element", "id", "selector"),
    "hover": ("text", "element", "id", "selector", "x", "y"),
    "navigate": ("url",),
    "scroll": ("direction",),
    "press": ("key",),
    "wait": ("seconds", "text"),
    "go_back": (),
    "refresh": (),
    "answer": ("text",),
    "report_infeasible": ("text",),
    "drag": ("x", "y", "x2", "y2"),
    "new_tab": (),
    "other": ("text",),
}
#: The typed kind of each action name (names not listed are ``other``).
KINDS: dict[str, ActionKind] = {
    "click": "click", "dblclick": "click", "type": "type", "select": "select", "scroll": "scroll", "navigate": "navigate",
    "go_back": "back", "press": "key", "wait": "wait", "answer": "answer", "report_infeasible": "answer",
}  # fmt: skip
_ALIASES = {
    "goto": "navigate", "back": "go_back", "select_option": "select", "fill": "type", "input": "type", "press_key": "press",
    "keyboard_press": "press", "send_msg_to_user": "answer", "noop": "wait", "reload": "refresh",
}  # fmt: skip
_KEYS = re.compile(
    r"^(enter|return|tab|escape|esc|backspace|delete|space|home|end|pageup|pagedown|page ?up|page ?down|"
    r"arrow ?(up|down|left|right)|up|down|left|right|f\d{1,2}|(ctrl|control|cmd|command|alt|shift|meta)\s*\+\s*\S+)( key)?$",
    re.I,
)
_ELEMENTS = ("button", "link", "tab", "checkbox", "radio", "menu item", "menuitem", "menu", "icon", "image", "option", "dropdown", "textbox", "field", "box", "input")
_Q = r"[\"'“”‘’`«»]"
_QUOTED = re.compile(_Q + r"(.+?)" + _Q)
_URL = re.compile(r"(https?://\S+|www\.\S+|\b[\w-]+(\.[\w-]+)+(/\S*)?)", re.I)


def _field_value(node: ast.expr) -> Any:
    value = ast.literal_eval(node)
    if not isinstance(value, str | int | float | bool) and value is not None:
        raise ValueError("not a scalar")
    return value


def parse_canonical(text: str) -> tuple[str, dict[str, Any]] | None:
    """``(name, fields)`` of a canonical string like ``click(text='Go', element='link')``; None otherwise.

    >>> parse_canonical("type(text='dune', element='Search')")
    ('type', {'text': 'dune', 'element': 'Search'})
    >>> parse_canonical("Click the Go button") is None
    True
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.args:
        return None
    try:
        fields = {k.arg: _field_value(k.value) for k in call.keywords if k.arg is not None}
    except ValueError:
        return None
    return call.func.id, fields


def _str(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _num(value: Any) -> float | None:
    try:
        return float(value) if value is not None and value != "" else None
    except (TypeError, ValueError):
        return None


def typed_fields(name: str, fields: dict[str, Any]) -> tuple[ActionKind, ActionTarget | None, str | None]:
    """``(kind, target, value)`` of an action from its canonical name and fields.

    >>> typed_fields("type", {"text": "dune", "element": "Search"})
    ('type', ActionTarget(role=None, name='Search', element_id=None, selector=None, x=None, y=None), 'dune')
    """
    kind = KINDS.get(name, "other")
    ident = {"element_id": _str(fields.get("id")), "selector": _str(fields.get("selector"))}
    target: ActionTarget | None = None
    value: str | None
    if name in ("click", "dblclick", "hover"):
        target = ActionTarget(role=_str(fields.get("element")), name=_str(fields.get("text")), x=_num(fields.get("x")), y=_num(fields.get("y")), **ident)
        value = None
    elif name in ("type", "select"):
        target = ActionTarget(name=_str(fields.get("element")), **ident)
        value = _str(fields.get("text" if name == "type" else "option"))
    else:
        value = _str(next((fields[k] for k in ("url", "direction", "key", "text", "seconds") if fields.get(k) not in (None, "")), None))
    if target is not None and not target.model_dump(exclude_none=True):
        target = None
    return kind, target, value


def make_action(
    name: str, fields: dict[str, Any], *, confidence: float, source: str, necessary: bool | None = None, url: str | None = None
) -> CanonicalAction:
    """A :class:`CanonicalAction` with the fields in the canonical order for ``name`` (unknown fields last, sorted), typed."""
    name = _ALIASES.get(name, name)
    order = FIELDS.get(name, ())
    ordered = {k: fields[k] for k in order if fields.get(k) not in (None, "")}
    ordered.update({k: fields[k] for k in sorted(fields) if k not in order and fields[k] not in (None, "")})
    text = canonical(name, **ordered)
    kind, target, value = typed_fields(name, ordered)
    return CanonicalAction(
        text=text, name=name, args=ordered, kind=kind, target=target, value=value, url=url, confidence=confidence, source=source, necessary=necessary
    )


def from_trajectory(trajectory: Trajectory, success: bool | None = None, agent: str | None = None) -> AgentTrajectory:
    """Our recorded trajectory as an :class:`AgentTrajectory` (observations skipped, confidence 1.0).

    ``success`` defaults to ``trajectory.closed.success`` (``False`` when unknown);
    ``agent`` to the episode's agent name.
    """
    actions: list[CanonicalAction] = []
    for record in trajectory.actions:
        parsed = parse_canonical(record.canonical)
        name, fields = parsed if parsed is not None else (record.name, {})
        if name in OBSERVATIONS:
            continue
        text = record.canonical if parsed is not None else canonical(record.name, **record.args)
        kind, target, value = typed_fields(_ALIASES.get(name, name), fields)
        actions.append(
            CanonicalAction(text=text, name=name, args=fields, kind=kind, target=target, value=value, url=record.url_before, confidence=1.0, source="recorded")
        )
    if success is None:
        success = bool(trajectory.closed is not None and trajectory.closed.success)
    return AgentTrajectory(
        id=trajectory.id,
        task_id=trajectory.episode.task_id,
        agent=agent or trajectory.episode.agent or "agent",
        model=trajectory.episode.model,
        actions=actions,
        success=success,
    )


# -- free-text rules ---------------------------------------------------------------------

_MIND2WEB = re.compile(r"^\s*(?:[\[<](?P<tag>[^\]>]*)[\]>])?\s*(?P<text>.*?)\s*->\s*(?P<op>[A-Za-z][A-Za-z_ ]*?)\s*(?::\s*(?P<value>.*?))?\s*$", re.S)
#: Mind2Web-style operations (``[tag] text -> OP: value``, or tagless ``-> OP: value``) by the canonical action they are.
_OPS = {
    **dict.fromkeys(("CLICK", "TAP", "LEFT_CLICK", "RIGHT_CLICK"), "click"), **dict.fromkeys(("DOUBLE_CLICK", "DBLCLICK", "DOUBLECLICK"), "dblclick"),
    **dict.fromkeys(("HOVER", "MOUSE_MOVE"), "hover"), **dict.fromkeys(("TYPE", "INPUT", "FILL", "TYPE_TEXT", "ENTER_TEXT"), "type"),
    **dict.fromkeys(("SELECT", "SELECT_OPTION", "CHOOSE"), "select"),
    **dict.fromkeys(("ENTER", "PRESS", "KEY", "KEYPRESS", "KEY_PRESS", "PRESS_KEY", "HOTKEY", "KEYBOARD"), "press"),
    **dict.fromkeys(("SCROLL", "SCROLL_UP", "SCROLL_DOWN", "SCROLL_LEFT", "SCROLL_RIGHT"), "scroll"),
    **dict.fromkeys(("NAVIGATE", "NAVIGATE_TO", "GOTO", "GO_TO", "VISIT", "OPEN", "OPEN_URL", "LOAD", "URL"), "navigate"),
    **dict.fromkeys(("GO_BACK", "BACK", "NAVIGATE_BACK"), "go_back"), **dict.fromkeys(("REFRESH", "RELOAD"), "refresh"),
    **dict.fromkeys(("WAIT", "SLEEP"), "wait"), **dict.fromkeys(("NEW_TAB", "OPEN_TAB"), "new_tab"),
    **dict.fromkeys(("GO_FORWARD", "FORWARD"), "go_forward"), **dict.fromkeys(("CLOSE_TAB", "SWITCH_TAB", "TAB_FOCUS"), "switch_tab"),
    **dict.fromkeys(("ANSWER", "FINAL_ANSWER", "RESPOND", "RESPONSE", "REPLY", "STOP", "TERMINATE", "DONE", "FINISH", "COMPLETE",
                     "TASK_COMPLETE", "SEND_MSG_TO_USER"), "answer"),
}  # fmt: skip
_DIRECTION = re.compile(r"\b(up|down|left|right)\b", re.I)
_ANSWER = re.compile(r"^\s*(?:final\s+answer|answer|respond|reply|stop|terminate)\s*(?::|\[)\s*(?P<text>.*?)\]?\s*$|^\s*(?:done|terminate|stop)\s*\.?\s*$", re.I | re.S)
_PYAUTOGUI = re.compile(r"^\s*(?:pyautogui\.)?(?P<fn>click|doubleClick|rightClick|moveTo|write|typewrite|press|hotkey|scroll)\s*\((?P<args>.*)\)\s*;?\s*$")
_AT = re.compile(r"\b(?P<verb>click|clicked|tap|tapped|double[- ]?click(?:ed)?|hover(?:ed)?|move(?:d)?)\b.*?\(?\s*(?P<x>-?\d+(?:\.\d+)?)\s*,\s*(?P<y>-?\d+(?:\.\d+)?)\s*\)?", re.I)
_SCROLL = re.compile(r"\bscroll(?:ed|ing)?\b(?:\s+the\s+page)?\s*(?P<dir>up|down|left|right)?", re.I)
_NAV = re.compile(r"^\s*(?:navigate(?:d)?|go(?:ne)?|went|open(?:ed)?|visit(?:ed)?|load(?:ed)?)\s+(?:to\s+)?(?:the\s+)?(?P<target>.+?)\s*\.?$", re.I)
_BACK = re.compile(r"^\s*(?:go(?:es)?|went|navigate(?:d)?)\s+back\b|^\s*back\s*$|\bbrowser back\b", re.I)
_REFRESH = re.compile(r"^\s*(?:refresh|reload)(?:ed)?\b", re.I)
_WAIT = re.compile(r"^\s*wait(?:ed)?\b(?:\s+(?:for\s+)?(?P<n>\d+(?:\.\d+)?)\s*(?:s|sec|secs|seconds?)?)?", re.I)
_TYPE = re.compile(r"\b(?:type|typed|typing|enter|entered|input|inputted|write|wrote|fill(?:ed)?(?:\s+in)?)\b", re.I)
_SELECT = re.compile(r"\b(?:select|selected|choose|chose|chosen|pick|picked)\b", re.I)
_HOVER = re.compile(r"\bhover(?:ed|ing)?\b", re.I)
_CLICK = re.compile(r"\b(?:click|clicked|clicking|press|pressed|tap|tapped|hit|open|opened)\b(?:\s+on)?", re.I)
_PRESS = re.compile(r"^\s*(?:press|pressed|hit)\s+(?:the\s+)?(?P<key>.+?)\s*\.?$", re.I)
_INTO = re.compile(r"\b(?:into|in|on)\s+(?:the\s+)?(?P<el>.+?)\s*\.?$", re.I)
_FILL_WITH = re.compile(r"\bfill(?:ed)?(?:\s+in)?\s+(?:the\s+)?(?P<el>.+?)\s+with\b\s*", re.I)
_FROM = re.compile(r"\b(?:from|in|on)\s+(?:the\s+)?(?P<el>.+?)\s*\.?$", re.I)
_TAG = {"a": "link", "input": "textbox", "textarea": "textbox", "svg": "image", "img": "image"}


def _element_word(text: str) -> str | None:
    low = text.lower()
    for word in _ELEMENTS:
        if re.search(rf"\b{word}\b", low):
            return {"menu item": "menuitem", "dropdown": "combobox"}.get(word, word)
    return None


def _strip_element(target: str) -> str:
    words = target.split()
    while words and words[-1].lower() in {"button", "link", "tab", "checkbox", "icon", "field", "box", "dropdown", "menu", "option"}:
        words.pop()
    while words and words[0].lower() in {"the", "a", "an", "on"}:
        words.pop(0)
    return " ".join(words)


def _operation(op: str) -> str:
    return re.sub(r"[\s-]+", "_", op.strip()).upper()


def _mind2web(m: re.Match[str], source: str) -> CanonicalAction | None:
    """A Mind2Web-style operation; None for a tagless ``… -> X`` whose X is no known operation (other free text)."""
    from .parsers import normalize_key  # parsers builds on this module

    op = _operation(m.group("op"))
    name = _OPS.get(op)
    if m.group("tag") is None and name is None:
        return None
    tag = (m.group("tag") or "").strip().lower()
    tag = _TAG.get(tag, tag) or None
    text = " ".join(m.group("text").split()) or None
    value = (m.group("value") or "").strip() or None
    conf = 0.95 if text or m.group("tag") is None else 0.8
    if name in ("type", "select"):
        field = "text" if name == "type" else "option"
        return make_action(name, {field: value, "element": text or tag}, confidence=conf, source=source)
    if name in ("click", "dblclick", "hover"):
        return make_action(name, {"text": text or value, "element": tag}, confidence=conf, source=source)
    if name == "press":
        return make_action("press", {"key": normalize_key(value or (text if op != "ENTER" else None) or "Enter")}, confidence=conf, source=source)
    if name == "scroll":
        word = _DIRECTION.search(f"{op.replace('_', ' ')} {value or ''} {text or ''}")
        return make_action("scroll", {"direction": word.group(1).lower() if word else "down"}, confidence=conf if word else 0.7, source=source)
    if name == "navigate":
        return make_action("navigate", {"url": value or text}, confidence=conf, source=source)
    if name == "wait":
        seconds = re.match(r"\d+(?:\.\d+)?", value or "")
        return make_action("wait", {"seconds": seconds.group(0) if seconds else None}, confidence=conf, source=source)
    if name == "answer":
        return make_action("answer", {"text": value}, confidence=conf, source=source)
    if name is not None:  # go_back, refresh, new_tab, go_forward, switch_tab
        return make_action(name, {}, confidence=conf, source=source)
    return make_action("other", {"text": source}, confidence=0.1, source=source)


def _pyautogui(m: re.Match[str], source: str) -> CanonicalAction | None:
    fn = m.group("fn")
    try:
        call = ast.parse(f"f({m.group('args')})", mode="eval").body
        if not isinstance(call, ast.Call):
            return None
        args = [ast.literal_eval(a) for a in call.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
    except (SyntaxError, ValueError):
        return None
    if fn in ("click", "doubleClick", "rightClick", "moveTo"):
        x, y = kwargs.get("x", args[0] if args else None), kwargs.get("y", args[1] if len(args) > 1 else None)
        name = {"click": "click", "doubleClick": "dblclick", "rightClick": "click", "moveTo": "hover"}[fn]
        return make_action(name, {"x": x, "y": y}, confidence=0.5, source=source)
    if fn in ("write", "typewrite"):
        return make_action("type", {"text": kwargs.get("message", args[0] if args else None)}, confidence=0.85, source=source)
    if fn in ("press", "hotkey"):
        keys = [str(a) for a in args] or [str(kwargs.get("keys", ""))]
        return make_action("press", {"key": "+".join(keys)}, confidence=0.9, source=source)
    clicks = kwargs.get("clicks", args[0] if args else 0)
    if not isinstance(clicks, int | float):
        return None
    return make_action("scroll", {"direction": "up" if clicks > 0 else "down"}, confidence=0.9, source=source)


def _quoted(text: str) -> str | None:
    m = _QUOTED.search(text)
    return m.group(1).strip() if m else None


def _typed(src: str, quoted: str | None, source: str) -> CanonicalAction | None:
    """``type "x" into search`` / ``fill the search field with "x"`` / ``enter dune in Search``."""
    m = _TYPE.search(src)
    if m is None:
        return None
    element: str | None = None
    if (f := _FILL_WITH.search(src)) is not None:
        element = _strip_element(f.group("el"))
        value = quoted if quoted is not None else src[f.end() :].strip(" .") or None
    elif quoted is not None:
        value = quoted
        q = _QUOTED.search(src, m.end())
        el = _INTO.search(src[q.end() :]) if q is not None else None
        element = _strip_element(el.group("el")) if el else None
    else:
        parts = re.split(r"\s+(?:into|in|on)\s+", src[m.end() :].strip(" ."), maxsplit=1)
        value = parts[0].strip() or None
        element = _strip_element(parts[1]) if len(parts) > 1 else None
    if not value:
        return None
    conf = (0.85 if element else 0.75) if quoted is not None else 0.6
    return make_action("type", {"text": value, "element": element or None}, confidence=conf, source=source)


def canonicalize_text(description: str) -> CanonicalAction:
    """One free-text action description as a canonical action, by rules (see the module notes).

    >>> canonicalize_text("clicked the 'Submit' button").text
    "click(text='Submit', element='button')"
    >>> canonicalize_text("[textbox]  Search -> TYPE: dune").text
    "type(text='dune', element='Search')"
    """
    src = " ".join(description.split())
    parsed = parse_canonical(src)
    if parsed is not None:
        return make_action(parsed[0], parsed[1], confidence=1.0, source=description)
    if (m := _MIND2WEB.match(src)) is not None and (act := _mind2web(m, description)) is not None:
        return act
    if (m := _ANSWER.match(src)) is not None:
        return make_action("answer", {"text": (m.group("text") or "").strip() or None}, confidence=0.9, source=description)
    if (m := _PYAUTOGUI.match(src)) is not None and (act := _pyautogui(m, description)) is not None:
        return act
    quoted = _quoted(src)
    if quoted is None and (m := _AT.search(src)) is not None:
        verb = m.group("verb").lower()
        name = "dblclick" if verb.startswith("double") else "hover" if verb.startswith(("hover", "move")) else "click"
        x, y = (float(m.group(k)) for k in ("x", "y"))
        return make_action(name, {"x": int(x) if x.is_integer() else x, "y": int(y) if y.is_integer() else y}, confidence=0.4, source=description)
    if (m := _SCROLL.search(src)) is not None and not _TYPE.search(src[: m.start()]):
        return make_action("scroll", {"direction": (m.group("dir") or "down").lower()}, confidence=0.95 if m.group("dir") else 0.7, source=description)
    if _BACK.search(src):
        return make_action("go_back", {}, confidence=0.95, source=description)
    if _REFRESH.search(src):
        return make_action("refresh", {}, confidence=0.9, source=description)
    if (m := _WAIT.match(src)) is not None:
        return make_action("wait", {"seconds": m.group("n")}, confidence=0.9, source=description)
    if (m := _NAV.match(src)) is not None:
        target = m.group("target").strip().strip("'\"“”")
        url = _URL.search(target)
        if url:
            return make_action("navigate", {"url": url.group(1).rstrip(".,;")}, confidence=0.95, source=description)
        if not re.match(r"\s*(?:open|load)", src, re.I):
            return make_action("navigate", {"url": target}, confidence=0.5, source=description)
    if (m := _PRESS.match(src)) is not None and _KEYS.match(m.group("key").strip(" .'\"")):
        return make_action("press", {"key": m.group("key").strip(" .'\"").removesuffix(" key")}, confidence=0.9, source=description)
    if (act := _typed(src, quoted, description)) is not None:
        return act
    if (m := _SELECT.search(src)) is not None:
        tail = src[m.end() :]
        option = quoted if quoted is not None else re.split(r"\s+(?:from|in|on)\s+", tail.strip(), maxsplit=1)[0].strip() or None
        after = tail.split(option, 1)[-1] if option else tail
        el = _FROM.search(after)
        element = _strip_element(el.group("el")) if el else None
        if option:
            return make_action("select", {"option": option, "element": element or None}, confidence=0.85 if quoted is not None else 0.6, source=description)
    verb = _HOVER.search(src) or _CLICK.search(src)
    if verb is not None:
        tail = src[verb.end() :].strip()
        element = _element_word(tail.replace(quoted, "") if quoted else tail)
        target = quoted if quoted is not None else _strip_element(re.sub(r"^(?:over|on)\s+", "", tail).rstrip(". "))
        if target:
            conf = (0.9 if element else 0.85) if quoted is not None else 0.6
            return make_action("hover" if verb.re is _HOVER else "click", {"text": target, "element": element}, confidence=conf, source=description)
    return make_action("other", {"text": src}, confidence=0.1, source=description)


# -- LLM fallback -----------------------------------------------------------------------

class LLMConversion(BaseModel):
    """What the model returns for one description (the paper's conversion object, trimmed)."""

    function: str = Field(description="One of click, type, select, hover, scroll, navigate, press, wait, go_back, refresh.")
    parameters: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    confidence: float = Field(ge=0.0, le=1.0)
    necessary: bool | None = None


async def canonicalize_llm(
    texts: list[str],
    llm: LLM,
    *,
    min_confidence: float = 0.5,
    task: str | None = None,
    tag: str = "consensus-canonicalize",
    initial: list[CanonicalAction] | None = None,
) -> list[CanonicalAction]:
    """Rule results for ``texts`` (or ``initial``, a format parser's), with the model asked about those below ``min_confidence``.

    The model's answer replaces the rule result when its function is known and its confidence
    is higher. Without an available model the rule results are returned unchanged; a call that
    fails (:class:`LLMError`) keeps the rule result and logs a warning. Answers are cached by
    the LLM client (its disk cache), so asking again about the same text costs no call.
    """
    results = list(initial) if initial is not None else [canonicalize_text(t) for t in texts]
    if not llm.available:
        return results
    pending = [i for i, r in enumerate(results) if r.confidence < min_confidence]

    async def ask(i: int) -> None:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": render_prompt("canonicalize_system.j2")},
            {"role": "user", "content": render_prompt("canonicalize_user.j2", description=texts[i], task=task)},
        ]
        try:
            reply = await llm.complete(messages, schema=LLMConversion, tag=tag)
        except (LLMError, LLMUnavailable) as exc:
            log.warning("LLM canonicalisation of %r failed; keeping the rule result: %s", texts[i], exc)
            return
        conv = reply.parsed
        name = _ALIASES.get(conv.function.strip().lower(), conv.function.strip().lower())
        if name not in FIELDS or name == "other" or conv.confidence <= results[i].confidence:
            return
        params = dict(conv.parameters)
        if name == "select" and "option" not in params and "value" in params:
            params["option"] = params.pop("value")
        results[i] = make_action(name, params, confidence=conv.confidence, source=texts[i], necessary=conv.necessary)

    async with anyio.create_task_group() as tg:
        for i in pending:
            tg.start_soon(ask, i)
    return results
