"""Shared CLI plumbing: the root app, global options, settings, and error display."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import typer
from pydantic import BaseModel, ValidationError
from pydantic_settings import SettingsError
from rich.console import Console

from ...tools.errors import TaskloomError
from ...tools.security.disk import disk_full
from ...tools.security.roots import Roots
from ...tools.settings import Settings, load_settings
from .lazy import LazyGroup
from .progress import ProgressUpdate, progress_lines, rich_bar

__all__ = ["app", "state", "settings", "roots", "progress_bar", "quiet_agent_errors", "ProgressUpdate", "errors", "run", "echo_json", "console"]

app = typer.Typer(
    name="taskloom",
    help="Knowledge graphs from documents, agent tasks from graphs, graph-based evaluation — and an MCP server for all of it.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=LazyGroup,
)
console = Console(stderr=True)
state: dict[str, Any] = {}
T = TypeVar("T")


@app.callback()
def _root(
    workspace: Path | None = typer.Option(None, "--workspace", "-w", envvar="TASKLOOM_WORKSPACE", help="Workspace directory (default ./.taskloom)."),
    embedder: str | None = typer.Option(None, "--embedder", envvar="TASKLOOM_EMBEDDER", help="minilm (default) or hashing (tests only)."),
    allow_root: list[Path] = typer.Option(
        [], "--allow-root", help="A folder (besides the workspace) whose files may be read or written; repeatable. Also TASKLOOM_ALLOW_ROOTS (JSON list)."
    ),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", envvar="TASKLOOM_QUIET", help="No progress on stderr (a bar on a terminal, plain lines every few seconds otherwise)."
    ),
) -> None:
    state["overrides"] = {"workspace": workspace, "embedder": embedder, "allow_roots": allow_root or None}
    state["quiet"] = quiet


def settings() -> Settings:
    """Settings from the environment, the config file and the global options."""
    with errors():
        return load_settings(**state.get("overrides", {}))
    raise AssertionError("unreachable")


@contextmanager
def progress_bar(label: str, total: float | None = None) -> Iterator[ProgressUpdate]:
    """Progress on stderr (the one every command uses); yields ``update(done, total, description)``.

    A transient bar when stderr is a terminal; otherwise plain lines (the first update, then
    at most one every few seconds, then a final line: see :mod:`.progress`); nothing with
    ``--quiet``. ``label`` names the work, e.g. ``ingest lmer.pdf``.
    """
    if state.get("quiet"):
        yield lambda done, total, description: None
    elif console.is_terminal:
        with rich_bar(label, total, console) as update:
            yield update
    else:
        with progress_lines(label, total, console.file) as update:
            yield update


def quiet_agent_errors() -> None:
    """Keep agents' failed tool calls off the terminal during runs: each is recorded in its trajectory.

    Taskloom's own errors are logged by fastmcp as warnings (see ``server.errors``);
    anything else still reaches the terminal.
    """
    logging.getLogger("fastmcp").setLevel(logging.ERROR)


def roots(current: Settings) -> Roots:
    """Where a command may read or write: the workspace, the allowed roots, and the folder it runs in."""
    return Roots([current.workspace, *current.allow_roots, Path.cwd()])


@contextmanager
def errors() -> Iterator[None]:
    """Print Taskloom and validation errors, and a full disk, as one red line and exit with status 2."""
    try:
        yield
    except TaskloomError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        console.print(f"[red]error:[/red] invalid setting or argument: {problems}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except SettingsError as exc:  # a TASKLOOM_* variable that cannot be parsed at all (e.g. a list that is not JSON)
        console.print(f"[red]error:[/red] {exc}: list settings take JSON, e.g. TASKLOOM_ALLOW_ROOTS='[\"/data/docs\"]'", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except Exception as exc:
        full = disk_full(exc)
        if full is None:
            raise
        console.print(f"[red]error:[/red] {full}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call ``fn(*args, **kwargs)`` with Taskloom errors shown as messages."""
    with errors():
        return fn(*args, **kwargs)
    raise AssertionError("unreachable")


def echo_json(value: Any) -> None:
    """Print a model, list of models or plain data as indented JSON on stdout."""
    data: Any
    if isinstance(value, BaseModel):
        data = value.model_dump(mode="json")
    elif isinstance(value, list):
        data = [v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value]
    else:
        data = value
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
