"""Candidate web tasks are replayed ``replay_concurrency`` at once, kept in input order; an application with a state reset replays one at a time.

A local server holds each page's answer back until the next page request arrives (or ``hold``
seconds pass) and counts how many were waiting at once: the replays' overlap is read from the
server, not from a clock. Two replays at once always meet there (only the run's last request waits
out the hold); one at a time never can.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import threading
from collections.abc import Iterator

import pytest

from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.web.paths import verify_web_tasks
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import GoldStep, Provenance, SuccessCriterion, Task

pytestmark = pytest.mark.integration


class _Gauge:
    """Requests for /page/N in flight at once, the most seen, and an event the next request sets."""

    def __init__(self, hold: float) -> None:
        self.hold = hold
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.arrived = threading.Event()


def _serve(gauge: _Gauge) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            if not self.path.startswith("/page/"):
                self.send_error(404)
                return
            n = int(self.path.rsplit("/", 1)[1])
            with gauge.lock:
                gauge.now += 1
                gauge.most = max(gauge.most, gauge.now)
                gauge.arrived.set()
                gauge.arrived = threading.Event()
                waiting = gauge.arrived
            waiting.wait(gauge.hold)  # until another request arrives
            with gauge.lock:
                gauge.now -= 1
            body = f"<!doctype html><title>Page {n}</title><h1>Page {n}</h1><a id='next' href='/page/{n + 1}'>next</a>".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def _task(base: str, n: int) -> Task:
    return Task(
        id=f"web-{n}",
        kind="web",
        type="navigate",
        instruction=f"Open page {n * 10 + 1}.",
        start_url=f"{base}/page/{n * 10}",
        allowed_domains=["127.0.0.1"],
        gold_steps=[GoldStep(action="click", selector="a#next")],
        success=[SuccessCriterion(kind="url_matches", value=f"/page/{n * 10 + 1 if n != 2 else 999}$")],  # web-2's criterion never holds
        provenance=Provenance(graph_id="hand-written", generator="test"),
    )


def _verify(tmp_path_factory: pytest.TempPathFactory, concurrency: int, reset: bool, hold: float) -> tuple[list[str], GenerationReport, int]:
    gauge = _Gauge(hold)
    # a click waits for the page it opens: the actions' timeout outlasts the hold
    settings = Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing", replay_concurrency=concurrency, action_timeout_ms=30_000)
    report = GenerationReport()
    resets: list[int] = []

    async def go(base: str) -> list[Task]:
        async with Runtime(settings, screenshots=False) as runtime:
            if reset:
                runtime.episodes.state_reset = lambda: resets.append(1)
            return await verify_web_tasks([_task(base, n) for n in range(6)], runtime.episodes, report)

    with contextlib.contextmanager(_serve)(gauge) as base:
        kept = asyncio.run(go(base))
    assert not reset or len(resets) == 6
    return [t.id for t in kept], report, gauge.most


def test_replays_overlap_up_to_the_setting_and_keep_the_input_order(tmp_path_factory: pytest.TempPathFactory) -> None:
    kept, report, most = _verify(tmp_path_factory, 2, reset=False, hold=10.0)
    assert kept == ["web-0", "web-1", "web-3", "web-4", "web-5"]
    assert [d.task_id for d in report.dropped] == ["web-2"]
    assert most == 2  # two replays were waiting on the server at once, never three


def test_an_application_with_a_state_reset_replays_one_at_a_time(tmp_path_factory: pytest.TempPathFactory) -> None:
    kept, report, most = _verify(tmp_path_factory, 4, reset=True, hold=0.5)  # a parallel replay would arrive within the hold
    assert kept == ["web-0", "web-1", "web-3", "web-4", "web-5"] and [d.task_id for d in report.dropped] == ["web-2"]
    assert most == 1
