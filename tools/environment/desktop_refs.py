"""Desktop episodes that run one application: accessibility snapshots with refs, and actions by ref.

Actions by ref act the way a person would (a click at the element's centre, keys typed into it)
and are recorded with the element's role and name, like browser actions; the coordinate actions
of :class:`~.desktop.DesktopEnv` stay available. Nothing here reads task files.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .canonical import canonical, element_form
from .desktop import DesktopEnv, EnvironmentUnavailable
from .desktop_a11y import A11yElement, A11yNode, A11yTree, format_tree
from .desktop_session import DesktopSession
from .trajectory import ActionRecord, CriterionResult, Recorder, Target

if TYPE_CHECKING:
    from ..tasks.model import Task

__all__ = ["AppDesktopEnv", "REF_ACTIONS"]

REF_ACTIONS: dict[str, str] = {
    "snapshot": "snapshot(): the focused application's accessibility tree as text; act on elements by their [ref=eN].",
    "click_element": "click_element(target, button='left', double=False): click the middle of the element with that ref.",
    "type": "type(target, text, submit=False): focus the element, replace its text by typing text (printable ASCII, newline, tab), Enter if submit.",
    "set_value": "set_value(target, value): set an editable element's whole text, or a slider's or spin button's number, directly (any characters).",
    "select_menu": "select_menu(path): open menus by name and click the last item, e.g. ['File', 'Save As...'] (names as desktop_snapshot shows them).",
}
MENU_ROLES = ("menu", "menuitem", "menuitemcheckbox", "menuitemradio")
MENU_WAIT = 3.0
#: How long the final-state check waits for a save or a move the agent set off just before closing.
SETTLE = 1.0


class AppDesktopEnv(DesktopEnv):
    """A :class:`DesktopEnv` on a :class:`DesktopSession`'s display; closing it stops the session."""

    def __init__(self, recorder: Recorder, session: DesktopSession, screenshot_after: bool = False) -> None:
        if session.display is None or session.tree is None:
            raise EnvironmentUnavailable("the desktop session is not running")
        super().__init__(recorder, display=session.display.name, screenshot_after=screenshot_after, xauthority=session.display.env["XAUTHORITY"])
        self.session = session
        self.task: Task | None = None  # server side only: the task whose criteria are checked at close

    def final_checks(self) -> list[CriterionResult] | None:
        """The task's criteria checked on the home folder (before closing removes it); None without a task.

        A check that fails is read again for up to :data:`SETTLE` seconds, so a save the agent
        started just before closing lands first; the start state never passes either way.
        """
        from .desktop_checks import file_checks  # it builds on the session module

        if self.task is None or not self.task.success:
            return None
        deadline = time.monotonic() + SETTLE
        while True:
            checks = file_checks(self.task.success, self.session.home)
            if all(c.ok for c in checks) or time.monotonic() > deadline:
                return checks
            time.sleep(0.1)

    @property
    def tree(self) -> A11yTree:
        if self.session.tree is None:
            raise EnvironmentUnavailable("the desktop session has stopped")
        return self.session.tree

    def close(self) -> None:
        """Close the X connection and stop the session (application, buses, display, home folder)."""
        super().close()
        self.session.stop()

    def _do(self, name: str, args: dict[str, Any], act: Any, *rest: Any, **options: Any) -> Any:
        """As :meth:`DesktopEnv._do`; then, for an action, wait (bounded) until the application's tree stops changing."""
        done = super()._do(name, args, act, *rest, **options)
        if not options.get("look"):
            self.tree.settle()
        return done

    def snapshot(self) -> str:
        """The focused application's showing windows as snapshot lines; recorded as ``snapshot()``."""

        def act() -> str:
            _, nodes = self.tree.snapshot()
            return "\n".join(format_tree(nodes)) or "(no application window is showing)"

        return self._do("snapshot", {}, act, locked=False, look=True)[0]

    def _resolve(self, ref: Any) -> tuple[A11yElement | None, str | None]:
        try:
            return self.tree.element(ref), None
        except InputError as exc:
            return None, str(exc)

    def _ref_action(self, name: str, ref: Any, args: dict[str, Any], act: Any, typed: str | None = None) -> ActionRecord:
        """Look ``ref`` up, then record ``act(element)`` (or the lookup's failure) with the element's role and name."""
        element, problem = self._resolve(ref)
        if element is None:
            target, form = Target(ref=str(ref)), canonical(name, target=ref)
        else:
            centre = element.centre()
            target = Target(ref=element.ref, role=element.aria_role, name=element.name or None, text=element.value[:200] if element.value else None,
                            x=centre[0] if centre else None, y=centre[1] if centre else None)
            form = element_form(name, element.name or None, None, element.aria_role, {"element": element.aria_role}, {"typed": typed} if typed is not None else {})
            if name == "set_value":
                form = canonical("set_value", value=typed, text=element.name or None, element=element.aria_role)

        def run() -> None:
            if element is None:
                raise InputError(problem or f"no element {ref!r}")
            act(element)

        return self._do(name, {"target": ref, **args}, run, target=target, form=form)[1]

    def _centre(self, element: A11yElement) -> tuple[int, int]:
        centre = element.centre()
        if centre is None:
            raise InputError(f"{element.aria_role} {element.name!r} [ref={element.ref}] is not on the screen: open its menu or window first, then take a new desktop_snapshot")
        return centre

    def click_element(self, ref: str, button: str = "left", double: bool = False) -> ActionRecord:
        """Click (or double-click) the middle of the element ``ref`` names."""

        def act(element: A11yElement) -> None:
            held = self._button(button)
            if double:
                self._gui.doubleClick(*self._centre(element), interval=0.05, button=held)
            else:
                self._gui.click(*self._centre(element), button=held)

        return self._ref_action("double_click" if double else "click", ref, {"button": button, "double": double}, act)

    def type(self, ref: str, text: str, submit: bool = False) -> ActionRecord:
        """Focus the element, select all its text and type ``text`` over it (an empty ``text`` clears it); Enter if ``submit``."""

        def act(element: A11yElement) -> None:
            if text:
                self._text(text, 0)
            if not self.tree.call("focus", ref=element.ref)["focused"]:
                self._gui.click(*self._centre(element))
            self._gui.hotkey("ctrl", "a")
            if text:
                self._gui.write(text)
            else:
                self._gui.press("delete")
            if submit:
                self._gui.press("enter")

        return self._ref_action("type", ref, {"text": text, "submit": submit}, act, typed=text)

    def set_value(self, ref: str, value: str) -> ActionRecord:
        """Set the element's whole text (or number) through the accessibility interface, without typing."""

        def act(element: A11yElement) -> None:
            if not isinstance(value, str) or len(value) > 100_000:
                raise InputError("value must be text of at most 100,000 characters")
            self.tree.call("set_text", ref=element.ref, text=value)

        return self._ref_action("set_value", ref, {"value": value}, act, typed=value)

    def select_menu(self, path: list[str]) -> ActionRecord:
        """Click the menu named ``path[0]`` in the focused window, then each next name as it shows (a menu bar path)."""
        names = list(path) if isinstance(path, list | tuple) else []
        form = canonical("select_menu", text=" > ".join(map(str, names)), element="menuitem")

        def act() -> None:
            if not 1 <= len(names) <= 6 or not all(isinstance(n, str) and n for n in names):
                raise InputError("path must be 1..6 menu names, e.g. ['File', 'Save']")
            for depth, name in enumerate(names):
                node = self._shown_menu(name, names[:depth])
                element = self.tree.element(node.ref)
                self._gui.click(*self._centre(element))

        return self._do("select_menu", {"path": names}, act, form=form)[1]

    def _shown_menu(self, name: str, opened: list[str]) -> A11yNode:
        """Wait (bounded) for a showing menu entry called ``name`` (inside the last menu of ``opened``, when any)."""
        deadline = time.monotonic() + MENU_WAIT
        while True:
            _, nodes = self.tree.snapshot()
            if opened:
                parent = next((n for n in _walk(nodes) if n.aria_role == "menu" and n.name == opened[-1]), None)
                nodes = parent.children if parent is not None else []
            found = next((n for n in _walk(nodes) if n.aria_role in MENU_ROLES and n.name == name), None)
            if found is not None:
                return found
            if time.monotonic() > deadline:
                where = f"in the menu {' > '.join(opened)}" if opened else "in the menu bar"
                shown = sorted({n.name for n in _walk(nodes) if n.aria_role in MENU_ROLES and n.name})
                raise InputError(f"no menu entry {name!r} {where} (shown: {', '.join(shown[:30]) or 'none'})")
            time.sleep(0.05)


def _walk(nodes: list[A11yNode]) -> Iterator[A11yNode]:
    for node in nodes:
        yield node
        yield from _walk(node.children)
