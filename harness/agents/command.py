"""``command``: any MCP-capable agent, run as a subprocess against a Taskloom server bound to the episode.

For each attempt the harness writes an MCP client config in the shape Claude Desktop,
Claude Code and Cursor read — ``{"mcpServers": {"taskloom": {"command", "args", "env"}}}``
— whose one server is ``taskloom serve --profile agent`` bound to the job
(:meth:`Job.serve_command`), and starts the agent's command line:

* ``cmd`` is a template split with :func:`shlex.split` (never a shell); each word may
  hold the placeholders ``{instruction}``, ``{config}`` (the config file's path),
  ``{task_id}`` and ``{python}`` (this interpreter); ``{{``/``}}`` are literal braces;
* ``input`` hands the instruction over: ``arg`` (default; the ``{instruction}`` word,
  or appended as the last argument when the template has none), ``env``
  (``TASKLOOM_INSTRUCTION``) or ``stdin`` (written, then stdin is closed). The config
  path is always in ``TASKLOOM_MCP_CONFIG`` and the task id in ``TASKLOOM_TASK_ID``;
* ``timeout`` (seconds; default ``job.timeout_s``) is enforced here too.

The agent runs in a session of its own with the harness's environment minus every
``TASKLOOM_*`` variable (it reaches the workspace only through the server). Its stdout
and stderr go to ``agent.stdout.log`` / ``agent.stderr.log`` in the episode folder.
What it did is what the bound server recorded there; nothing is read from the agent.

Stopping (at the time limit, or when the runner cancels the attempt): the processes
the agent started are listed first (``/proc``), then its process group gets SIGTERM
and, after :data:`GRACE_S`, SIGKILL. Processes it started in sessions of their own —
as MCP clients start their servers — get ``stray_grace_s`` to exit by themselves (a
stdio server ends, and closes its episode, when its client's pipe closes), then the
same SIGTERM/SIGKILL. The time limit raises :class:`AgentTimeout` (a ``TimeoutError``);
a non-zero exit raises :class:`AgentProcessError` with the code and stderr's last lines.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import string
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from fastmcp import Client

from ...tools.errors import InputError, TaskloomError
from .base import Job

__all__ = ["CommandAgent", "AgentTimeout", "AgentProcessError", "mcp_config", "log_tail", "PLACEHOLDERS", "INPUT_MODES", "GRACE_S"]

PLACEHOLDERS = ("instruction", "config", "task_id", "python")
INPUT_MODES = ("arg", "env", "stdin")
GRACE_S = 2.0  # SIGTERM → SIGKILL
_PASS_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV", "PLAYWRIGHT_BROWSERS_PATH", "DISPLAY", "XDG_RUNTIME_DIR")


class AgentTimeout(TimeoutError):
    """The agent's command did not finish within its time limit and was killed."""


class AgentProcessError(TaskloomError):
    """The agent's command exited with a non-zero code."""


def mcp_config(job: Job, server: str = "taskloom") -> dict[str, Any]:
    """The MCP client config for the job's bound server.

    ``env`` holds the server's ``TASKLOOM_*``/``FASTMCP_*`` settings (never LLM
    credentials) and the few variables a server needs to find Python and Chromium,
    because clients start servers with a minimal environment plus this ``env``.
    """
    command = job.serve_command()
    served = job.serve_env()
    env = {k: v for k, v in served.items() if k.startswith(("TASKLOOM_", "FASTMCP_"))}
    env.update({k: served[k] for k in _PASS_ENV if k in served})
    return {"mcpServers": {server: {"command": command[0], "args": command[1:], "env": dict(sorted(env.items()))}}}


def _template(cmd: str, name: str) -> list[str]:
    """The command template's words, with every placeholder checked."""
    try:
        words = shlex.split(cmd)
    except ValueError as exc:
        raise InputError(f"agent {name}: cmd {cmd!r} cannot be split into words ({exc}); check its quotes") from None
    if not words:
        raise InputError(f"agent {name}: cmd is empty; give the agent's command line, e.g. cmd='{{python}} my_agent.py'")
    for word in words:
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(word) if f is not None]
        except ValueError as exc:
            raise InputError(f"agent {name}: cmd word {word!r} is not a valid template ({exc}); write literal braces as {{{{ and }}}}") from None
        unknown = sorted({f for f in fields if f not in PLACEHOLDERS})
        if unknown:
            raise InputError(f"agent {name}: cmd uses unknown placeholder(s) {unknown}; use {', '.join('{' + p + '}' for p in PLACEHOLDERS)}")
    return words


def _starttime(pid: int) -> str | None:
    """Field 22 of ``/proc/PID/stat`` (start time), None when the process is gone or a zombie."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return None if fields[0] in ("Z", "X") else fields[19]


def _descendants(root: int) -> dict[int, str]:
    """Live descendants of ``root`` as {pid: start time}, from ``/proc`` (empty where there is none)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            text = (entry / "stat").read_text()
            ppid = int(text[text.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found: dict[int, str] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        start = _starttime(pid)
        if start is not None and pid not in found:
            found[pid] = start
            todo.extend(children.get(pid, []))
    return found


def _signal(pid: int, sig: signal.Signals, group: bool = False) -> None:
    try:
        os.killpg(pid, sig) if group else os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def _stop_strays(strays: dict[int, str], grace: float) -> None:
    """Let the listed processes exit by themselves within ``grace`` s, then SIGTERM, then SIGKILL (same start time only)."""

    def alive() -> list[int]:
        return sorted(pid for pid, start in strays.items() if _starttime(pid) == start)

    for sig, wait in ((None, grace), (signal.SIGTERM, GRACE_S), (signal.SIGKILL, GRACE_S)):
        left = alive()
        if not left:
            return
        if sig is not None:
            for pid in left:
                _signal(pid, sig)
        with anyio.move_on_after(wait):
            while alive():
                await anyio.sleep(0.05)


async def _wait_watching(process: Process, family: dict[int, str], every: float = 1.0) -> None:
    """Wait for ``process`` to exit, adding its descendants to ``family`` every ``every`` seconds meanwhile."""
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while True:
                family.update(_descendants(process.pid))
                await anyio.sleep(every)

        group.start_soon(watch)
        await process.wait()
        group.cancel_scope.cancel()


def log_tail(path: Path, lines: int = 5, width: int = 300) -> str:
    """The last non-empty ``lines`` of a log file, each cut to ``width``, joined by `` | `` (empty if unreadable)."""
    try:
        with path.open("rb") as handle:
            handle.seek(max(path.stat().st_size - 8192, 0))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    kept = [line.strip()[:width] for line in text.splitlines() if line.strip()][-lines:]
    return " | ".join(kept)


class CommandAgent:
    """An external agent process (see the module notes); options ``cmd``, ``input``, ``timeout``."""

    in_process = False
    stray_grace_s = 10.0  # how long processes in their own sessions get to exit by themselves

    def __init__(self, name: str, options: Mapping[str, str]) -> None:
        self.name = name
        self.model: str | None = None
        self.tokens = 0
        cmd = options.get("cmd", "")
        self.template = _template(cmd, name)
        self.input = options.get("input", "arg")
        if self.input not in INPUT_MODES:
            raise InputError(f"agent {name}: input={self.input!r} is not a mode; use arg, env or stdin")
        self.timeout: float | None = None
        if options.get("timeout"):
            try:
                self.timeout = float(options["timeout"])
            except ValueError:
                raise InputError(f"agent {name}: timeout={options['timeout']!r} is not a number of seconds") from None
            if self.timeout <= 0:
                raise InputError(f"agent {name}: timeout must be positive, not {self.timeout:g}")

    def argv(self, job: Job, config: Path) -> list[str]:
        """The command line for one job (placeholders filled word by word; nothing goes through a shell)."""
        values = {"instruction": job.task.instruction, "config": str(config), "task_id": job.task.id, "python": sys.executable}
        words = [word.format_map(values) for word in self.template]
        uses_instruction = any(f == "instruction" for word in self.template for _, f, _, _ in string.Formatter().parse(word))
        if self.input == "arg" and not uses_instruction:
            words.append(job.task.instruction)
        return words

    def environment(self, job: Job, config: Path) -> dict[str, str]:
        """The agent's environment: the harness's, without ``TASKLOOM_*``, plus the config path, the task id and (env mode) the instruction."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
        env.update(TASKLOOM_MCP_CONFIG=str(config), TASKLOOM_TASK_ID=job.task.id)
        if self.input == "env":
            env["TASKLOOM_INSTRUCTION"] = job.task.instruction
        return env

    async def attempt(self, job: Job, client: Client[Any] | None) -> None:
        limit = self.timeout or job.timeout_s
        job.episodes_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="taskloom-agent-") as folder:
            config = Path(folder) / "mcp.json"
            config.write_text(json.dumps(mcp_config(job), indent=2), encoding="utf-8")
            stderr_path = job.episodes_dir / "agent.stderr.log"
            with (job.episodes_dir / "agent.stdout.log").open("wb") as out, stderr_path.open("wb") as err:
                process = await anyio.open_process(
                    self.argv(job, config),
                    stdin=subprocess.PIPE if self.input == "stdin" else subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    env=self.environment(job, config),
                    start_new_session=True,
                )
                family: dict[int, str] = {}  # every process the agent started, seen while it ran
                try:
                    with anyio.move_on_after(limit) as scope:
                        if process.stdin is not None:
                            try:
                                await process.stdin.send(job.task.instruction.encode("utf-8"))
                            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                                pass  # the agent exited or closed stdin without reading it: its exit code tells
                            await process.stdin.aclose()
                        await _wait_watching(process, family)
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._stop(process, family)
        if scope.cancelled_caught:
            raise AgentTimeout(f"command agent {self.name!r} did not finish within {limit:g} s; it was killed")
        if process.returncode:
            tail = log_tail(stderr_path)
            raise AgentProcessError(f"command agent {self.name!r} exited with code {process.returncode}; stderr ends: {tail or '(empty)'}")

    async def _stop(self, process: Process, family: dict[int, str]) -> None:
        """End the agent's process group and whatever it started (see the module notes).

        The group is signalled only while its leader is unreaped, so its id cannot
        have been reused; leftovers are signalled one by one, by pid and start time.
        """
        if process.returncode is None:
            family.update(_descendants(process.pid))
            _signal(process.pid, signal.SIGTERM, group=True)
            with anyio.move_on_after(GRACE_S):
                await process.wait()
            if process.returncode is None:
                _signal(process.pid, signal.SIGKILL, group=True)
                await process.wait()
        await _stop_strays(family, self.stray_grace_s)
