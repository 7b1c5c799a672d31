"""Fingerprint what Taskloom builds for fixed inputs and seed: graphs and tasks, through the CLI only.

Used to show that a refactoring changes no behaviour: run it before and after, and
compare the printed digests (or ``diff -r`` the two output folders).

    python bench/fingerprint.py OUT_DIR

It ingests lmer.pdf (tests/data/cache, fetched by tests/data/fetch-pdfs.sh), serves the
bundled example site on a fixed loopback port and crawls it, generates document and
web tasks (seed 0), composes chains and task graphs, and exports every graph and all
tasks. What legitimately differs between two runs (timings, creation times, the
temporary workspace's path, random episode ids) is normalised away before hashing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TASKLOOM = Path(sys.executable).parent / "taskloom"
PORT = 18431
VOLATILE_KEYS = {"created_at", "seconds", "elapsed_s", "t", "t_start", "t_end", "timing", "duration_s", "took_s"}


def _taskloom(workspace: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(TASKLOOM_WORKSPACE=str(workspace), TASKLOOM_EMBEDDER="hashing", TASKLOOM_ALLOW_ROOTS=json.dumps([str(ROOT)]))
    done = subprocess.run([str(TASKLOOM), *args], env=env, capture_output=True, text=True, timeout=1200, cwd=workspace.parent)
    if done.returncode != 0:
        raise SystemExit(f"taskloom {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def _normalise(value: Any, workspace: str) -> Any:
    if isinstance(value, dict):
        return {k: _normalise(v, workspace) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_normalise(v, workspace) for v in value]
    if isinstance(value, str):
        text = value.replace(workspace, "<ws>")
        return re.sub(r"\bep-[0-9a-f]{12}\b", "ep-<id>", text)
    return value


def _write(out: Path, name: str, data: Any) -> str:
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False)
    (out / name).write_text(text + "\n", encoding="utf-8")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def main(out: Path) -> dict[str, str]:
    out.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="taskloom-fingerprint-"))
    workspace = base / "ws"
    digests: dict[str, str] = {}
    lmer = json.loads(_taskloom(workspace, "ingest", str(ROOT / "tests" / "data" / "cache" / "lmer.pdf")))["graph_id"]
    server = subprocess.Popen([sys.executable, "-m", "http.server", "-d", str(ROOT / "examples" / "site"), "-b", "127.0.0.1", str(PORT)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import time

        time.sleep(1.0)
        web = json.loads(_taskloom(workspace, "crawl", f"http://127.0.0.1:{PORT}/index.html", "--max-pages", "20"))["graph_id"]
        _taskloom(workspace, "generate", lmer, "--count", "8", "--seed", "0")
        _taskloom(workspace, "generate", web, "--count", "12", "--seed", "0")
        _taskloom(workspace, "compose", web, "--mode", "walk", "--count", "1", "--levels", "3", "--seed", "0")
        _taskloom(workspace, "compose", web, "--mode", "pages", "--count", "2", "--seed", "0")
    finally:
        server.terminate()
        server.wait()
    for graph_id in (lmer, web):
        graph = json.loads(_taskloom(workspace, "graph", "export", graph_id))
        digests[f"graph {graph_id}"] = _write(out, f"graph-{graph_id}.json", _normalise(graph, str(workspace)))
    tasks = [json.loads(line) for line in _taskloom(workspace, "tasks", "export").splitlines() if line.strip()]
    tasks = sorted((_normalise(t, str(workspace)) for t in tasks), key=lambda t: t["id"])
    digests[f"tasks ({len(tasks)})"] = _write(out, "tasks.json", tasks)
    return digests


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python bench/fingerprint.py OUT_DIR")
    for name, digest in main(Path(sys.argv[1])).items():
        print(f"{digest}  {name}")
