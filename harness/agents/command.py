"""``command``: any MCP-capable agent, run as a subprocess in a sandbox, against a server the harness serves.

For each attempt the harness serves the episode's agent-profile server itself, over
streamable HTTP on ``127.0.0.1`` with a fresh bearer token (:func:`serve_episode`), and
hands the agent an MCP client config in the shape Claude Desktop, Claude Code and
Cursor read — ``{"mcpServers": {"taskloom": {"type": "http", "url": …, "headers":
{"Authorization": "Bearer …"}}}}``. With ``transport=stdio`` the one entry is instead a
stdio command, ``python -m taskloom.server.cli bridge URL`` with the token in
``TASKLOOM_BRIDGE_TOKEN``, for clients that only start stdio servers. Neither holds a
path: the agent never learns where the workspace (and so the gold) is, and could not
read it anyway (see :mod:`taskloom.tools.security.sandbox`).

* ``cmd`` is a template split with :func:`shlex.split` (never a shell); each word may
  hold the placeholders ``{instruction}``, ``{config}`` (the config file's path),
  ``{task_id}`` and ``{python}`` (``python=`` or this interpreter); ``{{``/``}}`` are
  literal braces;
* ``input`` hands the instruction over: ``arg`` (default; the ``{instruction}`` word,
  or appended as the last argument when the template has none), ``env``
  (``TASKLOOM_INSTRUCTION``) or ``stdin`` (written, then stdin is closed). The config
  path is always in ``TASKLOOM_MCP_CONFIG`` and the task id in ``TASKLOOM_TASK_ID``;
* ``transport``: ``http`` (default) or ``stdio`` (the bridge), as above;
* ``python``: the interpreter for ``{python}`` and the bridge (default: this one); under
  the ``user`` sandbox it must be one any user may run (bubblewrap mounts it, with its
  ``sys.path``, read-only);
* ``timeout`` (seconds; default ``job.timeout_s``) is enforced here too;
* ``answer``: how the agent gives its final answer. ``env`` (default): it calls
  ``env_answer``. ``last-message``: as a Playwright-MCP agent ends, with its last message:
  when it gave no answer through the tool, the last paragraph of its stdout is recorded
  as the answer (marked ``source: last_message``). ``tool``: the instruction handed over
  ends with a sentence naming the ``env_answer`` tool, for agents that follow it.

A Playwright-MCP agent needs no ``env_*`` call: the served server is bound to the task, so
its first ``browser_*`` call opens the episode on the task's start page, and
``browser_close`` (or the end of the attempt) closes it.

The agent runs in a session of its own, sandboxed (``Settings.agent_sandbox``); as root,
as a throw-away uid of its own for this episode alone (so no agent reads another's home,
token or processes). Its HOME and working directory are a fresh 0700 directory outside
the workspace, holding its 0600 MCP config; its environment is the harness's minus
every ``TASKLOOM_*`` variable, ``PWD``/``OLDPWD`` and any variable whose value names the
workspace. It gets ``PR_SET_PDEATHSIG(SIGKILL)``, so a
killed harness takes it along. Its stdout and stderr go to ``agent.stdout.log`` /
``agent.stderr.log`` in the episode folder. What it did is what the served server
recorded there; nothing is read from the agent.

Stopping (at the time limit, or when the runner cancels the attempt): the processes
the agent started are listed first (``/proc``), then its process group gets SIGTERM
and, after :data:`GRACE_S`, SIGKILL. Processes it started in sessions of their own —
as MCP clients start stdio servers — get ``stray_grace_s`` to exit by themselves, then
the same SIGTERM/SIGKILL. Then the server stops, which closes the episode. The time
limit raises :class:`AgentTimeout` (a ``TimeoutError``); a non-zero exit raises
:class:`AgentProcessError` with the code and stderr's last lines.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import string
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import anyio
from fastmcp import Client

from ...tools.environment.trajectory import AnswerRecord, load_trajectory
from ...tools.errors import InputError, TaskloomError
from ...tools.settings import Settings
from ...tools.workspace import append_jsonl
from ...tools.security.accounts import AgentAccount, allocate_account, make_agent_home, release_account
from ...tools.security.mounts import code_paths
from ...tools.security.sandbox import AgentLaunch, SandboxKind, agent_launch, check_closed_to, choose_sandbox, die_with_parent, pidns_problem
from .base import Job
from .endpoint import Endpoint
from .registry import agent

__all__ = ["ANSWER_MODES", "CommandAgent", "AgentTimeout", "last_message", "record_last_message", "AgentProcessError", "mcp_config", "agent_environment", "check_sandbox", "log_tail", "PLACEHOLDERS", "INPUT_MODES", "TRANSPORTS", "GRACE_S"]

PLACEHOLDERS = ("instruction", "config", "task_id", "python")
INPUT_MODES = ("arg", "env", "stdin")
ANSWER_MODES = ("env", "last-message", "tool")
#: What ``answer=tool`` adds to the instruction the agent receives.
ANSWER_TOOL_NOTE = "When you have the final answer, call the env_answer tool with it."
#: Longest answer taken from an agent's last message (characters).
MAX_LAST_MESSAGE = 2_000
TRANSPORTS = ("http", "stdio")
GRACE_S = 2.0  # SIGTERM → SIGKILL
_DROP_ENV = ("PWD", "OLDPWD", "XDG_RUNTIME_DIR", "MAIL")  # the harness's places, not the agent's


class AgentTimeout(TimeoutError):
    """The agent's command did not finish within its time limit and was killed."""


class AgentProcessError(TaskloomError):
    """The agent's command exited with a non-zero code."""


def mcp_config(endpoint: Endpoint, transport: str = "http", python: str = sys.executable, server: str = "taskloom") -> dict[str, Any]:
    """The MCP client config for the episode's server: an ``http`` entry, or (``stdio``) the bridge command.

    Neither holds a path to the workspace: only the loopback URL and the episode's token.
    """
    token = endpoint.token.get_secret_value()
    if transport == "stdio":
        entry: dict[str, Any] = {
            "type": "stdio",
            "command": python,
            "args": ["-m", "taskloom.server.cli", "bridge", endpoint.url],
            "env": {"TASKLOOM_BRIDGE_TOKEN": token},
        }
    else:
        entry = {"type": "http", "url": endpoint.url, "headers": endpoint.headers()}
    return {"mcpServers": {server: entry}}


def agent_environment(base: Mapping[str, str], workspace: Path) -> dict[str, str]:
    """``base`` without ``TASKLOOM_*``, the harness's own places and any variable whose value names the workspace."""
    places = {str(workspace), str(workspace.resolve())}
    return {
        k: v
        for k, v in base.items()
        if not k.startswith("TASKLOOM_") and k not in _DROP_ENV and not any(place in v for place in places)
    }


def check_sandbox(settings: Settings) -> SandboxKind:
    """The sandbox command agents will run in; InputError (saying what to do) when none can work here."""
    return choose_sandbox(settings.agent_sandbox)


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


def last_message(stdout: str) -> str | None:
    """An agent's last message: the last paragraph (lines up to a blank line) of its stdout, cut to :data:`MAX_LAST_MESSAGE`; None when empty."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", stdout.replace("\r\n", "\n")) if p.strip()]
    return paragraphs[-1][-MAX_LAST_MESSAGE:] if paragraphs else None


def record_last_message(episodes_dir: Path, stdout_path: Path) -> str | None:
    """Record the agent's last message as the answer of the episode it left in ``episodes_dir``, unless it gave one; the answer recorded, if any."""
    files = sorted(episodes_dir.glob("*/trajectory.jsonl"), key=lambda p: (p.stat().st_mtime, str(p)))
    if not files or load_trajectory(files[-1]).answer is not None:
        return None
    try:
        text = stdout_path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None
    answer = last_message(text)
    if answer is not None:
        append_jsonl(files[-1], AnswerRecord(answer=answer, source="last_message").model_dump(mode="json"))
    return answer


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


async def _wait(process: subprocess.Popen[bytes], limit: float | None = None, family: dict[int, str] | None = None, every: float = 1.0) -> bool:
    """Wait (polling) for ``process`` to exit, at most ``limit`` s; add its descendants to ``family`` every ``every`` s. True when it exited."""
    seen = -every
    with anyio.move_on_after(limit):
        while process.poll() is None:
            now = anyio.current_time()
            if family is not None and now - seen >= every:
                family.update(_descendants(process.pid))
                seen = now
            await anyio.sleep(0.05)
    return process.returncode is not None


async def _send(process: subprocess.Popen[bytes], data: bytes) -> None:
    """Write ``data`` to the process's stdin and close it (an agent that exits without reading it is no error)."""
    pipe = process.stdin
    if pipe is None:
        return

    def write() -> None:
        try:
            pipe.write(data)
            pipe.flush()
        except (BrokenPipeError, OSError):
            pass  # the agent exited or closed stdin without reading it: its exit code tells
        finally:
            try:
                pipe.close()
            except OSError:
                pass  # the same broken pipe, reported again on close

    await anyio.to_thread.run_sync(write, abandon_on_cancel=True)


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
    """An external agent process (see the module notes); options ``cmd``, ``input``, ``transport``, ``python``, ``timeout``."""

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
        self.transport = options.get("transport", "http")
        if self.transport not in TRANSPORTS:
            raise InputError(f"agent {name}: transport={self.transport!r} is not a transport; use http or stdio (the bridge)")
        self.python = options.get("python") or sys.executable
        self.answer = options.get("answer") or "env"
        if self.answer not in ANSWER_MODES:
            raise InputError(f"agent {name}: answer={self.answer!r} is not a mode; use env, last-message or tool")
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
        values = {"instruction": self.instruction(job), "config": str(config), "task_id": job.task.id, "python": self.python}
        words = [word.format_map(values) for word in self.template]
        uses_instruction = any(f == "instruction" for word in self.template for _, f, _, _ in string.Formatter().parse(word))
        if self.input == "arg" and not uses_instruction:
            words.append(self.instruction(job))
        return words

    def instruction(self, job: Job) -> str:
        """The instruction the agent receives: the task's, with ``answer=tool`` a closing sentence naming the answer tool."""
        return f"{job.task.instruction}\n\n{ANSWER_TOOL_NOTE}" if self.answer == "tool" else job.task.instruction

    def environment(self, job: Job, config: Path) -> dict[str, str]:
        """The agent's environment (see :func:`agent_environment`) plus the config path, the task id and (env mode) the instruction."""
        env = agent_environment(os.environ, job.settings.workspace)
        env.update(TASKLOOM_MCP_CONFIG=str(config), TASKLOOM_TASK_ID=job.task.id)
        if self.input == "env":
            env["TASKLOOM_INSTRUCTION"] = self.instruction(job)
        return env

    def launch(self, job: Job, kind: SandboxKind, home: Path, account: AgentAccount | None) -> AgentLaunch:
        """How this job's agent is started in sandbox ``kind``: argv, environment, user; the config lives in ``home``."""
        config = home / "mcp.json"
        hidden = [job.settings.workspace, job.episodes_dir]
        pid_namespace = kind == "user" and pidns_problem() is None
        argv, env = self.argv(job, config), self.environment(job, config)
        code = code_paths(argv, env, self.python, job.settings.agent_paths, bridge=self.transport == "stdio") if kind == "bwrap" else []
        return agent_launch(kind, argv, env, home, hidden=hidden, account=account, pid_namespace=pid_namespace, code=code)

    async def attempt(self, job: Job, client: Client[Any] | None) -> None:
        limit = self.timeout or job.timeout_s
        kind = check_sandbox(job.settings)  # refuse before anything starts when no sandbox can work
        job.episodes_dir.mkdir(parents=True, exist_ok=True)
        avoid = [job.settings.workspace, job.episodes_dir]
        account: AgentAccount | None = None
        if kind != "none" and os.geteuid() == 0:  # a throw-away uid for this agent and episode alone
            account, home = allocate_account(job.settings.agent_uids, avoid)
        else:
            home = make_agent_home(avoid)
        try:
            if kind == "user" and account is not None:
                check_closed_to(account, job.settings.workspace)
            async with job.serve_http() as endpoint:
                spec = self.launch(job, kind, home, account)
                config = home / "mcp.json"
                config.write_text(json.dumps(mcp_config(endpoint, self.transport, self.python), indent=2), encoding="utf-8")
                config.chmod(0o600)
                if account is not None:
                    os.chown(config, account.uid, account.gid)
                stderr_path = job.episodes_dir / "agent.stderr.log"
                with (job.episodes_dir / "agent.stdout.log").open("wb") as out, stderr_path.open("wb") as err:
                    process = self._start(spec, out, err)
                    family: dict[int, str] = {}  # every process the agent started, seen while it ran
                    try:
                        with anyio.move_on_after(limit) as scope:
                            await _send(process, self.instruction(job).encode("utf-8"))
                            await _wait(process, None, family)
                    finally:
                        with anyio.CancelScope(shield=True):
                            await self._stop(process, family)
                if self.answer == "last-message":  # before the server stops, so an open episode closes with its answer
                    record_last_message(job.episodes_dir, job.episodes_dir / "agent.stdout.log")
        finally:
            release_account(account, home)  # its home, its files in /tmp and anything still running as it go
        if scope.cancelled_caught:
            raise AgentTimeout(f"command agent {self.name!r} did not finish within {limit:g} s; it was killed")
        if process.returncode:
            tail = log_tail(stderr_path)
            raise AgentProcessError(f"command agent {self.name!r} exited with code {process.returncode}; stderr ends: {tail or '(empty)'}")

    def _start(self, spec: AgentLaunch, out: IO[bytes], err: IO[bytes]) -> subprocess.Popen[bytes]:
        """Start the agent as ``spec`` says, in a session of its own, dying with the harness; clear errors when it cannot start."""
        try:
            return subprocess.Popen(
                spec.argv,
                stdin=subprocess.PIPE if self.input == "stdin" else subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=spec.env,
                cwd=spec.cwd,
                user=spec.user,
                group=spec.group,
                extra_groups=spec.extra_groups,
                start_new_session=True,
                preexec_fn=die_with_parent(os.getpid(), no_new_privs=spec.user is not None),
            )
        except (PermissionError, FileNotFoundError) as exc:
            who = f" as user {spec.user}" if spec.user is not None else ""
            hint = (
                "; it and every folder above it must be readable and searchable by any user (a Python under /root is not: "
                "give python=/path/to/a/shared/python, or use agent_sandbox=bwrap, which mounts it)"
                if spec.user is not None
                else ""
            )
            raise AgentProcessError(f"command agent {self.name!r} could not start {spec.argv[0]!r}{who}: {exc.strerror}{hint}") from None

    async def _stop(self, process: subprocess.Popen[bytes], family: dict[int, str]) -> None:
        """End the agent's process group and whatever it started (see the module notes).

        The group is signalled only while its leader is unreaped, so its id cannot
        have been reused; leftovers are signalled one by one, by pid and start time.
        """
        if process.poll() is None:
            family.update(_descendants(process.pid))
            _signal(process.pid, signal.SIGTERM, group=True)
            if not await _wait(process, GRACE_S):
                _signal(process.pid, signal.SIGKILL, group=True)
                await _wait(process)
        await _stop_strays(family, self.stray_grace_s)


@agent("command")
def command(name: str, cmd: str = "", input: str = "arg", timeout: str = "", transport: str = "http", python: str = "", answer: str = "") -> CommandAgent:
    """An external agent process, sandboxed, reaching Taskloom over MCP (``cmd=`` takes the rest of the spec)."""
    return CommandAgent(name, {"cmd": cmd, "input": input, "timeout": timeout, "transport": transport, "python": python, "answer": answer})
