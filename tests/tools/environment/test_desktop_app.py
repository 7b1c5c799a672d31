"""Desktop episodes running a real application (mousepad) in their own session: snapshots, actions by ref, files on disk.

Needs Xvfb, xauth, dbus-daemon, openbox, mousepad and Debian's python3 with gir1.2-atspi-2.0
(the Makefile's `system` target installs them); skipped without them.
"""

from __future__ import annotations

import os
import re
import shutil
import string
import subprocess
import threading
import time
from collections.abc import Callable, Iterator

import psutil
import pytest
from fastmcp import Client, FastMCP

from taskloom.tools.environment import desktop_mcp
from taskloom.tools.environment.desktop import DesktopActionError, DesktopEpisodes
from taskloom.tools.environment.desktop_a11y import DEBIAN_PYTHON
from taskloom.tools.environment.desktop_refs import AppDesktopEnv
from taskloom.tools.environment.desktop_session import APPS, DesktopSession
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.errors import InputError

ATSPI = subprocess.run([DEBIAN_PYTHON, "-c", "import gi; gi.require_version('Atspi', '2.0')"], capture_output=True).returncode == 0 if os.path.exists(DEBIAN_PYTHON) else False
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not all(shutil.which(b) for b in ("Xvfb", "xauth", "dbus-daemon", "openbox", "mousepad")) or not ATSPI, reason="needs Xvfb, dbus, openbox, mousepad, gir1.2-atspi-2.0"),
]

SEED = "first line\nsecond line\n"


def wait_for(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def ref(snapshot: str, pattern: str) -> str:
    found = re.search(rf"^\s*- {pattern}[^\n]*\[ref=(e\d+)\]", snapshot, re.M)
    assert found, f"{pattern!r} not in\n{snapshot}"
    return found.group(1)


@pytest.fixture(scope="module")
def episodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DesktopEpisodes]:
    manager = DesktopEpisodes(tmp_path_factory.mktemp("desktop-episodes"), screenshot_after=False)
    yield manager
    manager.close_all()


@pytest.fixture(scope="module")
def env(episodes: DesktopEpisodes) -> AppDesktopEnv:
    started = episodes.start("pad", app="mousepad", files={"notes.txt": SEED, "docs/other.txt": "x"}, open_files=["notes.txt"], task_id="t-edit")
    assert isinstance(started, AppDesktopEnv)
    return started


def test_snapshot_shows_the_menu_bar_and_the_text_with_refs(env: AppDesktopEnv) -> None:
    snap = env.snapshot()
    assert re.search(r'^- window "notes\.txt - Mousepad" \[ref=e\d+\]:$', snap, re.M), snap  # the file's name, not the temp path
    assert re.search(r"^  - menubar \[ref=e\d+\]:\n    - menu \"File\" \[ref=e\d+\]\n    - menu \"Edit\" \[ref=e\d+\]", snap, re.M), snap
    assert re.search(r"- textbox \[focused\] \[ref=e\d+\]: first line\\nsecond line\\n$", snap, re.M), snap
    assert "menuitem" not in snap  # closed menus show no items
    assert ref(env.snapshot(), 'menu "File"') == ref(snap, 'menu "File"')  # refs stay stable between snapshots


def test_the_session_is_private_and_seeded(env: AppDesktopEnv) -> None:
    home = env.session.home
    assert (home / "notes.txt").read_text() == SEED and (home / "docs" / "other.txt").read_text() == "x"
    mousepad = next(p for p in psutil.Process().children(recursive=True) if p.name() == "mousepad")
    environ = mousepad.environ()
    assert environ["HOME"] == str(home) and environ["XDG_CONFIG_HOME"].startswith(str(home.parent))
    assert environ["DISPLAY"] == env.display != os.environ.get("DISPLAY")  # its own display, not exported to this process
    assert "path-in-title=false" in (home.parent / "config" / "glib-2.0" / "settings" / "keyfile").read_text()


def test_click_by_ref_opens_a_menu(env: AppDesktopEnv) -> None:
    record = env.click_element(ref(env.snapshot(), 'menu "File"'))
    assert record.canonical == "click(text='File', element='menu')"
    assert wait_for(lambda: 'menuitem "Save As..."' in env.snapshot()), env.snapshot()
    env.press("esc")
    assert wait_for(lambda: "menuitem" not in env.snapshot()), env.snapshot()


def test_type_by_ref_changes_the_text_and_ctrl_s_saves_it(env: AppDesktopEnv) -> None:
    box = ref(env.snapshot(), "textbox")
    env.type(box, "typed by ref\nline two")
    assert wait_for(lambda: "textbox [focused] [ref=" + box + "]: typed by ref\\nline two" in env.snapshot()), env.snapshot()
    assert '"*notes.txt - Mousepad"' in env.snapshot()  # modified, not saved
    assert (env.session.home / "notes.txt").read_text() == SEED
    env.hotkey("ctrl", "s")
    assert wait_for(lambda: (env.session.home / "notes.txt").read_text() == "typed by ref\nline two"), (env.session.home / "notes.txt").read_text()
    env.set_value(box, "naïve — ünïcode")  # any characters, through the accessibility interface
    env.hotkey("ctrl", "s")
    assert wait_for(lambda: (env.session.home / "notes.txt").read_text() == "naïve — ünïcode")
    typed = string.punctuation + " az AZ 09"  # every printable character comes out as itself ('<' used to type '>')
    env.type(box, typed)
    env.hotkey("ctrl", "s")
    assert wait_for(lambda: (env.session.home / "notes.txt").read_text() == typed), (env.session.home / "notes.txt").read_text()


def test_refused_refs_are_recorded_and_the_trajectory_names_elements(env: AppDesktopEnv) -> None:
    with pytest.raises(DesktopActionError, match="take a desktop_snapshot"):
        env.click_element("e9999")
    with pytest.raises(InputError, match="printable ASCII"):
        env.type(ref(env.snapshot(), "textbox"), "ünïcode")  # typing is keys; set_value takes any text
    menu = ref(env.snapshot(), 'menu "File"')
    env.click_element(menu)
    assert wait_for(lambda: 'menuitem "Quit"' in env.snapshot())
    env.press("esc")
    assert wait_for(lambda: "menuitem" not in env.snapshot())
    closed_item = ref(env.snapshot(), 'menu "Edit"')
    env.click_element(closed_item)  # a menu bar item is on screen; its items are not until it opens
    env.press("esc")
    actions = [a for a in load_trajectory(env.recorder.path).actions if a.name != "snapshot"]
    clicks = [a for a in actions if a.name == "click" and a.error is None]
    assert {(a.target.role, a.target.name) for a in clicks if a.target} >= {("menu", "File"), ("menu", "Edit")}
    assert all(a.target and a.target.ref and a.target.x is not None for a in clicks)
    typed = next(a for a in actions if a.name == "type" and a.error is None)
    assert typed.target and typed.target.role == "textbox" and typed.canonical == "type(text='typed by ref line two', element='textbox')"
    refused = next(a for a in actions if a.error and "e9999" in a.canonical)
    assert refused.canonical == "click(target='e9999')" and refused.target and refused.target.ref == "e9999"
    setv = next(a for a in actions if a.name == "set_value")
    assert setv.canonical == "set_value(value='naïve — ünïcode', element='textbox')" and setv.args["value"] == "naïve — ünïcode"


@pytest.mark.anyio
async def test_mcp_tools_snapshot_and_act_by_ref(episodes: DesktopEpisodes, env: AppDesktopEnv) -> None:
    server, desktop = FastMCP("test"), FastMCP("test-desktop")
    desktop_mcp.register(desktop, episodes)
    server.mount(desktop, namespace="desktop")
    episodes.start("bare", task_id="t-bare")  # no application: coordinates only
    async with Client(server) as client:
        names = {t.name for t in await client.list_tools()}
        assert {"desktop_snapshot", "desktop_click_element", "desktop_type", "desktop_set_value", "desktop_select_menu", "desktop_click"} <= names
        seen = await client.call_tool("desktop_snapshot", {"episode_id": "pad"})
        assert seen.structured_content and 'menu "File"' in seen.structured_content["snapshot"]
        box = ref(seen.structured_content["snapshot"], "textbox")
        done = await client.call_tool("desktop_set_value", {"episode_id": "pad", "target": box, "value": "from MCP"})
        assert done.structured_content == {"ok": True, "canonical": "set_value(value='from MCP', element='textbox')", "error": None}
        saved = await client.call_tool("desktop_select_menu", {"episode_id": "pad", "path": ["File", "Save"]})
        assert saved.structured_content and saved.structured_content["canonical"] == "select_menu(text='File > Save', element='menuitem')"
        missing = await client.call_tool("desktop_select_menu", {"episode_id": "pad", "path": ["File", "Nope"]}, raise_on_error=False)
        assert missing.is_error and "no menu entry 'Nope' in the menu File" in missing.content[0].text and "Save As..." in missing.content[0].text
        await client.call_tool("desktop_press", {"episode_id": "pad", "key": "esc"})
        shot = await client.call_tool("desktop_screenshot", {"episode_id": "pad"})
        assert shot.content[0].type == "image" and shot.content[0].mimeType == "image/png"
        bad = await client.call_tool("desktop_click_element", {"episode_id": "pad", "target": "e9999"}, raise_on_error=False)
        assert bad.is_error and "take a desktop_snapshot" in bad.content[0].text
        bare = await client.call_tool("desktop_snapshot", {"episode_id": "bare"}, raise_on_error=False)
        assert bare.is_error and "runs no application" in bare.content[0].text
    assert wait_for(lambda: (env.session.home / "notes.txt").read_text() == "from MCP")
    episodes.close("bare")


def test_sessions_started_at_once_keep_their_own_buses_and_stopping_leaves_nothing_behind() -> None:
    sessions = [DesktopSession(APPS["mousepad"], files={f"{name}.txt": name}, open_files=[f"{name}.txt"]) for name in ("a", "b")]
    starting = [threading.Thread(target=s.start) for s in sessions]  # as a harness running episodes concurrently does
    for thread in starting:
        thread.start()
    for thread in starting:
        thread.join()
    session, other = sessions
    try:
        folder = session.folder
        assert folder is not None and other.folder is not None and "a.txt - Mousepad" in session.window and "b.txt - Mousepad" in other.window
        for each in sessions:  # each accessibility bus is in its own session's runtime folder, not a shared ~/.cache one
            assert each.folder is not None and (each.folder / "runtime" / "at-spi" / "bus").exists()
        bus = session.env["DBUS_SESSION_BUS_ADDRESS"].removeprefix("unix:path=")
    finally:
        other.stop()
    session.stop()
    assert not folder.exists()

    def ours(process: psutil.Process) -> bool:
        try:
            return bus in process.environ().get("DBUS_SESSION_BUS_ADDRESS", "") or any(str(folder) in part for part in process.cmdline())
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            return False

    def gone() -> bool:  # the programs, the bus and what it started (the accessibility bus and registry)
        return not [p for p in psutil.process_iter() if ours(p)]

    assert wait_for(gone), "processes of the session are still running"
    with pytest.raises(InputError, match="relative to the home folder"):
        DesktopSession(APPS["mousepad"], files={"../escape.txt": "x"}).start()
