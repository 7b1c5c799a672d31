"""Per-episode recordings: ``record=["har", "trace"]`` leaves a HAR file and a Playwright trace beside each trajectory."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from taskloom.harness.agents.base import AgentSpec
from taskloom.harness.service import Harness
from taskloom.harness.store import RunSpec, RunStore
from taskloom.server.app import build_server
from taskloom.tools.environment.manager import FINAL_SCREENSHOT, HAR_FILE, TRACE_FILE
from taskloom.tools.environment.site import serve_static
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.settings import Settings
from taskloom.tools.tasks import TaskStore
from taskloom.tools.workspace import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from small_run import small_run, tasks  # noqa: E402

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with serve_static() as served:
        yield served.url + "/"


def test_har_and_trace_are_stored_with_each_episode(settings: Settings, site: str) -> None:
    small_run(settings, site, "rec", record=["har", "trace"])
    store = RunStore(Workspace(settings.workspace), "rec")
    assert store.spec().record == ["har", "trace"]
    results = store.results()
    assert len(results) == 2
    for result in results:
        folder = Path(result.trajectory or "").parent
        har = json.loads((folder / HAR_FILE).read_text(encoding="utf-8"))
        urls = [entry["request"]["url"] for entry in har["log"]["entries"]]
        assert any(u.endswith("/index.html") for u in urls) and any(u.endswith("/about.html") for u in urls), urls
        with zipfile.ZipFile(folder / TRACE_FILE) as trace:
            names = trace.namelist()
            assert trace.testzip() is None
            assert any(n.endswith(".trace") for n in names) and any(n.endswith(".network") for n in names), names
            assert any(n.startswith("resources/") for n in names), "no screenshots or snapshot resources"
            events = [json.loads(line) for n in names if n.endswith(".trace") for line in trace.read(n).decode().splitlines() if line.strip()]
        kinds = {e.get("type") for e in events}
        assert "screencast-frame" in kinds and "frame-snapshot" in kinds, kinds


def test_nothing_is_recorded_unless_asked_but_a_failure_keeps_its_last_screenshot(settings: Settings, site: str) -> None:
    """Screenshots off: the passing episode stores none; the failing one keeps its final page, linked from the report,
    whose header counts it as failed (its status is ``finished``: the agent stopped by itself)."""
    report = small_run(settings, site, "plain")
    results = {r.task_id: r for r in RunStore(Workspace(settings.workspace), "plain").results()}
    folders = {t: Path(r.trajectory or "").parent for t, r in results.items()}
    assert len(folders) == 2 and all(f.is_dir() for f in folders.values())
    assert not any((f / HAR_FILE).exists() or (f / TRACE_FILE).exists() for f in folders.values())
    assert not settings.record_screenshots and list((folders["passing"] / "screenshots").iterdir()) == []
    final = folders["failing"] / FINAL_SCREENSHOT
    assert [p.name for p in (folders["failing"] / "screenshots").iterdir()] == ["final.png"]
    assert final.read_bytes().startswith(b"\x89PNG") and final.stat().st_size > 1_000
    closed = load_trajectory(Path(results["failing"].trajectory or "")).closed
    assert closed is not None and closed.screenshot == FINAL_SCREENSHOT and closed.success is False
    html = report.html.read_text(encoding="utf-8")
    href = quote(os.path.relpath(final.resolve(), report.html.parent.resolve()))
    assert f'<figure class="last"><a href="{href}">' in html and html.count('<figure class="last">') == 1
    # The header agrees with the badges: one failed episode, though no episode has the status "failed".
    assert (results["failing"].status, results["failing"].success) == ("finished", False)
    summary = report.summary
    assert (summary.successes, summary.unsuccessful, summary.statuses["failed"]) == (1, 1, 0)
    assert summary.outcomes == {"success": 1, "failed": 1, "timeout": 0, "crashed": 0}
    header = html[html.index("<header>") : html.index("</header>")]
    assert '<strong>1</strong>unsuccessful' in header and '<strong>1</strong>failed' in header
    assert '<strong>0</strong>timeout' in header and '<strong>0</strong>crashed' in header
    assert html.count('<span class="badge failed">') == 1
    assert json.loads(report.summary_json.read_text(encoding="utf-8"))["summary"]["outcomes"]["failed"] == 1


def test_a_resumed_run_records_what_its_plan_says(settings: Settings, site: str) -> None:
    """``resume`` takes the recordings from run.json, whatever the settings say, and leaves the settings as they were."""
    harness = Harness(settings, build_server)
    chosen = tasks(site)[:1]
    for task in chosen:
        harness.tasks.save(task)
    store = RunStore(Workspace(settings.workspace), "planned")
    store.create(RunSpec(run_id="planned", task_ids=[t.id for t in chosen], agents=[AgentSpec.parse("oracle")], max_steps=5, timeout_s=60, record=["har"]))
    asyncio.run(harness.resume("planned"))
    (result,) = store.results()
    folder = Path(result.trajectory or "").parent
    assert result.success and (folder / HAR_FILE).is_file() and not (folder / TRACE_FILE).exists()
    assert harness.runtime.settings.record == [] and harness.settings.record == []


def test_the_cli_records_what_record_names(tmp_path: Path, site: str) -> None:
    """``taskloom run --record har`` end to end: the plan says so, the episode folder holds the HAR, ``runs show`` says so."""
    workspace = tmp_path / "ws"
    store = TaskStore(Workspace(workspace))
    for task in tasks(site)[:1]:
        store.save(task)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(TASKLOOM_WORKSPACE=str(workspace), TASKLOOM_EMBEDDER="hashing", FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off")
    taskloom = [str(Path(sys.executable).parent / "taskloom")]
    done = subprocess.run([*taskloom, "run", "--task", "passing", "--agent", "oracle", "--run-id", "cli", "--record", "HAR", "--max-steps", "5"],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run = RunStore(Workspace(workspace), "cli")
    assert run.spec().record == ["har"]
    (result,) = run.results()
    assert result.success and (Path(result.trajectory or "").parent / HAR_FILE).is_file()
    shown = subprocess.run([*taskloom, "runs", "show", "cli"], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "record har" in shown.stdout and "episodes 1/1  success 1/1 (100%)" in shown.stdout
