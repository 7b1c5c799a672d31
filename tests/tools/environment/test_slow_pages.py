"""Slow and huge pages never abort an episode or a generation: snapshots are cut with a marker, limits are settings,
a page that takes too long is told to the agent, and a replay candidate whose page hangs is dropped with its reason.

The pages are served on 127.0.0.1 by a ThreadingHTTPServer in this file: a 3,000-row table, a page whose server
answers only after a few seconds, one whose server never answers, and one whose script holds the page's thread.
"""

from __future__ import annotations

import asyncio
import http.server
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastmcp import Client

from taskloom.harness.agents.base import Job
from taskloom.harness.agents.scripted import OracleAgent
from taskloom.harness.store import RunStore
from taskloom.server.app import build_server
from taskloom.tools.environment.limits import EpisodeLimits
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.web.paths import verify_web_tasks
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import GoldStep, Provenance, SuccessCriterion, Task
from taskloom.tools.tasks.store import TaskStore
from taskloom.tools.workspace import Workspace

from .browser_site import act, refused, trajectory_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROWS = 3_000
#: How long /slow keeps its answer back, seconds: far longer than the tests' navigation timeout (which a small page meets even on a busy machine).
SLOW_S = 20.0
#: The tests' navigation timeout, ms.
QUICK_MS = 5_000
TABLE = (
    "<!doctype html><html><head><title>Specimens</title></head><body><h1>Specimens</h1><table>"
    "<thead><tr><th>Id</th><th>Name</th><th>Mass</th><th>Record</th></tr></thead><tbody>"
    + "".join(f'<tr><td>{i}</td><td>Specimen {i}</td><td>{3000 + i * 7} g</td><td><a href="/page/{i}">open {i}</a></td></tr>' for i in range(1, ROWS + 1))
    + "</tbody></table></body></html>"
)
#: A page whose script, once the page has loaded, holds the page's only thread for good: nothing in it ever answers again.
#: The loop starts the moment the load event is handled (a delay would let a quick click through first).
SPIN = (
    "<!doctype html><title>Spinning</title><p>Loading…</p><a id='next' href='/page/2'>next</a>"
    "<script>addEventListener('load', () => setTimeout(() => { for (;;) {} }, 0))</script>"
)


def _page(n: int) -> str:
    return f"<!doctype html><title>Record {n}</title><h1>Record {n}</h1><p>Specimen {n} weighs {3000 + n * 7} g.</p><a id='next' href='/page/{n + 1}'>next</a>"


class _Handler(http.server.BaseHTTPRequestHandler):
    release: threading.Event

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - signature from the base class
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = self.path.split("?")[0]
        if path == "/table":
            body = TABLE
        elif path == "/slow":
            self.release.wait(SLOW_S)
            body = _page(0)
        elif path == "/hang":
            self.release.wait()  # answers only when the test is over
            body = _page(0)
        elif path == "/spin":
            body = SPIN
        elif m := re.fullmatch(r"/page/(\d+)", path):
            body = _page(int(m.group(1)))
        else:
            self.send_error(404)
            return
        data = body.encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            return  # the browser gave up waiting (a navigation timeout): nobody reads this answer


@dataclass
class Pages:
    base: str  # with no trailing slash


@pytest.fixture(scope="module")
def pages() -> Iterator[Pages]:
    release = threading.Event()

    class Handler(_Handler):
        pass

    Handler.release = release
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Pages(f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _settings(settings: Settings, **limits: object) -> Settings:
    return settings.model_copy(update=limits)


def test_limits_are_settings_with_generous_defaults() -> None:
    limits = EpisodeLimits.from_settings(Settings(snapshot_timeout_ms=1, snapshot_max_chars=0, navigation_timeout_ms=500))
    assert (limits.snapshot_timeout_ms, limits.max_chars, limits.navigation_timeout_ms) == (1, None, 500)
    default = EpisodeLimits.from_settings(Settings())
    assert default.snapshot_timeout_ms >= 30_000 and default.max_chars == 100_000 and default.navigation_timeout_ms >= 15_000
    with pytest.raises(ValueError, match="snapshot_max_chars"):
        Settings(snapshot_max_chars=50)


@pytest.mark.anyio
async def test_a_huge_snapshot_is_cut_with_a_marker_saying_how_to_see_the_rest(settings: Settings, pages: Pages) -> None:
    async with Client(build_server(settings, profile="agent")) as client:
        started = await act(client, "env_start", url=pages.base + "/table")
        body, marker = started["snapshot"].rsplit("\n", 1)
        found = re.fullmatch(
            r"\[… snapshot truncated at 100000 of (\d+) characters \((\d+) left out\); call browser_snapshot with target=<a ref shown above> "
            r"to see one part, with depth=N for an outline, or with maxChars=(\d+) for the whole page\]",
            marker,
        )
        assert found, marker
        total, left_out = int(found.group(1)), int(found.group(2))
        assert total > 300_000 and len(body) <= 100_000 and len(body) + left_out == total and int(found.group(3)) == total
        assert 'cell "Specimen 1"' in body and 'cell "Specimen 2999"' not in body
        whole = (await act(client, "browser_snapshot", maxChars=total))["snapshot"]
        assert len(whole) == total and "snapshot truncated" not in whole and "Specimen 2999" in whole and whole.startswith(body)
        await act(client, "env_close")


@pytest.mark.anyio
async def test_a_snapshot_past_its_time_limit_is_a_note_not_a_crash(settings: Settings, pages: Pages) -> None:
    tiny = _settings(settings, snapshot_timeout_ms=1)
    async with Client(build_server(tiny, profile="agent")) as client:
        started = await act(client, "env_start", url=pages.base + "/table")
        assert started["url"] == pages.base + "/table"
        assert started["snapshot"].startswith("(no snapshot: the page's accessibility snapshot did not finish within 0.001 s (")
        assert "snapshot_timeout_ms" in started["snapshot"] and "[ref=" not in started["snapshot"]
        looked = (await act(client, "browser_snapshot"))["snapshot"]
        assert looked.startswith("(no snapshot:") and "The action itself was done" not in looked
        clicked = await act(client, "browser_click", target="css=a[href='/page/2999']")  # the episode still acts
        assert clicked["url"] == pages.base + "/page/2999"
        closed = await act(client, "env_close")
    actions = trajectory_of(tiny, closed["episode_id"]).actions
    assert [(a.name, a.error) for a in actions] == [("navigate", None), ("snapshot", None), ("click", None)]


@pytest.mark.anyio
async def test_a_page_that_loads_too_slowly_is_a_clear_error_and_the_episode_goes_on(settings: Settings, pages: Pages) -> None:
    quick = _settings(settings, navigation_timeout_ms=QUICK_MS)
    async with Client(build_server(quick, profile="agent")) as client:
        await act(client, "env_start", url=pages.base + "/page/1")
        message = await refused(client, "browser_navigate", url=pages.base + "/slow")
        assert message.startswith(f"timed out: Page.goto: Timeout {QUICK_MS}ms exceeded") and "navigation_timeout_ms" in message, message
        again = await act(client, "browser_navigate", url=pages.base + "/page/5")
        assert "Specimen 5 weighs 3035 g" in again["snapshot"]
        first = await act(client, "env_close")
        # a slow start page leaves the episode open, told why
        started = await act(client, "env_start", url=pages.base + "/slow")
        assert started["snapshot"].startswith(f"(the start page {pages.base}/slow did not load in time: timed out: Page.goto: Timeout {QUICK_MS}ms exceeded")
        moved = await act(client, "browser_navigate", url=pages.base + "/page/6")
        assert moved["url"] == pages.base + "/page/6"
        await act(client, "env_close")
    actions = trajectory_of(quick, first["episode_id"]).actions
    assert [a.name for a in actions] == ["navigate", "navigate", "navigate"]
    assert actions[1].error is not None and "timed out" in actions[1].error and actions[2].error is None


def test_the_oracle_survives_slow_pages_and_still_answers(tmp_path: Path, pages: Pages) -> None:
    task = Task(
        id="web-slow-oracle",
        kind="web",
        type="lookup",
        instruction="How much does specimen 7 weigh?",
        start_url=pages.base + "/page/1",
        allowed_domains=["127.0.0.1"],
        gold_steps=[GoldStep(action="navigate", text=pages.base + "/table"), GoldStep(action="navigate", text=pages.base + "/slow")],
        gold_answer="3049 g",
        success=[SuccessCriterion(kind="text_present", value="Specimen")],
        provenance=Provenance(graph_id="hand-written", generator="test"),
    )
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing", snapshot_timeout_ms=1, navigation_timeout_ms=QUICK_MS)
    TaskStore(Workspace(settings.workspace)).save(task)
    job = Job(task=task, agent="oracle", episodes_dir=tmp_path / "episodes", settings=settings, server_factory=build_server)

    async def attempt() -> None:
        async with job.connect() as client:
            await OracleAgent().attempt(job, client)

    asyncio.run(attempt())
    path = RunStore.trajectory_in(job.episodes_dir)
    assert path is not None
    trajectory = load_trajectory(path)
    assert trajectory.answer == "3049 g" and trajectory.closed is not None
    navigations = [(a.args.get("url"), a.error) for a in trajectory.actions if a.name == "navigate"]
    assert navigations[1] == (pages.base + "/table", None)  # its snapshot timed out: a note, not an error
    assert navigations[2][0] == pages.base + "/slow" and navigations[2][1] is not None and "timed out" in navigations[2][1]


def _candidate(pages: Pages, name: str, start: str, goal: int) -> Task:
    return Task(
        id=f"web-{name}",
        kind="web",
        type="navigate",
        instruction=f"Open record {goal}.",
        start_url=pages.base + start,
        allowed_domains=["127.0.0.1"],
        gold_steps=[GoldStep(action="click", selector="a#next")],
        success=[SuccessCriterion(kind="url_matches", value=f"/page/{goal}$")],
        provenance=Provenance(graph_id="hand-written", generator="test"),
    )


def test_replay_drops_the_candidate_whose_page_hangs_and_keeps_the_others(tmp_path: Path, pages: Pages) -> None:
    tasks = [
        _candidate(pages, "first", "/page/1", 2),
        _candidate(pages, "no-answer", "/hang", 2),
        _candidate(pages, "spinning", "/spin", 2),
        _candidate(pages, "last", "/page/3", 4),
    ]
    limits = {"navigation_timeout_ms": QUICK_MS, "snapshot_timeout_ms": 2_000, "action_timeout_ms": 1_000, "replay_timeout": 15}
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing", **limits)
    report = GenerationReport()

    async def go() -> list[Task]:
        async with Runtime(settings, screenshots=False) as runtime:
            return await verify_web_tasks(tasks, runtime.episodes, report)

    kept = asyncio.run(go())
    assert [t.id for t in kept] == ["web-first", "web-last"], report.dropped
    assert all(t.gold_trajectory for t in kept)
    dropped = {d.task_id: d for d in report.dropped}
    assert set(dropped) == {"web-no-answer", "web-spinning"} and {d.stage for d in dropped.values()} == {"replay"}
    assert dropped["web-no-answer"].reason.startswith(f"the start page did not load: timed out: Page.goto: Timeout {QUICK_MS}ms exceeded"), dropped
    spun = dropped["web-spinning"].reason
    assert "did not finish within 15 s (the replay_timeout setting)" in spun or "timed out" in spun, spun
