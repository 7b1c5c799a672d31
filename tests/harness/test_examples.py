"""The bundled example tasks file runs as the README says: ingest the field guide, run the tasks file, the oracle succeeds."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskloom.harness.service import Harness, load_tasks_file
from taskloom.server.app import build_server
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "examples" / "tasks" / "field-guide-document-tasks.jsonl"


@pytest.mark.integration
def test_the_example_document_tasks_run_after_ingesting_the_field_guide(settings: Settings) -> None:
    graph_id = GraphService(settings).ingest_document(ROOT / "examples" / "documents" / "field-guide.pdf").graph_id
    tasks = load_tasks_file(TASKS)
    assert tasks and {t.provenance.graph_id for t in tasks} == {graph_id}  # same file, same graph id and node ids
    harness = Harness(settings, build_server)
    report = asyncio.run(harness.run(harness.select(tasks_file=TASKS), ["oracle"], run_id="example", max_steps=8))
    [oracle] = report.summary.per_agent
    assert oracle.episodes == len(tasks) and oracle.success_rate == 1.0
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")} | settings.to_env()
    shown = subprocess.run([sys.executable, "-m", "taskloom.server.cli", "report", "example"], env=env, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "oracle" in shown.stdout and "100.0%" in shown.stdout and str(report.html) in shown.stdout
    missing = subprocess.run([sys.executable, "-m", "taskloom.server.cli", "report", "nope"], env=env, capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "no run 'nope'" in missing.stderr and "Traceback" not in missing.stderr


def test_the_example_composite_tasks_are_complete_composites() -> None:
    tasks = load_tasks_file(ROOT / "examples" / "tasks" / "example-site-composite-tasks.jsonl")
    chains = [t for t in tasks if t.type == "chained"]
    graphs = [t for t in tasks if t.type == "task_graph"]
    assert chains and graphs
    for task in chains:
        assert task.level == len(task.subtasks) and len(task.dag) == task.level - 1 and task.gold_steps and task.success
    for task in graphs:
        assert task.dag and task.order_count and task.orders and set(task.complexity) == {"dependency", "instruction", "knowledge", "hierarchy", "branch"}


def test_tasks_export_as_inspect_samples(settings: Settings) -> None:
    from taskloom.tools.tasks import TaskStore
    from taskloom.tools.workspace import Workspace

    store = TaskStore(Workspace(settings.workspace))
    for task in load_tasks_file(TASKS) + load_tasks_file(ROOT / "examples" / "tasks" / "example-site-composite-tasks.jsonl"):
        store.save(task)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")} | settings.to_env()
    done = subprocess.run([sys.executable, "-m", "taskloom.server.cli", "tasks", "export", "--format", "inspect"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    samples = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(samples) == len(store.list())
    for sample in samples:
        task = store.load(sample["id"])
        assert set(sample) == {"id", "input", "target", "metadata"} and sample["input"] == task.instruction
        assert sample["target"] == (task.gold_answer or "")
        assert sample["metadata"]["kind"] == task.kind
        if task.kind == "composite":
            assert sample["metadata"]["success"] and sample["metadata"]["dag"] is not None
    bad = subprocess.run([sys.executable, "-m", "taskloom.server.cli", "tasks", "export", "--format", "csv"], env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown export format" in bad.stderr
