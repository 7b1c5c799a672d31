"""What a bubblewrap-sandboxed agent sees: the system's read-only parts, its code, its home, nothing else.

:func:`bwrap_argv` builds the wrapper. The agent's root is an empty tmpfs holding:

* the system, read-only: ``/usr``, ``/etc``, ``/bin``, ``/sbin`` and ``/lib*`` (symlinks stay symlinks),
  a fresh ``/proc`` of its own PID namespace, a minimal ``/dev``, and private tmpfs ``/tmp`` and ``/var/tmp``;
* its code, read-only (:func:`code_paths`): the files its command line names, the interpreter
  ``python`` with its prefixes and ``sys.path`` (as that interpreter reports them), Taskloom's own
  modules for the stdio bridge (never the repository's examples, tests or workspace), and
  ``Settings.agent_paths``;
* its home, writable, also its working directory.

Nothing else is there: no other workspace, no repository checkout, no host home, no host ``/tmp``.
The workspace and the episode folder get a tmpfs over them should a code path contain them.
As root, bubblewrap builds this as root, keeps only the capabilities needed to drop (``_ROOT_CAPS``),
and ``setpriv`` then switches to the agent's throw-away uid, clearing every capability, the bounding set
and the supplementary groups, with ``no_new_privs``: the agent is never uid 0 and holds no capability.
Without root, bubblewrap runs unprivileged in a user namespace with all capabilities dropped.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .accounts import AgentAccount

__all__ = ["SYSTEM_RO", "PRIVATE_TMP", "code_paths", "python_paths", "taskloom_code", "bwrap_argv"]

SYSTEM_RO = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
PRIVATE_TMP = ("/tmp", "/var/tmp")
# Kept by bubblewrap's last process as root, until setpriv's switch to the agent's uid clears them all: what setpriv
# needs, and entering the agent's 0700 home (owned by that uid) for --chdir.
_ROOT_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_DAC_OVERRIDE")


@functools.lru_cache(maxsize=16)
def python_paths(python: str, pythonpath: str = "") -> tuple[str, ...]:
    """The prefixes and ``sys.path`` entries of ``python`` (with ``PYTHONPATH``), as it reports them; empty when it does not run."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **({"PYTHONPATH": pythonpath} if pythonpath else {})}
    script = "import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, sys.executable, *sys.path]))"
    try:
        done = subprocess.run([python, "-c", script], capture_output=True, timeout=60, check=False, env=env, cwd="/")
        found = json.loads(done.stdout.decode().strip().splitlines()[-1]) if done.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return ()
    return tuple(p for p in found if isinstance(p, str) and p.startswith("/"))


def taskloom_code() -> list[Path]:
    """Taskloom's own modules (``__init__.py`` and its sub-packages), for the stdio bridge; not the folders beside them."""
    package = Path(__file__).resolve().parents[2]
    return [package / "__init__.py", *sorted(p for p in package.iterdir() if p.is_dir() and (p / "__init__.py").is_file())]


def code_paths(argv: Sequence[str], env: Mapping[str, str], python: str | None, extra: Iterable[Path] = (), bridge: bool = False) -> list[Path]:
    """The existing paths an agent's code needs, to mount read-only (see the module notes)."""
    words: list[str] = [w for w in argv if w.startswith("/")]
    if argv and "/" not in argv[0]:
        found = shutil.which(argv[0], path=env.get("PATH"))
        words += [found] if found else []
    if python:
        words += [python, *python_paths(python, env.get("PYTHONPATH", ""))]
    paths = [Path(w) for w in words] + [Path(p) for p in extra]
    if bridge:
        paths += taskloom_code()
    system = [Path(p).resolve() for p in SYSTEM_RO if Path(p).exists()]
    out: list[Path] = []
    for path in paths:
        for each in (Path(os.path.abspath(path)), path.resolve()):
            inside_system = any(each.is_relative_to(s) for s in system) or any(each.is_relative_to(s) for s in SYSTEM_RO)
            if each.exists() and each != Path("/") and not inside_system and each not in out:
                out.append(each)
    return out


def _system() -> list[str]:
    args: list[str] = []
    for name in SYSTEM_RO:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for name in PRIVATE_TMP:
        args += ["--perms", "1777", "--tmpfs", name]
    return args


def bwrap_argv(bwrap: str, home: Path, code: Sequence[Path], hidden: Sequence[Path], account: AgentAccount | None) -> list[str]:
    """The bubblewrap (and, as root, ``setpriv``) words to put before the agent's command (see the module notes)."""
    args = [shutil.which(bwrap) or bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    if account is None:
        args.append("--unshare-user-try")
    args += _system()
    unique = list(dict.fromkeys(Path(p) for p in code))
    paths = [p for p in unique if not any(p != q and p.is_relative_to(q) for q in unique)]  # seen through its parent's mount
    made = {Path(p) for p in (*SYSTEM_RO, *PRIVATE_TMP)} | {Path(p).parent for p in PRIVATE_TMP}
    for folder in sorted({str(a) for p in [*paths, home] for a in p.parents if a not in made and a != Path("/")}, key=len):
        args += ["--perms", "0755", "--dir", folder]  # bubblewrap would make them 0700 (root's): searchable by the agent
    for path in paths:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(home), str(home)]
    for covered in dict.fromkeys(str(Path(p).resolve()) for p in hidden):
        if any(Path(covered).is_relative_to(p) for p in code):
            args += ["--tmpfs", covered]
    args += ["--chdir", str(home), "--cap-drop", "ALL"]
    if account is None:
        return [*args, "--"]
    for cap in _ROOT_CAPS:
        args += ["--cap-add", cap]
    drop = [f"--reuid={account.uid}", f"--regid={account.gid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--pdeathsig=KILL"]
    return [*args, "--", shutil.which("setpriv") or "setpriv", *drop, "--"]
