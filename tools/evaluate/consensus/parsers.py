"""Parsers for other agents' action logs, each turning one logged action string into a :class:`CanonicalAction`.

:func:`parse_abp` reads the Agent Browser Protocol agent's free text (``Click at (660, 77)``,
``Type "dune"``); :func:`parse_browsergym` BrowserGym calls (``fill('823', 'best')``), which
:func:`browsergym_history` pulls out of an AgentRewardBench prompt; :func:`parse_code` Playwright
calls in Python or JavaScript. An exact grammar match has confidence 0.95, anything unrecognised
becomes ``other(text=…)`` with 0.1: the parsers never raise, and return None only for BrowserGym's
"no action" marker ``None``. Code is read with :mod:`ast`, never evaluated.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from .canonicalize import make_action
from .model import CanonicalAction

__all__ = ["EXACT", "FALLBACK", "normalize_key", "parse_abp", "browsergym_history", "browsergym_steps", "name_hint", "parse_browsergym", "parse_code", "PARSERS"]

EXACT = 0.95
FALLBACK = 0.1

_PARSE_ERRORS = (SyntaxError, ValueError, TypeError, RecursionError, MemoryError)


def _action(name: str, source: str, **fields: Any) -> CanonicalAction:
    return make_action(name, fields, confidence=EXACT, source=source)


def _other(source: str) -> CanonicalAction:
    return make_action("other", {"text": source}, confidence=FALLBACK, source=source)


def _number(text: str | float) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


# -- keys --------------------------------------------------------------------------------

_KEY_NAMES = {
    "enter": "Enter", "return": "Enter", "escape": "Escape", "esc": "Escape", "tab": "Tab", "bs": "Backspace", "backspace": "Backspace",
    "delete": "Delete", "del": "Delete", "pagedown": "PageDown", "pageup": "PageUp", "home": "Home", "end": "End", "space": "Space",
    "arrowup": "ArrowUp", "arrowdown": "ArrowDown", "arrowleft": "ArrowLeft", "arrowright": "ArrowRight", "up": "ArrowUp",
    "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight", "control": "Control", "ctrl": "Control", "cmd": "Meta",
    "command": "Meta", "meta": "Meta", "alt": "Alt", "option": "Alt", "shift": "Shift", "controlormeta": "ControlOrMeta",
}  # fmt: skip


def _normalize_key_part(part: str) -> str:
    squashed = re.sub(r"[\s_-]", "", part).lower()
    if squashed in _KEY_NAMES:
        return _KEY_NAMES[squashed]
    if re.fullmatch(r"f\d{1,2}", squashed):
        return squashed.upper()
    return part


def normalize_key(key: str) -> str:
    """A key or combo in Playwright's names, each ``+``-joined part normalised; single letters stay as given.

    >>> normalize_key("CONTROL+HOME"), normalize_key("ctrl+a"), normalize_key("BS"), normalize_key("PAGE_DOWN")
    ('Control+Home', 'Control+a', 'Backspace', 'PageDown')
    """
    key = key.strip()
    if len(key) <= 1:
        return key
    parts = key.split("+")
    if key.endswith("+"):  # "Control++": the last key is the plus sign itself
        parts = [*parts[:-2], "+"]
    return "+".join(_normalize_key_part(p) for p in parts)


def _scroll_direction(dx: float, dy: float) -> str:
    """The dominant axis of a scroll delta; no movement counts as down."""
    if abs(dx) > abs(dy):
        return "right" if dx > 0 else "left"
    return "up" if dy < 0 else "down"


# -- Agent Browser Protocol ----------------------------------------------------------------

_NUM = r"(-?\d+(?:\.\d+)?)"
_ABP_AT = re.compile(rf"^(?P<verb>Click|Hover|Double[- ]?click) at \(\s*{_NUM}\s*,\s*{_NUM}\s*\)$", re.I)
_ABP_SCROLL = re.compile(rf"^Scroll \(\s*delta_x\s*=\s*{_NUM}\s*,\s*delta_y\s*=\s*{_NUM}\s*\)$", re.I)
_ABP_NAVIGATE = re.compile(r"^Navigate (?:to (?P<url>\S+)|(?P<word>back|reload|refresh))$", re.I)
_ABP_TYPE = re.compile(r'^Type "(?P<value>.*)"$', re.I | re.S)
_ABP_PRESS = re.compile(r"^Press (?P<key>\S+)$", re.I)
_ABP_PICKER = re.compile(r"^Select picker (?P<id>\S+) -> Select option\(s\) \[(?P<options>[^\]]*)\]$", re.I)
_ABP_SLIDER = re.compile(rf"^Slider(?: \((?P<orientation>\w+)\))? set to {_NUM}(?: \[range [^\]]*\])?$", re.I)
_ABP_DRAG = re.compile(rf"^Drag from \(\s*{_NUM}\s*,\s*{_NUM}\s*\) to \(\s*{_NUM}\s*,\s*{_NUM}\s*\)$", re.I)
_ABP_NAV_WORDS = {"back": "go_back", "reload": "refresh", "refresh": "refresh"}


def parse_abp(text: str) -> CanonicalAction | None:
    """One action of the Agent Browser Protocol agent's log.

    >>> parse_abp("Click at (660, 77)").text
    "click(x='660', y='77')"
    >>> parse_abp('Type "Samsung LG 27" 28" monitor"').value
    'Samsung LG 27" 28" monitor'
    """
    line = text.strip()
    if m := _ABP_AT.match(line):
        verb = m.group("verb").lower()
        name = "hover" if verb == "hover" else "click" if verb == "click" else "dblclick"
        return _action(name, text, x=_number(m.group(2)), y=_number(m.group(3)))
    if m := _ABP_SCROLL.match(line):
        return _action("scroll", text, direction=_scroll_direction(float(m.group(1)), float(m.group(2))))
    if m := _ABP_NAVIGATE.match(line):  # "Navigate forward" has no canonical action: it stays other
        return _action("navigate", text, url=m["url"]) if m["url"] else _action(_ABP_NAV_WORDS[m["word"].lower()], text)
    if m := _ABP_TYPE.match(line):
        return _action("type", text, text=m.group("value"))
    if m := _ABP_PRESS.match(line):
        return _action("press", text, key=normalize_key(m.group("key")))
    if m := _ABP_PICKER.match(line):
        options = ", ".join(o.strip() for o in m.group("options").split(",") if o.strip())
        return _action("select", text, option=options, id=m.group("id"))
    if m := _ABP_SLIDER.match(line):
        return _action("select", text, option=m.group(2), element="slider")
    if m := _ABP_DRAG.match(line):
        return _action("drag", text, x=_number(m.group(1)), y=_number(m.group(2)), x2=_number(m.group(3)), y2=_number(m.group(4)))
    return _other(text)


# -- shared ast helpers --------------------------------------------------------------------


def _parse_expression(code: str) -> ast.expr | None:
    """The expression ``code`` holds, or None; raw line breaks inside a one-line string literal are read as ``\\n``."""
    for attempt in (code.strip(), code.strip().replace("\n", "\\n")):  # outside a string, "\\n" stays a syntax error
        try:
            return ast.parse(attempt, mode="eval").body
        except _PARSE_ERRORS:
            continue
    return None


def _literal(node: ast.expr) -> Any:
    """The value of a literal node, JavaScript's ``true``/``false``/``null`` and ``{key: v}`` included; ValueError otherwise."""
    if isinstance(node, ast.Name) and node.id in ("true", "false", "null", "undefined"):
        return {"true": True, "false": False}.get(node.id)
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Name) for k in node.keys):
        return {k.id: _literal(v) for k, v in zip(node.keys, node.values) if isinstance(k, ast.Name)}
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(e) for e in node.elts]
    return ast.literal_eval(node)


def _call_arguments(call: ast.Call) -> tuple[list[Any], dict[str, Any]] | None:
    """Positional and keyword values of a call whose arguments are all literals; a trailing JS options object becomes keywords."""
    try:
        args = [_literal(a) for a in call.args]
        kwargs = {k.arg: _literal(k.value) for k in call.keywords if k.arg is not None}
    except _PARSE_ERRORS:
        return None
    if args and isinstance(args[-1], dict) and isinstance(call.args[-1], ast.Dict):
        kwargs = {**args.pop(), **kwargs}
    return args, kwargs


def _options_text(value: Any) -> str | None:
    """One option or several (``['General', 'Wholesale']`` → ``'General, Wholesale'``); Playwright's ``{label: …}`` too."""
    if isinstance(value, dict):
        value = next((value[k] for k in ("label", "value", "index") if value.get(k) is not None), None)
    if isinstance(value, list):
        return ", ".join(t for v in value if (t := _options_text(v)))
    return None if value is None else str(value)


# -- BrowserGym ----------------------------------------------------------------------------

_HISTORY_HEADER = re.compile(r"^Action History:[ \t]*$", re.M)
_REASONING = ". Reasoning:"


def _history_action(chunk: str) -> str | None:
    """The shortest prefix of ``chunk`` before a ``. Reasoning:`` that parses as a call or ``None``."""
    end = chunk.find(_REASONING)
    while end != -1:
        candidate = chunk[:end].strip()
        node = _parse_expression(candidate)
        if isinstance(node, ast.Call) or (isinstance(node, ast.Constant) and node.value is None):
            return candidate
        end = chunk.find(_REASONING, end + 1)
    return None


def browsergym_history(input_text: str) -> list[str]:
    """The numbered action strings of an AgentRewardBench prompt's "Action History:" section, in order.

    Items read ``N. <call>. Reasoning: <free text spanning lines, maybe with numbered lists>``. Item k
    starts at a line start after item k-1; its call is the shortest prefix before a ``. Reasoning:``
    that parses (calls may span lines); the "no action" marker is kept as ``"None"``.

    >>> browsergym_history("Goal\\nAction History:\\n1. click('12'). Reasoning: 1. look\\n2. None. Reasoning: None\\n")
    ["click('12')", 'None']
    """
    return [action for action, _ in browsergym_steps(input_text)]


def _could_name(name: str, bid: str, value: str | None, goal: str) -> bool:
    """A quoted string that may name an element: not the id, the typed value, a word like 'the', a pasted tree line or a quote of the task."""
    low = name.casefold()
    words, typed = set(re.findall(r"\w+", low)), set(re.findall(r"\w+", (value or "").casefold()))
    return (
        name != bid and not name.isdigit() and "bid" not in low and not name.startswith("[") and low not in _NOT_NAMES
        and low not in goal.casefold() and len(words & typed) * 2 < max(len(words), 1)
    )  # fmt: skip


def browsergym_steps(input_text: str) -> list[tuple[str, str]]:
    """``(action, reasoning)`` of every item of the "Action History:" section (see :func:`browsergym_history`)."""
    header = _HISTORY_HEADER.search(input_text)
    if header is None:
        return []
    found: list[tuple[str, int, int]] = []  # action, where its item starts, where its reasoning starts
    position = header.end()
    while True:
        item = re.compile(rf"^{len(found) + 1}\. ", re.M).search(input_text, position)
        if item is None:
            break
        action = _history_action(input_text[item.end() :])
        if action is None:  # a numbered line of some reasoning: look further on
            position = item.end()
            continue
        found.append((action, item.start(), item.end() + len(action) + len(_REASONING)))
        position = item.end() + len(action)
    ends = [start for _, start, _ in found[1:]] + [len(input_text)]
    return [(action, " ".join(input_text[begin:end].split())) for (action, _, begin), end in zip(found, ends)]


_QUOTED_NAME = re.compile(r"""(?<!\w)["“'`]([^"“”'`\n]{2,40})["”'`](?!\w)""")
_NOT_NAMES = {"the", "to", "a", "an", "from", "and", "or", "of", "in", "on", "it", "this", "that"}


def name_hint(reasoning: str, action: CanonicalAction, goal: str = "") -> str | None:
    """What the agent's own reasoning calls the element it acted on, e.g. ``Submit`` in
    'The "Submit" button is visible with bid '62''; None when it names none.

    Only a quoted name counts: in the sentence that mentions the element id when there is one,
    else (clicks and selects) in the first sentence that says what to click or choose; never the
    id, a name sharing half its words with the typed value, or a quote of the task.

    >>> act = parse_browsergym("click('62')")
    >>> name_hint("To post, I open the form. The \\"Submit\\" button is visible with bid '62'.", act)
    'Submit'
    """
    target = action.target
    bid = target.element_id if target is not None else None
    if bid is None or action.kind not in ("click", "type", "select"):
        return None
    sentences = re.split(r"(?<=[.!?])\s+", reasoning)
    mentions = [s for s in sentences if re.search(rf"(?<![\w-]){re.escape(bid)}(?![\w-])", s)]
    verbs = [s for s in sentences if re.search(r"\b(click|select|choose|open|fill|type|enter|press|search)", s, re.I)]
    for sentence in mentions or (verbs[:1] if action.kind != "type" else []):  # a field's name only where its id is named
        names = [m.group(1).strip() for m in _QUOTED_NAME.finditer(sentence)]
        names = [n for n in names if _could_name(n, bid, action.value, goal)]
        if names:
            return names[-1] if mentions else names[0]
    return None


def _arg(args: list[Any], kwargs: dict[str, Any], index: int, name: str, default: Any = None) -> Any:
    return kwargs.get(name, args[index] if len(args) > index else default)


_AXTREE_BID = re.compile(r"""^\[(?:bid=)?["']?(?P<id>[^\]"']+)["']?\]\s*(?P<role>[\w-]+)?\s*(?:'(?P<name>.*)')?\s*$""")


def _element(bid: Any) -> dict[str, Any]:
    """A bid as ``id``; a pasted AXTree line (``[339] link 'REPORTS'``, ``[bid="722"]``) also gives role and name."""
    m = _AXTREE_BID.match(str(bid)) if bid is not None else None
    if m is None:
        return {"id": None if bid is None else str(bid)}
    name = re.sub(r"[\ue000-\uf8ff]", "", m["name"] or "").strip()  # private-use icon glyphs
    return {"id": m["id"], "element": m["role"], "text": name or None}


def _browsergym_action(name: str, args: list[Any], kwargs: dict[str, Any], source: str) -> CanonicalAction:
    """The canonical form of one BrowserGym call with literal arguments."""
    element = _element(_arg(args, kwargs, 0, "bid"))
    bid = element["id"]
    if name in ("click", "dblclick", "hover", "focus"):
        return _action("click" if name == "focus" else name, source, **element)
    if name in ("fill", "clear"):
        return _action("type", source, text=_arg(args, kwargs, 1, "value") if name == "fill" else None, id=bid)
    if name == "select_option":
        return _action("select", source, option=_options_text(_arg(args, kwargs, 1, "options")), id=bid)
    if name == "scroll":
        dx, dy = _arg(args, kwargs, 0, "delta_x", 0), _arg(args, kwargs, 1, "delta_y", 0)
        return _action("scroll", source, direction=_scroll_direction(float(dx), float(dy)))
    if name in ("keyboard_press", "press"):
        key = _arg(args, kwargs, 0 if name == "keyboard_press" else 1, "key")
        return _action("press", source, key=normalize_key(str(key))) if key else _other(source)
    if name in ("keyboard_type", "keyboard_insert_text"):
        return _action("type", source, text=_arg(args, kwargs, 0, "text"))
    if name == "goto":
        return _action("navigate", source, url=_arg(args, kwargs, 0, "url"))
    if name in ("go_back", "new_tab"):
        return _action(name, source)
    if name == "noop":
        return _action("wait", source, seconds=_number(float(_arg(args, kwargs, 0, "wait_ms", 1000)) / 1000))
    if name in ("send_msg_to_user", "report_infeasible"):
        return _action("answer" if name == "send_msg_to_user" else name, source, text=_arg(args, kwargs, 0, "text"))
    if name in ("mouse_click", "mouse_dblclick", "mouse_move"):
        verb = {"mouse_click": "click", "mouse_dblclick": "dblclick", "mouse_move": "hover"}[name]
        return _action(verb, source, x=_arg(args, kwargs, 0, "x"), y=_arg(args, kwargs, 1, "y"))
    if name == "mouse_drag_and_drop":
        coords = [_arg(args, kwargs, i, n) for i, n in enumerate(("from_x", "from_y", "to_x", "to_y"))]
        return _action("drag", source, **dict(zip(("x", "y", "x2", "y2"), coords)))
    return _other(source)


def parse_browsergym(text: str) -> CanonicalAction | None:
    """One BrowserGym high-level action; None for the harness's "no action" marker ``None``.

    >>> parse_browsergym("fill('823', 'best')").text
    "type(text='best', id='823')"
    >>> parse_browsergym("None") is None
    True
    """
    node = _parse_expression(text)
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return _other(text)
    arguments = _call_arguments(node)
    if arguments is None:
        return _other(text)
    try:
        return _browsergym_action(node.func.id, *arguments, text)
    except (TypeError, ValueError):  # e.g. scroll('a', 'b'): arguments of the wrong type
        return _other(text)


# -- Playwright code -----------------------------------------------------------------------

_AWAIT = re.compile(r"\bawait\s+")
_BACKTICK = re.compile(r"`([^`$\\]*)`")
_SNAPSHOT_REF = re.compile(r"(?:aria-ref=)?(e\d+)")
_BUILDERS = frozenset("locator get_by_role get_by_text get_by_label get_by_placeholder get_by_title get_by_alt_text get_by_test_id".split())
_ELEMENT_VERBS = {
    "click": "click", "tap": "click", "check": "click", "uncheck": "click", "set_checked": "click", "focus": "click",
    "dblclick": "dblclick", "hover": "hover", "fill": "type", "type": "type", "press_sequentially": "type", "clear": "type",
    "select_option": "select", "press": "press",
}  # fmt: skip
_PAGE_WAITS = ("wait_for_load_state", "wait_for_url", "wait_for_selector", "wait_for_navigation")


class _Step:
    """One link of a call chain: ``name`` and, when it was called, its literal arguments."""

    def __init__(self, name: str, called: bool = False, args: list[Any] | None = None, kwargs: dict[str, Any] | None = None) -> None:
        self.name, self.called, self.args, self.kwargs = name, called, args or [], kwargs or {}


def _snake_case(name: str) -> str:
    """``getByRole`` → ``get_by_role`` (Python names pass unchanged)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _python_syntax(code: str) -> str:
    """JavaScript to what :mod:`ast` reads: no ``await`` or trailing ``;``, plain template strings quoted."""
    code = _AWAIT.sub("", code.strip()).rstrip(";").strip()
    return _BACKTICK.sub(lambda m: repr(m.group(1)), code)


def _call_chain(node: ast.expr) -> list[_Step] | None:
    """``page.locator('#q').first.fill('x')`` as steps page, locator('#q'), first, fill('x'); None if an argument is no literal."""
    steps: list[_Step] = []
    while True:
        called = isinstance(node, ast.Call)
        arguments: tuple[list[Any], dict[str, Any]] | None = ([], {})
        if isinstance(node, ast.Call):
            arguments, node = _call_arguments(node), node.func
        if arguments is None or not isinstance(node, ast.Attribute | ast.Name):
            return None
        steps.append(_Step(_snake_case(node.attr if isinstance(node, ast.Attribute) else node.id), called, *arguments))
        if isinstance(node, ast.Name):
            return steps[::-1]
        node = node.value


def _locator_fields(builder: _Step) -> dict[str, Any]:
    """What a locator builder says about its element: ``id``, ``selector``, ``role`` and/or accessible ``name``."""
    first = builder.args[0] if builder.args else None
    if first is None:
        return {}
    if builder.name == "locator":
        ref = _SNAPSHOT_REF.fullmatch(str(first))
        return {"id": ref.group(1)} if ref else {"selector": str(first)}
    if builder.name == "get_by_role":
        return {"role": first, "name": builder.kwargs.get("name")}
    if builder.name == "get_by_test_id":
        return {"selector": f"data-testid={first}"}
    return {"name": first}


def _element_action(verb: str, target: dict[str, Any], step: _Step, source: str) -> CanonicalAction:
    """An action on a located element: the accessible name is ``text`` of a click, ``element`` of a type or select."""
    name = _ELEMENT_VERBS[verb]
    where = {"id": target.get("id"), "selector": target.get("selector")}
    value = _arg(step.args, step.kwargs, 0, "value")
    if name in ("click", "dblclick", "hover"):
        return _action(name, source, text=target.get("name"), element=target.get("role"), **where)
    if name == "press":
        return _action("press", source, key=normalize_key(str(value))) if value else _other(source)
    element = target.get("name") or target.get("role")
    if name == "select":
        option = _options_text(value if value is not None else step.kwargs)
        return _action("select", source, option=option, element=element, **where)
    typed = None if verb == "clear" else value if value is not None else step.kwargs.get("text")
    return _action("type", source, text=typed, element=element, **where)


def _device_action(device: str, step: _Step, source: str) -> CanonicalAction:
    """``page.keyboard.press/type`` and ``page.mouse.click/dblclick/move/wheel``."""
    args, kwargs = step.args, step.kwargs
    if device == "keyboard" and step.name == "press" and args:
        return _action("press", source, key=normalize_key(str(args[0])))
    if device == "keyboard" and step.name in ("type", "insert_text") and args:
        return _action("type", source, text=args[0])
    if device == "mouse" and step.name in ("click", "dblclick", "move") and len(args) >= 2:
        return _action("hover" if step.name == "move" else step.name, source, x=args[0], y=args[1])
    if device == "mouse" and step.name == "wheel":
        dx, dy = _arg(args, kwargs, 0, "delta_x", 0), _arg(args, kwargs, 1, "delta_y", 0)
        return _action("scroll", source, direction=_scroll_direction(float(dx), float(dy)))
    return _other(source)


def _page_action(step: _Step, source: str) -> CanonicalAction:
    """A method of the page itself: navigation, waits, new pages, or an element action given a selector."""
    simple = {"go_back": "go_back", "reload": "refresh", "new_page": "new_tab"}
    if step.name in simple:
        return _action(simple[step.name], source)
    if step.name == "goto" and step.args:
        return _action("navigate", source, url=step.args[0])
    if step.name == "wait_for_timeout" and step.args:
        return _action("wait", source, seconds=_number(float(step.args[0]) / 1000))
    if step.name in _PAGE_WAITS:
        return _action("wait", source)
    if step.name in _ELEMENT_VERBS and step.args:  # page.fill('#q', 'dune'): the selector comes first
        target = _locator_fields(_Step("locator", True, step.args[:1]))
        return _element_action(step.name, target, _Step(step.name, True, step.args[1:], step.kwargs), source)
    return _other(source)


def parse_code(text: str) -> CanonicalAction | None:
    """One Playwright call in Python or JavaScript (``await …;``), read with :mod:`ast`.

    >>> parse_code("await page.getByRole('button', { name: 'Search' }).click();").text
    "click(text='Search', element='button')"
    >>> parse_code("page.locator('aria-ref=e10').fill('x')").text
    "type(text='x', id='e10')"
    """
    node = _parse_expression(_python_syntax(text))
    steps = _call_chain(node) if node is not None else None
    if not steps or not steps[-1].called or len(steps) < 2:
        return _other(text)
    action, owner = steps[-1], steps[-2]
    builders = [s for s in steps[:-1] if s.called and s.name in _BUILDERS]
    try:
        if owner.name in ("keyboard", "mouse") and not owner.called:
            return _device_action(owner.name, action, text)
        if builders and action.name in _ELEMENT_VERBS:
            return _element_action(action.name, _locator_fields(builders[-1]), action, text)
        if not builders:
            return _page_action(action, text)
    except (TypeError, ValueError):  # arguments of the wrong type, e.g. mouse.wheel('a', 'b')
        pass
    return _other(text)


PARSERS: dict[str, Callable[[str], CanonicalAction | None]] = {"abp": parse_abp, "browsergym": parse_browsergym, "code": parse_code}
