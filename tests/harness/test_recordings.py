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

import pytest

from taskloom.harness.agents.base import AgentSpec
from taskloom.harness.service import Harness
from taskloom.harness.store import RunSpec, RunStore
from taskloom.server.app import build_server
from taskloom.tools.environment.manager import HAR_FILE, TRACE_FILE
from taskloom.tools.environment.site import serve_static
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


def test_nothing_is_recorded_unless_asked(settings: Settings, site: str) -> None:
    small_run(settings, site, "plain")
    results = RunStore(Workspace(settings.workspace), "plain").results()
    folders = [Path(r.trajectory or "").parent for r in results]
    assert len(folders) == 2 and all(f.is_dir() for f in folders)
    assert not any((f / HAR_FILE).exists() or (f / TRACE_FILE).exists() for f in folders)


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
