"""Serve a seeded tracker for ``taskloom build``: ``python3 serve_tracker.py trac|roundup PORT STATE``.

A build's replays may file or edit tickets, so the tracker never runs over the seed
``make test-data`` made (tests/data/cache/trac-env or roundup-env/db): it serves ``STATE``, the
folder the manifest's ``state`` names, which the build makes a fresh copy of ``state_seed``
before the unit and before every replay (Trac: the whole environment; Roundup: its ``db``
folder, under a throw-away copy of the tracker's home whose ``web`` URL is set to the port).
The home copy is removed when the build stops the server (SIGTERM); the server dies with this
script.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType

CACHE = Path(__file__).resolve().parents[2] / "tests" / "data" / "cache"


def _die_with_parent() -> None:  # runs in the server between fork and exec
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _command(app: str, port: int, state: Path, folder: Path) -> list[str]:
    """The command that serves the tracker over ``state`` (Roundup's home copied into ``folder``)."""
    if app == "trac":
        return [str(CACHE / "trac-venv" / "bin" / "python"), str(CACHE.parent / "tracd.py"), "-s", "-b", "127.0.0.1", "-p", str(port), str(state)]
    home = shutil.copytree(CACHE / "roundup-env", folder / "tracker", ignore=shutil.ignore_patterns("db"))
    config = home / "config.ini"
    url = f"http://127.0.0.1:{port}/tracker/"
    lines = config.read_text().splitlines(keepends=True)
    config.write_text("".join(f"web = {url}\n" if line.startswith("web = ") else f"database = {state}\n" if line.startswith("database = ") else line for line in lines))
    # -u: roundup-server refuses to run as root unless told which user to be (ignored when not root)
    return [str(CACHE / "roundup-venv" / "bin" / "roundup-server"), "-u", str(os.getuid()), "-n", "127.0.0.1", "-p", str(port), f"tracker={home}"]


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("trac", "roundup") or not argv[1].isdigit() or not Path(argv[2]).is_dir():
        print("usage: serve_tracker.py trac|roundup PORT STATE (the folder the manifest's state names, made by the build)", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix=f"taskloom-build-{argv[0]}-"))
    try:
        server = subprocess.Popen(_command(argv[0], int(argv[1]), Path(argv[2]).resolve(), folder), preexec_fn=_die_with_parent)

        def stop(signum: int, frame: FrameType | None) -> None:
            server.terminate()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        return server.wait()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
