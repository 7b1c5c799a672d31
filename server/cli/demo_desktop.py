"""The demo's desktop step: a few desktop tasks per application and a value chain on a workbook, generated (gold replayed in a fresh
session) and run by the oracle and the explorer baseline."""

from __future__ import annotations

import time

from ...harness.service import Harness
from ...tools.environment.desktop import EnvironmentUnavailable
from ...tools.runtime import Runtime
from ...tools.tasks.model import Task
from ..app import build_server
from .common import console, run

__all__ = ["desktop_demo"]

APPS = ("pcmanfm", "mousepad")


def desktop_demo(runtime: Runtime, count: int) -> None:
    """Generate ``count`` tasks per desktop application, show one per family with its checks, run the oracle; skipped with the reason when no desktop."""
    started = time.monotonic()
    console.print("desktop tasks (each gold replayed in a fresh display, bus, application and home folder) …")
    service = runtime.task_service()
    ids: list[str] = []
    try:
        for app in APPS:
            result = run(runtime.run, lambda app=app: service.generate(f"desktop:{app}", count=count, seed=0, use_llm=False))
            stages = ", ".join(f"{name} {v['kept']}/{v['in']}" for name, v in result.report.stages.items())
            console.print(f"  desktop:{app}: kept {len(result.task_ids)} ({stages})", highlight=False)
            ids += result.task_ids
            if result.task_ids:
                _show(runtime.tasks.load(result.task_ids[0]))
        chains = run(runtime.run, lambda: service.compose("desktop:gnumeric", "chain", count=1, levels=3, seed=0))
        reached = ", ".join(f"{c.listing} to level {c.reached} ({c.stopped})" for c in chains.chains)
        console.print(f"  desktop:gnumeric value chain: {reached}", highlight=False, markup=False)
        if chains.task_ids:
            top = max((runtime.tasks.load(i) for i in chains.task_ids), key=lambda t: t.level or 0)
            _show(top)
            ids.append(top.id)
    except EnvironmentUnavailable as exc:
        console.print(f"  skipped: {exc}", highlight=False, markup=False)
        return
    harness = Harness(runtime.settings, build_server, runtime=runtime)
    tasks = run(harness.select, ids)
    report = run(runtime.run, lambda: harness.run(tasks, ["oracle", "explorer"], concurrency=1, max_steps=40, timeout_s=60))
    console.print(f"  the oracle and the explorer baseline on {len(tasks)} desktop tasks, by family:\n{report.family_text()}", highlight=False, markup=False)
    console.print(f"  desktop report: {report.html} (the desktop step took {time.monotonic() - started:.0f} s)", highlight=False)


def _show(task: Task) -> None:
    checks = "; ".join(f"{c.kind} {c.value!r}" for c in task.success) or f"the answer, {task.answer_kind} (gold {task.gold_answer!r})"
    console.print(f"    [{task.type}] {task.instruction}\n      check: {checks}", highlight=False, markup=False)
