"""``taskloom serve``: run the MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

from pathlib import Path

import typer

from .common import run, settings


def _raise(error: Exception) -> None:
    raise error


def serve(
    http: bool = typer.Option(False, "--http", help="Serve streamable HTTP instead of stdio."),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP bind address (loopback by default)."),
    port: int = typer.Option(8765, "--port", help="HTTP port."),
    profile: str = typer.Option("full", "--profile", help="full (everything) or agent (only env_* and browser_* tools, for agents under test)."),
    enable_desktop: bool = typer.Option(False, "--enable-desktop", help="Add the desktop_* tools (pyautogui under Xvfb)."),
    task: str | None = typer.Option(None, "--task", help="Bind env_start to this task (a server started for one episode)."),
    agent: str | None = typer.Option(None, "--agent", help="Agent name recorded in trajectories."),
    model: str | None = typer.Option(None, "--model", help="Model name recorded in trajectories."),
    episodes_dir: Path | None = typer.Option(None, "--episodes-dir", help="Where trajectories are written (default: the workspace's runs/episodes)."),
    max_steps: int | None = typer.Option(None, "--max-steps", min=1, help="Actions allowed per episode (a harness step limit)."),
) -> None:
    """Run the Taskloom MCP server."""
    from ...tools.environment.mcp import Bound
    from ...tools.errors import InputError
    from ..app import build_server

    if profile not in ("full", "agent"):
        run(_raise, InputError(f"unknown profile {profile!r}; use full or agent"))
    bound = Bound(task_id=task, agent=agent, model=model, max_steps=max_steps)
    server = run(lambda: build_server(settings(), profile, enable_desktop, bound, episodes_dir))  # type: ignore[arg-type]
    if http:
        server.run(transport="http", host=host, port=port, show_banner=False)
    else:
        server.run(transport="stdio", show_banner=False)
