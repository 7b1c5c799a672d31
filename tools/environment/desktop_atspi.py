"""The accessibility-tree reader, run as a script by Debian's ``/usr/bin/python3`` (PyGObject and Atspi come from Debian).

PyGObject has no wheels on PyPI, so the venv cannot talk to AT-SPI itself: it starts this file in a
long-lived subprocess on the episode's session bus and exchanges one JSON object per line.
Requests are ``{"op": ..., ...}``; every answer is ``{"ok": true, ...}`` or ``{"ok": false, "error": ...}``.
Refs (``e1``, ``e2``…) name accessible objects for the subprocess's lifetime, so they stay stable
between snapshots. This file imports nothing from taskloom: it runs outside the venv.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

MAX_NODES = 3000
MAX_DEPTH = 40
MAX_VALUE = 4000
STATES = ("focused", "checked", "selected", "expanded", "pressed", "editable", "enabled", "sensitive", "showing", "active", "multi_line", "modal")


class Tree:
    """Accessible objects by ref, and the operations the venv asks for."""

    def __init__(self, atspi: Any, error: type[Exception] = Exception) -> None:
        self.atspi, self.error = atspi, error  # error: GLib.Error, what a call on a vanished object raises
        self.by_ref: dict[str, Any] = {}
        self.refs: dict[Any, str] = {}

    def ref(self, acc: Any) -> str:
        ref = self.refs.get(acc)
        if ref is None:
            ref = f"e{len(self.refs) + 1}"
            self.refs[acc], self.by_ref[ref] = ref, acc
        return ref

    def get(self, ref: str) -> Any:
        acc = self.by_ref.get(ref)
        if acc is None:
            raise LookupError(f"no element {ref!r}: take a desktop_snapshot and use a ref it shows")
        return acc

    def states(self, acc: Any) -> list[str]:
        have = {s.value_nick.replace("-", "_") for s in acc.get_state_set().get_states()}
        return [s for s in STATES if s in have]

    def value(self, acc: Any) -> str | None:
        text = acc.get_text_iface()
        if text is not None:
            count = text.get_character_count()
            if count and acc.get_role_name() not in ("label", "menu item", "menu", "push button", "page tab", "check box", "radio button"):
                return str(text.get_text(0, min(count, MAX_VALUE)))
        value = acc.get_value_iface()
        if value is not None:
            return f"{value.get_current_value():g}"
        return None

    def node(self, acc: Any) -> dict[str, Any]:
        return {"ref": self.ref(acc), "role": acc.get_role_name(), "name": (acc.get_name() or "").strip(), "states": self.states(acc), "value": self.value(acc)}

    def focused_app(self) -> Any:
        desktop = self.atspi.get_desktop(0)
        apps = [desktop.get_child_at_index(i) for i in range(desktop.get_child_count())]
        apps = [a for a in apps if a is not None and a.get_child_count() > 0]
        for app in apps:
            for i in range(app.get_child_count()):
                win = app.get_child_at_index(i)
                if win is not None and win.get_state_set().contains(self.atspi.StateType.ACTIVE):
                    return app
        return apps[-1] if apps else None

    def apps(self) -> dict[str, Any]:
        """Every application on the bus with its showing top-level windows: the readiness probe."""
        desktop = self.atspi.get_desktop(0)
        out = []
        for i in range(desktop.get_child_count()):
            app = desktop.get_child_at_index(i)
            if app is None:
                continue
            wins = [app.get_child_at_index(j) for j in range(app.get_child_count())]
            shown = [w for w in wins if w is not None and w.get_state_set().contains(self.atspi.StateType.SHOWING)]
            windows = [{"role": w.get_role_name(), "name": w.get_name(), "active": w.get_state_set().contains(self.atspi.StateType.ACTIVE)} for w in shown]
            out.append({"name": app.get_name(), "windows": windows})
        return {"apps": out}

    def snapshot(self) -> dict[str, Any]:
        """The focused application's showing windows as a nested tree of nodes."""
        app = self.focused_app()
        if app is None:
            return {"app": None, "tree": []}
        budget = [MAX_NODES]

        def walk(parent: Any, index: int, depth: int, opened: bool = False) -> dict[str, Any] | None:
            if budget[0] <= 0 or depth > MAX_DEPTH:
                return None
            try:
                acc = parent.get_child_at_index(index)
                if acc is None:  # a child gone meanwhile
                    return None
                states = acc.get_state_set()
                if not states.contains(self.atspi.StateType.SHOWING) and not (opened and states.contains(self.atspi.StateType.VISIBLE)):
                    return None
                budget[0] -= 1
                node = self.node(acc)
                # GTK 2 (pcmanfm) shows an open menu's entries as visible but not showing: read them under a focused or selected menu
                is_open = acc.get_role_name() == "menu" and (states.contains(self.atspi.StateType.FOCUSED) or states.contains(self.atspi.StateType.SELECTED))
                kids = (walk(acc, i, depth + 1, is_open) for i in range(acc.get_child_count()))
                node["children"] = [k for k in kids if k is not None]
            except self.error as exc:
                if "does not exist" not in str(exc):
                    raise  # a hung application, not a vanished element
                return None  # the element went away while it was read (a cell editor, a closing menu)
            return node

        wins = (walk(app, i, 0) for i in range(app.get_child_count()))
        return {"app": app.get_name(), "tree": [w for w in wins if w is not None], "truncated": budget[0] <= 0}

    def info(self, ref: str) -> dict[str, Any]:
        acc = self.get(ref)
        node = self.node(acc)
        comp = acc.get_component_iface()
        box = comp.get_extents(self.atspi.CoordType.SCREEN) if comp is not None else None
        node["box"] = [box.x, box.y, box.width, box.height] if box is not None else None
        action = acc.get_action_iface()
        node["actions"] = [action.get_action_name(i) for i in range(action.get_n_actions())] if action is not None else []
        return node

    def focus(self, ref: str) -> dict[str, Any]:
        comp = self.get(ref).get_component_iface()
        return {"focused": bool(comp is not None and comp.grab_focus())}

    def set_text(self, ref: str, text: str) -> dict[str, Any]:
        acc = self.get(ref)
        editable = acc.get_editable_text_iface()
        if editable is not None:
            if not editable.set_text_contents(text):
                raise ValueError(f"{acc.get_role_name()} {ref} refused the text (read-only?)")
            return {"set": "text"}
        value = acc.get_value_iface()
        if value is not None:
            try:
                number = float(text)
            except ValueError as exc:
                raise ValueError(f"{acc.get_role_name()} {ref} takes a number, not {text!r}") from exc
            if not value.set_current_value(number):
                raise ValueError(f"{acc.get_role_name()} {ref} refused the value {text!r}")
            return {"set": "value"}
        raise ValueError(f"{acc.get_role_name()} {ref} has no text or value to set")

    def act(self, ref: str, name: str) -> dict[str, Any]:
        acc = self.get(ref)
        action = acc.get_action_iface()
        names = [action.get_action_name(i) for i in range(action.get_n_actions())] if action is not None else []
        if name not in names:
            raise ValueError(f"{acc.get_role_name()} {ref} has no action {name!r} (it has: {', '.join(names) or 'none'})")
        return {"done": bool(action.do_action(names.index(name)))}


def main() -> None:
    import gi

    gi.require_version("Atspi", "2.0")
    from gi.repository import Atspi, GLib

    Atspi.set_timeout(2000, 5000)
    tree = Tree(Atspi, GLib.Error)
    ops: dict[str, Callable[..., dict[str, Any]]] = {"apps": tree.apps, "snapshot": tree.snapshot, "info": tree.info, "focus": tree.focus, "set_text": tree.set_text, "act": tree.act}
    print(json.dumps({"ok": True, "ready": True}), flush=True)
    context = GLib.MainContext.default()
    for line in sys.stdin:
        while context.pending():  # let queued AT-SPI events (new windows, changed states) reach the cache
            context.iteration(False)
        try:
            request = json.loads(line)
            op = ops[request.pop("op")]
            answer = {"ok": True, **op(**request)}
        except (LookupError, ValueError, TypeError, AttributeError) as exc:  # AttributeError: an object that vanished while read
            answer = {"ok": False, "error": str(exc)}
        except GLib.Error as exc:
            answer = {"ok": False, "error": f"the application did not answer: {exc.message}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
