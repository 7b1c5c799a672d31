"""Progress on stderr: a rich bar on a terminal, plain lines every few seconds otherwise, nothing with ``--quiet``.

Without a terminal (stderr piped to a file, a CI log, ``2>&1 | tee``) a transient bar
prints nothing at all, so a long ingest looked dead. There, :class:`PlainProgress` prints
the first update at once, then at most one line every :data:`PLAIN_INTERVAL_S` seconds
(a heartbeat repeats the last state when the work goes quiet, so a silent phase still
shows it is alive), and a final line with the elapsed time::

    ingest lmer.pdf: 120/236 (51%) pages parsed, 12 s
    ingest lmer.pdf: done in 4 min 43 s, 3120/3120 (100%) nodes embedded
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

__all__ = ["PLAIN_INTERVAL_S", "ProgressUpdate", "PlainProgress", "progress_lines", "rich_bar", "elapsed_text"]

#: Seconds between plain progress lines (the first and the last are printed regardless).
PLAIN_INTERVAL_S = 3.0

ProgressUpdate = Callable[[float, "float | None", str], None]


def elapsed_text(seconds: float) -> str:
    """``12 s``, ``4 min 43 s``, ``2 h 05 min``.

    >>> elapsed_text(283.4), elapsed_text(7.6), elapsed_text(7500)
    ('4 min 43 s', '8 s', '2 h 05 min')
    """
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class PlainProgress:
    """Progress as plain lines on ``stream``: the first update, then at most one line per ``interval`` seconds, then a final line."""

    def __init__(self, label: str, total: float | None, stream: IO[str], interval: float = PLAIN_INTERVAL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.total, self.stream, self.interval, self.clock = label, total, stream, interval, clock
        self.start = clock()
        self.done: float | None = None
        self.description = ""
        self.last_line: float | None = None
        self._lock = threading.Lock()

    def state(self) -> str:
        """Where the counts are, e.g. ``120/236 (51%) pages parsed``; ``working`` before the first update."""
        if self.done is None:
            return "working"
        counts = f"{self.done:g}/{self.total:g}" if self.total else f"{self.done:g}"
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        return counts + share + (f" {self.description}" if self.description else "")

    def line(self, now: float) -> str:
        """The current state as one line."""
        return f"{self.label}: {self.state()}, {elapsed_text(now - self.start)}"

    def _emit(self, text: str, now: float) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()
        self.last_line = now

    def update(self, done: float, total: float | None, description: str) -> None:
        """Record progress; print it when it is the first update or the last line is ``interval`` old."""
        with self._lock:
            self.done, self.description = done, description
            if total is not None:
                self.total = total
            now = self.clock()
            if self.last_line is None or now - self.last_line >= self.interval:
                self._emit(self.line(now), now)

    def beat(self) -> None:
        """Repeat the state when nothing was printed for ``interval`` seconds (the work may be in a silent phase)."""
        with self._lock:
            now = self.clock()
            if self.last_line is None or now - self.last_line >= self.interval:
                self._emit(self.line(now), now)

    def finish(self) -> None:
        """The final line: how long it took, and where the counts ended."""
        with self._lock:
            now = self.clock()
            tail = "" if self.done is None else f", {self.state()}"
            self._emit(f"{self.label}: done in {elapsed_text(now - self.start)}{tail}", now)


@contextmanager
def progress_lines(label: str, total: float | None, stream: IO[str], interval: float = PLAIN_INTERVAL_S) -> Iterator[ProgressUpdate]:
    """Plain progress lines with a heartbeat thread; the final line only when the work ended without an error."""
    plain = PlainProgress(label, total, stream, interval)
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(interval):
            plain.beat()

    thread = threading.Thread(target=heartbeat, name="taskloom-progress", daemon=True)
    thread.start()
    try:
        yield plain.update
    finally:
        stop.set()
        thread.join()
    plain.finish()


@contextmanager
def rich_bar(label: str, total: float | None, console: Console) -> Iterator[ProgressUpdate]:
    """A transient rich progress bar (on a terminal)."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        handle = bar.add_task(label, total=total)

        def update(done: float, total: float | None, description: str) -> None:
            bar.update(handle, completed=done, total=total, description=description)

        yield update
