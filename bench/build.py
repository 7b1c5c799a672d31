"""``taskloom build`` end to end (issue 39): a fresh build of a manifest, then the same build unchanged.

Runs the real CLI (``taskloom build MANIFEST --out OUT``) twice in a fresh temporary workspace and
output folder: the first builds every unit, the second should skip them all. Per unit (source or
compose) it prints the kind, the tasks kept, the seconds the build log (``<out>/.taskloom-build/
<name>-<version>/log.jsonl``) recorded and the unit's share of the fresh build's wall time; the
stages' seconds from the units' records (ingest, crawl, generate, compose); totals (tasks,
documents, sites, wall); the unchanged re-run's wall time against the fresh build's; and a floor
measured in the same run (``python -c pass`` and ``taskloom --help``, median of 3), so the re-run
reads as a ratio.

Run from the repository root (``make bench-data`` first; the full manifest takes many minutes)::

    .venv/bin/python bench/build.py                                   # examples/build/full.toml
    .venv/bin/python bench/build.py examples/build/manifest.toml --keep /tmp/build-bench

The last line printed is ``RESULT {json}``. The exit code is 1 when a unit failed or the re-run
built anything.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
_BIN = Path(sys.executable).parent
STAGES = ("ingest", "crawl", "generate", "compose")


def _env(folder: Path) -> dict[str, str]:
    """A fresh workspace in ``folder``, whose ``out`` the build may write."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(TASKLOOM_WORKSPACE=str(folder / "ws"), TASKLOOM_ALLOW_ROOTS=json.dumps([str(folder)]), FASTMCP_CHECK_FOR_UPDATES="off")
    return env


def _timed(argv: list[str], env: dict[str, str], stderr: Path | None = None, timeout: float | None = None) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.monotonic()
    with open(stderr or os.devnull, "a", encoding="utf-8") as err:
        run = subprocess.run(argv, env=env, cwd=_ROOT, stdout=subprocess.PIPE, stderr=err, text=True, timeout=timeout)
    return time.monotonic() - start, run


def _floor(env: dict[str, str]) -> dict[str, float]:
    """Medians of 3: a bare interpreter start, and the CLI's ``--help`` (its cold start)."""
    python = statistics.median(_timed([sys.executable, "-c", "pass"], env)[0] for _ in range(3))
    cli = statistics.median(_timed([str(_BIN / "taskloom"), "--help"], env)[0] for _ in range(3))
    return {"python": round(python, 3), "cli_help": round(cli, 3)}


def _log(build: Path) -> list[dict[str, Any]]:
    path = build / "log.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] if path.is_file() else []


def _units(build: Path, result: dict[str, Any], wall: float) -> list[dict[str, Any]]:
    """Per unit of the fresh run: kind, action, tasks, seconds (from the log), share of ``wall``, stages (from its record)."""
    log = _log(build)
    runs = [e["run"] for e in log if e.get("event") == "started"]
    first = runs[0] if runs else None
    logged = {e["unit"]: e for e in log if e.get("run") == first and e.get("event") in ("done", "failed")}
    beside = {e["unit"] for e in log if e.get("run") == first and e.get("beside")}
    rows = []
    for outcome in result.get("units", []):
        name = outcome["name"]
        record_path = build / "units" / f"{name}.json"
        record = json.loads(record_path.read_text(encoding="utf-8")) if record_path.is_file() else {}
        entry = logged.get(name, {})
        seconds = float(entry.get("seconds", outcome.get("seconds", 0.0)))  # a failed unit's log line has no seconds
        rows.append({
            "unit": name,
            "kind": record.get("kind", "?"),
            "action": outcome["action"],
            "tasks": outcome.get("tasks", 0),
            "seconds": round(seconds, 1),
            "share": round(seconds / wall, 3) if wall else 0.0,
            "stages": {k: v for k, v in (record.get("seconds") or {}).items()},
            "documents": sum(1 for g in record.get("graphs", []) if g.get("kind") == "document") if record.get("status") == "done" else 0,
            "reason": outcome.get("reason"),
            "beside": name in beside,
        })
    return rows


def _print_table(rows: list[dict[str, Any]]) -> None:
    print("| unit | kind | tasks kept | s | share of wall | stages (s) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        stages = ", ".join(f"{k} {v:g}" for k, v in r["stages"].items()) if r["action"] != "failed" else f"FAILED: {(r['reason'] or '')[:120]}"
        print(f"| {r['unit']} | {r['kind']} | {r['tasks']} | {r['seconds']:.1f} | {100 * r['share']:.1f}% | {stages} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifest", nargs="?", type=Path, default=_ROOT / "examples" / "build" / "full.toml")
    parser.add_argument("--keep", type=Path, help="Build into this folder (workspace, out, logs) and keep it; default: a temp dir, deleted.")
    parser.add_argument("--timeout", type=float, default=3600.0, help="Seconds the fresh build may take.")
    args = parser.parse_args()

    from taskloom.tools.build.manifest import load_manifest
    from taskloom.tools.build.pipeline import build_dir

    manifest_path = args.manifest.resolve()
    manifest = load_manifest(manifest_path)
    folder = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="bench-build-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        out, env = folder / "out", _env(folder)
        build = build_dir(out, manifest)
        load = os.getloadavg()
        print(f"manifest {manifest_path}: {len(manifest.sources)} sources, {len(manifest.compose_units())} compose units; folder {folder}")
        print(f"load average at start {load[0]:.1f}, {os.cpu_count()} CPUs")
        floor = _floor(env)
        argv = [str(_BIN / "taskloom"), "build", str(manifest_path), "--out", str(out)]
        fresh_wall, fresh = _timed(argv, env, folder / "build-1.stderr", args.timeout)
        if not fresh.stdout.strip():
            print(f"the build printed no result (exit {fresh.returncode}): " + (folder / "build-1.stderr").read_text(encoding="utf-8")[-2000:])
            return 1
        fresh_result = json.loads(fresh.stdout)
        again_wall, again = _timed(argv, env, folder / "build-2.stderr", 600)
        again_result = json.loads(again.stdout) if again.stdout.strip() else {}

        rows = _units(build, fresh_result, fresh_wall)
        print(f"\nfresh build (exit {fresh.returncode}): {fresh_wall:.1f} s wall\n")
        _print_table(rows)
        stage_totals = {s: round(sum(r["stages"].get(s, 0.0) for r in rows), 1) for s in STAGES}
        lanes = {"beside": round(sum(r["seconds"] for r in rows if r["beside"]), 1), "main": round(sum(r["seconds"] for r in rows if not r["beside"]), 1)}
        other = round(fresh_wall - max(lanes.values()), 1)  # the documents' thread runs beside the main one: the longer lane is the units' wall time
        done = [r for r in rows if r["action"] == "built"]
        totals = {
            "tasks": fresh_result.get("tasks", 0),
            "documents": sum(r["documents"] for r in done),
            "sites": sum(1 for r in done if r["kind"] == "site"),
            "units_failed": [r["unit"] for r in rows if r["action"] == "failed"],
            "wall": round(fresh_wall, 1),
        }
        print("\n| stage | s | share of wall |")
        print("|---|---|---|")
        for stage, seconds in [*stage_totals.items(), ("outside units (start, dataset folder)", other)]:
            print(f"| {stage} | {seconds:.1f} | {100 * seconds / fresh_wall:.1f}% |")
        if lanes["beside"]:
            print(f"\nunits beside the sites (documents, their own thread): {lanes['beside']:.1f} s; the main lane (sites, compositions): {lanes['main']:.1f} s; "
                  "the stages' shares overlap and add up to more than 100 %")
        print(f"\ntotals: {totals['tasks']} tasks, {totals['documents']} documents, {totals['sites']} sites, {fresh_wall:.1f} s wall"
              + (f"; failed: {', '.join(totals['units_failed'])}" if totals["units_failed"] else ""))
        rebuilt = [u["name"] for u in again_result.get("units", []) if u["action"] != "skipped"]
        print(f"unchanged re-run (exit {again.returncode}): {again_wall:.2f} s = {again_wall / fresh_wall:.4f} of the fresh build; "
              f"{again_wall / floor['cli_help']:.1f}x `taskloom --help` ({floor['cli_help']:.2f} s), {again_wall / floor['python']:.1f}x `python -c pass` ({floor['python']:.3f} s); "
              f"units not skipped: {rebuilt or 'none'}; dataset {'rewritten' if again_result.get('dataset_written') else 'unchanged'}")
        result = {
            "manifest": str(manifest_path.relative_to(_ROOT)) if manifest_path.is_relative_to(_ROOT) else str(manifest_path),
            "units": rows, "stages": stage_totals, "lanes": lanes, "outside_units": other, "totals": totals,
            "rerun": {"wall": round(again_wall, 2), "ratio_to_fresh": round(again_wall / fresh_wall, 4), "ratio_to_cli_help": round(again_wall / floor["cli_help"], 2),
                      "not_skipped": rebuilt, "dataset_written": again_result.get("dataset_written"), "exit": again.returncode},
            "floor": floor, "fresh_exit": fresh.returncode, "load_average": [round(x, 2) for x in load], "cpus": os.cpu_count(),
            "python": platform.python_version(),
        }
        print("RESULT " + json.dumps(result))
        return 1 if totals["units_failed"] or rebuilt else 0
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
