"""The ``ray`` executor: a run's episodes spread over a Ray cluster, with one writer and bounded retries.

``taskloom run … --executor ray [--address auto|ray://host:port|host:port]``. Ray is an
optional extra (``pip install 'taskloom[ray]'``) imported only here, and only when a Ray
run starts: registering the executor does not import it.

How a run goes:

* **Workers.** One :class:`EpisodeWorker` actor per worker slot (default: one per CPU of
  the cluster), spread over the nodes (``scheduling_strategy="SPREAD"``). Each builds its
  own :class:`~taskloom.tools.runtime.Runtime` from the run's settings once (Chromium
  launched up front when the run has web tasks) and runs up to ``run.concurrency``
  episodes at a time on it, as the local executor does in one process.
* **One writer.** The driver (the process that called ``taskloom run``) dispatches every
  (task, agent) pair not yet in the run store and appends each result to
  ``results.jsonl`` as it arrives; workers write only their episodes' trajectory folders.
  A pair is written at most once (the driver keeps the set of written pairs), so a
  resumed run skips exactly what a local run would skip.
* **Lost workers.** When a worker dies (its process or node killed: ``RayActorError``),
  or an episode outlives its time limit by :data:`GRACE_S`, the worker is dropped, its
  episodes go back to the queue for the other workers (each at most ``retries`` more
  times; then the episode is stored as ``crashed`` with the reason), and a replacement
  worker is started when the cluster has room. No worker left: the run stops with an
  error and ``--resume`` continues it.
* **Where things ran.** ``runs/<run>/executor.jsonl`` logs each worker's node and process,
  each dispatch, result, lost worker and retry.

The workers read and write the run's workspace, so on several machines it must be the
same path on a shared filesystem, and Taskloom (with Chromium) installed on every node.
"""

from __future__ import annotations

import concurrent.futures
import functools
import importlib
import os
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TypeVar

import anyio

from ..tools.errors import InputError, TaskloomError
from ..tools.evaluate.episode import evaluate_episode
from ..tools.evaluate.model import EpisodeResult
from ..tools.runtime import Runtime
from ..tools.settings import Settings
from ..tools.tasks.model import Task
from ..tools.workspace import append_jsonl
from .agents.base import AgentSpec, ServerFactory
from .executors import executor
from .runner import Progress, run_one
from .store import RunSpec, RunStore

__all__ = ["RayExecutor", "EpisodeWorker", "RAY_MISSING", "GRACE_S", "import_ray", "connected", "portable", "worker_env", "map_on_executor", "where", "ray_cluster", "check_reachable"]

RAY_MISSING = "the ray executor needs Ray, an optional extra: pip install 'taskloom[ray]'"
#: How long past its time limit an episode may stay unanswered before its worker counts as lost.
GRACE_S = 120.0
#: How long the driver waits for a first worker to start before giving up.
START_TIMEOUT_S = 300.0
#: Variables the workers get from the driver's environment, with these defaults (quiet servers, no telemetry).
#: Everything else (PATH, where Chromium is) is the node's own; the workspace comes with the settings.
WORKER_ENV = {"FASTMCP_SHOW_SERVER_BANNER": "false", "FASTMCP_CHECK_FOR_UPDATES": "off", "ORT_DISABLE_TELEMETRY": "1", "ANONYMIZED_TELEMETRY": "False"}

T = TypeVar("T")
R = TypeVar("R")


def import_ray() -> ModuleType:
    """The ``ray`` module; an :class:`InputError` saying how to install it when it is missing."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise InputError(RAY_MISSING) from None


def worker_env() -> dict[str, str]:
    """The environment variables every Ray worker gets."""
    return {k: os.environ.get(k, v) for k, v in WORKER_ENV.items()}


@contextmanager
def connected(address: str | None) -> Iterator[ModuleType]:
    """Ray, connected to ``address`` (``auto``, ``ray://host:port``, ``host:port``; None: a new local Ray) for the block.

    A connection made here is closed at the end; one the process already had is kept.
    """
    ray = import_ray()
    owned = not ray.is_initialized()
    restore = _cluster_messages_to_stderr()
    try:
        if owned:
            extra: dict[str, Any] = {"include_dashboard": False} if address is None else {}
            try:
                ray.init(address=address, log_to_driver=False, **extra)
            except (ConnectionError, RuntimeError, ValueError, ray.exceptions.RayError) as exc:
                where_to = address or "a new local Ray"
                raise InputError(f"could not connect to the Ray cluster at {where_to} ({_why(exc)}); start one with `ray start --head` or check --address") from None
        yield ray
    finally:
        if owned and ray.is_initialized():
            ray.shutdown()
        restore()


def _cluster_messages_to_stderr() -> Callable[[], None]:
    """Send the cluster's messages to this driver (e.g. "the node … has been marked dead") to stderr; returns the undo.

    Ray prints them on stdout, where they would corrupt a command's output (``taskloom run --json``).
    """
    module = importlib.import_module("ray._private.worker")
    original = getattr(module, "print_to_stdstream", None)
    if original is None:  # another Ray version: leave its printing alone
        return lambda: None

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix)

    setattr(module, "print_to_stdstream", to_stderr)  # noqa: B010 (a private Ray module, patched on purpose)

    def undo() -> None:
        setattr(module, "print_to_stdstream", original)  # noqa: B010

    return undo


def portable(settings: Settings) -> Settings:
    """The settings for workers elsewhere: the workspace and allowed roots as absolute paths."""
    return settings.model_copy(update={"workspace": settings.workspace.resolve(), "allow_roots": [p.resolve() for p in settings.allow_roots]})


def where(_: object = None) -> dict[str, Any]:
    """The Ray node id, host name and process id of the worker this runs in."""
    ray = import_ray()
    return {"node": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(), "pid": os.getpid()}


def map_on_executor(fn: Callable[[T], R], items: Iterable[T], executor_name: str = "local", address: str | None = None, retries: int = 2) -> list[R]:
    """``[fn(item) for item in items]``, here (``local``) or as Ray tasks spread over a cluster (``ray``), in order.

    For generation's heavy parts. ``fn`` must be importable on the workers (a module-level
    function of an installed package); a Ray task whose worker dies is run again, at most
    ``retries`` times.
    """
    chosen = list(items)
    if executor_name == "local":
        return [fn(item) for item in chosen]
    if executor_name != "ray":
        raise InputError(f"unknown executor {executor_name!r}; choose local or ray")
    with connected(address) as ray:
        task = ray.remote(fn).options(scheduling_strategy="SPREAD", max_retries=retries, runtime_env={"env_vars": worker_env()})
        return list(ray.get([task.remote(item) for item in chosen]))


class EpisodeWorker:
    """One worker slot: its own runtime (browser included), built once, running the driver's episodes on it."""

    def __init__(self, settings: Settings, server_factory: ServerFactory | None, browser: bool) -> None:
        self.runtime = Runtime(settings)
        self.server_factory = server_factory
        self.browser = browser

    async def ready(self) -> dict[str, Any]:
        """Launch the browser when the run needs one; say where this worker runs."""
        if self.browser:
            await self.runtime.browsers.browser()
        return where()

    async def run_episode(self, task: Task, spec: AgentSpec, run: RunSpec) -> EpisodeResult:
        """One episode, as the local executor runs it; the result goes back to the driver, which stores it."""
        store = RunStore(self.runtime.workspace, run.run_id)
        return await run_one(task, spec, store, self.runtime, run, self.server_factory)

    async def close(self) -> None:
        """Close the runtime's open episodes and its browser."""
        await self.runtime.aclose()


@dataclass
class _Slot:
    """A worker actor as the driver sees it."""

    index: int
    handle: Any
    started: float
    info: dict[str, Any] | None = None
    alive: bool = True
    busy: int = 0


@dataclass
class _Episode:
    """An episode in flight: where, and since when."""

    slot: _Slot
    task_id: str
    spec: AgentSpec
    since: float = field(default_factory=time.monotonic)


def _why(exc: BaseException) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0].strip()}" if lines else type(exc).__name__


class RayExecutor:
    """Episodes on a Ray cluster: a worker per slot, one writer (this process), bounded retries of lost episodes."""

    def __init__(self, address: str | None = None, workers: int | None = None, retries: int = 2, cpus: float = 1.0) -> None:
        self.address, self.workers, self.retries, self.cpus = address, workers, retries, cpus

    async def run(
        self, run: RunSpec, tasks: dict[str, Task], store: RunStore, runtime: Runtime,
        progress: Progress | None = None, server_factory: ServerFactory | None = None,
    ) -> list[EpisodeResult]:
        written = store.done()
        todo = deque((t, a) for t in run.task_ids for a in run.agents if (t, a.name) not in written)
        if todo:
            settings = portable(runtime.settings)
            browser = any(tasks[t].kind != "document" for t, _ in todo)
            with connected(self.address) as ray:
                await _Driver(ray, self, run, tasks, store, settings, server_factory, browser, progress).go(todo, written)
        order = {pair: i for i, pair in enumerate(run.pairs())}
        return sorted(store.results(), key=lambda r: order.get((r.task_id, r.agent), len(order)))


class _Driver:
    """The one writer of a Ray run: starts workers, dispatches episodes, stores results, retries lost ones."""

    def __init__(
        self, ray: ModuleType, options: RayExecutor, run: RunSpec, tasks: dict[str, Task], store: RunStore,
        settings: Settings, server_factory: ServerFactory | None, browser: bool, progress: Progress | None,
    ) -> None:
        self.ray, self.options, self.run, self.tasks, self.store = ray, options, run, tasks, store
        self.progress = progress
        self.log_path = store.dir / "executor.jsonl"
        self.actor = ray.remote(EpisodeWorker).options(
            num_cpus=options.cpus, scheduling_strategy="SPREAD", max_concurrency=run.concurrency, max_restarts=0, max_task_retries=0,
            runtime_env={"env_vars": worker_env()},
        )
        self.args = (settings, server_factory, browser)
        self.run_ref = ray.put(run)
        self.slots: list[_Slot] = []
        self.starting: dict[concurrent.futures.Future[Any], _Slot] = {}
        self.running: dict[concurrent.futures.Future[Any], _Episode] = {}
        self.attempts: dict[tuple[str, str], int] = {}
        self.last_error = ""
        self.spare = 0

    def log(self, event: str, slot: _Slot | None = None, **fields: Any) -> None:
        """One line of ``executor.jsonl``."""
        at = {"worker": slot.index, **(slot.info or {})} if slot is not None else {}
        append_jsonl(self.log_path, {"t": round(time.time(), 3), "event": event, **at, **fields})

    def start_worker(self) -> None:
        slot = _Slot(index=len(self.slots), handle=self.actor.remote(*self.args), started=time.monotonic())
        self.slots.append(slot)
        self.starting[slot.handle.ready.remote().future()] = slot

    async def go(self, todo: deque[tuple[str, AgentSpec]], written: set[tuple[str, str]]) -> None:
        cpus = int(self.ray.cluster_resources().get("CPU", 1) // max(self.options.cpus, 0.001))
        wanted = max(1, self.options.workers or cpus)
        self.log("run", workers=wanted, episodes=len(todo), retries=self.options.retries)
        self.spare = wanted * self.options.retries  # replacements allowed for lost workers
        total, finished = len(self.run.pairs()), len(written)
        for _ in range(wanted):
            self.start_worker()
        waiting_since = time.monotonic()
        try:
            while todo or self.running:
                self.dispatch(todo)
                ready = [s for s in self.slots if s.alive and s.info is not None]
                if ready or self.running:
                    waiting_since = time.monotonic()
                elif not self.starting:
                    raise TaskloomError(f"no Ray worker left to run the remaining {len(todo)} episode(s) (last error: {self.last_error or 'none'}); "
                                        f"continue with `taskloom run --resume {self.run.run_id}`")
                elif time.monotonic() - waiting_since > START_TIMEOUT_S:
                    raise TaskloomError(f"no Ray worker started within {START_TIMEOUT_S:g} s (cluster resources: {self.ray.cluster_resources()}); "
                                        f"continue with `taskloom run --resume {self.run.run_id}` once the cluster has room")
                wait = functools.partial(concurrent.futures.wait, [*self.starting, *self.running], 1.0, concurrent.futures.FIRST_COMPLETED)
                done, _ = await anyio.to_thread.run_sync(wait)
                for future in done:
                    if future in self.starting:
                        self.started(future)
                        continue
                    result = self.finished(future, todo)
                    if result is None:
                        continue
                    if (result.task_id, result.agent) in written:  # never stored twice
                        self.log("duplicate", task_id=result.task_id, agent=result.agent)
                        continue
                    self.store.append(result)
                    written.add((result.task_id, result.agent))
                    finished += 1
                    if self.progress is not None:
                        self.progress(result, finished, total)
                self.overdue()
        finally:
            await self.stop()

    def dispatch(self, todo: deque[tuple[str, AgentSpec]]) -> None:
        """Hand queued episodes to the least busy ready workers, ``run.concurrency`` at a time each."""
        while todo:
            free = [s for s in self.slots if s.alive and s.info is not None and s.busy < self.run.concurrency]
            if not free:
                return
            slot = min(free, key=lambda s: (s.busy, s.index))
            task_id, spec = todo.popleft()
            attempt = self.attempts.get((task_id, spec.name), 0) + 1
            self.attempts[(task_id, spec.name)] = attempt
            future = slot.handle.run_episode.remote(self.tasks[task_id], spec, self.run_ref).future()
            self.running[future] = _Episode(slot, task_id, spec)
            slot.busy += 1
            self.log("dispatched", slot, task_id=task_id, agent=spec.name, attempt=attempt)

    def started(self, future: concurrent.futures.Future[Any]) -> None:
        slot = self.starting.pop(future)
        try:
            slot.info = future.result()
        except self.ray.exceptions.RayError as exc:
            self.last_error = _why(exc)
            slot.alive = False
            self.log("worker_failed", slot, error=self.last_error)
            self.replace()
            return
        self.log("worker_ready", slot, seconds=round(time.monotonic() - slot.started, 2))

    def finished(self, future: concurrent.futures.Future[Any], todo: deque[tuple[str, AgentSpec]]) -> EpisodeResult | None:
        """The stored result of a finished episode; None when it goes back to the queue."""
        episode = self.running.pop(future)
        episode.slot.busy -= 1
        pair = (episode.task_id, episode.spec.name)
        try:
            result: EpisodeResult = future.result()
        except self.ray.exceptions.RayTaskError as exc:  # our code raised inside a live worker: the episode crashed, clearly
            result = self.crashed(episode, f"the episode raised on its Ray worker: {_why(getattr(exc, 'cause', None) or exc)}")
        except (self.ray.exceptions.RayError, concurrent.futures.CancelledError) as exc:  # the worker (or its node) is gone
            self.lose(episode.slot, _why(exc))
            return self.again(episode, todo)
        self.log("finished", episode.slot, task_id=pair[0], agent=pair[1], attempt=self.attempts[pair], status=result.status, success=result.success)
        return result

    def again(self, episode: _Episode, todo: deque[tuple[str, AgentSpec]]) -> EpisodeResult | None:
        """Queue a lost episode again, or, once its retries are spent, its ``crashed`` result."""
        pair = (episode.task_id, episode.spec.name)
        if self.attempts[pair] <= self.options.retries:
            todo.appendleft((episode.task_id, episode.spec))
            self.log("retry", episode.slot, task_id=pair[0], agent=pair[1], attempt=self.attempts[pair])
            return None
        result = self.crashed(episode, f"lost its Ray worker {self.attempts[pair]} time(s); last: {self.last_error}")
        self.log("gave_up", episode.slot, task_id=pair[0], agent=pair[1], attempt=self.attempts[pair])
        return result

    def crashed(self, episode: _Episode, reason: str) -> EpisodeResult:
        return evaluate_episode(self.tasks[episode.task_id], None, episode.spec.name, status="crashed", reason=reason,
                                duration_s=time.monotonic() - episode.since, run_id=self.run.run_id)

    def lose(self, slot: _Slot, why: str) -> None:
        """Drop a worker that died or stopped answering (killed, so a stalled one cannot write on)."""
        if not slot.alive:
            return
        slot.alive = False
        self.last_error = why
        self.log("worker_lost", slot, error=why)
        try:
            self.ray.kill(slot.handle, no_restart=True)
        except self.ray.exceptions.RayError as exc:  # already gone with its node: nothing left to stop
            self.log("kill_failed", slot, error=_why(exc))
        self.replace()

    def replace(self) -> None:
        """Start a replacement worker while the run's allowance lasts, wherever the cluster has room (it may wait for some)."""
        if self.spare > 0:
            self.spare -= 1
            self.start_worker()

    def overdue(self) -> None:
        """Treat a worker whose episode is long past its time limit as lost; its episodes are queued again."""
        limit = self.run.timeout_s + GRACE_S
        for episode in list(self.running.values()):
            if episode.slot.alive and time.monotonic() - episode.since > limit:
                self.lose(episode.slot, f"{episode.task_id}/{episode.spec.name} gave no result within {limit:g} s")

    async def stop(self) -> None:
        """Close the workers' runtimes (browsers) and end the actors."""
        ready = [s for s in self.slots if s.alive and s.info is not None]
        closing = [s.handle.close.remote().future() for s in ready]
        if closing:
            await anyio.to_thread.run_sync(functools.partial(concurrent.futures.wait, closing, 30.0))
        for slot in self.slots:
            try:
                self.ray.kill(slot.handle, no_restart=True)
            except self.ray.exceptions.RayError as exc:
                self.log("kill_failed", slot, error=_why(exc))


@executor("ray")
def ray_cluster(address: str | None = None, workers: int | None = None, retries: int = 2, cpus: float = 1.0) -> RayExecutor:
    """On a Ray cluster (address: auto, ray://host:port; none: a local Ray): a runtime per worker, lost episodes retried."""
    import_ray()  # refuse now, with how to install it, rather than when the run starts
    if retries < 0 or (workers is not None and workers < 1) or cpus <= 0:
        raise InputError("the ray executor takes retries >= 0, workers >= 1 and cpus > 0")
    if address is not None:
        check_reachable(address)
    return RayExecutor(address, workers, retries, cpus)


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse a ``host:port`` or ``ray://host:port`` address nothing answers at (Ray itself would retry for minutes)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # auto, or a form Ray resolves itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise InputError(f"no Ray cluster answers at {address} ({exc.strerror or exc}); start one with `ray start --head` or check --address") from None
