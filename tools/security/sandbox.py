"""The agent sandbox: where a command agent runs so that it cannot read the workspace (and so no gold).

``Settings.agent_sandbox`` picks one of:

* ``user`` (what ``auto`` picks when the harness runs as root): the agent runs as an
  unprivileged account (``Settings.agent_user``, default ``nobody``) with no
  supplementary groups and ``no_new_privs``; its HOME and working directory are a fresh
  0700 directory it owns, outside the workspace. The workspace root is 0700 and the
  harness's (see :class:`taskloom.tools.workspace.Workspace`), so the agent cannot open
  anything in it, and ``/proc`` of the harness's processes is closed to it (another
  user). Where util-linux's ``unshare`` can make a PID namespace (:func:`pidns_problem`),
  the agent is also its init: it sees no other process, and everything it started dies
  with it, so with the harness.
* ``bwrap`` (what ``auto`` picks otherwise, when bubblewrap works): the agent runs as the
  harness's user inside bubblewrap: the filesystem as it is, but a tmpfs over the
  workspace and the episode folder, a PID namespace of its own (the harness's ``/proc``
  entries are out of sight), all capabilities dropped, a new session (no terminal
  injection) and ``--die-with-parent``.
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
import os
import pwd
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

__all__ = [
    "SandboxKind",
    "AgentAccount",
    "AgentLaunch",
    "choose_sandbox",
    "bwrap_problem",
    "pidns_problem",
    "agent_account",
    "check_closed_to",
    "make_agent_home",
    "sweep_agent_homes",
    "agent_launch",
    "die_with_parent",
]

SandboxKind = Literal["user", "bwrap", "none"]
_HOW = (
    "run the harness as root (agents then run as agent_user), install bubblewrap (Debian: apt-get install bubblewrap), "
    "or set agent_sandbox='none' (TASKLOOM_AGENT_SANDBOX=none; unsafe: the agent can read every task's gold answer)"
)
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_HOME_PREFIX = "taskloom-agent-"
_PIDNS = ["--pid", "--fork", "--kill-child", "--mount-proc"]  # the child is the namespace's init; it dies with unshare
_SIGKILL = int(signal.SIGKILL)


class AgentAccount(BaseModel):
    """The unprivileged account a ``user``-sandboxed agent runs as."""

    name: str
    uid: int
    gid: int


class AgentLaunch(BaseModel):
    """Everything :class:`subprocess.Popen` needs to start one sandboxed agent."""

    kind: SandboxKind
    argv: list[str] = Field(description="The command line, with the bubblewrap wrapper in front for 'bwrap'.")
    env: dict[str, str]
    cwd: Path = Field(description="The agent's fresh HOME, also its working directory.")
    user: int | None = Field(None, description="uid to switch to ('user' only).")
    group: int | None = Field(None, description="gid to switch to ('user' only).")
    extra_groups: list[int] | None = Field(None, description="Supplementary groups ([] for 'user': none at all).")


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
    probe = [unshare, *_PIDNS, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--no-new-privs", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare does not run ({exc})"
    return None if done.returncode == 0 else f"unshare cannot make a PID namespace here (exit code {done.returncode})"


@functools.cache
def bwrap_problem(binary: str = "bwrap") -> str | None:
    """Why bubblewrap cannot sandbox an agent here (not installed, or namespaces refused), or None when it can."""
    path = shutil.which(binary)
    if path is None:
        return "bubblewrap (bwrap) is not installed"
    probe = [path, "--dev-bind", "/", "/", "--proc", "/proc", "--tmpfs", tempfile.gettempdir(), "--unshare-pid", "--die-with-parent", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not run ({exc})"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return f"bubblewrap cannot create its namespaces here ({said[-1] if said else f'exit code {done.returncode}'})"
    return None


def choose_sandbox(setting: str) -> SandboxKind:
    """The sandbox to use for ``Settings.agent_sandbox`` (``auto``: ``user`` as root, else ``bwrap``); InputError when impossible."""
    if setting == "none":
        return "none"
    if setting == "user":
        if not _is_root():
            raise InputError(f"agent_sandbox='user' needs the harness to run as root, to switch agents to agent_user; {_HOW}")
        return "user"
    if setting == "bwrap":
        problem = bwrap_problem()
        if problem:
            raise InputError(f"agent_sandbox='bwrap' cannot be used: {problem}; {_HOW}")
        return "bwrap"
    if setting != "auto":
        raise InputError(f"agent_sandbox={setting!r} is not a sandbox; use auto, user, bwrap or none")
    if _is_root():
        return "user"
    problem = bwrap_problem()
    if problem:
        raise InputError(f"command agents must not be able to read the workspace, and no sandbox is available: not root, and {problem}; {_HOW}")
    return "bwrap"


def agent_account(name: str) -> AgentAccount:
    """The account named by ``Settings.agent_user``; InputError when it does not exist or is root."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise InputError(f"agent_user {name!r} does not exist; create an unprivileged account (useradd --system {name}) or set agent_user (TASKLOOM_AGENT_USER) to one, e.g. nobody") from None
    if entry.pw_uid == 0:
        raise InputError(f"agent_user {name!r} is root; name an unprivileged account, e.g. nobody")
    return AgentAccount(name=name, uid=entry.pw_uid, gid=entry.pw_gid)


def check_closed_to(account: AgentAccount, workspace: Path) -> None:
    """Refuse (InputError) when ``account`` could enter ``workspace``: the 'user' sandbox relies on its permissions."""
    root = Path(workspace).resolve()
    try:
        info = root.stat()
    except FileNotFoundError:
        return  # created later by the harness, 0700 (see Workspace)
    groups = {account.gid, *os.getgrouplist(account.name, account.gid)}
    enters = info.st_uid == account.uid or bool(info.st_mode & 0o001) or (info.st_gid in groups and bool(info.st_mode & 0o010))
    if enters:
        raise InputError(
            f"the workspace {root} (mode {info.st_mode & 0o777:o}) can be entered by agent_user {account.name!r}, who could read every gold "
            f"answer there; make it private (chmod 700 {root}) and owned by the user running the harness"
        )


def make_agent_home(account: AgentAccount | None, avoid: Sequence[Path] = ()) -> Path:
    """A fresh 0700 directory for the agent's HOME and working directory, owned by ``account`` (else by this user).

    It is made in the system temp directory (``/tmp`` when ``TMPDIR`` points inside one of
    ``avoid``) and named after this process, so that homes left behind by a harness that
    was killed are found and removed here (:func:`sweep_agent_homes`).
    """
    base = Path(tempfile.gettempdir()).resolve()
    if any(base.is_relative_to(Path(p).resolve()) for p in avoid):
        base = Path("/tmp")
    sweep_agent_homes(base, {os.geteuid(), *([account.uid] if account else [])})
    home = Path(tempfile.mkdtemp(prefix=f"{_HOME_PREFIX}{os.getpid()}-", dir=base))
    home.chmod(0o700)
    if account is not None:
        os.chown(home, account.uid, account.gid)
    return home


def sweep_agent_homes(base: Path, owners: set[int]) -> list[Path]:
    """Remove agent homes in ``base`` owned by ``owners`` whose harness process is gone; returns what was removed."""
    removed: list[Path] = []
    for home in base.glob(f"{_HOME_PREFIX}*-*"):
        pid_text = home.name[len(_HOME_PREFIX) :].split("-", 1)[0]
        if not pid_text.isdigit() or _pid_alive(int(pid_text)):
            continue
        try:
            if home.is_symlink() or not home.is_dir() or home.stat().st_uid not in owners:
                continue
        except OSError:
            continue  # gone meanwhile
        shutil.rmtree(home, ignore_errors=True)
        removed.append(home)
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def agent_launch(
    kind: SandboxKind,
    argv: Sequence[str],
    env: Mapping[str, str],
    home: Path,
    hidden: Sequence[Path],
    account: AgentAccount | None = None,
    bwrap: str = "bwrap",
    pid_namespace: bool = False,
) -> AgentLaunch:
    """How to start ``argv`` in the sandbox ``kind`` with ``home`` as HOME and cwd, ``hidden`` out of its reach.

    ``hidden`` are the directories bubblewrap covers with a tmpfs (the workspace, the
    episode folder); the ``user`` sandbox relies on their permissions instead. With
    ``pid_namespace`` (``user`` only; see :func:`pidns_problem`) ``unshare`` makes the
    namespace as root and ``setpriv`` drops to the account inside it, re-arming the
    parent-death signal after the switch.
    """
    full = {**env, "HOME": str(home), "PWD": str(home), "TMPDIR": str(home)}
    if kind == "user":
        if account is None:
            raise InputError("the 'user' sandbox needs the agent's account (agent_user)")
        full.update(USER=account.name, LOGNAME=account.name)
        if pid_namespace:
            drop = [f"--reuid={account.uid}", f"--regid={account.gid}", "--clear-groups", "--no-new-privs", "--pdeathsig=KILL", "--"]
            wrapped = [shutil.which("unshare") or "unshare", *_PIDNS, shutil.which("setpriv") or "setpriv", *drop, *argv]
            return AgentLaunch(kind=kind, argv=wrapped, env=full, cwd=home)
        return AgentLaunch(kind=kind, argv=list(argv), env=full, cwd=home, user=account.uid, group=account.gid, extra_groups=[])
    if kind == "bwrap":
        wrapper = [shutil.which(bwrap) or bwrap, "--dev-bind", "/", "/", "--proc", "/proc"]
        for path in dict.fromkeys(str(Path(p).resolve()) for p in hidden):
            wrapper += ["--tmpfs", path]
        wrapper += ["--unshare-pid", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--chdir", str(home), "--"]
        return AgentLaunch(kind=kind, argv=[*wrapper, *argv], env=full, cwd=home)
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
