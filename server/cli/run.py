"""``taskloom run`` and ``taskloom report``: run agents on tasks, then evaluate, build consensus graphs and report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, get_args

import anyio
import typer
from rich.markup import escape

from ...tools.errors import InputError
from ...tools.evaluate.model import EpisodeResult
from ...tools.evaluate.summary import terminal_summary
from ...tools.settings import Recording
from ...tools.tasks.model import TaskKind
from .common import console, echo_json, progress_bar, quiet_agent_errors, roots, run, settings

if TYPE_CHECKING:
    from ...harness.finish import RunReport
    from ...harness.service import Harness

# The harness and the server (seconds of imports) are imported only once the options are checked,
# so a refused option answers at once.

__all__ = ["run_agents", "report"]


def _show(report: RunReport, as_json: bool) -> None:
    if as_json:
        echo_json(report)
        return
    typer.echo(terminal_summary(report.summary))
    typer.echo("success by task family:\n" + report.family_text())
    typer.echo(f"report: {report.html}")
    typer.echo(f"summary: {report.summary_json}")


def run_agents(
    agent: list[str] = typer.Option([], "--agent", "-a", help="An agent: oracle, explorer[:seed=N,explore=P], replay[:source=PATH|gold], builtin[:model=M], command:cmd='…'. Repeat for several."),
    tasks_file: Path | None = typer.Option(None, "--tasks", help="A tasks file (JSONL from `taskloom tasks export`); default: the workspace's tasks."),
    task: list[str] = typer.Option([], "--task", help="A task id to run (repeatable)."),
    kind: TaskKind | None = typer.Option(None, "--kind", help="Only tasks of this kind: document, web or composite."),
    concurrency: int = typer.Option(2, "--concurrency", "-j", min=1, max=64, help="Episodes at once."),
    max_steps: int = typer.Option(30, "--max-steps", min=1, help="Actions allowed per episode."),
    timeout: float = typer.Option(120.0, "--timeout", min=1.0, help="Seconds allowed per episode."),
    seed: int = typer.Option(0, "--seed", help="Seed for the agents' choices."),
    run_id: str | None = typer.Option(None, "--run-id", help="Name of the run (default: run-<UTC time>)."),
    resume: str | None = typer.Option(None, "--resume", help="Continue this run: only episodes without a stored result are run."),
    judge: bool = typer.Option(False, "--judge", help="Also score every episode with the configured LLM judge (never shown the gold)."),
    executor: str | None = typer.Option(None, "--executor", help="Where episodes run: local (this process) or ray (a Ray cluster, an optional extra: see README, Running on Ray); default local."),
    address: str | None = typer.Option(None, "--address", help="--executor ray: the cluster, auto, ray://host:port or host:port (default: a new local Ray)."),
    workers: int | None = typer.Option(None, "--workers", min=1, help="--executor ray: worker slots, each with its own browser (default: one per cluster CPU)."),
    record: str | None = typer.Option(
        None, "--record", help="What each browser episode also records into its folder: har (network.har), trace (trace.zip for `playwright show-trace`), or har,trace."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the run report as JSON."),
) -> None:
    """Run agents on tasks, each episode in its own browser context; evaluate, build consensus graphs, write the report."""
    options = {k: v for k, v in {"address": address, "workers": workers}.items() if v is not None}
    if resume and (executor or options):
        run(_refuse, "--resume continues a run on the executor its run.json records; leave out --executor, --address and --workers")
    if options and executor != "ray":
        run(_refuse, f"{' and '.join('--' + k for k in options)} only apply to --executor ray")
    if executor == "ray":
        _need_ray()
    recordings = None if record is None else run(_recordings, record)
    if resume and recordings is not None:
        run(_refuse, "--resume continues a run with the recordings its run.json records; leave out --record")
    harness = _harness()
    quiet_agent_errors()
    with progress_bar(f"run {resume}" if resume else "run") as update:

        def progress(result: EpisodeResult, done: int, total: int) -> None:
            mark = "ok" if result.success else result.status if result.status != "finished" else "fail"
            update(done, total, f"episodes, last: {result.agent} on {result.task_id} {mark}")

        if resume:
            report = run(anyio.run, lambda: harness.resume(resume, progress))
        else:
            tasks_path = None if tasks_file is None else run(lambda: roots(harness.settings).readable_file(tasks_file, "--tasks"))
            chosen = run(harness.select, task or None, kind, tasks_path)
            report = run(anyio.run, lambda: harness.run(chosen, agent, concurrency, max_steps, timeout, seed, run_id, progress, judge, executor or "local", options, record=recordings))
    _show(report, as_json)


def _recordings(text: str) -> list[Recording]:
    """``har``, ``trace`` or ``har,trace`` as a list; anything else refused with the choices."""
    chosen = [part.strip().lower() for part in text.split(",") if part.strip()]
    wrong = [part for part in chosen if part not in get_args(Recording)]
    if wrong or not chosen:
        raise InputError(f"--record {text!r}: name har, trace or har,trace (got {', '.join(wrong) or 'nothing'})")
    return [r for r in get_args(Recording) if r in chosen]


def _harness() -> Harness:
    from ...harness.service import Harness
    from ..app import build_server

    return run(lambda: Harness(settings(), build_server))


def _refuse(message: str) -> None:
    raise InputError(message)


def _need_ray() -> None:
    """Refuse ``--executor ray`` without Ray, with the install command (printed verbatim: ``[ray]`` is no markup)."""
    from ...harness.ray_executor import import_ray

    try:
        import_ray()
    except InputError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def report(
    run_id: str = typer.Argument(..., help="The run to report on."),
    as_json: bool = typer.Option(False, "--json", help="Print the run report as JSON."),
) -> None:
    """Rebuild a run's consensus graphs and its HTML report; print the summary."""
    _show(run(_harness().report, run_id), as_json)
