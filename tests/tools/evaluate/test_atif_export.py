"""ATIF trajectories from runs: the conversion, our models of the format, the CLI, and Harbor's own validator."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.evaluate.atif import AtifExport, AtifTrajectory, to_atif, write_atif
from taskloom.tools.evaluate.model import EpisodeResult

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harbor_side import harbor_python  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
RUN = ROOT / "examples" / "run"
TRAJECTORY = RUN / "oracle-dag-2468bc21196f.trajectory.jsonl"
TASKLOOM = Path(sys.executable).parent / "taskloom"


def _results() -> list[EpisodeResult]:
    return [EpisodeResult.model_validate_json(line) for line in (RUN / "results.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


def _oracle_on_dag() -> EpisodeResult:
    return next(r for r in _results() if r.task_id == "dag-2468bc21196f" and r.agent == "oracle")


def test_an_episode_becomes_one_atif_trajectory_with_a_step_per_action() -> None:
    trajectory = load_trajectory(TRAJECTORY)
    result = _oracle_on_dag()
    doc = to_atif(result, trajectory, "Borrow the book …", "0.1.0")
    data = json.loads(doc.model_dump_json(exclude_none=True))
    again = AtifTrajectory.model_validate(data)  # what we write is valid by our model of the format
    assert again.schema_version == "ATIF-v1.4" and again.session_id == trajectory.episode.episode_id
    steps = data["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    assert steps[0] == {"step_id": 1, "timestamp": steps[0]["timestamp"], "source": "user", "message": "Borrow the book …"}
    actions = [s for s in steps if s["source"] == "agent"]
    assert len(actions) == len(trajectory.actions) == 7
    for step, action in zip(actions, trajectory.actions, strict=True):
        call = step["tool_calls"][0]
        assert call["function_name"] == action.name and call["arguments"] == action.args
        assert step["observation"]["results"][0]["source_call_id"] == call["tool_call_id"]
        assert step["extra"]["canonical"] == action.canonical
    assert steps[-1]["source"] == "system" and steps[-1]["extra"]["success"] is True and steps[-1]["extra"]["scores"]["cr"] == 1.0
    assert data["agent"] == {"name": "oracle", "version": "0.1.0"} and data["extra"]["task_id"] == "dag-2468bc21196f"
    text = json.dumps(data)
    assert "\"holds\"" not in text and "url_matches|" not in text, "success criteria never ride along"


def test_an_answer_is_the_last_agent_message_and_a_missing_trajectory_keeps_instruction_and_verdict() -> None:
    result = next(r for r in _results() if r.answer and r.task_kind == "document")
    doc = to_atif(result, None, None, "0.1.0")
    assert [s.source for s in doc.steps] == ["user", "agent", "system"]
    assert doc.steps[1].message == result.answer and doc.steps[1].extra == {"kind": "answer"}
    assert result.task_id in doc.steps[0].message and "not stored" in doc.steps[0].message


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (lambda d: d["steps"].__setitem__(1, {**d["steps"][1], "step_id": 5}), "step_id must count"),
        (lambda d: d["steps"][0].__setitem__("tool_calls", [{"tool_call_id": "x", "function_name": "f", "arguments": {}}]), "agent steps only"),
        (lambda d: d["steps"][1]["observation"]["results"][0].__setitem__("source_call_id", "call-99"), "does not make"),
        (lambda d: d["steps"][1].__setitem__("timestamp", "yesterday"), "timestamp"),
        (lambda d: d.__setitem__("schema_version", "ATIF-v9"), "schema_version"),
        (lambda d: d["agent"].__setitem__("colour", "red"), "colour"),
    ],
)
def test_our_model_of_atif_refuses_what_the_format_forbids(change: object, complaint: str) -> None:
    data = json.loads(to_atif(_oracle_on_dag(), load_trajectory(TRAJECTORY), "go", "0.1.0").model_dump_json(exclude_none=True))
    change(data)  # type: ignore[operator]
    with pytest.raises(ValidationError, match=complaint):
        AtifTrajectory.model_validate(data)


def test_write_atif_names_files_by_task_and_agent_and_never_overwrites_silently(tmp_path: Path) -> None:
    results = [r for r in _results() if r.task_id == "dag-2468bc21196f"]
    report = write_atif(results, tmp_path, {}, lambda r: TRAJECTORY if r.agent == "oracle" else None, "0.1.0")
    assert sorted(report.written) == sorted(f"dag-2468bc21196f__{r.agent}.json" for r in results)
    assert sorted(report.without_trajectory) == sorted(f"dag-2468bc21196f__{r.agent}.json" for r in results if r.agent != "oracle")
    for name in report.written:
        AtifTrajectory.model_validate_json((tmp_path / name).read_text(encoding="utf-8"))
    from taskloom.tools.errors import InputError

    with pytest.raises(InputError, match="--overwrite"):
        write_atif(results, tmp_path, {}, lambda r: None, "0.1.0")


def _workspace_with_example_run(tmp_path: Path) -> tuple[Path, str]:
    """A workspace holding the example run, with the oracle's trajectory where the run store keeps episodes."""
    workspace = tmp_path / "ws"
    run_id = _oracle_on_dag().run_id
    assert run_id is not None
    folder = workspace / "runs" / run_id
    folder.mkdir(parents=True)
    for name in ("run.json", "results.jsonl"):
        shutil.copyfile(RUN / name, folder / name)
    episode = folder / "episodes" / "dag-2468bc21196f" / "oracle" / "ep-f8f8d13eff3d"
    episode.mkdir(parents=True)
    shutil.copyfile(TRAJECTORY, episode / "trajectory.jsonl")
    return workspace, run_id


def _taskloom(workspace: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(TASKLOOM_WORKSPACE=str(workspace), TASKLOOM_EMBEDDER="hashing", FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off")
    return subprocess.run([str(TASKLOOM), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.integration
def test_cli_exports_a_run_as_atif_files(tmp_path: Path) -> None:
    workspace, run_id = _workspace_with_example_run(tmp_path)
    done = _taskloom(workspace, tmp_path, "runs", "export", run_id, "--format", "atif", "--out", "atif")
    assert done.returncode == 0, done.stderr
    report = AtifExport.model_validate_json(done.stdout)
    assert len(report.written) == len(_results())
    oracle = AtifTrajectory.model_validate_json((tmp_path / "atif" / "dag-2468bc21196f__oracle.json").read_text(encoding="utf-8"))
    assert sum(1 for s in oracle.steps if s.tool_calls) == 7, "the trajectory was found in the run's episode folder"
    again = _taskloom(workspace, tmp_path, "runs", "export", run_id, "--out", "atif")
    assert again.returncode == 2 and "--overwrite" in again.stderr
    unknown = _taskloom(workspace, tmp_path, "runs", "export", "run-nope", "--out", "atif")
    assert unknown.returncode == 2 and "no run 'run-nope'" in unknown.stderr


@pytest.mark.integration
@pytest.mark.slow
def test_harbors_own_validator_accepts_the_exported_trajectories(tmp_path: Path) -> None:
    """Harbor's TrajectoryValidator (in a side venv: the ``harbor`` package needs Python ≥ 3.12) accepts every file."""
    python = harbor_python()
    results = _results()
    write_atif(results, tmp_path, {}, lambda r: TRAJECTORY if (r.task_id, r.agent) == ("dag-2468bc21196f", "oracle") else None, "0.1.0")
    script = (
        "import sys, pathlib\n"
        "from harbor.utils.trajectory_validator import TrajectoryValidator\n"
        "bad = 0\n"
        "for f in sorted(pathlib.Path(sys.argv[1]).glob('*.json')):\n"
        "    v = TrajectoryValidator()\n"
        "    if not v.validate(f):\n"
        "        bad += 1; print(f.name, v.get_errors())\n"
        "print('checked', len(list(pathlib.Path(sys.argv[1]).glob('*.json'))))\n"
        "sys.exit(bad)\n"
    )
    done = subprocess.run([str(python), "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"checked {len(results)}" in done.stdout
