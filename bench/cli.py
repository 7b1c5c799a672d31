"""CLI cold-start benchmark: wall time of ``taskloom`` commands, each a fresh process.

First ingests a document (default: the bundled ``examples/documents/field-guide.pdf``) twice,
with the hashing embedder and with the real default one (MiniLM), each into its own temporary
workspace (not timed). Then runs every command below ``--runs`` times (default 5), in
interleaved rounds so load from other processes hits all of them alike, and prints the min and
median seconds of each. ``--help`` and ``graph search`` (both embedders) have the issue's
target, ≤ 2 s (median), printed as PASS/FAIL; the other commands are shown for reference. The
search output must be the same in every run of a command (its digest is in the JSON, to compare
checkouts with ``--taskloom``). The last line is ``RESULT {json}``.
No test asserts on these timings.

    .venv/bin/python bench/cli.py
    .venv/bin/python bench/cli.py --runs 10 --pdf tests/data/cache/lmer.pdf
    .venv/bin/python bench/cli.py --taskloom "env PYTHONPATH=/tmp/old .venv/bin/python -m taskloom.server.cli"   # another checkout
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TASKLOOM = Path(sys.executable).parent / "taskloom"
TARGET = 2.0


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="runs of each command (default 5)")
    parser.add_argument("--pdf", type=Path, default=ROOT / "examples" / "documents" / "field-guide.pdf", help="document to ingest and search")
    parser.add_argument("--query", default="how often are the sensors calibrated?", help="the graph search query")
    parser.add_argument("--workspace", type=Path, default=None, help="parent of the two workspaces (default: a temp dir, deleted)")
    parser.add_argument("--taskloom", default=str(TASKLOOM), help="the command to time, split like a shell would (default: this venv's taskloom)")
    return parser.parse_args(argv)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off", COLUMNS="120")
    return env


def _run(command: list[str], args: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    clock = time.perf_counter()
    done = subprocess.run([*command, *args], env=_env(), cwd=cwd, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - clock
    if done.returncode != 0:
        raise RuntimeError(f"taskloom {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed, done


def _ingest(pdf: Path, workspace: Path, embedder: str, cwd: Path) -> str:
    _, done = _run([str(TASKLOOM)], ["-w", str(workspace), "--embedder", embedder, "--allow-root", str(pdf.parent), "ingest", str(pdf)], cwd)
    return str(json.loads(done.stdout)["graph_id"])


def _commands(args: argparse.Namespace, base: Path, cwd: Path) -> dict[str, tuple[list[str], bool]]:
    """Each command's arguments and whether it has the 2 s target."""
    hashing, minilm = base / "ws-hashing", base / "ws-minilm"
    graph_hashing = _ingest(args.pdf, hashing, "hashing", cwd)
    graph_minilm = _ingest(args.pdf, minilm, "minilm", cwd)
    on_hashing = ["-w", str(hashing), "--embedder", "hashing"]
    on_minilm = ["-w", str(minilm), "--embedder", "minilm"]
    return {
        "taskloom --help": (["--help"], True),
        "graph search (hashing)": ([*on_hashing, "graph", "search", graph_hashing, args.query, "-k", "5"], True),
        "graph search (minilm)": ([*on_minilm, "graph", "search", graph_minilm, args.query, "-k", "5"], True),
        "graph search --mode lexical": ([*on_minilm, "graph", "search", graph_minilm, args.query, "-k", "5", "--mode", "lexical"], False),
        "graph list": ([*on_minilm, "graph", "list"], False),
        "graph stats": ([*on_minilm, "graph", "stats", graph_minilm], False),
        "tasks list": ([*on_minilm, "tasks", "list"], False),
        "graph --help": (["graph", "--help"], False),
        "run --help": (["run", "--help"], False),
        "serve --help": (["serve", "--help"], False),
        "plugins": (["plugins"], False),
    }


def _measure(args: argparse.Namespace, base: Path) -> dict[str, Any]:
    cwd = base / "cwd"
    cwd.mkdir(parents=True, exist_ok=True)
    commands = _commands(args, base, cwd)
    times: dict[str, list[float]] = {name: [] for name in commands}
    outputs: dict[str, set[str]] = {name: set() for name in commands}
    loads = []
    for _ in range(args.runs):
        loads.append(os.getloadavg()[0])
        for name, (argv, _target) in commands.items():
            elapsed, done = _run(shlex.split(args.taskloom), argv, cwd)
            times[name].append(elapsed)
            outputs[name].add(done.stdout)
    for name in commands:
        if name.startswith("graph search"):
            hits = json.loads(next(iter(outputs[name])))
            if len(outputs[name]) != 1 or not hits:
                raise RuntimeError(f"{name}: the results differ between runs or are empty")
    rows = {
        name: {
            "min": round(min(t), 3),
            "median": round(statistics.median(t), 3),
            "runs": [round(x, 3) for x in t],
            "target": TARGET if commands[name][1] else None,
            "stdout_sha256": hashlib.sha256(next(iter(outputs[name])).encode()).hexdigest()[:16] if name.startswith("graph search") else None,
            "pass": statistics.median(t) <= TARGET if commands[name][1] else None,
        }
        for name, t in times.items()
    }
    return {"commands": rows, "load_1min_per_round": [round(x, 2) for x in loads]}


def _print(out: dict[str, Any]) -> None:
    print(f"{out['taskloom']}: {out['runs']} runs per command, each a fresh process (wall time); document {out['pdf']}")
    print(f"shared machine: 1-min load average at the start of each round {out['load_1min_per_round']}")
    print(f"{'command':<30} {'min s':>7} {'median s':>9}  target")
    for name, row in out["commands"].items():
        verdict = "" if row["target"] is None else f"<= {row['target']:.0f} s {'PASS' if row['pass'] else 'FAIL'}"
        print(f"{name:<30} {row['min']:>7.2f} {row['median']:>9.2f}  {verdict}")
    print("PASS" if out["pass"] else "FAIL", "(every command with a target, by its median)")


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    args.pdf = args.pdf.resolve()
    if not args.pdf.is_file():
        print(f"no document at {args.pdf}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        base = args.workspace or Path(tmp)
        out = _measure(args, base)
    out.update(
        runs=args.runs,
        pdf=str(args.pdf),
        taskloom=args.taskloom,
        cpus=os.cpu_count(),
        python=platform.python_version(),
        **{"pass": all(row["pass"] for row in out["commands"].values() if row["pass"] is not None)},
    )
    _print(out)
    print("RESULT " + json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
