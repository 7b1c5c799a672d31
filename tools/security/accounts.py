"""Throw-away accounts: one fresh uid (and gid) per command agent and episode, and its private home.

As root the harness never runs two agents as the same user: :func:`allocate_account` picks a
uid at random from ``Settings.agent_uids`` that no passwd or group entry names, that no
process runs as and that no other agent home holds, and makes the agent's home,
``<tmp>/taskloom-agents-<harness uid>/taskloom-agent-<harness pid>-<uid>``, mode 0700 and owned
by it. The folder of the homes (:func:`homes_folder`) is the harness user's and 0711: an agent
reaches its own home by its path but cannot list the folder, so it learns no other agent's home
(nor, from its name, the other agent's uid). No ``/etc/passwd``
entry is needed: the kernel only knows numbers. Two harnesses that draw the same uid at
the same moment both see two homes and both draw again, so a uid is never shared.
:func:`release_account` ends whatever still runs as the uid and removes its home and what it
left in the shared scratch folders (``/tmp``, ``/var/tmp``, ``/dev/shm``); a harness that was
killed leaves its homes behind, and the next one removes them (:func:`sweep_agent_homes`).

Without root there is no other uid to switch to: the home is then the harness user's own,
named ``taskloom-agent-<pid>-u<random>``, and bubblewrap keeps agents apart (each one
sees only its own home).
"""

from __future__ import annotations

import grp
import os
import pwd
import secrets
import shutil
import signal
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from ..errors import TaskloomError

__all__ = [
    "AgentAccount", "HOME_PREFIX", "SCRATCH", "allocate_account", "homes_folder", "make_agent_home", "release_account", "sweep_agent_homes",
    "uid_in_use", "processes_of",
]

HOME_PREFIX = "taskloom-agent-"
FOLDER_PREFIX = "taskloom-agents-"  # + the harness's uid: the folder of the agent homes, 0711
FOLDER_MODE = 0o711
SCRATCH = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))  # world-writable folders an agent of the 'user' sandbox can write to
_TRIES = 64


class AgentAccount(BaseModel):
    """The throw-away account one agent runs as for one episode (``name`` is only for its environment)."""

    name: str
    uid: int
    gid: int


def processes_of(uid: int) -> list[int]:
    """Pids of the processes whose real or effective uid is ``uid`` (from ``/proc``)."""
    found: list[int] = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            line = next(x for x in status.read_text().splitlines() if x.startswith("Uid:"))
        except (OSError, StopIteration):
            continue  # gone meanwhile
        real, effective = (int(v) for v in line.split()[1:3])
        if uid in (real, effective):
            found.append(int(status.parent.name))
    return found


def uid_in_use(uid: int) -> bool:
    """True when a passwd or group entry names ``uid``, or a process runs as it."""
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
            return True
        except KeyError:
            pass  # no such entry: free as far as this database goes
    return bool(processes_of(uid))


def _base(avoid: Sequence[Path]) -> Path:
    """The system temp folder, or ``/tmp`` when ``TMPDIR`` lies inside one of ``avoid`` (the workspace)."""
    base = Path(tempfile.gettempdir()).resolve()
    return Path("/tmp") if any(base.is_relative_to(Path(p).resolve()) for p in avoid) else base


def homes_folder(avoid: Sequence[Path] = ()) -> Path:
    """The folder of this user's agent homes in the system temp folder: made 0711 (enter, not list); TaskloomError when not ours.

    An existing one must be a real folder (no symlink) owned by this user; its mode is set back to 0711.
    """
    folder = _base(avoid) / f"{FOLDER_PREFIX}{os.geteuid()}"
    try:
        folder.mkdir(mode=FOLDER_MODE)
    except FileExistsError:
        pass  # made by an earlier harness of this user: checked below
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise TaskloomError(f"{folder} should be a folder of uid {os.geteuid()} holding agent homes, but is not (owner {info.st_uid}); remove it")
    if stat.S_IMODE(info.st_mode) != FOLDER_MODE:
        folder.chmod(FOLDER_MODE)
    return folder


def _homes_of(base: Path, tag: str) -> list[Path]:
    return list(base.glob(f"{HOME_PREFIX}*-{tag}"))


def allocate_account(uids: tuple[int, int], avoid: Sequence[Path] = ()) -> tuple[AgentAccount, Path]:
    """A fresh uid from ``[first, last)`` and its new 0700 home (see the module notes); root only."""
    base = homes_folder(avoid)
    sweep_agent_homes(base, uids)
    for _ in range(_TRIES):
        uid = uids[0] + secrets.randbelow(uids[1] - uids[0])
        if _homes_of(base, str(uid)) or uid_in_use(uid):
            continue
        home = base / f"{HOME_PREFIX}{os.getpid()}-{uid}"
        try:
            home.mkdir(mode=0o700)
        except FileExistsError:
            continue
        if len(_homes_of(base, str(uid))) > 1:  # another harness drew it at the same moment: both draw again
            home.rmdir()
            continue
        home.chmod(0o700)
        os.chown(home, uid, uid)
        return AgentAccount(name=f"taskloom-agent-{uid}", uid=uid, gid=uid), home
    raise TaskloomError(f"no free uid for an agent in {uids[0]}..{uids[1] - 1} after {_TRIES} draws; widen agent_uids")


def make_agent_home(avoid: Sequence[Path] = ()) -> Path:
    """A fresh 0700 home owned by this (non-root) user, for a bubblewrap-sandboxed or unsandboxed agent."""
    base = homes_folder(avoid)
    sweep_agent_homes(base, None)
    home = base / f"{HOME_PREFIX}{os.getpid()}-u{secrets.token_hex(6)}"
    home.mkdir(mode=0o700)
    return home


def release_account(account: AgentAccount | None, home: Path) -> list[Path]:
    """End what still runs as the account, remove its home and its files in :data:`SCRATCH`; returns what was removed."""
    removed = [home]
    if account is not None:
        for pid in processes_of(account.uid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # exited meanwhile
    shutil.rmtree(home, ignore_errors=True)
    if account is not None:
        for folder in SCRATCH:
            removed += _remove_owned(folder, account.uid)
    return removed


def _remove_owned(folder: Path, uid: int) -> list[Path]:
    """Remove the entries directly in ``folder`` owned by ``uid`` (symlinks are removed, never followed)."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        try:
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            continue  # gone meanwhile
        removed.append(Path(entry.path))
    return removed


def sweep_agent_homes(base: Path, uids: tuple[int, int] | None) -> list[Path]:
    """Remove the agent homes in ``base`` whose harness process is gone, with what their account left; returns the homes.

    Only homes this user made are touched: ``-u<random>`` ones it owns, and (``uids`` given, as
    root) ``-<uid>`` ones owned by that uid of the range.
    """
    removed: list[Path] = []
    for home in base.glob(f"{HOME_PREFIX}*-*"):
        pid_text, _, tag = home.name[len(HOME_PREFIX) :].partition("-")
        if not pid_text.isdigit() or _pid_alive(int(pid_text)):
            continue
        try:
            if home.is_symlink() or not home.is_dir():
                continue
            owner = home.stat().st_uid
        except OSError:
            continue  # gone meanwhile
        if tag.startswith("u") and owner == os.geteuid():
            release_account(None, home)
        elif uids is not None and tag.isdigit() and int(tag) == owner and uids[0] <= owner < uids[1]:
            release_account(AgentAccount(name=home.name, uid=owner, gid=owner), home)
        else:
            continue
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
