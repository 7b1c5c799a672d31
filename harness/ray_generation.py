"""Generation's replay verification on a Ray cluster: ``taskloom generate GRAPH --executor ray [--address …]``.

Web task generation replays every candidate's gold steps in a real browser
(:func:`~taskloom.tools.generate.web.paths.verify_web_tasks`). With a
:class:`RayReplayer` those replays are spread over Ray workers instead:

* **Workers.** One :class:`ReplayWorker` actor per worker slot (default: one per CPU of the
  cluster, never more than there are candidates), spread over the nodes. Each builds its own
  :class:`~taskloom.tools.runtime.Runtime` (browser included) once and replays the candidates
  the driver hands it, one at a time, the next as soon as one is done.
* **One writer.** The verdicts (the task with its gold trajectory, or why it was dropped) come
  back to the driver in input order; the driver alone filters, selects and stores the tasks, so
  the same seed keeps the same tasks as a local run.
* **Lost workers.** Ray restarts a worker that dies (at most ``retries`` times) and runs its
  replay again; past that, its candidates go to the other workers, and with none left the
  generation stops with an error.

The gold trajectories are written in the workspace by the worker that replayed them, so on
several machines the workspace must be the same path on a shared filesystem (as for runs).
Crawling several sites (``taskloom crawl URL URL … --executor ray``) runs each site's crawl
as a Ray task (:func:`crawl_sites`) in a browser of its own; the driver stores the graphs.
``taskloom build MANIFEST --executor ray`` does both for every site of the manifest
(:class:`RayBuildWork`), connected to the cluster once for the whole build.

Ray is imported only when a replay or a crawl starts.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Any

from ..tools.errors import InputError, TaskloomError
from ..tools.generate.web.paths import Verdict, replay_web_task
from ..tools.graph.web.pipeline import CrawlJob, Crawled, crawl_job
from ..tools.runtime import Runtime
from ..tools.settings import Settings
from ..tools.tasks.model import Task
from .ray_executor import _why, check_reachable, connected, import_ray, map_on_executor, portable, where, worker_env

__all__ = ["RayBuildWork", "RayReplayer", "ReplayWorker", "crawl_on_worker", "crawl_sites"]


class ReplayWorker:
    """One worker slot: its own runtime (browser included), built once, replaying the driver's candidates."""

    def __init__(self, settings: Settings) -> None:
        self.runtime = Runtime(settings, screenshots=False)
        self.info: dict[str, Any] | None = None

    async def replay(self, task: Task) -> tuple[Verdict, dict[str, Any]]:
        """One candidate's verification, and where it ran."""
        if self.info is None:
            self.info = where()
        return await replay_web_task(task, self.runtime.episodes), self.info

    async def close(self) -> None:
        """Close the runtime's episodes and its browser."""
        await self.runtime.aclose()


class RayReplayer:
    """A :data:`~taskloom.tools.generate.web.paths.Replayer` on a Ray cluster: ``await replayer(tasks)`` gives the verdicts in input order.

    ``placements`` holds, after a call, where each candidate was replayed (task id, node, host, pid).
    """

    def __init__(self, settings: Settings, address: str | None = None, workers: int | None = None, retries: int = 2) -> None:
        import_ray()  # refuse now, with how to install it, rather than after the candidates are made
        if retries < 0 or (workers is not None and workers < 1):
            raise InputError("replays on Ray take workers >= 1 and retries >= 0")
        if address is not None:
            check_reachable(address)
        self.settings, self.address, self.workers, self.retries = portable(settings), address, workers, retries
        self.placements: list[dict[str, Any]] = []

    async def __call__(self, tasks: list[Task]) -> list[Verdict]:
        self.placements = []
        if not tasks:
            return []
        with connected(self.address) as ray:
            slots = int(ray.cluster_resources().get("CPU", 1))
            actor = ray.remote(ReplayWorker).options(
                num_cpus=1, scheduling_strategy="SPREAD", max_restarts=self.retries, max_task_retries=self.retries,
                runtime_env={"env_vars": worker_env()},
            )
            handles = [actor.remote(self.settings) for _ in range(max(1, min(len(tasks), self.workers or slots)))]
            try:
                return await self._spread(ray, handles, tasks)
            finally:
                await self._stop(ray, handles)

    async def _spread(self, ray: Any, handles: list[Any], tasks: list[Task]) -> list[Verdict]:
        """Each worker takes the next candidate as soon as it is done with one; a worker Ray gave up on leaves its candidate to the others."""
        queue = deque(range(len(tasks)))
        done: dict[int, tuple[Verdict, dict[str, Any]]] = {}
        lost: list[str] = []

        async def drive(handle: Any) -> None:
            while queue:
                i = queue.popleft()
                try:
                    done[i] = await handle.replay.remote(tasks[i])
                except ray.exceptions.RayTaskError as exc:  # our code raised on a live worker: stop handing out candidates
                    queue.clear()
                    raise TaskloomError(f"replaying {tasks[i].id} raised on its Ray worker: {_why(getattr(exc, 'cause', None) or exc)}") from None
                except ray.exceptions.RayActorError as exc:  # the worker is gone for good (its restarts spent)
                    queue.appendleft(i)
                    lost.append(_why(exc))
                    return

        for outcome in await asyncio.gather(*(drive(h) for h in handles), return_exceptions=True):
            if isinstance(outcome, BaseException):  # the first failure, once every worker is done with its replay in hand
                raise outcome
        if queue:
            raise TaskloomError(f"no Ray worker left to replay the remaining {len(queue)} candidate(s) (last error: {lost[-1] if lost else 'none'})")
        self.placements = [{"task_id": tasks[i].id, **done[i][1]} for i in range(len(tasks))]
        return [done[i][0] for i in range(len(tasks))]

    async def _stop(self, ray: Any, handles: list[Any]) -> None:
        """Close the workers' runtimes (browsers), then end the actors."""
        closing = [asyncio.wait_for(asyncio.wrap_future(h.close.remote().future()), 30) for h in handles]
        for outcome in await asyncio.gather(*closing, return_exceptions=True):
            if isinstance(outcome, BaseException) and not isinstance(outcome, (ray.exceptions.RayError, TimeoutError)):
                raise outcome
        for handle in handles:
            try:
                ray.kill(handle, no_restart=True)
            except ray.exceptions.RayError:  # already gone with its node: nothing left to stop
                continue

    def summary(self) -> dict[str, Any]:
        """Where the last call's replays ran: the executor, and per node how many."""
        nodes: dict[str, int] = {}
        for spot in self.placements:
            nodes[spot["node"]] = nodes.get(spot["node"], 0) + 1
        return {"name": "ray", "address": self.address, "replays": self.placements, "per_node": nodes}


def crawl_on_worker(job: CrawlJob) -> Crawled:
    """:func:`~taskloom.tools.graph.web.pipeline.crawl_job` on a Ray worker, with the node it ran on."""
    return crawl_job(job).model_copy(update={"node": where()["node"]})


def crawl_sites(jobs: list[CrawlJob], address: str | None = None) -> list[Crawled]:
    """Crawl each site as a Ray task, spread over the nodes, each in a browser of its own; a task whose worker died runs again (twice at most)."""
    return map_on_executor(crawl_on_worker, jobs, "ray", address)


class RayBuildWork:
    """``taskloom build --executor ray``: each site's crawl as a Ray task, its candidates' replays on Ray workers.

    A :class:`~taskloom.tools.build.pipeline.RemoteWork`; the build runs inside
    :meth:`connected`, so the cluster (or a new local Ray) is joined once.
    """

    def __init__(self, settings: Settings, address: str | None = None, workers: int | None = None) -> None:
        self.replayer = RayReplayer(settings, address, workers)
        self.address = address
        self.per_node: dict[str, dict[str, int]] = {}

    def connected(self) -> contextlib.AbstractContextManager[Any]:
        """Joined to the cluster for the block."""
        return connected(self.address)

    def _count(self, node: str | None, what: str) -> None:
        counts = self.per_node.setdefault(node or "?", {"crawls": 0, "replays": 0})
        counts[what] += 1

    async def replay(self, tasks: list[Task]) -> list[Verdict]:
        verdicts = await self.replayer(tasks)
        for spot in self.replayer.placements:
            self._count(spot["node"], "replays")
        return verdicts

    def crawl_all(self, jobs: list[CrawlJob]) -> list[Crawled]:
        crawled = crawl_sites(jobs, self.address)
        for site in crawled:
            self._count(site.node, "crawls")
        return crawled

    def summary(self) -> dict[str, Any]:
        """The executor, and per node the crawls and replays it ran."""
        return {"name": "ray", "address": self.address, "per_node": self.per_node}
