"""The venv's side of the accessibility tree: talks to :mod:`.desktop_atspi` in Debian's Python and formats snapshots.

A snapshot reads like ``browser_snapshot``'s aria text: ``- button "Save" [ref=e12]``, states in
brackets, ``: value`` for text and values, children indented below a trailing colon.
"""

from __future__ import annotations

import json
import select
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..errors import InputError
from .desktop import EnvironmentUnavailable

__all__ = ["A11yNode", "A11yElement", "A11yTree", "DEBIAN_PYTHON", "find", "find_role", "format_tree"]

DEBIAN_PYTHON = "/usr/bin/python3"
HELPER = Path(__file__).with_name("desktop_atspi.py")

#: AT-SPI role names as the browser's ARIA roles, so desktop and browser snapshots read alike.
ROLES = {
    "frame": "window", "dialog": "dialog", "alert": "alertdialog", "file chooser": "dialog", "push button": "button",
    "toggle button": "button", "check box": "checkbox", "radio button": "radio", "menu bar": "menubar", "menu": "menu",
    "menu item": "menuitem", "check menu item": "menuitemcheckbox", "radio menu item": "menuitemradio", "text": "textbox",
    "password text": "textbox", "entry": "textbox", "combo box": "combobox", "list": "list", "list item": "listitem",
    "table": "table", "table cell": "cell", "tree table": "treegrid", "tree": "tree", "tree item": "treeitem",
    "page tab list": "tablist", "page tab": "tab", "tool bar": "toolbar", "status bar": "status", "scroll bar": "scrollbar",
    "slider": "slider", "spin button": "spinbutton", "separator": "separator", "heading": "heading", "link": "link",
    "image": "img", "icon": "img", "progress bar": "progressbar", "label": "label", "tool tip": "tooltip",
}
#: Containers shown only when they have a name (else their children take their place), like the browser's generic divs.
GENERIC = {"panel", "filler", "scroll pane", "viewport", "layered pane", "unknown", "redundant object", "section", "root pane", "glass pane", "split pane"}
INTERACTIVE = {"button", "checkbox", "radio", "menuitem", "menuitemcheckbox", "menuitemradio", "menu", "textbox", "combobox", "tab", "slider", "spinbutton", "link"}
SHOWN_STATES = ("focused", "checked", "selected", "expanded", "pressed")
MAX_SHOWN_VALUE = 2000


class A11yNode(BaseModel):
    """One accessible element as AT-SPI describes it."""

    ref: str
    role: str = Field(description="The AT-SPI role name, e.g. 'push button'.")
    name: str = ""
    states: list[str] = Field(default_factory=list)
    value: str | None = None
    children: list[A11yNode] = Field(default_factory=list)

    @property
    def aria_role(self) -> str:
        """The browser-style role shown in snapshots and recorded in trajectories."""
        return ROLES.get(self.role, self.role.replace(" ", ""))


class A11yElement(A11yNode):
    """An element looked up by ref: its screen box and the actions it offers."""

    box: list[int] | None = Field(None, description="x, y, width, height in screen pixels.")
    actions: list[str] = Field(default_factory=list)

    def centre(self) -> tuple[int, int] | None:
        """The middle of its box, or None when it has no area on the screen."""
        if self.box is None or self.box[2] <= 0 or self.box[3] <= 0 or "showing" not in self.states:
            return None
        x, y, w, h = self.box
        return x + w // 2, y + h // 2


def _line(node: A11yNode) -> str:
    role = node.aria_role
    parts = [role] + ([json.dumps(node.name, ensure_ascii=False)] if node.name else [])
    parts += [f"[{s}]" for s in SHOWN_STATES if s in node.states]
    if role in INTERACTIVE and not {"enabled", "sensitive"} & set(node.states):
        parts.append("[disabled]")
    if role == "textbox" and "editable" not in node.states:
        parts.append("[readonly]")
    text = " ".join(parts) + f" [ref={node.ref}]"
    if node.value:
        value = node.value if len(node.value) <= MAX_SHOWN_VALUE else node.value[:MAX_SHOWN_VALUE] + f"… ({len(node.value)} characters)"
        text += ": " + value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
    return text


def format_tree(nodes: list[A11yNode], indent: int = 0) -> list[str]:
    """Snapshot lines for ``nodes``; unnamed generic containers are skipped and their children lifted.

    >>> format_tree([A11yNode(ref="e1", role="frame", name="a.txt", children=[
    ...     A11yNode(ref="e2", role="filler", children=[A11yNode(ref="e3", role="push button", name="Save", states=["sensitive"])])])])
    ['- window "a.txt" [ref=e1]:', '  - button "Save" [ref=e3]']
    """
    lines: list[str] = []
    for node in nodes:
        if node.role in GENERIC and not node.name and not node.value:
            lines += format_tree(node.children, indent)
            continue
        below = format_tree(node.children, indent + 1)
        lines.append("  " * indent + "- " + _line(node) + (":" if below and not node.value else ""))
        lines += below
    return lines


def find(nodes: list[A11yNode], ref: str) -> A11yNode | None:
    """The node with ``ref`` in ``nodes`` and their descendants."""
    for node in nodes:
        if node.ref == ref:
            return node
        found = find(node.children, ref)
        if found is not None:
            return found
    return None


def find_role(nodes: list[A11yNode], role: str, name: str | None = None) -> A11yNode | None:
    """The first node (depth first) with this browser-style ``role`` (and accessible ``name``, when given)."""
    for node in nodes:
        if node.aria_role == role and (name is None or node.name == name):
            return node
        found = find_role(node.children, role, name)
        if found is not None:
            return found
    return None


class A11yTree:
    """A long-lived :mod:`.desktop_atspi` subprocess on one session bus; requests take turns."""

    def __init__(self, env: dict[str, str], log: Path, timeout: float = 10.0, python: str = DEBIAN_PYTHON) -> None:
        if not Path(python).exists() or shutil.which("dbus-daemon") is None:
            raise EnvironmentUnavailable(f"desktop snapshots need Debian's {python} with gir1.2-atspi-2.0 and python3-gi (the Makefile's `system` target installs them)")
        self.timeout = timeout
        self._lock = threading.Lock()
        self.log = log
        with open(log, "ab") as err:
            self._proc = subprocess.Popen([python, "-I", str(HELPER)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, start_new_session=True)
        self._read(timeout)

    def _read(self, timeout: float) -> dict[str, Any]:
        assert self._proc.stdout is not None
        ready, _, _ = select.select([self._proc.stdout], [], [], timeout)
        line = self._proc.stdout.readline() if ready else b""
        if not line:
            self.close()
            err = self.log.read_text(errors="replace")[-800:] if self.log.exists() else ""
            raise EnvironmentUnavailable(f"the accessibility reader did not answer within {timeout:g}s{': ' + err.strip() if err.strip() else ''}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def call(self, op: str, **args: Any) -> dict[str, Any]:
        """Send one request; an ``ok: false`` answer raises :class:`InputError` with the reader's reason."""
        with self._lock:
            if self._proc.poll() is not None:
                raise EnvironmentUnavailable("the accessibility reader has stopped")
            assert self._proc.stdin is not None
            self._proc.stdin.write((json.dumps({"op": op, **args}) + "\n").encode())
            self._proc.stdin.flush()
            answer = self._read(self.timeout)
        if not answer.pop("ok"):
            raise InputError(str(answer["error"]))
        return answer

    def snapshot(self) -> tuple[str | None, list[A11yNode]]:
        """The focused application's name and its showing windows."""
        answer = self.call("snapshot")
        return answer["app"], [A11yNode.model_validate(n) for n in answer["tree"]]

    def element(self, ref: str) -> A11yElement:
        """The element ``ref`` names, with its box and actions."""
        if not isinstance(ref, str) or not ref:
            raise InputError(f"target={ref!r} must be a ref from desktop_snapshot, e.g. 'e12'")
        return A11yElement.model_validate(self.call("info", ref=ref))

    def wait_for_window(self, timeout: float) -> str:
        """Wait (bounded) until some application shows a window that has the focus (input aimed at it lands); its name and the window's."""
        deadline = time.monotonic() + timeout
        while True:
            for app in self.call("apps")["apps"]:
                active = [w for w in app["windows"] if w.get("active")]
                if active:
                    return f"{app['name']}: {active[0]['name']}"
            if time.monotonic() > deadline:
                raise EnvironmentUnavailable(f"no application window appeared and took the focus within {timeout:g}s")
            time.sleep(0.05)

    def settle(self, limit: float = 2.0, pause: float = 0.08) -> None:
        """Wait (bounded) until the focused application's tree reads the same twice in a row: what an action set off has shown."""
        deadline, previous, same = time.monotonic() + limit, None, 0
        while same < 2 and time.monotonic() < deadline:
            current = self.call("snapshot")["tree"]
            same = same + 1 if current == previous else 0
            previous = current
            if same < 2:
                time.sleep(pause)

    def close(self) -> None:
        """Stop the subprocess."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                stream.close()

