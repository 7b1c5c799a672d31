"""The desktop environment on a real Xvfb display, acting on a tiny Tk program that logs what it sees.

Needs ``Xvfb`` and ``xauth`` (``apt-get install xvfb xauth``) and tkinter; skipped without them.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import Xlib.display
import Xlib.error
from fastmcp import Client, FastMCP
from PIL import Image

from taskloom.tools.environment import desktop_mcp
from taskloom.tools.environment.desktop import (
    DESKTOP_ACTIONS,
    DesktopActionError,
    DesktopEnv,
    DesktopEpisodes,
    EnvironmentUnavailable,
    VirtualDisplay,
)
from taskloom.tools.environment.desktop_refs import REF_ACTIONS
from taskloom.tools.environment.trajectory import EpisodeRecord, Recorder, load_trajectory
from taskloom.tools.errors import InputError, NotFoundError

HAS_TK = subprocess.run([sys.executable, "-c", "import tkinter"], capture_output=True).returncode == 0
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not (shutil.which("Xvfb") and shutil.which("xauth")), reason="needs Xvfb and xauth"),
]

# A window at the screen's top-left (no window manager, so no decorations) that logs
# clicks, keys, wheel and drags to events.log, mirrors its Entry into entry.txt and
# writes the centres of its widgets to ready.json once it is mapped.
TK_APP = r"""
import json, os, sys, tkinter as tk
out = sys.argv[1]
log = open(os.path.join(out, "events.log"), "a", buffering=1)
root = tk.Tk()
root.geometry("+0+0")
button = tk.Button(root, text="Press me", command=lambda: log.write("button\n"))
text = tk.StringVar()
text.trace_add("write", lambda *_: open(os.path.join(out, "entry.txt"), "w").write(text.get()))
entry = tk.Entry(root, textvariable=text, width=30)
label = tk.Label(root, text="double or right click me", width=30, height=2)
canvas = tk.Canvas(root, width=300, height=150, bg="white")
for widget in (button, entry, label, canvas):
    widget.pack(padx=5, pady=5)
label.bind("<Double-Button-1>", lambda e: log.write("double\n"))
label.bind("<Button-3>", lambda e: log.write("right\n"))
root.bind_all("<Control-k>", lambda e: log.write("ctrl-k\n"))
root.bind_all("<Escape>", lambda e: log.write("escape\n"))
canvas.bind("<Button-4>", lambda e: log.write("scroll-up\n"))
canvas.bind("<Button-5>", lambda e: log.write("scroll-down\n"))
canvas.bind("<ButtonPress-1>", lambda e: log.write(f"press {e.x_root},{e.y_root}\n"))
canvas.bind("<ButtonRelease-1>", lambda e: log.write(f"release {e.x_root},{e.y_root}\n"))

def ready():
    centre = lambda w: [w.winfo_rootx() + w.winfo_width() // 2, w.winfo_rooty() + w.winfo_height() // 2]
    spots = {name: centre(w) for name, w in (("button", button), ("entry", entry), ("label", label), ("canvas", canvas))}
    with open(os.path.join(out, "ready.tmp"), "w") as fh:
        json.dump(spots, fh)
    os.replace(os.path.join(out, "ready.tmp"), os.path.join(out, "ready.json"))

root.after(300, ready)
root.mainloop()
"""


def wait_until(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


@dataclass
class App:
    folder: Path
    spots: dict[str, tuple[int, int]]

    def events(self) -> list[str]:
        path = self.folder / "events.log"
        return path.read_text().splitlines() if path.exists() else []

    def saw(self, event: str, timeout: float = 5.0) -> bool:
        return wait_until(lambda: event in self.events(), timeout)

    def entry(self) -> str:
        path = self.folder / "entry.txt"
        return path.read_text() if path.exists() else ""


@pytest.fixture(scope="module")
def display() -> Iterator[VirtualDisplay]:
    with VirtualDisplay() as vd:
        yield vd


@pytest.fixture(scope="module")
def app(display: VirtualDisplay, tmp_path_factory: pytest.TempPathFactory) -> App:
    if not HAS_TK:
        pytest.skip("needs tkinter in this Python (Debian: python3-tk)")
    folder = tmp_path_factory.mktemp("tkapp")
    display.spawn([sys.executable, "-c", TK_APP, str(folder)])
    assert wait_until(lambda: (folder / "ready.json").exists(), 10), "the Tk program did not come up"
    spots = {k: (int(v[0]), int(v[1])) for k, v in json.loads((folder / "ready.json").read_text()).items()}
    return App(folder, spots)


def make_env(display: VirtualDisplay, folder: Path, screenshot_after: bool = False) -> DesktopEnv:
    recorder = Recorder(folder, EpisodeRecord(episode_id=folder.name, env="desktop"))
    return DesktopEnv(recorder, display=display.name, screenshot_after=screenshot_after)


@pytest.fixture
def env(display: VirtualDisplay, tmp_path: Path) -> DesktopEnv:
    return make_env(display, tmp_path / "episode")


def test_display_is_private_and_exported(display: VirtualDisplay, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert os.environ["DISPLAY"] == display.name
    assert os.environ["XDG_SESSION_TYPE"] == "x11"
    assert Path(os.environ["XAUTHORITY"]).is_file()
    Xlib.display.Display(display.name).close()
    (tmp_path / "empty").write_bytes(b"")
    monkeypatch.setenv("XAUTHORITY", str(tmp_path / "empty"))
    with pytest.raises((Xlib.error.DisplayError, Xlib.error.ConnectionClosedError)):  # the server refuses or hangs up
        Xlib.display.Display(display.name)  # no cookie, no connection


def test_click_reaches_the_program(env: DesktopEnv, app: App) -> None:
    x, y = app.spots["button"]
    record = env.click(x, y)
    assert app.saw("button")
    assert record.canonical == f"click(x='{x}', y='{y}', button='left')"
    assert record.target is not None and (record.target.x, record.target.y) == (x, y)
    assert record.error is None and record.t_end >= record.t_start


def test_write_press_and_hotkey_reach_the_entry(env: DesktopEnv, app: App) -> None:
    env.click(*app.spots["entry"])
    env.write("Hello, world 42!")
    assert wait_until(lambda: app.entry() == "Hello, world 42!"), app.entry()
    env.press("BackSpace")
    assert wait_until(lambda: app.entry() == "Hello, world 42"), app.entry()
    env.hotkey("ctrl", "k")
    env.press("esc")
    assert app.saw("ctrl-k") and app.saw("escape")
    names = [a.canonical for a in load_trajectory(env.recorder.path).actions]
    assert names[1:] == ["write(text='Hello, world 42!')", "press(key='backspace')", "hotkey(keys='ctrl+k')", "press(key='esc')"]


def test_double_click_right_click_scroll_and_drag(env: DesktopEnv, app: App) -> None:
    env.double_click(*app.spots["label"])
    env.click(*app.spots["label"], button="right")
    cx, cy = app.spots["canvas"]
    env.scroll(-2, cx, cy)
    env.scroll(1, cx, cy)
    env.drag(cx - 50, cy - 20, cx + 60, cy + 30)
    env.move(5, 5)
    assert app.saw("double") and app.saw("right") and app.saw("scroll-up")
    assert app.saw(f"release {cx + 60},{cy + 30}")
    assert app.events().count("scroll-down") >= 2
    assert f"press {cx - 50},{cy - 20}" in app.events()


def test_screenshot_is_a_png_of_the_screen(display: VirtualDisplay, app: App, tmp_path: Path) -> None:
    env = make_env(display, tmp_path / "shots", screenshot_after=True)
    env.move(10, 10)
    png = env.screenshot()
    with Image.open(io.BytesIO(png)) as image:
        assert image.format == "PNG" and image.size == (1280, 800)
        assert len(set(image.crop((0, 0, 200, 100)).getdata())) > 1  # the Tk window is drawn
    actions = load_trajectory(env.recorder.path).actions
    assert [a.canonical for a in actions] == ["move(x='10', y='10')", "screenshot()"]
    for action in actions:
        assert action.screenshot and (env.recorder.folder / action.screenshot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert env.screenshot(record=False)[:4] == b"\x89PNG"
    assert env.recorder.count == 2


BAD_ACTIONS = [
    (lambda e: e.click(1280, 10), "click(x='1280', y='10', button='left')", "off the screen"),
    (lambda e: e.click(10, -1, button="left"), "click(x='10', y='-1', button='left')", "y in 0..799"),
    (lambda e: e.click(10, 10, button="side"), "click(x='10', y='10', button='side')", "left, right, middle"),
    (lambda e: e.drag(10, 10, 9999, 10), "drag(x='10', y='10', to_x='9999', to_y='10', button='left')", "to_x=9999"),
    (lambda e: e.press("entr"), "press(key='entr')", "did you mean enter"),
    (lambda e: e.hotkey("ctrl", "nope"), "hotkey(keys='ctrl+nope')", "unknown key 'nope'"),
    (lambda e: e.write("naïve"), "write(text='naïve')", "printable ASCII"),
    (lambda e: e.scroll(0), "scroll(amount='0')", "wheel clicks"),
    (lambda e: e.scroll(3, x=10), "scroll(amount='3', x='10')", "both x and y"),
    (lambda e: e.wait(31), "wait(seconds='31')", "0..30"),
]


def test_bad_input_is_refused_recorded_and_the_env_stays_usable(env: DesktopEnv, app: App) -> None:
    for act, canon, message in BAD_ACTIONS:
        with pytest.raises(InputError, match=message) as caught:
            act(env)
        assert isinstance(caught.value, DesktopActionError) and caught.value.record.canonical == canon
    env.click(*app.spots["button"])  # still works
    actions = load_trajectory(env.recorder.path).actions
    assert [a.canonical for a in actions[:-1]] == [canon for _, canon, _ in BAD_ACTIONS]
    assert all(a.error for a in actions[:-1]) and actions[-1].error is None
    assert [a.index for a in actions] == list(range(len(BAD_ACTIONS) + 1))
    assert actions[0].target and actions[0].target.x == 1280  # where the agent aimed, even off screen


def test_trajectory_holds_every_action_in_order(env: DesktopEnv, app: App) -> None:
    env.move(600, 475)
    env.click(600, 475, button="middle")
    env.write("hi\n")
    env.hotkey("Ctrl", "Shift", "t")
    env.scroll(3)
    env.wait(0.01)
    env.recorder.close()
    trajectory = load_trajectory(env.recorder.path)
    assert trajectory.episode.env == "desktop" and trajectory.closed is not None
    assert [(a.index, a.name, a.canonical) for a in trajectory.actions] == [
        (0, "move", "move(x='600', y='475')"),
        (1, "click", "click(x='600', y='475', button='middle')"),
        (2, "write", "write(text='hi')"),
        (3, "hotkey", "hotkey(keys='ctrl+shift+t')"),
        (4, "scroll", "scroll(amount='3')"),
        (5, "wait", "wait(seconds='0.01')"),
    ]
    assert trajectory.actions[2].args == {"text": "hi\n", "interval": 0}
    assert trajectory.actions[3].args == {"keys": ["Ctrl", "Shift", "t"]}
    assert set(DESKTOP_ACTIONS) >= {a.name for a in trajectory.actions}


def test_missing_xvfb_is_environment_unavailable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentUnavailable, match="apt-get install xvfb xauth"):
        VirtualDisplay().start()


def test_a_second_display_restores_the_environment(display: VirtualDisplay) -> None:
    with VirtualDisplay() as inner:
        assert inner.name != display.name and os.environ["DISPLAY"] == inner.name
        socket = Path(f"/tmp/.X11-unix/X{inner.number}")
        assert socket.exists()
    assert os.environ["DISPLAY"] == display.name
    assert wait_until(lambda: not socket.exists())


def test_episodes_share_a_display_and_close_it_last(display: VirtualDisplay, tmp_path: Path) -> None:
    episodes = DesktopEpisodes(tmp_path, screenshot_after=True)
    first = episodes.start("ep-1", task_id="t1")
    second = episodes.start("ep-2", tmp_path / "ep-2")
    assert episodes.display is not None and first.display == second.display != display.name
    with pytest.raises(InputError, match="already running"):
        episodes.start("ep-1", tmp_path / "again")
    with pytest.raises(InputError, match="letters, digits"):
        episodes.start("../escape")
    with pytest.raises(NotFoundError, match="ep-1, ep-2"):
        episodes.get("nope")
    first.move(3, 3)
    episodes.close("ep-1")
    assert episodes.display is not None
    episodes.close_all()
    assert episodes.display is None and os.environ["DISPLAY"] == display.name
    one, two = load_trajectory(tmp_path / "ep-1" / "trajectory.jsonl"), load_trajectory(tmp_path / "ep-2" / "trajectory.jsonl")
    assert one.episode.task_id == "t1" and one.actions[0].screenshot and one.closed and one.closed.status == "closed"
    assert two.closed and two.closed.status == "error"


@pytest.mark.anyio
async def test_mcp_tools_act_record_and_show(display: VirtualDisplay, app: App, tmp_path: Path) -> None:
    episodes = DesktopEpisodes(tmp_path, screenshot_after=False, display=display)
    server, desktop = FastMCP("test"), FastMCP("test-desktop")
    desktop_mcp.register(desktop, episodes)
    server.mount(desktop, namespace="desktop")  # as server/app.py does
    episodes.start("mcp")
    try:
        async with Client(server) as client:
            names = {t.name for t in await client.list_tools()}
            assert names == {f"desktop_{n}" for n in DESKTOP_ACTIONS} | {f"desktop_{n}" for n in REF_ACTIONS}
            x, y = app.spots["button"]
            done = await client.call_tool("desktop_click", {"episode_id": "mcp", "x": x, "y": y})
            assert done.structured_content == {"ok": True, "canonical": f"click(x='{x}', y='{y}', button='left')", "error": None}
            refused = await client.call_tool("desktop_press", {"episode_id": "mcp", "key": "nokey"}, raise_on_error=False)
            assert refused.is_error  # refused like a browser action: a tool error saying why
            assert "unknown key" in refused.content[0].text
            hot = await client.call_tool("desktop_hotkey", {"episode_id": "mcp", "keys": ["ctrl", "k"]})
            assert hot.structured_content and hot.structured_content["canonical"] == "hotkey(keys='ctrl+k')"
            shot = await client.call_tool("desktop_screenshot", {"episode_id": "mcp"})
            assert shot.content[0].type == "image" and shot.content[0].mimeType == "image/png"
            unknown = await client.call_tool("desktop_wait", {"episode_id": "other", "seconds": 0}, raise_on_error=False)
            assert unknown.is_error
        assert app.saw("button") and app.saw("ctrl-k")
    finally:
        episodes.close_all()
    assert display.number is not None  # a display passed in is not the manager's to stop
    actions = load_trajectory(tmp_path / "mcp" / "trajectory.jsonl").actions
    assert [a.name for a in actions] == ["click", "press", "hotkey", "screenshot"]
    assert load_trajectory(tmp_path / "mcp" / "trajectory.jsonl").closed is not None
