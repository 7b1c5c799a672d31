"""Serve a copy of a seeded tracker for ``taskloom build``: ``python3 serve_tracker.py trac|roundup PORT``.

A build's replays may file or edit tickets, so the tracker runs over a throw-away copy of the
state ``make test-data`` seeded (tests/data/cache/trac-env or roundup-env; Roundup's ``web``
URL set to the port), never over the seed itself. The copy is removed when the build stops
the server (SIGTERM); the server dies with this script.
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


def _command(app: str, port: int, folder: Path) -> list[str]:
    """Copy the tracker's state into ``folder``; the command that serves the copy."""
    if app == "trac":
        env = shutil.copytree(CACHE / "trac-env", folder / "env")
        return [str(CACHE / "trac-venv" / "bin" / "tracd"), "-s", "-b", "127.0.0.1", "-p", str(port), str(env)]
    home = shutil.copytree(CACHE / "roundup-env", folder / "tracker")
    config = home / "config.ini"
    url = f"http://127.0.0.1:{port}/tracker/"
    config.write_text("".join(f"web = {url}\n" if line.startswith("web = ") else line for line in config.read_text().splitlines(keepends=True)))
    # -u: roundup-server refuses to run as root unless told which user to be (ignored when not root)
    return [str(CACHE / "roundup-venv" / "bin" / "roundup-server"), "-u", str(os.getuid()), "-n", "127.0.0.1", "-p", str(port), f"tracker={home}"]


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("trac", "roundup") or not argv[1].isdigit():
        print("usage: serve_tracker.py trac|roundup PORT", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix=f"taskloom-build-{argv[0]}-"))
    try:
        server = subprocess.Popen(_command(argv[0], int(argv[1]), folder), preexec_fn=_die_with_parent)

        def stop(signum: int, frame: FrameType | None) -> None:
            server.terminate()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        return server.wait()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
