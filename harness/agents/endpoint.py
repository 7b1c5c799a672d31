"""An episode's agent-profile server, served by the harness itself over streamable HTTP on loopback.

A command agent must not start its own server: that server would run with the agent's
rights and would need to read the task (gold included). So the harness builds the
episode's server (``job.server_factory``, sharing ``job.runtime``'s browser pool and
graphs, like :meth:`Job.connect`) and serves it in its own process with uvicorn, on a
socket bound to ``127.0.0.1`` port 0 before the server starts (no race for the port),
behind :class:`~taskloom.tools.security.http_guard.HttpGuard`: loopback ``Host`` and
``Origin`` only, and a fresh random bearer token per episode. The agent gets the URL
and the token, never a path.

Leaving the context stops the server; its lifespan closes the episode (final state
checked) even when the attempt was cancelled, because the server runs shielded and is
stopped by flag, not by cancellation.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import uvicorn
from pydantic import BaseModel, ConfigDict, SecretStr

from ...tools.errors import InputError, TaskloomError
from ...tools.security.http_guard import guard_middleware, make_policy

if TYPE_CHECKING:
    from .base import Job

__all__ = ["Endpoint", "serve_episode", "STOP_S"]

STOP_S = 5.0  # graceful shutdown, then connections are cut


class Endpoint(BaseModel):
    """Where an episode's server listens and the token it wants."""

    model_config = ConfigDict(frozen=True)

    url: str
    token: SecretStr

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token.get_secret_value()}"}


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: the harness (and several servers at once) keep Ctrl-C as it is."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@asynccontextmanager
async def serve_episode(job: Job) -> AsyncIterator[Endpoint]:
    """Serve ``job``'s agent-profile server on ``http://127.0.0.1:PORT/mcp`` until the context ends."""
    if job.server_factory is None:
        raise InputError("command agents need a server factory: Harness(settings, server_factory=build_server)")
    server = job.server()
    token = secrets.token_urlsafe(32)
    app = server.http_app(path="/mcp", middleware=[guard_middleware(make_policy("127.0.0.1", token))])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=int(STOP_S))
    runner = _Server(config)
    stopped = anyio.Event()

    async def serve() -> None:
        try:
            with anyio.CancelScope(shield=True):  # stopped by should_exit below, so the lifespan always closes the episode
                await runner.serve([sock])
        finally:
            stopped.set()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(serve)
            try:
                while not runner.started:
                    if stopped.is_set():
                        raise TaskloomError(f"the episode's MCP server for task {job.task.id} did not start (port {port}); see the log above")
                    await anyio.sleep(0.02)
                yield Endpoint(url=f"http://127.0.0.1:{port}/mcp", token=SecretStr(token))
            finally:
                runner.should_exit = True
                with anyio.CancelScope(shield=True):
                    with anyio.move_on_after(STOP_S * 2):
                        await stopped.wait()
                    runner.force_exit = True
    finally:
        sock.close()
