"""How long ``taskloom runs`` takes to list a workspace of many runs, as a user calls it (a new process each time).

Data: ``--runs`` (default 100) copies of the bundled example run (``examples/run``: its plan and
its 63 scored episodes, 21 tasks × 3 agents), each with its own run id, in a fresh workspace.
Timed: ``taskloom runs`` and ``taskloom runs --json``, best of ``--repeat``, beside a floor
measured in the same run: the same interpreter starting and importing the CLI's settings module
(``python -c "import taskloom.server.cli.common"``), which every command pays. Target (issue 38):
≤ 1 s with 100 runs.

Usage: python bench/runs_list.py [--runs 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "run"
TASKLOOM = Path(sys.executable).with_name("taskloom")


def _workspace(folder: Path, runs: int) -> None:
    plan = json.loads((EXAMPLE / "run.json").read_text(encoding="utf-8"))
    results = (EXAMPLE / "results.jsonl").read_text(encoding="utf-8")
    for i in range(runs):
        run_id = f"run-20261129-{i:06d}"
        target = folder / ".taskloom" / "runs" / run_id
        target.mkdir(parents=True)
        (target / "run.json").write_text(json.dumps({**plan, "run_id": run_id}, indent=1), encoding="utf-8")
        (target / "results.jsonl").write_text(results, encoding="utf-8")


def _best(command: list[str], cwd: Path, repeat: int) -> tuple[float, str]:
    best, out = float("inf"), ""
    env = {**os.environ, "TASKLOOM_WORKSPACE": str(cwd / ".taskloom")}
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=True)
        best, out = min(best, time.perf_counter() - start), done.stdout
    return best, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="taskloom-runs-"))
    try:
        _workspace(folder, args.runs)
        floor, _ = _best([sys.executable, "-c", "import taskloom.server.cli.common"], folder, args.repeat)
        listed, text = _best([str(TASKLOOM), "runs"], folder, args.repeat)
        as_json, data = _best([str(TASKLOOM), "runs", "--json"], folder, args.repeat)
        assert len(json.loads(data)) == args.runs and len(text.splitlines()) == args.runs + 1, "every run listed"
        print(f"load average {os.getloadavg()[0]:.2f}; {args.runs} runs of {EXAMPLE.relative_to(ROOT)} (63 episodes each), best of {args.repeat}")
        print(f"floor (interpreter + CLI settings import): {floor:.3f} s")
        print(f"taskloom runs: {listed:.3f} s (ratio {listed / floor:.2f}); --json: {as_json:.3f} s (ratio {as_json / floor:.2f}); target <= 1 s")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
