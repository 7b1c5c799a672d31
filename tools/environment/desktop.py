"""An opt-in desktop environment: AgentSynth's pyautogui action space on a private Xvfb display.

Every action, failed or not, is recorded through a :class:`~.trajectory.Recorder`, like browser actions.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import logging
import os
import re
import secrets
import shutil
import string
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

import Xlib.display
import Xlib.error

from ..errors import InputError, NotFoundError, TaskloomError
from .canonical import canonical
from .trajectory import ActionRecord, CloseRecord, CriterionResult, EpisodeRecord, Recorder, Target

__all__ = ["EnvironmentUnavailable", "DesktopActionError", "VirtualDisplay", "DesktopEnv", "DesktopEpisodes", "DESKTOP_ACTIONS"]

T = TypeVar("T")

MAX_WAIT = 30.0
MAX_TEXT = 2000
MAX_SCROLL = 50
_KEY_EXAMPLES = "enter, tab, esc, backspace, delete, space, up, down, left, right, home, end, pageup, pagedown, ctrl, alt, shift, win, f1..f12"

DESKTOP_ACTIONS: dict[str, str] = {
    "click": "click(x, y, button='left'): click at screen position (x, y) with the left, right or middle button.",
    "double_click": "double_click(x, y): double-click at (x, y).",
    "write": "write(text): type text into the focused field (printable ASCII, newline, tab).",
    "press": "press(key): press one key, e.g. 'enter', 'tab', 'esc', 'backspace', 'down', 'f5', 'a'.",
    "hotkey": "hotkey(keys): press keys together, e.g. ['ctrl', 'c'].",
    "scroll": "scroll(amount, x=None, y=None): scroll up (positive) or down (negative) by mouse-wheel clicks, at (x, y) if given.",
    "move": "move(x, y): move the mouse to (x, y) without clicking.",
    "drag": "drag(x, y, to_x, to_y, button='left'): press at (x, y), drag to (to_x, to_y), release.",
    "wait": f"wait(seconds=5): do nothing for up to {MAX_WAIT:g} seconds while the screen changes.",
    "screenshot": "screenshot(): a PNG of the whole screen.",
}

log = logging.getLogger(__name__)
_INPUT_LOCK = threading.Lock()  # pyautogui drives one module-global X connection; actions take turns
_ENV_LOCK = threading.Lock()  # python-xlib reads XAUTHORITY from os.environ: displays started or read in other threads take turns
_X_ERRORS = (Xlib.error.DisplayError, Xlib.error.ConnectionClosedError, Xlib.error.XError, Xlib.error.XauthError, OSError)


class EnvironmentUnavailable(TaskloomError):
    """The desktop environment cannot run here (no Xvfb, the display died, …)."""


class DesktopActionError(InputError):
    """A desktop action was refused; it has been recorded as ``record``."""

    def __init__(self, message: str, record: ActionRecord) -> None:
        super().__init__(message)
        self.record = record


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _match_shift_levels(conn: Xlib.display.Display, mapping: dict[str, Any], shifted: Callable[[str], bool]) -> None:
    """Point each printable character at a key that gives it with the Shift state pyautogui will use.

    pyautogui presses Shift for ``<`` but maps it to the first key carrying ``less``: on the
    default keymap that is the 102nd key, where Shift gives ``>``. So ``<`` typed ``>``.
    """
    for char in string.punctuation:
        level = 1 if shifted(char) else 0  # printable ASCII: the keysym is the code point
        code = next((c for c, index in conn.keysym_to_keycodes(ord(char)) if index == level), None)
        if code is not None:
            mapping[char] = code


def _key_name(key: Any) -> str:
    """pyautogui's spelling: names lower-cased, single characters kept as typed."""
    return key.lower() if isinstance(key, str) and len(key) > 1 else str(key)


def _require(binary: str) -> str:
    path = shutil.which(binary)
    if path is None:
        raise EnvironmentUnavailable(f"the desktop environment needs `{binary}`, which is not on PATH; install it with `apt-get install xvfb xauth` (the Makefile's `system` target does)")
    return path


@contextlib.contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables for the duration, then restore them."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class VirtualDisplay:
    """A private, cookie-protected ``Xvfb`` (a context manager); while active, DISPLAY, XAUTHORITY and XDG_SESSION_TYPE point at it."""

    def __init__(self, width: int = 1280, height: int = 800, depth: int = 24, timeout: float = 10.0, first: int = 99, export: bool = True) -> None:
        self.width, self.height, self.depth, self.timeout, self.first = width, height, depth, timeout, first
        self.export = export  # False: leave DISPLAY and XAUTHORITY alone (use .env for the programs you start)
        self.number: int | None = None
        self.env: dict[str, str] = {}
        self._stack = contextlib.ExitStack()

    @property
    def name(self) -> str:
        """The display name, e.g. ``':99'``."""
        if self.number is None:
            raise EnvironmentUnavailable("the virtual display is not running")
        return f":{self.number}"

    def start(self) -> VirtualDisplay:
        """Start Xvfb on a free display number and wait (bounded) until it accepts connections."""
        xvfb, xauth = _require("Xvfb"), _require("xauth")
        folder = Path(tempfile.mkdtemp(prefix="taskloom-x11-"))
        self._stack.callback(shutil.rmtree, folder, ignore_errors=True)
        auth, log_path = folder / "Xauthority", folder / "xvfb.log"
        n = self.first
        with contextlib.ExitStack() as failing:
            failing.push(self._stack)  # close everything unless we return a running display
            for _ in range(50):
                while Path(f"/tmp/.X11-unix/X{n}").exists() or Path(f"/tmp/.X{n}-lock").exists():
                    n += 1
                auth.unlink(missing_ok=True)
                subprocess.run([xauth, "-q", "-f", str(auth), "add", f":{n}", ".", secrets.token_hex(16)], check=True, capture_output=True)
                cmd = [xvfb, f":{n}", "-screen", "0", f"{self.width}x{self.height}x{self.depth}", "-nolisten", "tcp", "-noreset", "-auth", str(auth)]
                with open(log_path, "wb") as log:
                    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
                self._stack.callback(_terminate, proc)
                if self._wait_ready(proc, f":{n}", auth):
                    self.number = n
                    self.env = {"DISPLAY": f":{n}", "XAUTHORITY": str(auth), "XDG_SESSION_TYPE": "x11"}
                    if self.export:
                        self._stack.enter_context(_environ(self.env))
                    failing.pop_all()
                    return self
                _terminate(proc)
                output = log_path.read_text(errors="replace")
                if "already active" not in output and "Cannot establish any listening sockets" not in output:
                    raise EnvironmentUnavailable(f"Xvfb :{n} did not start within {self.timeout:g}s: {output.strip()[-500:]}")
                n += 1  # lost a race for this number
            raise EnvironmentUnavailable(f"no free X display number from :{self.first} to :{n}")

    def _wait_ready(self, proc: subprocess.Popen[bytes], name: str, auth: Path) -> bool:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with _ENV_LOCK, _environ({"XAUTHORITY": str(auth)}):  # python-xlib reads the cookie from here
                    Xlib.display.Display(name).close()
                return True
            except _X_ERRORS:
                time.sleep(0.05)
        return False

    def spawn(self, args: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        """Start a program on this display; it is terminated when the display stops."""
        env = {**os.environ, **kwargs.pop("env", {}), **self.env}
        proc: subprocess.Popen[bytes] = subprocess.Popen(list(args), env=env, **kwargs)
        self._stack.callback(_terminate, proc)
        return proc

    def stop(self) -> None:
        """Terminate spawned programs and Xvfb, restore the environment variables, remove the cookie."""
        self._stack.close()
        self.number, self.env = None, {}

    def __enter__(self) -> VirtualDisplay:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


class DesktopEnv:
    """AgentSynth's action space on one X display; a refused action is recorded, then raises :class:`DesktopActionError`."""

    def __init__(self, recorder: Recorder, display: str | None = None, screenshot_after: bool = False, xauthority: str | None = None) -> None:
        name = display or os.environ.get("DISPLAY")
        if not name:
            raise EnvironmentUnavailable("no X display: start a VirtualDisplay first")
        self.recorder, self.display, self.screenshot_after = recorder, name, screenshot_after
        self._xenv = {"DISPLAY": name, **({"XAUTHORITY": xauthority} if xauthority else {})}  # a display that did not export its cookie
        with _INPUT_LOCK, _ENV_LOCK, _environ(self._xenv):
            try:
                import pyautogui  # its import connects to $DISPLAY
                from pyautogui import _pyautogui_x11 as x11
                self._conn = Xlib.display.Display(name)
            except _X_ERRORS as exc:
                raise EnvironmentUnavailable(f"cannot connect to X display {name}: {exc}") from exc
        pyautogui.FAILSAFE, pyautogui.PAUSE = False, 0
        _match_shift_levels(self._conn, x11.keyboardMapping, pyautogui.isShiftCharacter)
        self._gui, self._x11 = pyautogui, x11
        screen = self._conn.screen()
        self.width, self.height = int(screen.width_in_pixels), int(screen.height_in_pixels)
        self._keys = frozenset(k for k, code in x11.keyboardMapping.items() if code)

    def final_checks(self) -> list[CriterionResult] | None:
        """The final-state verdicts to record at close: none on a bare display (see AppDesktopEnv)."""
        return None

    def close(self) -> None:
        """Close this env's X connection."""
        with contextlib.suppress(*_X_ERRORS):
            self._conn.close()

    def _point(self, x: Any, y: Any, what: str = "") -> tuple[int, int]:
        for label, value, size in (("x", x, self.width), ("y", y, self.height)):
            if not _is_number(value) or not 0 <= value < size:
                raise InputError(f"{what}{label}={value!r} is off the screen: x must be in 0..{self.width - 1}, y in 0..{self.height - 1}")
        return round(x), round(y)

    @staticmethod
    def _button(button: Any) -> str:
        if button not in ("left", "right", "middle"):
            raise InputError(f"button={button!r} is not one of left, right, middle")
        return str(button)

    def _key(self, key: Any) -> str:
        if not isinstance(key, str) or not key:
            raise InputError(f"key={key!r} must be a non-empty key name")
        name = _key_name(key)
        if name not in self._keys:
            close = difflib.get_close_matches(name, sorted(self._keys), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise InputError(f"unknown key {key!r}: use a pyautogui key name such as {_KEY_EXAMPLES}, or one printable character{hint}")
        return name

    def _text(self, text: Any, interval: Any) -> str:
        if not isinstance(text, str) or not 0 < len(text) <= MAX_TEXT:
            raise InputError(f"text must be 1..{MAX_TEXT} characters")
        bad = sorted({c for c in text if c not in self._keys})
        if bad:
            raise InputError(f"cannot type {''.join(bad)!r}: write types printable ASCII, newline and tab only")
        if not _is_number(interval) or not 0 <= interval <= 1:
            raise InputError(f"interval={interval!r} must be 0..1 seconds between keys")
        return text

    def _do(
        self, name: str, args: dict[str, Any], act: Callable[[], T], canon: dict[str, Any] | None = None, locked: bool = True,
        target: Target | None = None, form: str | None = None, look: bool = False,
    ) -> tuple[T, ActionRecord]:
        """Run ``act`` (validate, then act) and record it; a screenshot() keeps its image, others get one if asked.

        ``target`` and ``form`` override the target (default: the x, y in ``args``) and the canonical form;
        ``look`` (a snapshot) takes no screenshot after.
        """
        self.recorder.check_limit()
        x, y = args.get("x"), args.get("y")
        if target is None:
            target = Target(x=x, y=y) if _is_number(x) and _is_number(y) else None
        form = form or canonical(name, **(args if canon is None else canon))
        fields: dict[str, Any] = {"name": name, "args": args, "canonical": form, "target": target, "t_start": time.time()}
        try:
            with _INPUT_LOCK if locked else contextlib.nullcontext():
                if locked:
                    self._x11._display = self._conn  # pyautogui acts on this env's display
                result = act()
            png = result if isinstance(result, bytes) else self._grab() if self.screenshot_after and not look else None
        except InputError as exc:
            record = self.recorder.action(**fields, t_end=time.time(), error=str(exc))
            raise DesktopActionError(str(exc), record) from exc
        except _X_ERRORS as exc:
            message = f"the X display {self.display} failed: {exc}"
            self.recorder.action(**fields, t_end=time.time(), error=message)
            raise EnvironmentUnavailable(message) from exc
        if png is not None:
            path, fields["screenshot"] = self.recorder.screenshot_path(name)
            path.write_bytes(png)
        return result, self.recorder.action(**fields, t_end=time.time())

    def click(self, x: int, y: int, button: str = "left") -> ActionRecord:
        """Click at (x, y) with ``button`` (left, right or middle)."""
        return self._do("click", {"x": x, "y": y, "button": button}, lambda: self._gui.click(*self._point(x, y), button=self._button(button)))[1]

    def double_click(self, x: int, y: int) -> ActionRecord:
        """Double-click with the left button at (x, y)."""
        return self._do("double_click", {"x": x, "y": y}, lambda: self._gui.doubleClick(*self._point(x, y), interval=0.05))[1]

    def move(self, x: int, y: int) -> ActionRecord:
        """Move the mouse to (x, y)."""
        return self._do("move", {"x": x, "y": y}, lambda: self._gui.moveTo(*self._point(x, y)))[1]

    def drag(self, x: int, y: int, to_x: int, to_y: int, button: str = "left") -> ActionRecord:
        """Press ``button`` at (x, y), move to (to_x, to_y) and release."""

        def act() -> None:
            start, end, held = self._point(x, y), self._point(to_x, to_y, "to_"), self._button(button)
            self._gui.moveTo(*start)
            self._gui.dragTo(*end, duration=0.2, button=held)

        return self._do("drag", {"x": x, "y": y, "to_x": to_x, "to_y": to_y, "button": button}, act)[1]

    def scroll(self, amount: int, x: int | None = None, y: int | None = None) -> ActionRecord:
        """Scroll by ``amount`` wheel clicks (positive up, negative down), at (x, y) if given."""

        def act() -> None:
            if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < abs(amount) <= MAX_SCROLL:
                raise InputError(f"amount={amount!r} must be a whole number of wheel clicks, 1..{MAX_SCROLL} up or -1..-{MAX_SCROLL} down")
            if (x is None) != (y is None):
                raise InputError("give both x and y, or neither (scroll where the mouse is)")
            self._gui.scroll(amount, *(self._point(x, y) if x is not None else (None, None)))

        return self._do("scroll", {"amount": amount, "x": x, "y": y}, act)[1]

    def write(self, text: str, interval: float = 0) -> ActionRecord:
        """Type ``text`` into whatever has the keyboard focus."""
        return self._do("write", {"text": text, "interval": interval}, lambda: self._gui.write(self._text(text, interval), interval=interval), canon={"text": text})[1]

    def press(self, key: str) -> ActionRecord:
        """Press and release one key."""
        return self._do("press", {"key": key}, lambda: self._gui.press(self._key(key)), canon={"key": _key_name(key)})[1]

    def hotkey(self, *keys: str) -> ActionRecord:
        """Press ``keys`` down in order, then release them in reverse (e.g. ctrl, c)."""

        def act() -> None:
            if not 1 <= len(keys) <= 5:
                raise InputError(f"hotkey takes 1..5 keys, got {len(keys)}")
            self._gui.hotkey(*[self._key(k) for k in keys])

        return self._do("hotkey", {"keys": list(keys)}, act, canon={"keys": "+".join(map(_key_name, keys))})[1]

    def wait(self, seconds: float = 5) -> ActionRecord:
        """Do nothing for ``seconds`` (0..30) while the screen changes."""

        def act() -> None:
            if not _is_number(seconds) or not 0 <= seconds <= MAX_WAIT:
                raise InputError(f"seconds={seconds!r} must be 0..{MAX_WAIT:g}")
            time.sleep(seconds)

        return self._do("wait", {"seconds": seconds}, act, locked=False)[1]

    def screenshot(self, record: bool = True) -> bytes:
        """PNG bytes of the whole screen; when ``record``, saved and recorded as a ``screenshot()`` step."""
        return self._do("screenshot", {}, self._grab)[0] if record else self._grab()

    def final_screenshot(self) -> str | None:
        """Save a PNG of the last state before closing; its path in the episode folder (None if the display no longer answers)."""
        try:
            png = self._grab()
        except (*_X_ERRORS, OSError) as exc:
            log.warning("no final screenshot of %s: %s", self.display, exc)
            return None
        path, relative = self.recorder.screenshot_path("final")
        path.write_bytes(png)
        return relative

    def _grab(self) -> bytes:
        from PIL import ImageGrab
        buffer = io.BytesIO()
        with _ENV_LOCK, _environ(self._xenv):  # the cookie, for a display that did not export it
            image = ImageGrab.grab(xdisplay=self.display)
        image.save(buffer, format="PNG")
        return buffer.getvalue()


class DesktopEpisodes:
    """Running desktop episodes by id, all on one shared :class:`VirtualDisplay`; each records into ``root/<episode_id>``.

    Without ``display`` the manager starts its own with the first episode and stops it after the last
    one closes. Episodes share one mouse and keyboard: run them one at a time for clean trajectories.
    """

    def __init__(self, root: Path | None = None, screenshot_after: bool = True, display: VirtualDisplay | None = None, final_screenshot: bool = False) -> None:
        self.root, self.screenshot_after, self.display, self._owned = root, screenshot_after, display, display is None
        self.final_screenshot = final_screenshot  # a PNG of the last state in every close record (the harness's runs)
        self._envs: dict[str, DesktopEnv] = {}
        self._lock = threading.Lock()

    def start(
        self, episode_id: str, folder: Path | None = None, *, task_id: str | None = None, agent: str | None = None, model: str | None = None,
        app: str | None = None, files: dict[str, str] | None = None, open_files: list[str] | None = None,
    ) -> DesktopEnv:
        """Open an episode recording into ``folder`` (default ``root/<episode_id>``)/trajectory.jsonl.

        With ``app`` (a name in :data:`.desktop_session.APPS`) the episode runs that application in its own
        session (display, buses, window manager, a fresh home seeded with ``files``, opening ``open_files``)
        and offers snapshots and actions by ref; without, it shares the manager's bare display.
        """
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", episode_id):
            raise InputError(f"episode_id={episode_id!r}: use 1..100 letters, digits, '.', '_' or '-', starting with a letter or digit")
        folder = Path(folder) if folder is not None else self.root / episode_id if self.root is not None else None
        if folder is None:
            raise InputError("give the episode a folder: this manager has no root")
        with self._lock:
            if episode_id in self._envs:
                raise InputError(f"desktop episode {episode_id!r} is already running")
            episode = EpisodeRecord(episode_id=episode_id, env="desktop", task_id=task_id, agent=agent, model=model)
            if app is not None:
                env: DesktopEnv = self._start_app(Recorder(folder, episode), app, files, open_files)
            else:
                if self.display is None:
                    self.display = VirtualDisplay().start()
                env = DesktopEnv(Recorder(folder, episode), display=self.display.name, screenshot_after=self.screenshot_after)
            self._envs[episode_id] = env
            return env

    def _start_app(self, recorder: Recorder, app: str, files: dict[str, str] | None, open_files: list[str] | None) -> DesktopEnv:
        from .desktop_refs import AppDesktopEnv  # they build on this module
        from .desktop_session import APPS, DesktopSession

        if app not in APPS:
            raise InputError(f"unknown desktop application {app!r}: one of {', '.join(sorted(APPS))}")
        session = DesktopSession(APPS[app], files, open_files).start()
        try:
            return AppDesktopEnv(recorder, session, screenshot_after=self.screenshot_after)
        except BaseException:
            session.stop()
            raise

    def get(self, episode_id: str) -> DesktopEnv:
        """The running episode ``episode_id``."""
        env = self._envs.get(episode_id)
        if env is None:
            raise NotFoundError(f"no running desktop episode {episode_id!r} (running: {', '.join(sorted(self._envs)) or 'none'})")
        return env

    def close(
        self, episode_id: str, status: Literal["closed", "timeout", "error"] = "closed", reason: str | None = None, checks: list[CriterionResult] | None = None
    ) -> CloseRecord:
        """Write the episode's close record (with ``checks``, made before, when given); stop the display after the last episode."""
        with self._lock:
            env = self.get(episode_id)
            del self._envs[episode_id]
            if checks is None:
                checks = env.final_checks()  # before close: closing removes an application's home folder
            shot = env.final_screenshot() if self.final_screenshot else None
            env.close()
            record = env.recorder.close(status, reason, checks, screenshot=shot)
            if not self._envs:
                self._stop_display()
            return record

    def close_all(self, reason: str = "server shutting down") -> None:
        """Close every running episode (status ``error``) and stop the display."""
        for episode_id in list(self._envs):
            self.close(episode_id, "error", reason)
        self._stop_display()  # also when started but its first episode failed to open

    def _stop_display(self) -> None:
        if self._owned and self.display is not None:
            self.display.stop()
            self.display = None
