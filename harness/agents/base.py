"""The agent interface: one attempt at one task, acting only through the agent-profile MCP tools.

Every agent reaches the environment the way an external agent would: through a
Taskloom server in the ``agent`` profile, bound to the job's task, agent name and
episode folder. In-process agents (oracle, replay, explorer) talk to it over an
in-memory MCP client (:meth:`Job.connect`); the builtin LLM agent, the harness's own
code, starts ``taskloom serve --profile agent`` over stdio (:meth:`Job.serve_command`);
a command agent, which is not trusted, gets a server the harness serves over loopback
HTTP with a per-episode token (:meth:`Job.serve_http`), never a command that would run
a server with the agent's rights (and the task's gold within its reach). Either way the
server records the trajectory into ``job.episodes_dir`` and checks the final state when
the episode closes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

from fastmcp import Client, FastMCP
from pydantic import BaseModel, ConfigDict, Field

from ...tools.environment.mcp import Bound
from ...tools.errors import InputError
from ...tools.runtime import Runtime
from ...tools.settings import Settings
from ...tools.tasks.model import Task
from .endpoint import Endpoint, serve_episode
from .spec import AgentSpec

__all__ = ["Agent", "InProcessAgent", "Job", "AgentSpec", "AgentStopped", "ServerFactory"]

ServerFactory = Callable[..., FastMCP]  # (settings, profile=, bound=, episodes_dir=, runtime=) -> server; the harness never imports server/


class AgentStopped(Exception):
    """An agent gave up on purpose (e.g. no move left); the episode ends normally."""


class Job(BaseModel):
    """One episode to run: a task, an agent, limits, and where the trajectory goes."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    task: Task = Field(description="The whole task. Only the oracle may read its gold fields.")
    agent: str
    model: str | None = None
    episodes_dir: Path
    settings: Settings
    max_steps: int = 30
    timeout_s: float = 120.0
    seed: int = 0
    server_factory: ServerFactory | None = Field(None, exclude=True, description="Builds an agent-profile server (server.app.build_server).")
    runtime: Runtime | None = Field(None, exclude=True, description="The run's runtime, shared by every episode's server (browser, graphs).")

    def bound(self) -> Bound:
        return Bound(task_id=self.task.id, agent=self.agent, model=self.model, max_steps=self.max_steps)

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[Client[Any]]:
        """An in-memory MCP client to an agent-profile server bound to this job."""
        if self.server_factory is None:
            raise InputError("in-process agents need a server factory: Harness(settings, server_factory=build_server)")
        async with Client(self.server()) as client:
            yield client

    def server(self) -> FastMCP:
        """This job's agent-profile server, on the run's runtime when there is one."""
        if self.server_factory is None:
            raise InputError("in-process agents need a server factory: Harness(settings, server_factory=build_server)")
        desktop = {"enable_desktop": True} if self.task.kind == "desktop" else {}  # the desktop_* tools, for desktop tasks only
        return self.server_factory(self.settings, profile="agent", bound=self.bound(), episodes_dir=self.episodes_dir, runtime=self.runtime, **desktop)

    def serve_http(self) -> AbstractAsyncContextManager[Endpoint]:
        """This job's agent-profile server, served by the harness on ``http://127.0.0.1:PORT/mcp`` behind a fresh token."""
        return serve_episode(self)

    def serve_command(self) -> list[str]:
        """The command line of an agent-profile server bound to this job, over stdio (for the harness's own agents only:
        it needs the workspace, so it must never be handed to an agent under test)."""
        command = [sys.executable, "-m", "taskloom.server.cli", "serve", "--profile", "agent", "--task", self.task.id]
        command += ["--agent", self.agent, "--episodes-dir", str(self.episodes_dir), "--max-steps", str(self.max_steps)]
        command += ["--enable-desktop"] if self.task.kind == "desktop" else []
        return command + (["--model", self.model] if self.model else [])

    def serve_env(self) -> dict[str, str]:
        """Environment for that server: this job's settings as TASKLOOM_* variables, without LLM credentials.

        The agent-profile server needs no LLM, so the endpoint and key are left out.
        """
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
        env.update({k: v for k, v in self.settings.to_env().items() if not k.startswith("TASKLOOM_LLM_")})
        env.update(FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off")
        return env


class Agent(Protocol):
    """Attempts a job; the server bound to the job records everything it does.

    ``in_process`` agents get an in-memory MCP ``client`` the harness opened (and closes,
    so the final state is checked even when the agent is stopped); the others get
    ``None`` and reach a server through :meth:`Job.serve_http` (untrusted command agents)
    or :meth:`Job.serve_command` (the builtin agent).
    """

    name: str
    model: str | None
    in_process: bool
    tokens: int  # LLM tokens used so far (0 for agents without an LLM)

    async def attempt(self, job: Job, client: Client[Any] | None) -> None:
        """Act on the job's task until done (calling env_close), or raise."""
        ...


class InProcessAgent:
    """The common part of Taskloom's own agents without an LLM: in process (an in-memory MCP client), no model, no tokens."""

    in_process = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.model: str | None = None
        self.tokens = 0
