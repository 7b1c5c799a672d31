"""Two hostile agents (``hostile.py``) side by side in one real run, against gold copies laid out as a user would.

:func:`gold_copies` lays out, in a folder open to everyone, a workspace with a document task, a second workspace,
a JSONL export and a Harbor export of the same tasks (written by Taskloom's own exporters) and a ``cp -a`` backup
of the workspace. :func:`hostile_run` runs two hostile agents on that task through :class:`Harness` under one
sandbox and returns what each got through, what each episode's scored answer was, and what they left on the host.
Used by ``test_sandbox.py`` and ``bench/agent_probes.py`` (the probe table).
"""

from __future__ import annotations

import json
import secrets
import shlex
import shutil
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel

from taskloom.harness.service import Harness
from taskloom.harness.store import RunStore
from taskloom.server.app import build_server
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.generate.service import TaskService
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.harbor import write_harbor_tasks
from taskloom.tools.tasks.model import Provenance, Task
from taskloom.tools.tasks.store import TaskStore
from taskloom.tools.workspace import Workspace

from hostile import Rendezvous  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "examples" / "documents" / "field-guide.md"
HOSTILE = Path(__file__).with_name("hostile.py")
NAMES = ["alice", "bob"]


class HostileRun(BaseModel):
    """What two hostile agents did in one run."""

    sandbox: str
    gold: str
    routes: dict[str, dict[str, bool]]  # route → agent → got through
    said: dict[str, dict[str, str]]  # route → agent → what it saw
    answers: dict[str, str | None]  # agent → the answer of its scored trajectory
    printed: dict[str, str]  # agent → its whole stdout
    left_in_host_tmp: list[str]  # files the agents wrote into the host's /tmp, still there after the run
    stderr: dict[str, str]


def gold_copies(folder: Path, gold: str) -> tuple[Settings, Task, dict[str, str]]:
    """The workspace, its task and every copy of its gold a careless user leaves around; returns the targets to probe."""
    settings = Settings(workspace=folder / "ws", embedder="hashing", allow_roots=[ROOT / "examples"])
    graph_id = GraphService(settings).ingest_document(GUIDE).graph_id
    task = Task(
        id="doc-hostile",
        kind="document",
        type="lookup",
        instruction="According to the field guide, what is the secret code of the ranger station?",
        gold_answer=gold,
        provenance=Provenance(graph_id=graph_id, generator="test"),
    )
    TaskStore(Workspace(settings.workspace)).save(task)
    TaskStore(Workspace(folder / "other-ws")).save(task)
    TaskService(GraphService(settings)).export(folder / "exports" / "tasks.jsonl")
    write_harbor_tasks([task], folder / "harbor", {graph_id: GUIDE})
    shutil.copytree(settings.workspace, folder / "ws.bak", symlinks=True)  # cp -a keeps the modes
    marker = secrets.token_hex(4)
    targets = {
        "/etc/shadow": "/etc/shadow",
        "host home": str(Path.home()),
        "repository checkout": str(ROOT / "pyproject.toml"),
        "workspace task file": str(settings.workspace / "tasks" / f"{task.id}.json"),
        "other workspace": str(folder / "other-ws" / "tasks" / f"{task.id}.json"),
        "JSONL export": str(folder / "exports" / "tasks.jsonl"),
        "Harbor export (solution)": str(folder / "harbor" / task.id / "solution" / "solve.sh"),
        "backup (cp -a)": str(folder / "ws.bak" / "tasks" / f"{task.id}.json"),
        "published examples": str(ROOT / "examples" / "tasks" / "field-guide-document-tasks.jsonl"),
        "published examples (listing)": str(ROOT / "examples" / "tasks"),
        "write /etc": f"/etc/taskloom-probe-{marker}",
        "write root-owned folder": str(folder / f"probe-{marker}"),
        "write /tmp": f"/tmp/taskloom-probe-{marker}",
    }
    return settings, task, targets


def hostile_run(folder: Path, sandbox: str, python: str, run_id: str = "hostile") -> HostileRun:
    """Lay out the gold copies in ``folder`` (world-searchable), run two hostile agents on them under ``sandbox``."""
    gold = f"GOLD-{secrets.token_hex(8)}"
    settings, task, targets = gold_copies(folder, gold)
    settings = settings.model_copy(update={"agent_sandbox": sandbox})
    meet = Rendezvous(targets, NAMES)
    try:
        with meet.serve() as url:
            agents = [f"command:name={name},python={python},cmd={{python}} {shlex.quote(str(HOSTILE))} {name} {url}" for name in NAMES]
            anyio.run(lambda: Harness(settings, build_server).run([task], agents, run_id=run_id, timeout_s=120, concurrency=2))
        left = [p for k, p in targets.items() if k.startswith("write ") and Path(p).exists()]
        host_tmp = [p for p in left if p.startswith("/tmp/")]
    finally:
        for key, path in targets.items():
            if key.startswith("write "):
                Path(path).unlink(missing_ok=True)
    routes: dict[str, dict[str, bool]] = {}
    said: dict[str, dict[str, str]] = {}
    answers: dict[str, str | None] = {}
    printed: dict[str, str] = {}
    stderr: dict[str, str] = {}
    for name in NAMES:
        folder_ = settings.workspace / "runs" / run_id / "episodes" / task.id / name
        out = folder_ / "agent.stdout.log"
        printed[name] = out.read_text(encoding="utf-8") if out.is_file() else ""
        stderr[name] = (folder_ / "agent.stderr.log").read_text(encoding="utf-8", errors="replace")[-2000:] if (folder_ / "agent.stderr.log").is_file() else ""
        lines = printed[name].strip().splitlines()
        record: dict[str, Any] = json.loads(lines[-1]) if lines else {"routes": []}
        for entry in record["routes"]:
            routes.setdefault(entry["route"], {})[name] = entry["ok"]
            said.setdefault(entry["route"], {})[name] = entry["said"]
        path = RunStore.trajectory_in(folder_)
        answers[name] = load_trajectory(path).answer if path else None
    return HostileRun(sandbox=sandbox, gold=gold, routes=routes, said=said, answers=answers, printed=printed, left_in_host_tmp=host_tmp, stderr=stderr)
