"""A desktop session for one episode: a private display, a session bus, a window manager and one application.

Everything lives in a fresh temporary folder: the home folder (seeded with the task's files), the XDG
config, data, cache and runtime folders, and GSettings in a key file under the config folder, so
no episode sees another's files or settings. The session is ready when the application's window is
in the accessibility tree.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path, PurePosixPath
from types import TracebackType

from pydantic import BaseModel, Field

from ..errors import InputError
from .desktop import EnvironmentUnavailable, VirtualDisplay, _require, _terminate
from .desktop_a11y import A11yTree

__all__ = ["DesktopApp", "APPS", "DesktopSession", "home_path", "seed_home"]


class DesktopApp(BaseModel):
    """An application a desktop episode runs: its command, then the seeded files it opens (paths in the home folder)."""

    name: str = Field(description="Short name, e.g. 'mousepad'.")
    argv: list[str] = Field(description="The command, without the files to open.")
    package: str = Field(description="The Debian package that provides it.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment, e.g. GTK 2's accessibility modules.")
    config: dict[str, str] = Field(default_factory=dict, description="Files seeded into the episode's config folder (path -> content).")
    settings: str = Field("", description="GSettings seeded into the episode's key file, e.g. '[org/xfce/mousepad/preferences/window]\\npath-in-title=false'.")


APPS: dict[str, DesktopApp] = {
    "mousepad": DesktopApp(
        name="mousepad", argv=["mousepad", "--disable-server"], package="mousepad",
        settings="[org/xfce/mousepad/preferences/window]\npath-in-title=false\n",  # titles name the file, not the random temp path
    ),
    "pcmanfm": DesktopApp(
        name="pcmanfm", argv=["pcmanfm", "--no-desktop"], package="pcmanfm",
        env={"GTK_MODULES": "gail:atk-bridge"},  # a GTK 2 program: these modules put it on the accessibility bus
        config={"pcmanfm/default/pcmanfm.conf": "[ui]\nview_mode=list\nshow_hidden=0\nsort=name;ascending;\n"},  # the list view tells accessibility of new items
    ),
    "gnumeric": DesktopApp(name="gnumeric", argv=["gnumeric", "--no-splash"], package="gnumeric"),
}


def home_path(home: Path, relative: str) -> Path:
    """``relative`` inside ``home``; refuses absolute paths and ``..``."""
    rel = PurePosixPath(relative)
    if not relative or rel.is_absolute() or ".." in rel.parts:
        raise InputError(f"file path {relative!r} must be relative to the home folder, without '..'")
    return home / rel


def seed_home(home: Path, files: dict[str, str]) -> None:
    """Write the seeded ``files`` (path -> content) under ``home``; a path ending in '/' is an empty folder."""
    for relative, content in files.items():
        path = home_path(home, relative.rstrip("/"))
        if relative.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


class DesktopSession:
    """One application on its own display and buses (a context manager); ``stop`` leaves no process or file behind."""

    def __init__(
        self, app: DesktopApp, files: dict[str, str] | None = None, open_files: list[str] | None = None, timeout: float = 20.0, window_manager: bool = True
    ) -> None:
        self.app, self.files, self.open_files, self.timeout, self.window_manager = app, dict(files or {}), list(open_files or []), timeout, window_manager
        self.folder: Path | None = None
        self.display: VirtualDisplay | None = None
        self.tree: A11yTree | None = None
        self.env: dict[str, str] = {}
        self.window = ""
        self._procs: list[subprocess.Popen[bytes]] = []

    @property
    def home(self) -> Path:
        """The episode's home folder."""
        if self.folder is None:
            raise EnvironmentUnavailable("the desktop session is not running")
        return self.folder / "home"

    def start(self) -> DesktopSession:
        """Seed the home folder, start display, bus, window manager and application; wait for its window."""
        dbus = _require("dbus-daemon")
        programs = [self.app.argv[0]] + (["openbox", "xprop"] if self.window_manager else [])
        for program in programs:
            if shutil.which(program) is None:
                raise EnvironmentUnavailable(f"the desktop session needs `{program}`; install it with `apt-get install {self.app.package} openbox x11-utils at-spi2-core gir1.2-atspi-2.0` (the Makefile's `system` target does)")
        self.folder = Path(tempfile.mkdtemp(prefix="taskloom-desktop-"))
        try:
            self._start(dbus)
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, dbus: str) -> None:
        assert self.folder is not None
        dirs = {name: self.folder / name for name in ("home", "config", "data", "cache", "runtime")}
        for path in dirs.values():
            path.mkdir(mode=0o700)
        if self.app.settings:
            (dirs["config"] / "glib-2.0" / "settings").mkdir(parents=True)
            (dirs["config"] / "glib-2.0" / "settings" / "keyfile").write_text(self.app.settings)
        seed_home(dirs["config"], self.app.config)
        seed_home(dirs["home"], self.files)
        bus = f"unix:path={dirs['runtime'] / 'bus'}"
        base = {
            **{k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TZ")},
            "HOME": str(dirs["home"]), "XDG_CONFIG_HOME": str(dirs["config"]), "XDG_DATA_HOME": str(dirs["data"]),
            "XDG_CACHE_HOME": str(dirs["cache"]), "XDG_RUNTIME_DIR": str(dirs["runtime"]),
        }
        with open(self.folder / "bus.log", "wb") as log:  # the services it starts (the accessibility bus) put their sockets in this runtime folder
            daemon = subprocess.Popen(
                [dbus, "--session", "--nofork", f"--address={bus}", "--print-address=1"], env=base, stdout=subprocess.PIPE, stderr=log, start_new_session=True
            )
        self._procs.append(daemon)
        self.display = VirtualDisplay(export=False, timeout=self.timeout).start()  # Xvfb starts while the bus does
        self._wait_bus(daemon)
        self.env = {**base, **self.display.env, "DBUS_SESSION_BUS_ADDRESS": bus, "GSETTINGS_BACKEND": "keyfile", "NO_AT_BRIDGE": "0", "GTK_A11Y": "atspi"}
        self.env.setdefault("LANG", "C.UTF-8")
        self.env.update(self.app.env)
        if self.window_manager:
            self._spawn(["openbox", "--sm-disable"], "openbox.log")
        self.tree = A11yTree(self.env, self.folder / "a11y.log", timeout=self.timeout)  # the reader starts while openbox does
        if self.window_manager:
            self._wait_window_manager()  # a window mapped before openbox manages it is moved after, under the clicks aimed at it
        self._spawn([*self.app.argv, *(str(home_path(dirs["home"], f)) for f in self.open_files)], f"{self.app.name}.log", cwd=dirs["home"])
        self.window = self.tree.wait_for_window(self.timeout)
        self.tree.settle()  # a folder still loading drops the selection a first click makes

    def _wait_window_manager(self) -> None:
        """Wait (bounded) until the window manager announces itself on the root window (``_NET_SUPPORTING_WM_CHECK``)."""
        deadline = time.monotonic() + self.timeout
        while True:
            probe = subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=self.env, capture_output=True, text=True, timeout=self.timeout)
            if "window id" in probe.stdout:
                return
            if time.monotonic() > deadline:
                raise EnvironmentUnavailable(f"the window manager did not start within {self.timeout:g}s")
            time.sleep(0.02)

    def _wait_bus(self, daemon: subprocess.Popen[bytes]) -> None:
        assert daemon.stdout is not None
        ready, _, _ = select.select([daemon.stdout], [], [], self.timeout)
        if not ready or not daemon.stdout.readline():
            raise EnvironmentUnavailable(f"the session bus did not start within {self.timeout:g}s")

    def _spawn(self, argv: list[str], log_name: str, cwd: Path | None = None) -> None:
        assert self.folder is not None
        with open(self.folder / log_name, "wb") as log:
            proc = subprocess.Popen(argv, env=self.env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        self._procs.append(proc)

    def stop(self) -> None:
        """Stop the reader, the programs (each with its process group), the bus, the display; remove the folder."""
        if self.tree is not None:
            self.tree.close()
            self.tree = None
        for proc in reversed(self._procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)  # the bus takes the accessibility bus it started with it
                except ProcessLookupError:
                    pass
            _terminate(proc)
            if proc.stdout is not None:
                proc.stdout.close()
        self._procs.clear()
        if self.display is not None:
            self.display.stop()
            self.display = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> DesktopSession:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
