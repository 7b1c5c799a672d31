"""Probe table for agents under test: two hostile command agents side by side, under each sandbox.

Each sandbox gets a fresh folder (open to everyone, like a shared /tmp) holding a workspace with a document task,
a second workspace, a JSONL export, a Harbor export and a ``cp -a`` backup of the same tasks; two hostile agents
(``tests/harness/hostile.py``) run on that task in one real run and try every route: the other agent's home,
token, ``/proc`` and endpoint, ``/etc/shadow``, the host's home, the repository checkout and its published
examples, each gold copy, and writes outside their home. The table says, per route and sandbox, whether any
agent got through (READ / WROTE / YES) or both were refused (refused / no), and whose answer was scored.

Run as root for the ``user`` sandbox (``bwrap`` needs bubblewrap; ``auto``, the default, is ``bwrap`` wherever it works)::

    .venv/bin/python bench/agent_probes.py                 # user bwrap auto none
    .venv/bin/python bench/agent_probes.py bwrap

The last line printed is ``RESULT {json}`` for machines.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "harness"))
from hostile_run import NAMES, HostileRun, hostile_run  # type: ignore[import-not-found]  # noqa: E402

from taskloom.tools.security.sandbox import choose_sandbox  # noqa: E402


def shared_python(folder: Path) -> str:
    """An interpreter any user can run with this venv's packages: this one, or (as root, pyenv under /root) a venv over the system Python."""
    if os.geteuid() != 0:
        return sys.executable
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = next(p for p in (f"/usr/bin/{version}", f"/usr/local/bin/{version}") if os.access(p, os.X_OK))
    subprocess.run([system, "-m", "venv", "--without-pip", str(folder / "py")], check=True, capture_output=True, timeout=120)
    site = next((folder / "py" / "lib").glob("python*/site-packages"))
    packages = next(p for p in map(Path, sys.path) if p.name == "site-packages" and (p / "fastmcp").is_dir())
    (site / "taskloom-venv.pth").write_text(f"import site; site.addsitedir({str(packages)!r})\n", encoding="utf-8")
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
    return str(folder / "py" / "bin" / "python")


def cell(run: HostileRun, route: str) -> str:
    got = any(run.routes.get(route, {}).values())
    if route not in run.routes:
        return "-"
    if route.startswith("write "):
        return "WROTE" if got else "refused"
    if route.startswith(("peer endpoint", "runs as", "holds", "another agent", "other agent")):
        return "YES" if got else "no"
    return "READ" if got else "refused"


def main() -> None:
    sandboxes = sys.argv[1:] or ["user", "bwrap", "auto", "none"]
    python_dir = Path(tempfile.mkdtemp(prefix="taskloom-probe-python-"))
    python = shared_python(python_dir)
    runs: list[HostileRun] = []
    try:
        for sandbox in sandboxes:
            folder = Path(tempfile.mkdtemp(prefix="taskloom-probe-"))
            folder.chmod(0o755)
            try:
                runs.append(hostile_run(folder, sandbox, python))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(python_dir, ignore_errors=True)
    routes = list(dict.fromkeys(r for run in runs for r in run.routes))
    width = max(len(r) for r in [*routes, "scored answer (alice / bob)"]) + 2
    named = [f"auto={choose_sandbox('auto')}" if run.sandbox == "auto" else run.sandbox for run in runs]
    print("route".ljust(width) + "".join(name.ljust(12) for name in named))
    for route in routes:
        print(route.ljust(width) + "".join(cell(run, route).ljust(12) for run in runs))
    print("left in the host's /tmp".ljust(width) + "".join(("YES" if run.left_in_host_tmp else "no").ljust(12) for run in runs))
    hijacked = ["own" if all(run.answers[n] == f"honest answer of {n}" for n in NAMES) else "NOT own" for run in runs]
    print("scored answers".ljust(width) + "".join(h.ljust(12) for h in hijacked))
    for run in runs:
        for name in NAMES:
            if not run.printed[name]:
                print(f"{run.sandbox}/{name}: no record; stderr ends: {run.stderr[name][-600:]}")
    result = {run.sandbox: {"through": sorted(r for r in run.routes if any(run.routes[r].values())), "answers": run.answers} for run in runs}
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
