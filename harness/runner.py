"""Runs: every task with every agent, episodes in parallel, each result stored as soon as it is known.

Each episode gets its own server bound to its task and agent (so its own browser
context), a time limit and a step limit. An agent that crashes or hangs ends its
episode as ``crashed`` or ``timeout`` with the reason, and the run goes on. Results
are appended durably; ``resume`` skips every (task, agent) pair already stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio
from pydantic import BaseModel

from ..tools.environment.trajectory import load_trajectory
from ..tools.errors import TaskloomError
from ..tools.evaluate.checks import verdicts
from ..tools.evaluate.episode import evaluate_episode, judge_episode
from ..tools.evaluate.model import EpisodeResult, EpisodeStatus
from ..tools.runtime import Runtime
from ..tools.tasks.model import Task
from .agents.base import Agent, AgentSpec, Job, ServerFactory
from .agents.registry import make_agent
from .reasons import crash_reason, failure_reason
from .store import RunSpec, RunStore

__all__ = ["Progress", "run_episodes", "run_one"]

Progress = Callable[[EpisodeResult, int, int], None]  # (result, done, total)


class _Outcome(BaseModel):
    status: EpisodeStatus
    reason: str | None = None


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


async def _attempt(agent: Agent, job: Job) -> _Outcome:
    """Run the agent under the job's time limit; never raises for the agent's own failures."""
    outcome = _Outcome(status="finished")
    try:
        if agent.in_process:
            async with job.connect() as client:  # closing it closes the episode: final state checked even after a timeout
                with anyio.move_on_after(job.timeout_s) as scope:
                    await agent.attempt(job, client)
        else:
            with anyio.move_on_after(job.timeout_s) as scope:
                await agent.attempt(job, None)
        if scope.cancelled_caught:
            outcome = _Outcome(status="timeout", reason=f"no result within {job.timeout_s:g} s")
    except TimeoutError as exc:  # an agent that enforces its own time limit (command) says so this way
        outcome = _Outcome(status="timeout", reason=_reason(exc))
    except Exception as exc:  # an agent's crash ends its episode, not the run
        outcome = _Outcome(status="crashed", reason=crash_reason(exc))
    return outcome


async def run_one(
    task: Task,
    spec: AgentSpec,
    store: RunStore,
    runtime: Runtime,
    run: RunSpec,
    server_factory: ServerFactory | None = None,
) -> EpisodeResult:
    """One episode: attempt, then evaluate what the server recorded.

    In-process episodes' servers share ``runtime``'s browser and graph service.
    """
    settings = runtime.settings
    try:
        agent = make_agent(spec, settings)
    except TaskloomError as exc:  # e.g. builtin without an endpoint on a resumed run: this episode fails, clearly
        return evaluate_episode(task, None, spec.name, status="crashed", reason=str(exc), duration_s=0.0, run_id=run.run_id)
    job = Job(
        task=task,
        agent=spec.name,
        model=agent.model,
        episodes_dir=store.episode_dir(task.id, spec.name, fresh=True),
        settings=settings,
        max_steps=run.max_steps,
        timeout_s=run.timeout_s,
        seed=run.seed,
        server_factory=server_factory,
        runtime=runtime,
    )
    started = time.monotonic()
    outcome = await _attempt(agent, job)
    path = RunStore.trajectory_in(job.episodes_dir)
    trajectory = load_trajectory(path) if path else None
    reason = outcome.reason or (None if trajectory else "the agent never started an episode")
    status: EpisodeStatus = outcome.status if trajectory or outcome.status != "finished" else "failed"
    result = evaluate_episode(
        task, trajectory, spec.name, status=status, reason=reason, duration_s=time.monotonic() - started,
        run_id=run.run_id, trajectory_path=str(path) if path else None,
    )
    closed = trajectory.closed if trajectory else None
    result = result.model_copy(update={
        "tokens": agent.tokens, "model": result.model or agent.model,
        "criteria": verdicts(closed.checks) if closed and closed.checks else [], "final_url": closed.final_url if closed else None,
    })
    result = result.model_copy(update={"reason": failure_reason(task, result, trajectory)})  # never blank for a failure
    if run.judge and trajectory is not None:
        try:
            result = await judge_episode(result, task, trajectory, runtime.llm)
        except TaskloomError as exc:  # a judge that cannot answer leaves the rule-based result standing, with the reason
            result = result.model_copy(update={"reason": f"{result.reason + '; ' if result.reason else ''}judge: {exc}"})
    if result.success and closed is not None and closed.screenshot and path is not None:
        (path.parent / closed.screenshot).unlink(missing_ok=True)  # kept at close for a failure; an answer judged right is none
    return result


async def run_episodes(
    run: RunSpec,
    tasks: dict[str, Task],
    store: RunStore,
    runtime: Runtime,
    progress: Progress | None = None,
    server_factory: ServerFactory | None = None,
) -> list[EpisodeResult]:
    """Run every (task, agent) pair not yet in the store, ``run.concurrency`` at a time; returns all results.

    Every in-process episode uses ``runtime``'s one browser process and loaded graph
    service; whoever owns the runtime closes it.
    """
    done = store.done()
    todo = [(t, a) for t in run.task_ids for a in run.agents if (t, a.name) not in done]
    total, finished = len(run.pairs()), len(done)
    limiter = anyio.CapacityLimiter(run.concurrency)

    async def one(task_id: str, spec: AgentSpec) -> None:
        nonlocal finished
        async with limiter:
            result = await run_one(tasks[task_id], spec, store, runtime, run, server_factory)
        store.append(result)
        finished += 1
        if progress is not None:
            progress(result, finished, total)

    async with anyio.create_task_group() as group:
        for task_id, spec in todo:
            group.start_soon(one, task_id, spec)
    order = {pair: i for i, pair in enumerate(run.pairs())}
    return sorted(store.results(), key=lambda r: order.get((r.task_id, r.agent), len(order)))


