"""``taskloom runs`` and ``taskloom runs show``, and the commands that point to them, as a user runs them (subprocesses).

The runs are written through the real run store (plans and results), no browser needed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskloom.harness.agents.base import AgentSpec
from taskloom.harness.store import RunSpec, RunStore, list_runs
from taskloom.tools.evaluate.model import CriterionVerdict, EpisodeResult
from taskloom.tools.workspace import Workspace

TASKLOOM = Path(sys.executable).parent / "taskloom"


def taskloom(*args: str, workspace: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(TASKLOOM_WORKSPACE=str(workspace), TASKLOOM_EMBEDDER="hashing", FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off")
    return subprocess.run([str(TASKLOOM), *args], env=env, capture_output=True, text=True, timeout=120, cwd=workspace.parent)


def result(run_id: str, task: str, agent: str, ok: bool, **kw: object) -> EpisodeResult:
    return EpisodeResult(run_id=run_id, task_id=task, task_kind="web", task_type="lookup", difficulty="easy", agent=agent, success=ok, steps=3, duration_s=1.5, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs (an older finished one, a newer half-done one) and a runs/ folder that is no run."""
    ws = Workspace(tmp_path_factory.mktemp("cli-runs") / "ws")
    agents = [AgentSpec.parse("oracle"), AgentSpec.parse("explorer:seed=1,name=wanderer")]
    old = RunStore(ws, "run-old")
    old.create(RunSpec(run_id="run-old", task_ids=["t1", "t2"], agents=agents, created_at="2026-01-01T10:00:00Z", record=["trace"]))
    old.append(result("run-old", "t1", "oracle", True))
    old.append(result("run-old", "t2", "oracle", True))
    old.append(result("run-old", "t1", "wanderer", True))
    missing = CriterionVerdict(kind="text_present", expected="text 'Dream' on the page", observed="text not found on the page", ok=False)
    old.append(result("run-old", "t2", "wanderer", False, criteria=[missing]))
    new = RunStore(ws, "run-new")
    new.create(RunSpec(run_id="run-new", task_ids=["t1"], agents=agents[:1] + [AgentSpec.parse("word-match")], created_at="2026-02-01T10:00:00Z"))
    new.append(result("run-new", "t1", "word-match", False, status="timeout", reason="no result within 60 s"))
    (ws.runs / "episodes" / "ep-1").mkdir(parents=True)  # the default episode folder: not a run
    return ws.root


def test_list_runs_newest_first_with_counts(workspace: Path) -> None:
    runs = list_runs(Workspace(workspace))
    assert [r.run_id for r in runs] == ["run-new", "run-old"]
    old = runs[1]
    assert (old.tasks, old.planned, old.episodes, old.successes, old.success_rate, old.record) == (2, 4, 4, 3, 0.75, ["trace"])
    assert runs[0].agents == ["oracle", "word-match"] and runs[0].success_rate == 0.0


def test_runs_lists_agents_tasks_success_and_date(workspace: Path) -> None:
    done = taskloom("runs", workspace=workspace)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["run", "date", "agents", "tasks", "episodes", "success"]
    assert lines[1].split()[0] == "run-new" and lines[2].split()[0] == "run-old"
    assert "2026-01-01T10:00:00Z" in lines[2] and "oracle, wanderer" in lines[2] and "4/4" in lines[2] and "3/4 (75%)" in lines[2]
    assert "1/2" in lines[1] and "0/1 (0%)" in lines[1]
    as_json = json.loads(taskloom("runs", "--json", workspace=workspace).stdout)
    assert [r["run_id"] for r in as_json] == ["run-new", "run-old"]


def test_runs_show_gives_the_plan_agents_episodes_and_paths(workspace: Path) -> None:
    done = taskloom("runs", "show", "run-old", workspace=workspace)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "run run-old" in out and "record trace" in out and "episodes 4/4  success 3/4 (75%)" in out
    assert any(line.split() == ["wanderer", "2", "1/2", "(50%)"] for line in out.splitlines())
    failing = next(line for line in out.splitlines() if line.startswith("fail"))
    assert "wanderer" in failing and "t2" in failing and "expected text 'Dream' on the page, observed text not found on the page" in failing
    assert f"results: {workspace / 'runs' / 'run-old' / 'results.jsonl'}" in out
    assert "report:  none yet; write it with `taskloom report run-old`" in out
    shown = json.loads(taskloom("runs", "show", "run-new", "--json", workspace=workspace).stdout)
    assert shown["overview"]["episodes"] == 1 and shown["results"][0]["status"] == "timeout" and shown["paths"]["report"] is None


@pytest.mark.parametrize("argv", [("runs", "show", "nosuchrun"), ("report", "nosuchrun")], ids=" ".join)
def test_an_unknown_run_points_to_taskloom_runs(workspace: Path, argv: tuple[str, ...]) -> None:
    done = taskloom(*argv, workspace=workspace)
    assert done.returncode == 2
    assert "no run 'nosuchrun'" in done.stderr and "`taskloom runs`" in done.stderr and "Traceback" not in done.stderr


def test_run_refuses_an_unknown_recording(workspace: Path) -> None:
    done = taskloom("run", "--agent", "oracle", "--record", "har,video", workspace=workspace)
    assert done.returncode == 2
    assert "--record 'har,video': name har, trace or har,trace (got video)" in done.stderr
