"""A site source's ``serve`` command: started before its crawl, stopped after its generation.

The command runs in the manifest's folder. On Linux it is told to die with the build
(``PR_SET_PDEATHSIG``), so a build killed with ``kill -9`` leaves no server holding the
port the next run needs. The site is ready when its start URL answers any HTTP status.
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from ..errors import TaskloomError

__all__ = ["ServeError", "served"]

_PR_SET_PDEATHSIG = 1


class ServeError(TaskloomError):
    """A site's serve command did not start, or its site never answered."""


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=1.0)
    except httpx.HTTPError:
        return False
    return True


@contextmanager
def served(command: list[str] | None, url: str, cwd: Path, ready_timeout: float = 30.0) -> Iterator[None]:
    """Run ``command`` (if any) until the block ends; wait until ``url`` answers first.

    Raises ServeError when ``url`` already answers before the command starts (another
    server holds the port), when the command cannot start or exits early, or when ``url``
    does not answer within ``ready_timeout`` seconds; the message carries the end of its output.
    """
    if not command:
        yield
        return
    if _answers(url):
        raise ServeError(f"something already answers at {url} before its serve command started; stop it (or change the port), so the crawl sees the site the command serves")
    with tempfile.TemporaryFile() as log:
        try:
            process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        except OSError as exc:
            raise ServeError(f"serve command {command[0]!r} could not start: {exc.strerror or exc}") from None
        try:
            deadline = time.monotonic() + ready_timeout
            while not _answers(url):
                if process.poll() is not None:
                    log.seek(0)
                    tail = log.read().decode("utf-8", "replace").strip().splitlines()[-3:]
                    raise ServeError(f"serve command exited with status {process.returncode} before {url} answered: {' | '.join(tail) or 'no output'}")
                if time.monotonic() > deadline:
                    raise ServeError(f"{url} did not answer within {ready_timeout:g} s of starting the serve command")
                time.sleep(0.1)
            yield
        finally:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
