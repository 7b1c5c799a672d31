"""Run resources: tasks, runs, trajectories, consensus graphs and reports as ``taskloom://`` URIs (full profile only)."""

from __future__ import annotations

import json
from pathlib import Path

from fastmcp import FastMCP

from ..harness.store import RunStore
from ..tools.environment.trajectory import load_trajectory
from ..tools.errors import NotFoundError
from ..tools.evaluate.summary import summarize
from ..tools.tasks.store import TaskStore
from ..tools.workspace import Workspace

__all__ = ["register", "latest_consensus"]


def latest_consensus(workspace: Workspace, tasks: TaskStore, task_id: str) -> Path:
    """The most recent consensus graph of a task, from any run (or an ad-hoc consensus_build)."""
    tasks.path(task_id)  # validates the id: no path tricks
    found = sorted(workspace.runs.glob(f"*/consensus/{task_id}.json"), key=lambda p: (p.stat().st_mtime, str(p)))
    if not found:
        raise NotFoundError(f"no consensus graph for task {task_id!r}; run agents on it (taskloom run) or call consensus_build")
    return found[-1]


def register(mcp: FastMCP, workspace: Workspace, tasks: TaskStore) -> None:
    """Add the task, run, trajectory, consensus and report resources to ``mcp`` (``tasks``: the runtime's task store)."""

    @mcp.resource("taskloom://tasks/{task_id}", mime_type="application/json")
    def task(task_id: str) -> str:
        """One task in full, gold fields included (the full profile is for people and generation, not agents under test)."""
        return tasks.load(task_id).model_dump_json()

    @mcp.resource("taskloom://runs", mime_type="application/json")
    def runs() -> str:
        """All runs: id, tasks, agents, episodes finished."""
        rows = []
        for path in sorted(workspace.runs.glob("*/run.json")):
            store = RunStore(workspace, path.parent.name)
            spec = store.spec()
            rows.append({"run_id": spec.run_id, "tasks": len(spec.task_ids), "agents": [a.name for a in spec.agents], "finished": len(store.done())})
        return json.dumps(rows)

    @mcp.resource("taskloom://runs/{run_id}", mime_type="application/json")
    def run(run_id: str) -> str:
        """One run: its plan, its results and their summary."""
        store = RunStore(workspace, run_id)
        results = store.results()
        return json.dumps({
            "spec": store.spec().model_dump(mode="json"),
            "summary": summarize(results).model_dump(mode="json"),
            "results": [r.model_dump(mode="json") for r in results],
        })

    @mcp.resource("taskloom://runs/{run_id}/trajectories/{trajectory_id}", mime_type="application/json")
    def trajectory(run_id: str, trajectory_id: str) -> str:
        """One recorded trajectory of a run, by its episode id."""
        store = RunStore(workspace, run_id)
        store.spec()
        found = sorted(p for p in store.dir.glob(f"episodes/*/*/{trajectory_id}/trajectory.jsonl") if p.parent.name == trajectory_id)
        if not found:
            raise NotFoundError(f"no trajectory {trajectory_id!r} in run {run_id!r}; see taskloom://runs/{run_id} for episode paths")
        return load_trajectory(found[0]).model_dump_json()

    @mcp.resource("taskloom://consensus/{task_id}", mime_type="application/json")
    def consensus(task_id: str) -> str:
        """The latest consensus graph of a task, with its analyses."""
        return latest_consensus(workspace, tasks, task_id).read_text(encoding="utf-8")

    @mcp.resource("taskloom://reports/{run_id}", mime_type="text/html")
    def report(run_id: str) -> str:
        """A run's self-contained HTML report."""
        RunStore(workspace, run_id)  # validates the id
        path = workspace.reports / run_id / "report.html"
        if not path.is_file():
            raise NotFoundError(f"no report for run {run_id!r}; render it with report_render or `taskloom report {run_id}`")
        return path.read_text(encoding="utf-8")
