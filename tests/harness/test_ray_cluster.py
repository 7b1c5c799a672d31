"""The ray executor on a real cluster: two Ray nodes on loopback, the example tasks across both, one node killed mid-run.

The cluster is ``ray start --head --block`` plus a second ``ray start --address … --block``,
subprocesses of the test that teardown ends by their process ids (no ``ray stop``, which would end
every Ray process on the machine). The run is ``taskloom run --executor ray``
in a subprocess (the one writer); the second node's whole process tree is killed while one of
its episodes is in flight, and the run still ends with every (task, agent) episode stored
exactly once.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from taskloom.harness.ray_executor import map_on_executor
from taskloom.harness.service import Harness
from taskloom.harness.store import RunStore
from taskloom.server.app import build_server
from taskloom.tools.environment.site import serve_static
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings
from taskloom.tools.workspace import Workspace

from . import ray_cluster
from .ray_cluster import QUIET, Cluster, _free_port, _kill, _tree, needs_ray

cluster = ray_cluster.cluster  # the two-node cluster fixture, one per module

ROOT = Path(__file__).resolve().parents[2]
DOC_TASKS = ROOT / "examples" / "tasks" / "field-guide-document-tasks.jsonl"
WEB_TASKS = ROOT / "examples" / "tasks" / "example-site-composite-tasks.jsonl"


def _cli(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "taskloom.server.cli", *args], env=env, capture_output=True, text=True, timeout=timeout)


def _env(settings: Settings) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("TASKLOOM_", "RAY_"))} | QUIET | settings.to_env()


# -- without a cluster -------------------------------------------------------------------


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


@pytest.mark.integration
def test_the_cli_and_local_runs_never_import_ray(settings: Settings) -> None:
    GraphService(settings).ingest_document(ROOT / "examples" / "documents" / "field-guide.pdf")
    listed = subprocess.run([sys.executable, "-c", PROBE, "plugins"], env=_env(settings), capture_output=True, text=True, timeout=120)
    assert listed.stdout.rstrip().endswith("exit 0 ray not imported"), listed.stderr
    assert any(line.split()[:2] == ["ray", "builtin"] for line in listed.stdout.splitlines())  # registered, yet Ray not imported
    args = ["run", "--tasks", str(DOC_TASKS), "--agent", "oracle", "--run-id", "here", "--max-steps", "8"]
    local = subprocess.run([sys.executable, "-c", PROBE, *args], env=_env(settings), capture_output=True, text=True, timeout=300)
    assert local.stdout.rstrip().endswith("exit 0 ray not imported"), local.stderr
    assert len(RunStore(Workspace(settings.workspace), "here").results()) == len(DOC_TASKS.read_text().splitlines())


@pytest.mark.integration
def test_without_ray_the_run_is_refused_with_how_to_install_it(settings: Settings) -> None:
    code = "import sys; sys.modules['ray'] = None; from taskloom.server.cli import main; sys.argv[0] = 'taskloom'; main()"
    args = ["run", "--tasks", str(DOC_TASKS), "--agent", "oracle", "--executor", "ray", "--run-id", "no-ray"]
    done = subprocess.run([sys.executable, "-c", code, *args], env=_env(settings), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "pip install 'taskloom[ray]'" in done.stderr and "Traceback" not in done.stderr
    assert not RunStore(Workspace(settings.workspace), "no-ray").exists  # refused before the run was created
    local = _cli("run", "--tasks", str(DOC_TASKS), "--agent", "oracle", "--address", "auto", env=_env(settings))
    assert local.returncode == 2 and "--address only apply to --executor ray" in local.stderr


@needs_ray
@pytest.mark.integration
def test_an_address_nothing_answers_at_is_refused_before_the_run_exists(settings: Settings) -> None:
    address = f"127.0.0.1:{_free_port()}"
    done = _cli("run", "--tasks", str(DOC_TASKS), "--agent", "oracle", "--executor", "ray", "--address", address, "--run-id", "nowhere", env=_env(settings))
    assert done.returncode == 2 and f"no Ray cluster answers at {address}" in done.stderr and "Traceback" not in done.stderr
    assert not RunStore(Workspace(settings.workspace), "nowhere").exists


# -- a local Ray, started in-process ----------------------------------------------------------


@needs_ray
@pytest.mark.integration
@pytest.mark.slow
def test_without_an_address_the_run_starts_its_own_local_ray(settings: Settings) -> None:
    GraphService(settings).ingest_document(ROOT / "examples" / "documents" / "field-guide.pdf")
    harness = Harness(settings, build_server)
    tasks = harness.select(tasks_file=DOC_TASKS)
    report = asyncio.run(harness.run(tasks, ["oracle"], run_id="local-ray", max_steps=8, executor="ray", executor_args={"workers": 2}))
    [oracle] = report.summary.per_agent
    assert oracle.episodes == len(tasks) and oracle.success_rate == 1.0
    events = _events(RunStore(Workspace(settings.workspace), "local-ray"))
    assert sum(e["event"] == "worker_ready" for e in events) == 2
    assert sorted((e["task_id"], e["agent"]) for e in events if e["event"] == "finished") == sorted((t.id, "oracle") for t in tasks)
    spec = json.loads((settings.workspace / "runs" / "local-ray" / "run.json").read_text())
    assert spec["executor"] == {"kind": "executor", "name": "ray", "args": {"workers": 2}, "origin": "builtin"}


# -- a two-node cluster on loopback ------------------------------------------------------------



def _events(store: RunStore) -> list[dict[str, Any]]:
    path = store.dir / "executor.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


@needs_ray
@pytest.mark.integration
@pytest.mark.slow
def test_map_on_executor_spreads_over_both_nodes(cluster: Cluster) -> None:
    code = (
        "import json, sys\n"
        "from taskloom.harness.ray_executor import map_on_executor, where\n"
        "print(json.dumps(map_on_executor(where, range(6), 'ray', sys.argv[1])))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, cluster.address], env=os.environ | QUIET | cluster.env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    spots = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(spots) == 6 and len({s["node"] for s in spots}) == 2
    assert map_on_executor(str, [1, 2], "local") == ["1", "2"]


#: A command agent held in flight until the test opens its gate (a file). Pairs alternate oracle/held, so a node's first
#: two episodes hold an oracle one it finishes, and then it fills up with held ones: the second node is killed with work
#: in hand whatever the machine's speed, and the run goes on as soon as the gate opens. (Its ``timeout`` only bounds the
#: rare start where both nodes are ready at once and one is dealt two held episodes before it has finished any.)
HELD = """\
import pathlib, sys, time
gate = pathlib.Path(sys.argv[1])
while not gate.exists():
    time.sleep(0.05)
"""


@needs_ray
@pytest.mark.integration
@pytest.mark.slow
def test_a_run_across_two_nodes_survives_a_killed_node_with_every_episode_once(cluster: Cluster, tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing", record_screenshots=False, allow_roots=[tmp_path], agent_sandbox="none")
    GraphService(settings).ingest_document(ROOT / "examples" / "documents" / "field-guide.pdf")
    gate, held = tmp_path / "gate", tmp_path / "held.py"
    held.write_text(HELD, encoding="utf-8")
    agents = ["oracle", f"command:name=held,timeout=30,cmd={sys.executable} {held} {gate}"]
    with serve_static() as site:
        tasks_file = tmp_path / "tasks.jsonl"
        web = WEB_TASKS.read_text(encoding="utf-8").replace("http://127.0.0.1:42355", site.url).splitlines(keepends=True)[:2]
        tasks_file.write_text("".join(web) + DOC_TASKS.read_text(encoding="utf-8"), encoding="utf-8")
        pairs = {(json.loads(line)["id"], a) for line in tasks_file.read_text().splitlines() if line.strip() for a in ("oracle", "held")}
        store = RunStore(Workspace(settings.workspace), "cluster")
        started = time.monotonic()
        args = ["run", "--tasks", str(tasks_file), *(x for a in agents for x in ("--agent", a)), "--executor", "ray", "--address", cluster.address,
                "--run-id", "cluster", "-j", "2", "--max-steps", "12", "--timeout", "120", "--json"]
        proc = subprocess.Popen([sys.executable, "-m", "taskloom.server.cli", *args], env=_env(settings) | cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        killed: dict[str, Any] | None = None
        try:
            while proc.poll() is None and killed is None:  # kill the second node while one of its episodes is in flight
                events = _events(store)
                tree = {p.pid for p in _tree(cluster.worker.pid)}
                on_worker = {e["worker"] for e in events if e["event"] == "worker_ready" and e["pid"] in tree}
                open_ = Counter((e["worker"], e["task_id"], e["agent"]) for e in events if e["event"] == "dispatched")
                open_.subtract((e["worker"], e["task_id"], e["agent"]) for e in events if e["event"] == "finished")
                flying = [key for key, n in open_.items() if n > 0 and key[0] in on_worker]
                if flying and any(e["event"] == "finished" and e["worker"] in on_worker for e in events):  # it has done some work, and has more
                    _kill(cluster.worker.pid)
                    killed = {"workers": on_worker}
                time.sleep(0.2)
            gate.touch()  # the held episodes (on the first node, and those retried there) end now
            out, err = proc.communicate(timeout=300)
        finally:
            gate.touch()
            if proc.poll() is None:
                proc.kill()
    took = time.monotonic() - started
    assert killed is not None, "the run ended before the second node had an episode to kill"
    assert proc.returncode == 0, err[-3000:]
    report = json.loads(out)
    lines = [json.loads(line) for line in store.results_path.read_text().splitlines()]
    stored = Counter((r["task_id"], r["agent"]) for r in lines)
    assert set(stored) == pairs and set(stored.values()) == {1}  # every episode exactly once, none lost
    assert sum(row["episodes"] for row in report["summary"]["per_agent"]) == len(pairs)
    assert all(r["success"] for r in lines if r["agent"] == "oracle"), [(r["task_id"], r["reason"]) for r in lines if not r["success"] and r["agent"] == "oracle"]
    events = _events(store)
    lost = {e["worker"] for e in events if e["event"] == "worker_lost"}
    assert killed["workers"] <= lost
    sent = {(e["task_id"], e["agent"]) for e in events if e["event"] == "dispatched" and e["worker"] in killed["workers"]}
    lost_pairs = sent - {(e["task_id"], e["agent"]) for e in events if e["event"] == "finished" and e["worker"] in killed["workers"]}
    assert lost_pairs  # episodes were in flight on the killed node …
    for pair in lost_pairs:  # … and each was retried on the other node and finished there, once
        assert any(e["event"] == "retry" and (e["task_id"], e["agent"]) == pair for e in events)
        again = [e for e in events if e["event"] == "finished" and (e["task_id"], e["agent"]) == pair]
        assert len(again) == 1 and again[0]["worker"] not in killed["workers"] and again[0]["attempt"] >= 2
    finished = [e for e in events if e["event"] == "finished"]
    assert len({e["node"] for e in finished}) == 2  # both nodes ran episodes
    assert not [e for e in events if e["event"] == "duplicate"]
    rates = {w: sum(e["worker"] == w for e in finished) for w in {e["worker"] for e in finished}}
    print(f"\nray cluster run: {len(pairs)} episodes in {took:.1f} s; finished per worker {rates}")
    resumed = _cli("run", "--resume", "cluster", "--json", env=_env(settings), timeout=120)  # nothing left: nothing run, nothing stored twice
    assert resumed.returncode == 0, resumed.stderr
    assert len(store.results_path.read_text().splitlines()) == len(lines)
