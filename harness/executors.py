"""The executor registry: how a run's episodes are carried out (``local`` in this process, ``ray`` over a Ray cluster).

An executor is built by a decorated factory (``@executor("local")``) from the
arguments a run records in ``run.json`` (``RunSpec.executor``), and runs every
(task, agent) pair not yet in the store, returning all results. ``ray`` lives in
:mod:`taskloom.harness.ray_executor`, which imports Ray only when a Ray run starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from ..tools.evaluate.model import EpisodeResult
from ..tools.registry import Registry
from ..tools.runtime import Runtime
from ..tools.tasks.model import Task
from .agents.base import ServerFactory
from .runner import Progress, run_episodes
from .store import RunSpec, RunStore

__all__ = ["Executor", "LocalExecutor", "executors", "executor", "local"]


class Executor(Protocol):
    """Runs a run's remaining episodes, storing each result as it is known."""

    async def run(
        self, run: RunSpec, tasks: dict[str, Task], store: RunStore, runtime: Runtime,
        progress: Progress | None = None, server_factory: ServerFactory | None = None,
    ) -> list[EpisodeResult]:
        """Run every (task, agent) pair not yet in ``store``; return all results of the run."""
        ...


F = TypeVar("F", bound=Callable[..., Executor])

#: Executor factories by name.
executors: Registry[Executor] = Registry("executor", modules=("taskloom.harness.executors", "taskloom.harness.ray_executor"))


def executor(name: str) -> Callable[[F], F]:
    """Register an executor factory under ``name``."""
    return executors.register(name)


class LocalExecutor:
    """Episodes in this process, ``run.concurrency`` at a time, on the process's runtime."""

    async def run(
        self, run: RunSpec, tasks: dict[str, Task], store: RunStore, runtime: Runtime,
        progress: Progress | None = None, server_factory: ServerFactory | None = None,
    ) -> list[EpisodeResult]:
        return await run_episodes(run, tasks, store, runtime, progress, server_factory)


@executor("local")
def local() -> LocalExecutor:
    """In this process: episodes run concurrently (``--concurrency``) on one shared browser."""
    return LocalExecutor()
