"""The agent sandbox: where a command agent runs so that it reads no gold and cannot reach another agent.

``Settings.agent_sandbox`` picks one of:

* ``bwrap`` (what ``auto`` picks whenever bubblewrap works here, as root or not): the agent sees
  only the system's read-only parts, its code and its home (:mod:`.mounts`), in PID, IPC and UTS
  namespaces of its own, with a private ``/tmp``, no capabilities, a new session and
  ``--die-with-parent``; as root it runs as a throw-away uid (:mod:`.accounts`), never as uid 0.
  No other workspace, repository checkout, export or host ``/tmp`` is in its view, whatever their modes.
* ``user`` (what ``auto`` falls back to as root when bubblewrap does not work): the agent runs as a
  throw-away account, a uid of ``Settings.agent_uids`` no one else uses, made for this one
  agent and episode (:mod:`.accounts`), with no supplementary groups and ``no_new_privs``;
  its HOME and working directory are a fresh 0700 directory it owns, in a 0711 folder it cannot
  list, outside the workspace, and its MCP config (the episode's token) is 0600 in it. The
  workspace root is 0700 and the harness's (see :class:`taskloom.tools.workspace.Workspace`),
  so the agent cannot open anything in it, nor in another agent's home, and ``/proc`` of other
  users' processes is closed to it. Where util-linux's ``unshare`` can make a PID namespace
  (:func:`pidns_problem`), the agent is also its init: it sees no other process, and
  everything it started dies with it. Permissions are its only fence: it still reads what is
  world-readable (a repository checkout and its published ``examples/tasks/*.jsonl``, a
  ``chmod 644`` export) and writes where everyone may (``/tmp``; what it left there goes with its account).
* ``none``: no fence at all: the agent can read every gold answer. Only when asked for.

:func:`choose_sandbox` refuses, with what to do, when the chosen kind cannot work here.
:func:`agent_launch` is pure: it builds the argv, environment, user and group that
:mod:`subprocess` gets. :func:`die_with_parent` is the ``preexec_fn`` that gives the
launched process ``PR_SET_PDEATHSIG(SIGKILL)``; CPython runs ``preexec_fn`` after it
switched user and group, and the kernel clears the signal on a credential change, so
this order is the one that holds.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ..errors import InputError
from .accounts import AgentAccount
from .mounts import bwrap_argv

__all__ = [
    "SandboxKind",
    "AgentAccount",
    "AgentLaunch",
    "choose_sandbox",
    "bwrap_problem",
    "pidns_problem",
    "check_closed_to",
    "agent_launch",
    "die_with_parent",
]

SandboxKind = Literal["user", "bwrap", "none"]
_HOW = (
    "run the harness as root (agents then run as throw-away uids), install bubblewrap (Debian: apt-get install bubblewrap), "
    "or set agent_sandbox='none' (TASKLOOM_AGENT_SANDBOX=none; unsafe: the agent can read every task's gold answer)"
)
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_PIDNS = ["--pid", "--fork", "--kill-child", "--mount-proc"]  # the child is the namespace's init; it dies with unshare
_SIGKILL = int(signal.SIGKILL)
_PROBE_UID = 65534  # the uid the probes below switch to (they run 'true' only)
log = logging.getLogger(__name__)


class AgentLaunch(BaseModel):
    """Everything :class:`subprocess.Popen` needs to start one sandboxed agent."""

    kind: SandboxKind
    argv: list[str] = Field(description="The command line, with the sandbox's wrapper in front.")
    env: dict[str, str]
    cwd: Path = Field(description="The agent's fresh HOME, also its working directory.")
    user: int | None = Field(None, description="uid to switch to ('user' without a PID namespace only).")
    group: int | None = Field(None, description="gid to switch to (likewise).")
    extra_groups: list[int] | None = Field(None, description="Supplementary groups ([]: none at all).")


def _is_root() -> bool:
    return os.geteuid() == 0


@functools.cache
def pidns_problem() -> str | None:
    """Why the 'user' sandbox cannot also put the agent in a PID namespace here (needs root, unshare, setpriv), or None."""
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if not _is_root():
        return "not root"
    if unshare is None or setpriv is None:
        return "util-linux's unshare and setpriv are not both installed"
    drop = [f"--reuid={_PROBE_UID}", f"--regid={_PROBE_UID}", "--clear-groups", "--no-new-privs"]
    probe = [unshare, *_PIDNS, setpriv, *drop, "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare does not run ({exc})"
    return None if done.returncode == 0 else f"unshare cannot make a PID namespace here (exit code {done.returncode})"


@functools.cache
def bwrap_problem(binary: str = "bwrap") -> str | None:
    """Why bubblewrap cannot sandbox an agent here (not installed, namespaces refused, no setpriv as root), or None when it can.

    The probe is the real wrapper (:func:`~.mounts.bwrap_argv`) around ``true``.
    """
    if shutil.which(binary) is None:
        return "bubblewrap (bwrap) is not installed"
    if _is_root() and shutil.which("setpriv") is None:
        return "as root, bubblewrap needs util-linux's setpriv to drop to the agent's uid"
    account = AgentAccount(name="probe", uid=_PROBE_UID, gid=_PROBE_UID) if _is_root() else None
    with tempfile.TemporaryDirectory(prefix="taskloom-bwrap-probe-") as home:
        probe = [*bwrap_argv(binary, Path(home), [], [], account), "true"]
        try:
            done = subprocess.run(probe, capture_output=True, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap does not run ({exc})"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return f"bubblewrap cannot create its namespaces here ({said[-1] if said else f'exit code {done.returncode}'})"
    return None


def choose_sandbox(setting: str) -> SandboxKind:
    """The sandbox to use for ``Settings.agent_sandbox`` (``auto``: ``bwrap`` when it works, else ``user`` as root); InputError when impossible."""
    if setting == "none":
        return "none"
    if setting == "user":
        if not _is_root():
            raise InputError(f"agent_sandbox='user' needs the harness to run as root, to switch agents to throw-away uids; {_HOW}")
        return "user"
    if setting == "bwrap":
        problem = bwrap_problem()
        if problem:
            raise InputError(f"agent_sandbox='bwrap' cannot be used: {problem}; {_HOW}")
        return "bwrap"
    if setting != "auto":
        raise InputError(f"agent_sandbox={setting!r} is not a sandbox; use auto, user, bwrap or none")
    problem = bwrap_problem()
    if problem is None:
        return "bwrap"
    if _is_root():
        _warn_user_fallback(problem)
        return "user"
    raise InputError(f"command agents must not be able to read the workspace, and no sandbox is available: not root, and {problem}; {_HOW}")


@functools.cache
def _warn_user_fallback(problem: str) -> None:
    """Say once that ``auto`` fell back to the ``user`` sandbox, and what it leaves open."""
    log.warning(
        "agent_sandbox=auto: bubblewrap cannot be used (%s), so command agents run in the 'user' sandbox: a throw-away uid "
        "that cannot enter the workspace but still reads every world-readable file (a repository checkout with its published "
        "examples, exports made world-readable); install bubblewrap to hide them",
        problem,
    )


def check_closed_to(account: AgentAccount, workspace: Path) -> None:
    """Refuse (InputError) when ``account`` could enter ``workspace``: the 'user' sandbox relies on its permissions."""
    root = Path(workspace).resolve()
    try:
        info = root.stat()
    except FileNotFoundError:
        return  # created later by the harness, 0700 (see Workspace)
    enters = info.st_uid == account.uid or bool(info.st_mode & 0o001) or (info.st_gid == account.gid and bool(info.st_mode & 0o010))
    if enters:
        raise InputError(
            f"the workspace {root} (mode {info.st_mode & 0o777:o}) can be entered by the agents' accounts, who could read every gold "
            f"answer there; make it private (chmod 700 {root}) and owned by the user running the harness"
        )


def agent_launch(
    kind: SandboxKind,
    argv: Sequence[str],
    env: Mapping[str, str],
    home: Path,
    hidden: Sequence[Path],
    account: AgentAccount | None = None,
    bwrap: str = "bwrap",
    pid_namespace: bool = False,
    code: Sequence[Path] = (),
) -> AgentLaunch:
    """How to start ``argv`` in the sandbox ``kind`` with ``home`` as HOME and cwd, ``hidden`` out of its reach.

    ``account`` is the agent's throw-away account (``user``; ``bwrap`` as root). ``code`` are
    the paths bubblewrap mounts read-only besides the system (:func:`~.mounts.code_paths`),
    ``hidden`` the folders it covers with a tmpfs should a code path contain them (the
    workspace, the episode folder); the ``user`` sandbox relies on permissions instead. With
    ``pid_namespace`` (``user`` only; see :func:`pidns_problem`) ``unshare`` makes the
    namespace as root and ``setpriv`` drops to the account inside it, re-arming the
    parent-death signal after the switch.
    """
    full = {**env, "HOME": str(home), "PWD": str(home), "TMPDIR": str(home)}
    if account is not None:
        full.update(USER=account.name, LOGNAME=account.name)
    if kind == "user":
        if account is None:
            raise InputError("the 'user' sandbox needs the agent's throw-away account")
        if pid_namespace:
            drop = [f"--reuid={account.uid}", f"--regid={account.gid}", "--clear-groups", "--no-new-privs", "--pdeathsig=KILL", "--"]
            wrapped = [shutil.which("unshare") or "unshare", *_PIDNS, shutil.which("setpriv") or "setpriv", *drop, *argv]
            return AgentLaunch(kind=kind, argv=wrapped, env=full, cwd=home)
        return AgentLaunch(kind=kind, argv=list(argv), env=full, cwd=home, user=account.uid, group=account.gid, extra_groups=[])
    if kind == "bwrap":
        return AgentLaunch(kind=kind, argv=[*bwrap_argv(bwrap, home, code, hidden, account), *argv], env=full, cwd=home)
    return AgentLaunch(kind=kind, argv=list(argv), env=full, cwd=home)


def die_with_parent(parent: int, no_new_privs: bool = False) -> Callable[[], None] | None:
    """A ``preexec_fn`` giving the child ``PR_SET_PDEATHSIG(SIGKILL)`` (and, if asked, ``no_new_privs``); None off Linux.

    If ``parent`` (the harness) is already gone when the child gets there, the child
    exits at once instead of running orphaned.
    """
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork: the child only calls it
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int

    def preexec() -> None:
        if prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0) != 0 or os.getppid() != parent:
            os._exit(126)
        if no_new_privs and prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            os._exit(126)

    return preexec
