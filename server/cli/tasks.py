"""``taskloom generate`` and ``taskloom tasks …``: generate, list, show and export tasks."""

from __future__ import annotations

from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from ...tools.generate.compose.composer import ComposeMode
from ...tools.tasks.model import Difficulty, TaskKind
from .common import echo_json, progress_bar, roots, run, settings

if TYPE_CHECKING:
    from ...harness.ray_generation import RayBuildWork, RayReplayer
    from ...tools.settings import Settings
    from ...tools.generate.service import TaskService
    from ...tools.runtime import Runtime

T = TypeVar("T")

app = typer.Typer(help="List, show and export generated tasks.", no_args_is_help=True)


def _runtime() -> Runtime:
    """This command's runtime; generation replays web tasks without screenshots."""
    from ...tools.runtime import Runtime

    return run(lambda: Runtime(settings(), screenshots=False))


def _service() -> TaskService:
    return run(lambda: _runtime().task_service())


def generate(
    graph_id: str = typer.Argument(..., help="Graph to generate from."),
    count: int = typer.Option(10, "--count", "-n"),
    type_: list[str] = typer.Option(None, "--type", help="Task type or web pattern id (repeatable)."),
    difficulty: Difficulty | None = typer.Option(None, "--difficulty"),
    seed: int = typer.Option(0, "--seed"),
    no_llm: bool = typer.Option(False, "--no-llm", help="Do not score tasks with the configured LLM."),
    no_verify: bool = typer.Option(False, "--no-verify", help="Web: keep candidates without replaying them."),
    executor: str = typer.Option("local", "--executor", help="Where web candidates are replayed: local (this process) or ray (a Ray cluster: see README, Running on Ray)."),
    address: str | None = typer.Option(None, "--address", help="--executor ray: the cluster, auto, ray://host:port or host:port (default: a new local Ray)."),
    workers: int | None = typer.Option(None, "--workers", min=1, help="--executor ray: worker slots, each with its own browser (default: one per cluster CPU)."),
) -> None:
    """Generate tasks from a knowledge graph and print the ids and the filtering report."""
    replayer = _replayer(executor, address, workers)
    runtime = _runtime()
    service = run(runtime.task_service)

    async def go() -> Any:
        return await service.generate(graph_id, count, type_ or None, difficulty, seed, not no_llm, not no_verify, replay=replayer)

    with progress_bar(f"generate {graph_id}"):
        result = run(runtime.run, go)
    echo_json(result if replayer is None else {**result.model_dump(mode="json"), "executor": replayer.summary()})


def _replayer(executor: str, address: str | None, workers: int | None) -> RayReplayer | None:
    """None (replays here) for ``local``; a Ray replayer for ``ray`` (Ray imported only then); else the usage refused."""
    return _on_executor(executor, address, workers, lambda: _ray_replayer(address, workers))


def ray_work(executor: str, address: str | None, workers: int | None, current: Settings) -> RayBuildWork | None:
    """``taskloom build``'s browser work: None (here) for ``local``; on a Ray cluster for ``ray``; else the usage refused."""

    def make() -> RayBuildWork:
        from ...harness.ray_generation import RayBuildWork

        return RayBuildWork(current, address, workers)

    return _on_executor(executor, address, workers, make)


def _ray_replayer(address: str | None, workers: int | None) -> RayReplayer:
    from ...harness.ray_generation import RayReplayer

    return RayReplayer(settings(), address, workers)


def _on_executor(executor: str, address: str | None, workers: int | None, make: Callable[[], T]) -> T | None:
    """None for ``local`` (then --address and --workers are refused), ``make()`` for ``ray``; a bad choice refused with exit code 2."""
    from rich.markup import escape

    from ...tools.errors import InputError
    from .common import console

    try:
        if executor not in ("local", "ray"):
            raise InputError(f"unknown executor {executor!r}; choose local or ray")
        if executor == "local":
            if address is not None or workers is not None:
                raise InputError("--address and --workers only apply to --executor ray")
            return None
        return make()
    except InputError as exc:  # printed verbatim: the install command's "[ray]" is no markup
        console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def compose(
    graph_id: str = typer.Argument(..., help="A web graph (walk and pages also need its verified web tasks: run `taskloom generate` first), or desktop:gnumeric (chain, dag)."),
    mode: ComposeMode = typer.Option(
        "chain", "--mode", help="chain (values flow between subtasks, one task per level), dag (task graphs), walk or pages (click-path chains and page graphs)."
    ),
    count: int = typer.Option(3, "--count", "-n", help="chain, walk: how many chains; dag, pages: how many task graphs."),
    levels: int = typer.Option(6, "--levels", help="chain, walk: the longest chain, in subtasks."),
    retries: int = typer.Option(3, "--retries", help="walk: failed proposals tolerated per level."),
    capability: str | None = typer.Option(None, "--capability", help="dag, pages: only graphs in this capability test set."),
    seed: int = typer.Option(0, "--seed"),
    no_llm: bool = typer.Option(False, "--no-llm", help="Do not use the configured LLM."),
) -> None:
    """Compose chained long tasks or task DAGs; print the ids, level statistics, why each chain stopped, and failures."""
    runtime = _runtime()
    service = run(runtime.task_service)

    async def go() -> Any:
        return await service.compose(graph_id, mode, count, levels, retries, capability, seed, not no_llm)

    with progress_bar(f"compose {graph_id} ({mode})"):
        result = run(runtime.run, go)
    echo_json(result)


@app.command("list")
def list_tasks(kind: TaskKind | None = typer.Option(None, "--kind"), graph_id: str | None = typer.Option(None, "--graph")) -> None:
    """List stored tasks."""
    echo_json([{"id": t.id, "kind": t.kind, "type": t.type, "difficulty": t.difficulty, "instruction": t.instruction} for t in run(_service().list, kind, graph_id)])


@app.command()
def get(task_id: str) -> None:
    """Show one task in full (gold included)."""
    echo_json(run(_service().get, task_id))


@app.command()
def export(
    output: Path | None = typer.Option(None, "--output", "-o", help="Text formats: the file to write (default: stdout)."),
    out_dir: Path | None = typer.Option(None, "--out", help="Directory formats (harbor): the folder to write one task directory per task into."),
    kind: TaskKind | None = typer.Option(None, "--kind"),
    fmt: str = typer.Option("jsonl", "--format", help="jsonl (full tasks), inspect (inspect-ai Samples) or harbor (Harbor task directories, with --out)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the output file, or existing task folders, if they exist."),
    agent_timeout: float = typer.Option(600.0, "--agent-timeout", min=1.0, help="harbor: seconds an agent may work on a task (task.toml)."),
) -> None:
    """Export tasks as JSON Lines (stdout, or a file with -o), or as Harbor task directories (--format harbor --out DIR)."""
    from ...tools.tasks.formats import ExportContext, export_directory, is_directory_format

    if run(is_directory_format, fmt):
        if out_dir is None or output is not None:
            run(_refuse, f"--format {fmt} writes a folder: give --out DIR (not -o)")
        assert out_dir is not None
        runtime = _runtime()
        target = run(lambda: roots(runtime.settings).resolve(out_dir, "--out"))
        documents = {m.id: Path(m.sources[0]) for m in run(runtime.graphs.list_graphs) if m.kind == "document" and m.sources}
        tasks = run(runtime.tasks.list, kind)
        context = ExportContext(documents=documents, overwrite=overwrite, agent_timeout_s=agent_timeout)
        echo_json(run(export_directory, fmt, tasks, target, context))
        return
    if out_dir is not None:
        run(_refuse, f"--format {fmt} writes text: give -o FILE (--out is for folder formats such as harbor)")
    target_file = None if output is None else run(lambda: roots(settings()).writable_file(output, "--output", overwrite))
    text = run(_service().export, target_file, kind, fmt)
    if target_file is None:
        typer.echo(text, nl=False)
    else:
        typer.echo(str(target_file))


def _refuse(message: str) -> None:
    from ...tools.errors import InputError

    raise InputError(message)
