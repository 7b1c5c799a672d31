"""Replay verification of generated web tasks on a real two-node Ray cluster: the same tasks as a local run, both nodes replaying.

The example site is crawled once; ``taskloom generate --seed 1`` then runs twice in
subprocesses on the same workspace: locally (which must not import Ray), and with
``--executor ray --address`` on the loopback cluster of :mod:`ray_cluster`, where each
worker replays candidates in its own browser and the driver alone stores the tasks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from taskloom.tools.environment.site import serve_static
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.store import TaskStore
from taskloom.tools.workspace import Workspace

from . import ray_cluster
from .ray_cluster import QUIET, Cluster, _free_port, needs_ray

cluster = ray_cluster.cluster  # the two-node cluster fixture, one per module

#: Runs the console script with the given arguments, then says whether the process imported Ray.
PROBE = """
import sys
sys.argv = ["taskloom", *sys.argv[1:]]
from taskloom.server.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
print("exit", code or 0, "ray imported" if "ray" in sys.modules else "ray not imported")
"""


def _env(settings: Settings, extra: dict[str, str] | None = None) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("TASKLOOM_", "RAY_"))} | QUIET | settings.to_env() | (extra or {})


def _start(command: str, settings: Settings, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``taskloom COMMAND …`` started in a subprocess, under the probe that says whether it imported Ray."""
    return subprocess.Popen([sys.executable, "-c", PROBE, command, *args], env=env or _env(settings), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _output(proc: subprocess.Popen[str]) -> tuple[int, dict[str, Any], str]:
    """A started command's exit code, its JSON output and the probe's last line."""
    stdout, stderr = proc.communicate(timeout=300)
    out = stdout.rstrip().splitlines()
    assert out and out[-1].startswith("exit"), stderr[-3000:]
    code = int(out[-1].split()[1])
    assert code in (0, 1), stderr[-3000:]
    return code, json.loads("\n".join(out[:-1])), out[-1]


def _outputs(*procs: subprocess.Popen[str]) -> list[tuple[int, dict[str, Any], str]]:
    """:func:`_output` of each started command, in order; any still running when one fails is killed."""
    try:
        return [_output(proc) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()


def _stored(settings: Settings) -> dict[str, dict[str, Any]]:
    """The stored tasks, without where their gold trajectories were written."""
    return {t.id: t.model_dump(mode="json", exclude={"gold_trajectory"}) for t in TaskStore(Workspace(settings.workspace)).list(kind="web")}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--address", "auto"], "--address and --workers only apply to --executor ray"),
        (["--executor", "dask"], "unknown executor 'dask'; choose local or ray"),
        pytest.param(["--executor", "ray", "--address", f"127.0.0.1:{_free_port()}"], "no Ray cluster answers at 127.0.0.1:", marks=needs_ray),
    ],
)
def test_a_wrong_executor_choice_is_refused_before_generating(args: list[str], message: str, tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing")
    done = subprocess.run([sys.executable, "-m", "taskloom.server.cli", "generate", "any", *args], env=_env(settings),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "no graph" not in done.stderr  # refused before the graph was looked up


@needs_ray
@pytest.mark.integration
@pytest.mark.slow
def test_ray_replays_keep_the_same_tasks_as_a_local_run_with_both_nodes_replaying(cluster: Cluster, tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing", crawl_delay=0, record_screenshots=False, allow_roots=[tmp_path])
    with serve_static() as site:
        runtime = Runtime(settings)

        async def crawl() -> str:
            # 6 pages: 5 candidates and no form page, whose outcome probes would double each generation
            return (await runtime.graphs.ingest_website(site.url + "/index.html", max_pages=6, max_depth=2)).graph_id

        graph_id = runtime.run(crawl)
        there = settings.model_copy(update={"workspace": tmp_path / "there"})
        shutil.copytree(settings.workspace, there.workspace)  # the same graph in a workspace of its own, so both generations run at once
        args = [graph_id, "--count", "5", "--seed", "1", "--no-llm"]
        started = time.monotonic()
        local_proc = _start("generate", settings, *args)
        ray_proc = _start("generate", there, *args, "--executor", "ray", "--address", cluster.address, env=_env(there, cluster.env))
        (code, local, probe), (code_ray, on_ray, _) = _outputs(local_proc, ray_proc)
        assert (code, probe) == (0, "exit 0 ray not imported")  # a local generation never imports Ray
        assert code_ray == 0
        took = time.monotonic() - started
    here_tasks, there_tasks = _stored(settings), _stored(there)
    print(f"\ngenerate --seed 1, locally and on the two-node cluster at once: {took:.1f} s; replays per node {on_ray['executor']['per_node']}")
    replayed = local["report"]["stages"]["no_op"]["in"]
    assert replayed >= 4 and len(local["task_ids"]) == 5
    assert on_ray["task_ids"] == local["task_ids"]  # the same tasks, in the same order
    assert on_ray["report"] == local["report"]  # every stage's counts, every dropped candidate and why
    assert there_tasks == here_tasks  # stored by the driver alike (only the gold trajectories' paths differ)
    placements = on_ray["executor"]["replays"]
    assert len(placements) == replayed and len({p["task_id"] for p in placements}) == replayed  # each candidate replayed once
    assert len(on_ray["executor"]["per_node"]) == 2 and all(n >= 1 for n in on_ray["executor"]["per_node"].values())  # both nodes replayed
    assert len({(p["node"], p["pid"]) for p in placements}) == 2  # one worker per node, each with its own runtime
    for task in TaskStore(Workspace(there.workspace)).list(kind="web"):
        trajectory = load_trajectory(Path(task.gold_trajectory or ""))  # written by the worker that replayed it
        assert trajectory.actions and all(a.error is None for a in trajectory.actions)
        assert task.quality["replay"]["ok"]


def _graphs(settings: Settings) -> dict[str, tuple[int, set[str]]]:
    """Each stored web graph's page count and node ids."""
    runtime = Runtime(settings)
    return {m.id: (m.stats.get("pages", 0), set(runtime.graphs.load(m.id).g.nodes)) for m in runtime.graphs.list_graphs()}


@needs_ray
@pytest.mark.integration
@pytest.mark.slow
def test_ray_crawls_several_sites_as_a_local_crawl_does_and_reports_the_one_that_failed(cluster: Cluster, tmp_path: Path) -> None:
    here = Settings(workspace=tmp_path / "here", embedder="hashing", crawl_delay=0)
    there = here.model_copy(update={"workspace": tmp_path / "there"})
    unreachable = f"http://127.0.0.1:{_free_port()}/index.html"
    with serve_static() as first, serve_static() as second:
        urls = [first.url + "/index.html", second.url + "/index.html", unreachable]
        args = [*urls, "--max-pages", "5", "--max-depth", "1"]
        local_proc = _start("crawl", here, *args)  # both at once, each into its own workspace
        ray_proc = _start("crawl", there, *args, "--executor", "ray", "--address", cluster.address, env=_env(there, cluster.env))
        (code, local, probe), (code_ray, on_ray, _) = _outputs(local_proc, ray_proc)
        assert probe == "exit 1 ray not imported"  # one site failed; a local crawl never imports Ray
    assert code_ray == 1
    for out in (local, on_ray):
        assert [s["start_url"] for s in out["sites"]] == urls
        stored, failed = out["sites"][:2], out["sites"][2]
        assert all(s["error"] is None and s["report"]["pages"] == 5 for s in stored)
        assert failed["report"] is None and failed["error"] and "127.0.0.1" in failed["error"]
    print("\ncrawled on", [s["crawled_on"] for s in on_ray["sites"]])
    assert all(s["crawled_on"].get("node") for s in on_ray["sites"])  # each site as a Ray task on a cluster node
    assert _graphs(there) == _graphs(here) and len(_graphs(here)) == 2  # the same graphs (ids, pages, nodes); none for the failed site
    for site in on_ray["sites"][:2]:
        assets = f"graphs/{site['graph_id']}.assets/pages"
        shots = sorted(p.name for p in (there.workspace / assets).glob("*.jpg"))
        assert shots and shots == sorted(p.name for p in (here.workspace / assets).glob("*.jpg"))  # written by the worker, in the workspace
    assert not (there.workspace / "graphs" / f"{on_ray['sites'][2]['graph_id']}.assets").exists()


BUILD_MANIFEST = """
[dataset]
name = "mini"
version = "1.0"
seed = 2
embedder = "hashing"

[[source]]
name = "guide"
kind = "document"
path = "{guide}"
count = 3
licence = "Apache-2.0"

[[source]]
name = "library"
kind = "site"
start_url = "{url}/index.html"
max_pages = 6
max_depth = 2
count = 4
licence = "CC-BY-4.0"
"""


def _dataset_tasks(out: Path) -> list[dict[str, Any]]:
    """The built dataset's tasks, without where their gold trajectories were written."""
    rows = [json.loads(line) for line in (out / "mini-1.0" / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    return [{k: v for k, v in row.items() if k != "gold_trajectory"} for row in rows]


@needs_ray
@pytest.mark.integration
@pytest.mark.slow
def test_a_build_on_ray_gives_the_tasks_of_a_local_build_with_the_site_crawled_and_replayed_on_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    guide = Path(__file__).resolve().parents[2] / "examples" / "documents" / "field-guide.md"
    here = Settings(workspace=tmp_path / "here", embedder="hashing", crawl_delay=0, record_screenshots=False, allow_roots=[tmp_path, guide.parent])
    there = here.model_copy(update={"workspace": tmp_path / "there"})
    with serve_static() as site:
        manifest = tmp_path / "manifest.toml"
        manifest.write_text(BUILD_MANIFEST.format(guide=guide, url=site.url), encoding="utf-8")
        local_proc = _start("build", here, str(manifest), "--out", str(tmp_path / "out-here"))  # both at once, each into its own workspace
        ray_proc = _start("build", there, str(manifest), "--out", str(tmp_path / "out-there"), "--executor", "ray", "--address", cluster.address,
                          env=_env(there, cluster.env))
        (code, local, probe), (code_ray, on_ray, _) = _outputs(local_proc, ray_proc)
    assert (code, probe) == (0, "exit 0 ray not imported")  # a local build never imports Ray
    assert code_ray == 0 and local["executor"] == {"name": "local"}
    print("\nbuild on the cluster:", on_ray["executor"])
    assert [(u["name"], u["action"], u["tasks"]) for u in on_ray["units"]] == [(u["name"], u["action"], u["tasks"]) for u in local["units"]]
    tasks = _dataset_tasks(tmp_path / "out-here")
    assert {t["kind"] for t in tasks} == {"document", "web"} and sum(t["kind"] == "web" for t in tasks) >= 3
    assert _dataset_tasks(tmp_path / "out-there") == tasks  # the same tasks, in the same order
    per_node = on_ray["executor"]["per_node"]
    assert sum(n["crawls"] for n in per_node.values()) == 1  # the site's crawl ran as a Ray task
    assert len(per_node) == 2 and all(n["replays"] >= 1 for n in per_node.values())  # both nodes replayed candidates
