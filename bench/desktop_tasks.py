"""Desktop tasks end to end, in one run: what generation keeps per application and family, chains by level, and who solves them.

In a fresh workspace (hashing embedder, no LLM), with seed 0:

* ``taskloom generate desktop:<app> --count N`` for pcmanfm, mousepad and gnumeric: kept tasks per
  family, candidates replayed, drops by stage, seconds;
* ``taskloom compose desktop:gnumeric`` with ``--mode chain`` (``--chains`` chains, levels 1-6) and
  ``--mode dag`` (``--graphs`` graphs): the level each chain reached and why it stopped;
* the harness's ``oracle`` and ``explorer`` on every kept task: success per family and per level.

A floor beside the absolute times: one desktop episode started and stopped (mousepad), timed in the
same run, so each stage also reads as a number of episode starts. The last line is ``RESULT {json}``.

    .venv/bin/python bench/desktop_tasks.py
    .venv/bin/python bench/desktop_tasks.py --count 4 --chains 1 --graphs 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import Counter, defaultdict
from typing import Any

APPS = ("pcmanfm", "mousepad", "gnumeric")


def _floor() -> float:
    """One mousepad episode started (display, buses, application, ready) and stopped, in seconds."""
    from taskloom.tools.environment.desktop_session import APPS as SESSIONS, DesktopSession

    t = time.perf_counter()
    session = DesktopSession(SESSIONS["mousepad"], files={"notes.txt": "a\n"}, open_files=["notes.txt"]).start()
    session.stop()
    return time.perf_counter() - t


async def _run(args: argparse.Namespace, workspace: str) -> dict[str, Any]:
    from taskloom.harness.service import Harness
    from taskloom.harness.store import RunStore
    from taskloom.server.app import build_server
    from taskloom.tools.runtime import Runtime
    from taskloom.tools.settings import Settings
    from taskloom.tools.workspace import Workspace

    settings = Settings(workspace=workspace, embedder="hashing", record_screenshots=False)
    runtime = Runtime(settings, screenshots=False)
    out: dict[str, Any] = {"generate": {}, "compose": {}}
    ids: list[str] = []
    async with runtime:
        service = runtime.task_service()
        for app in APPS:
            t = time.perf_counter()
            result = await service.generate(f"desktop:{app}", count=args.count, seed=0, use_llm=False)
            families = Counter(service.get(i).type for i in result.task_ids)
            out["generate"][app] = {
                "kept": len(result.task_ids), "families": dict(families), "candidates": result.report.candidates,
                "replayed": result.report.stages.get("replay", {}).get("in", 0), "dropped": Counter(d.stage for d in result.report.dropped), "seconds": round(time.perf_counter() - t, 1),
            }
            ids += result.task_ids
        for mode, count in (("chain", args.chains), ("dag", args.graphs)):
            t = time.perf_counter()
            composed = await service.compose("desktop:gnumeric", mode, count=count, levels=6, seed=0, use_llm=False)  # type: ignore[arg-type]
            out["compose"][mode] = {
                "kept": len(composed.task_ids), "chains": [(c.listing, c.reached, c.stopped[:120]) for c in composed.chains],
                "dropped": [r[:120] for _, r in composed.dropped], "seconds": round(time.perf_counter() - t, 1),
            }
            ids += composed.task_ids
    harness = Harness(settings, build_server)
    tasks = harness.select(ids)
    t = time.perf_counter()
    await harness.run(tasks, ["oracle", "explorer"], concurrency=1, max_steps=40, timeout_s=90, run_id="bench-desktop")
    out["run_seconds"] = round(time.perf_counter() - t, 1)
    by_id = {task.id: task for task in tasks}
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in RunStore(Workspace(settings.workspace), "bench-desktop").results():
        task = by_id[r.task_id]
        for key in (task.type, f"level {task.level}" if task.level else None):
            if key:
                table[key][r.agent][0] += int(r.success)
                table[key][r.agent][1] += 1
    out["success"] = {k: {a: f"{s}/{n}" for a, (s, n) in v.items()} for k, v in sorted(table.items())}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=10, help="tasks per application (default 10)")
    parser.add_argument("--chains", type=int, default=3, help="value chains on the workbooks (default 3)")
    parser.add_argument("--graphs", type=int, default=2, help="task graphs on the workbooks (default 2)")
    args = parser.parse_args(argv)
    floor = _floor()
    with tempfile.TemporaryDirectory(prefix="taskloom-bench-desktop-") as workspace:
        started = time.perf_counter()
        out = asyncio.run(_run(args, workspace))
        total = time.perf_counter() - started
    print(f"floor: one desktop episode started and stopped in {floor:.2f} s")
    for app, row in out["generate"].items():
        print(f"generate desktop:{app}: kept {row['kept']} {row['families']} ({row['replayed']} of {row['candidates']} candidates replayed) in {row['seconds']} s "
              f"= {row['seconds'] / floor:.0f} episode starts")
    for mode, row in out["compose"].items():
        print(f"compose desktop:gnumeric --mode {mode}: kept {row['kept']} in {row['seconds']} s; {row['chains'] or row['dropped']}")
    print(f"oracle and explorer on every kept task: {out['run_seconds']} s")
    for key, row in out["success"].items():
        print(f"  {key:20s} " + "  ".join(f"{agent} {score}" for agent, score in sorted(row.items())))
    out.update(floor_seconds=round(floor, 2), total_seconds=round(total, 1), total_in_episode_starts=round(total / floor))
    print("RESULT " + json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
