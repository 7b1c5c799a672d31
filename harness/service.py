"""The harness as one library call: pick tasks, run agents on them, evaluate, build consensus graphs, report."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..tools.errors import InputError
from ..tools.registry import RegistrySpec, registry_spec
from ..tools.runtime import Runtime
from ..tools.settings import Recording, Settings
from ..tools.tasks.files import read_task_file
from ..tools.tasks.model import Task
from .agents.base import AgentSpec, ServerFactory
from .agents.command import check_sandbox
from .agents.registry import make_agent
from .executors import Executor, executors
from .finish import RunReport, finish_run
from .runner import Progress
from .store import RunSpec, RunStore, new_run_id

__all__ = ["Harness", "load_tasks_file"]


def load_tasks_file(path: Path) -> list[Task]:
    """Tasks from a JSONL file (one task per line, as ``tasks_export`` writes) or a JSON list; errors name line and field."""
    if not path.is_file():
        raise InputError(f"no tasks file {path}")
    return read_task_file(path)


class Harness:
    """Runs over one workspace.

    ``server_factory`` builds the agent-profile server in-process agents talk to
    (pass ``taskloom.server.app.build_server``); the harness does not import the server.
    ``runtime`` is the process's :class:`~taskloom.tools.runtime.Runtime` (the server's,
    when the server runs the harness; its owner closes it). Without one the harness
    makes its own from ``settings`` and closes its browser at the end of every run.
    """

    def __init__(self, settings: Settings, server_factory: ServerFactory | None = None, runtime: Runtime | None = None) -> None:
        self.runtime = runtime if runtime is not None else Runtime(settings)
        self._owns_runtime = runtime is None
        self.settings = self.runtime.settings
        self.server_factory = server_factory
        self.workspace = self.runtime.workspace
        self.tasks = self.runtime.tasks

    def select(self, ids: list[str] | None = None, kind: str | None = None, tasks_file: Path | None = None) -> list[Task]:
        """Tasks by id, by kind, from a file (stored into the workspace, where the servers read them), or all."""
        if tasks_file is not None:
            chosen = load_tasks_file(tasks_file)
            for task in chosen:
                self.tasks.save(task)
        elif ids:
            chosen = [self.tasks.load(i) for i in ids]
        else:
            chosen = self.tasks.list(kind=kind)
        chosen = [t for t in chosen if kind is None or t.kind == kind]
        if not chosen:
            raise InputError("no tasks to run; generate some (taskloom generate) or pass --tasks FILE")
        return chosen

    async def run(
        self,
        tasks: list[Task],
        agents: list[str],
        concurrency: int = 2,
        max_steps: int = 30,
        timeout_s: float = 120.0,
        seed: int = 0,
        run_id: str | None = None,
        progress: Progress | None = None,
        judge: bool = False,
        executor: str = "local",
        executor_args: dict[str, Any] | None = None,
        record: Sequence[Recording] | None = None,
    ) -> RunReport:
        """A new run of every task with every agent (by ``executor`` with ``executor_args``); then consensus graphs and the report.

        ``run.json`` records each agent's registry entry (kind, typed arguments, origin) and the executor's.
        ``record`` (default ``settings.record``) names what every browser episode records into its folder
        besides the trajectory: ``har`` (``network.har``) and ``trace`` (``trace.zip``, for ``playwright show-trace``).
        """
        specs = [AgentSpec.parse(a) for a in agents]
        if not specs:
            raise InputError("name at least one agent, e.g. --agent oracle --agent explorer")
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise InputError(f"agent names must differ ({', '.join(names)}); add name=… to an agent, e.g. explorer:seed=2,name=explorer2")
        entries: dict[str, RegistrySpec] = {}
        for agent in specs:
            made = make_agent(agent, self.settings)  # refuse bad kinds and options before anything starts
            entries[agent.name] = registry_spec(made) or RegistrySpec(kind="agent", name=agent.kind, args=dict(agent.options))
        executor_spec = executors.spec(executor, executor_args)
        runner = executors.create(executor, executor_args)  # refuse what cannot run here (e.g. Ray not installed) before the run exists
        if any(agent.kind == "command" for agent in specs):
            check_sandbox(self.settings)  # and command agents when no sandbox can keep them from the workspace
        if judge and self.settings.llm_backend != "openai":
            raise InputError("--judge needs an LLM: set TASKLOOM_LLM_BACKEND=openai, TASKLOOM_LLM_BASE_URL and TASKLOOM_LLM_MODEL")
        plan = RunSpec(
            run_id=run_id or new_run_id(), task_ids=[t.id for t in tasks], agents=specs, max_steps=max_steps,
            timeout_s=timeout_s, concurrency=concurrency, seed=seed, judge=judge, entries=entries, executor=executor_spec,
            record=list(dict.fromkeys(self.settings.record if record is None else record)),
            created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
        store = RunStore(self.workspace, plan.run_id)
        store.create(plan)
        return await self._go(store, plan, {t.id: t for t in tasks}, progress, runner)

    async def resume(self, run_id: str, progress: Progress | None = None) -> RunReport:
        """Continue a run that was stopped: only the episodes without a stored result are run."""
        store = RunStore(self.workspace, run_id)
        spec = store.spec()
        return await self._go(store, spec, {i: self.tasks.load(i) for i in spec.task_ids}, progress)

    async def _go(self, store: RunStore, spec: RunSpec, tasks: dict[str, Task], progress: Progress | None, runner: Executor | None = None) -> RunReport:
        """Run the remaining episodes with the run's recordings on (the runtime's settings carry them to every episode's
        server, in-process, stdio or Ray), then finish the run; the runtime's own settings are restored afterwards."""
        before = self.runtime.settings
        if list(before.record) != list(spec.record):
            self.runtime.settings = before.model_copy(update={"record": list(spec.record)})
        try:
            runner = runner or executors.create(spec.executor.name, spec.executor.args)
            await runner.run(spec, tasks, store, self.runtime, progress, self.server_factory)
        finally:
            self.runtime.settings = before
            if self._owns_runtime:
                await self.runtime.aclose()
        return finish_run(store, tasks, self.workspace)

    def report(self, run_id: str) -> RunReport:
        """Rebuild a run's consensus graphs and report from its store."""
        store = RunStore(self.workspace, run_id)
        spec = store.spec()
        return finish_run(store, {i: self.tasks.load(i) for i in spec.task_ids}, self.workspace)
