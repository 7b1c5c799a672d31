"""The run store: a run's plan, its results appended durably as they finish, and its episode folders.

Layout under ``runs/{run_id}/``: ``run.json`` (the plan, written atomically),
``results.jsonl`` (one :class:`EpisodeResult` per finished episode, fsynced),
``episodes/{task_id}/{agent}/{episode_id}/trajectory.jsonl``. A run killed mid-way
is resumed from ``results.jsonl``: finished (task, agent) pairs are skipped, and
the folder of an episode that never reached the results file is cleared and redone.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from ..tools.errors import InputError, NotFoundError
from ..tools.evaluate.model import EpisodeResult
from ..tools.registry import RegistrySpec
from ..tools.settings import Recording
from ..tools.workspace import Workspace, append_jsonl, atomic_write_json
from .agents.spec import AgentSpec

__all__ = ["RunOverview", "RunSpec", "RunStore", "list_runs", "new_run_id"]

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def new_run_id() -> str:
    """A sortable run id from the current UTC time, e.g. ``run-20261122-073000``."""
    return time.strftime("run-%Y%m%d-%H%M%S", time.gmtime())


class RunSpec(BaseModel):
    """What a run attempts: every task with every agent, under these limits."""

    run_id: str
    task_ids: list[str]
    agents: list[AgentSpec]
    max_steps: int = Field(30, ge=1, le=1000)
    timeout_s: float = Field(120.0, gt=0)
    concurrency: int = Field(2, ge=1, le=64)
    seed: int = 0
    judge: bool = Field(False, description="Also score every episode with the configured LLM judge.")
    entries: dict[str, RegistrySpec] = Field(
        default_factory=dict, description="Each agent, by its name in the run, as the registry entry that builds it: kind, typed arguments, origin."
    )
    executor: RegistrySpec = Field(default_factory=lambda: RegistrySpec(kind="executor", name="local"), description="The executor that runs the episodes.")
    record: list[Recording] = Field(default_factory=list, description="What each browser episode records besides its trajectory: a HAR file, a Playwright trace.")
    created_at: str | None = Field(None, description="When the run was planned (UTC, ISO 8601); None for runs made before it was recorded.")

    def pairs(self) -> list[tuple[str, str]]:
        """(task_id, agent name) for every episode of the run, in a stable order."""
        return [(t, a.name) for t in self.task_ids for a in self.agents]


class RunStore:
    """One run's folder."""

    def __init__(self, workspace: Workspace, run_id: str) -> None:
        if not _RUN_ID.fullmatch(run_id or ""):
            raise InputError(f"run id {run_id!r} is not valid (letters, digits, '.', '_', '-')")
        self.run_id = run_id
        self.dir = workspace.runs / run_id
        self.spec_path = self.dir / "run.json"
        self.results_path = self.dir / "results.jsonl"

    @property
    def exists(self) -> bool:
        return self.spec_path.is_file()

    def create(self, spec: RunSpec) -> None:
        if self.exists:
            raise InputError(f"run {self.run_id!r} already exists; pass --resume to continue it or choose another --run-id")
        atomic_write_json(self.spec_path, spec.model_dump(mode="json"))

    def spec(self) -> RunSpec:
        if not self.exists:
            raise NotFoundError(f"no run {self.run_id!r} in this workspace; see `taskloom runs`")
        return RunSpec.model_validate_json(self.spec_path.read_text(encoding="utf-8"))

    def results(self) -> list[EpisodeResult]:
        """Every finished episode's result (a torn last line from a crash is ignored; the last of duplicates wins)."""
        found: dict[tuple[str, str], EpisodeResult] = {}
        if self.results_path.is_file():
            for line in self.results_path.read_text(encoding="utf-8").splitlines():
                try:
                    result = EpisodeResult.model_validate(json.loads(line))
                except (json.JSONDecodeError, ValidationError):
                    continue
                found[(result.task_id, result.agent)] = result
        return list(found.values())

    def done(self) -> set[tuple[str, str]]:
        return {(r.task_id, r.agent) for r in self.results()}

    def append(self, result: EpisodeResult) -> None:
        append_jsonl(self.results_path, result.model_dump(mode="json"))

    def episode_dir(self, task_id: str, agent: str, fresh: bool = False) -> Path:
        """Where one (task, agent) episode's trajectory goes; ``fresh`` clears what an unfinished attempt left."""
        path = self.dir / "episodes" / task_id / agent
        if fresh and path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True, exist_ok=True)
        return path

    @staticmethod
    def trajectory_in(folder: Path) -> Path | None:
        """The trajectory file an episode left in ``folder`` (the newest, if a server made several)."""
        files = sorted(folder.glob("*/trajectory.jsonl"), key=lambda p: (p.stat().st_mtime, str(p)))
        return files[-1] if files else None


class RunOverview(BaseModel):
    """One run at a glance, as ``taskloom runs`` lists it."""

    run_id: str
    created_at: str = Field(description="When the run was planned (UTC, ISO 8601; the plan file's time for older runs).")
    agents: list[str]
    tasks: int
    planned: int = Field(description="Episodes the run plans: tasks × agents.")
    episodes: int = Field(description="Episodes finished so far.")
    successes: int
    success_rate: float | None = Field(None, description="successes / episodes; None before any episode finished.")
    executor: str = "local"
    record: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, store: RunStore) -> RunOverview:
        """The overview of a stored run (raises NotFoundError when it has no plan)."""
        spec = store.spec()
        results = store.results()
        done, ok = len(results), sum(1 for r in results if r.success)
        stamp = spec.created_at or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(store.spec_path.stat().st_mtime))
        return cls(
            run_id=spec.run_id, created_at=stamp, agents=[a.name for a in spec.agents], tasks=len(spec.task_ids), planned=len(spec.pairs()),
            episodes=done, successes=ok, success_rate=round(ok / done, 4) if done else None, executor=spec.executor.name, record=list(spec.record),
        )


def list_runs(workspace: Workspace) -> list[RunOverview]:
    """Every run of the workspace (folders of ``runs/`` holding a readable ``run.json``), newest first."""
    found: list[RunOverview] = []
    if not workspace.runs.is_dir():
        return found
    for folder in workspace.runs.iterdir():
        if not (folder / "run.json").is_file() or not _RUN_ID.fullmatch(folder.name):
            continue
        try:
            found.append(RunOverview.of(RunStore(workspace, folder.name)))
        except (OSError, ValidationError, ValueError):
            continue  # a plan written by something else, or damaged: not a run this version can list
    return sorted(found, key=lambda r: (r.created_at, r.run_id), reverse=True)
