"""Harbor's own code in a side virtualenv: the ``harbor`` package needs Python ≥ 3.12, Taskloom runs on 3.11.

:func:`harbor_python` finds a working Python ≥ 3.12 (``TASKLOOM_HARBOR_PYTHON``, else
python3.12+ on PATH or under ``~/.pyenv/versions``), makes ``tests/data/cache/harbor-venv``
with ``pip install harbor`` from PyPI on first use, and returns the venv's interpreter; it
skips the calling test, saying why, when there is no such Python. ``make test-data`` makes the
venv beforehand (``python tests/tools/harbor_side.py``), so no test spends a minute on pip.
"""

from __future__ import annotations

import os
import shutil
import fcntl
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / "tests" / "data" / "cache" / "harbor-venv"


def _runs_312(python: str) -> bool:
    try:
        done = subprocess.run([python, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"], capture_output=True, timeout=30)
    except OSError:
        return False
    return done.returncode == 0


def python312() -> str | None:
    """A working Python ≥ 3.12: TASKLOOM_HARBOR_PYTHON, else python3.12+ on PATH or under ~/.pyenv/versions."""
    chosen = os.environ.get("TASKLOOM_HARBOR_PYTHON")
    if chosen:
        return chosen
    candidates = [found for name in ("python3.14", "python3.13", "python3.12") if (found := shutil.which(name))]
    candidates += [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python3"), reverse=True)]
    return next((c for c in candidates if _runs_312(c)), None)


def harbor_python() -> Path:
    """The side venv's interpreter, with ``harbor`` installed (made on first use); skips the test when impossible."""
    python = VENV / "bin" / "python"
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with (VENV.parent / "harbor-venv.lock").open("w") as lock:  # two test workers never build the venv at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _made(python)


def _made(python: Path) -> Path:
    if not python.exists() or subprocess.run([str(python), "-c", "import harbor"], capture_output=True, timeout=120).returncode != 0:
        base = python312()
        if base is None:
            pytest.skip("harbor needs Python ≥3.12; none on this machine (set TASKLOOM_HARBOR_PYTHON to one to run this test)")
        subprocess.run([base, "-m", "venv", "--clear", str(VENV)], check=True, timeout=300)
        done = subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", "harbor"], capture_output=True, text=True, timeout=1200)
        if done.returncode != 0:
            pytest.skip(f"could not install harbor from PyPI into {VENV}: {done.stderr.strip().splitlines()[-1:]}")
    return python


if __name__ == "__main__":
    try:
        print(f"harbor venv ready: {harbor_python()}")
    except pytest.skip.Exception as why:  # no Python >= 3.12 or no harbor on PyPI: the two Harbor tests will skip, saying this
        print(f"harbor venv not made: {why}")
