"""Scripted in-process agents: ``oracle`` carries out the task's gold solution, ``replay`` repeats a recorded trajectory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastmcp import Client

from ...tools.environment.trajectory import Trajectory, load_trajectory
from ...tools.errors import InputError
from ...tools.security.roots import Roots
from ...tools.settings import Settings
from .base import InProcessAgent, Job
from .calls import call_for_action, call_for_step, structured
from .desktop_calls import desktop_gold
from .registry import agent

__all__ = ["OracleAgent", "ReplayAgent", "oracle", "replay"]


class OracleAgent(InProcessAgent):
    """Knows the gold solution: reads the evidence and answers (documents) or runs the gold steps (web, composite, desktop).

    The reference point of every run: it shows each task is solvable through the
    agent-profile tools alone, and its trajectory anchors the consensus graph. A gold
    step that fails (a slow page that timed out) does not end the attempt: the failure
    is in the trajectory, the remaining steps and the answer still follow.
    """

    def __init__(self, name: str = "oracle") -> None:
        super().__init__(name)

    async def attempt(self, job: Job, client: Client[Any] | None) -> None:
        assert client is not None
        task = job.task
        started = structured(await client.call_tool("env_start", {}))
        if task.kind == "desktop":  # the gold's elements found in desktop_snapshot, acted on by ref, as any agent would
            await desktop_gold(client, str(started["episode_id"]), task.gold_steps)
            if task.gold_answer is not None:  # a question about a file: the gold steps showed it, the answer says it
                await client.call_tool("env_answer", {"answer": task.gold_answer})
        elif task.kind == "document":
            for node_id in task.evidence[: max(job.max_steps - 1, 0)]:
                await client.call_tool("doc_read", {"node_id": node_id})
            await client.call_tool("env_answer", {"answer": task.gold_answer or ""})
        else:
            for step in task.gold_steps[: job.max_steps]:
                name, args = call_for_step(step)
                # a step that fails (a slow page timed out) is recorded by the server and told to the agent as a tool error;
                # the oracle goes on as a person would, and the final-state check says whether the task was done
                await client.call_tool(name, args, raise_on_error=False)
            if task.gold_answer:  # a web question: answered from the page the gold steps reached
                await client.call_tool("env_answer", {"answer": task.gold_answer})
        await client.call_tool("env_close", {})


class ReplayAgent:
    """Repeats a recorded trajectory: ``source`` is a trajectory file, a folder of them (matched by task id), or ``gold``.

    Failed actions are repeated too (they fail again, as recorded); elements are found
    by the selector recorded with each action, since snapshot refs do not survive a
    new episode.
    """

    in_process = True

    def __init__(self, name: str = "replay", source: str = "gold", roots: Roots | None = None) -> None:
        self.name = name
        self.model: str | None = None
        self.tokens = 0
        self.source = source
        self.roots = roots  # where a folder source may be searched (default: the folder itself)

    def _trajectory(self, job: Job) -> Trajectory:
        if self.source == "gold":
            if not job.task.gold_trajectory:
                raise InputError(f"task {job.task.id} has no gold trajectory to replay")
            return load_trajectory(Path(job.task.gold_trajectory))
        path = Path(self.source)
        if path.is_dir():
            for candidate in (self.roots or Roots([path])).walk(path, "trajectory.jsonl"):
                trajectory = load_trajectory(candidate)
                if trajectory.episode.task_id == job.task.id:
                    return trajectory
            raise InputError(f"no trajectory for task {job.task.id} under {path}")
        return load_trajectory(path)

    async def attempt(self, job: Job, client: Client[Any] | None) -> None:
        assert client is not None
        recorded = self._trajectory(job)
        await client.call_tool("env_start", {})
        actions = recorded.actions
        if actions and actions[0].name == "navigate" and actions[0].args.get("url") == recorded.episode.start_url:
            actions = actions[1:]  # the episode's own opening navigation; env_start has just done it
        for action in actions[: job.max_steps - 1]:
            call = call_for_action(action)
            if call is not None:
                await client.call_tool(call[0], call[1], raise_on_error=False)
        if recorded.answer is not None:
            await client.call_tool("env_answer", {"answer": recorded.answer})
        await client.call_tool("env_close", {})


@agent("oracle")
def oracle(name: str = "oracle") -> OracleAgent:
    """Carries out the task's gold solution (the reference point of every run)."""
    return OracleAgent(name)


@agent("replay")
def replay(name: str, settings: Settings, source: str = "gold") -> ReplayAgent:
    """Repeats a recorded trajectory: ``source`` is a trajectory file, a folder of them, or ``gold``."""
    if source == "gold":
        return ReplayAgent(name)
    roots = Roots([settings.workspace, *settings.allow_roots, Path.cwd()])
    return ReplayAgent(name, str(roots.readable(source, f"agent {name}: source")), roots)
