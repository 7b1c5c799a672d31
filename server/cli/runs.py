"""``taskloom runs …``: list the workspace's runs and show one (plan, success per agent, every episode, where its files are)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import typer

from ...harness.store import RunOverview, RunStore, list_runs
from ...tools.errors import NotFoundError
from ...tools.evaluate.model import EpisodeResult
from ...tools.workspace import Workspace
from .common import echo_json, roots, run, settings

__all__ = ["app", "list_command", "show", "export"]

app = typer.Typer(help="List the workspace's runs and show one.", no_args_is_help=False, invoke_without_command=True)


def _rate(ok: int, n: int) -> str:
    return f"{ok}/{n} ({ok / n:.0%})" if n else "-"


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)


def _workspace() -> Workspace:
    return Workspace(run(settings).workspace)


@app.callback()
def _default(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print the list as JSON.")) -> None:
    """List the workspace's runs, newest first: id, date, agents, tasks, episodes, success."""
    if ctx.invoked_subcommand is None:
        list_command(as_json)


@app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json", help="Print the list as JSON.")) -> None:
    """List the workspace's runs, newest first: id, date, agents, tasks, episodes, success."""
    runs = run(list_runs, _workspace())
    if as_json:
        echo_json(runs)
        return
    if not runs:
        typer.echo("no runs in this workspace; start one with `taskloom run --agent oracle`")
        return
    rows = [["run", "date", "agents", "tasks", "episodes", "success"]]
    rows += [[r.run_id, r.created_at, ", ".join(r.agents), str(r.tasks), f"{r.episodes}/{r.planned}", _rate(r.successes, r.episodes)] for r in runs]
    typer.echo(_table(rows))


@app.command("show")
def show(
    run_id: str = typer.Argument(..., help="The run to show (see `taskloom runs`)."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan, the overview and every result as JSON."),
) -> None:
    """Show a run: its plan, success per agent, one line per episode, and where its files are."""
    workspace = _workspace()
    store = run(RunStore, workspace, run_id)
    if not store.exists:
        run(_missing, run_id)
    spec, overview, results = run(store.spec), run(RunOverview.of, store), run(store.results)
    report = workspace.reports / run_id / "report.html"
    if as_json:
        echo_json({"spec": spec.model_dump(mode="json"), "overview": overview.model_dump(mode="json"), "results": [r.model_dump(mode="json") for r in results],
                   "paths": {"run": str(store.dir), "results": str(store.results_path), "report": str(report) if report.is_file() else None}})
        return
    lines = [f"run {spec.run_id}  planned {overview.created_at}  executor {spec.executor.name}"]
    lines.append(f"tasks {len(spec.task_ids)}  agents {', '.join(a.name for a in spec.agents)}  max steps {spec.max_steps}  timeout {spec.timeout_s:g} s"
                 f"  seed {spec.seed}{'  judge' if spec.judge else ''}{'  record ' + ','.join(spec.record) if spec.record else ''}")
    lines.append(f"episodes {overview.episodes}/{overview.planned}  success {_rate(overview.successes, overview.episodes)}")
    per_agent: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for result in results:
        per_agent[result.agent][0] += 1
        per_agent[result.agent][1] += int(result.success)
    if per_agent:
        lines += ["", _table([["agent", "episodes", "success"], *([a, str(n), _rate(ok, n)] for a, (n, ok) in sorted(per_agent.items()))])]
        lines.append("")
        order = {pair: i for i, pair in enumerate(spec.pairs())}
        rows = [["outcome", "agent", "task", "steps", "seconds", "why"]]
        for r in sorted(results, key=lambda r: order.get((r.task_id, r.agent), len(order))):
            mark = "ok" if r.success else r.status if r.status != "finished" else "fail"
            why = r.reason or "; ".join(f"expected {c.expected}, observed {c.observed}" for c in r.criteria if not c.ok) if not r.success else ""
            rows.append([mark, r.agent, r.task_id, str(r.steps), f"{r.duration_s:.1f}", why])
        lines.append(_table(rows))
    lines += ["", f"folder:  {store.dir}", f"results: {store.results_path}"]
    lines.append(f"report:  {report}" if report.is_file() else f"report:  none yet; write it with `taskloom report {run_id}`")
    typer.echo("\n".join(lines))


def _missing(run_id: str) -> None:
    """Refuse an unknown run, pointing at the list."""
    raise NotFoundError(f"no run {run_id!r} in this workspace; list the runs with `taskloom runs`")


@app.command("export")
def export(
    run_id: str = typer.Argument(..., help="The run to export (see `taskloom runs`)."),
    fmt: str = typer.Option("atif", "--format", help="atif: one ATIF trajectory (Harbor's Agent Trajectory Interchange Format) per episode."),
    out: Path = typer.Option(..., "--out", help="The folder to write into (one <task>__<agent>.json per episode)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace files that already exist."),
) -> None:
    """Export a run's episodes as ATIF trajectories, one JSON file each; print what was written."""
    from ... import __version__
    from ...tools.evaluate.atif import write_atif
    from ...tools.tasks.store import TaskStore

    if fmt != "atif":
        run(_refuse, f"unknown run export format {fmt!r}; the one format is atif")
    current = run(settings)
    workspace = Workspace(current.workspace)
    store = run(RunStore, workspace, run_id)
    if not store.exists:
        run(_missing, run_id)
    target = run(lambda: roots(current).resolve(out, "--out"))
    results = run(store.results)
    tasks = TaskStore(workspace, current.lock_timeout)
    instructions = {t.id: t.instruction for t in run(tasks.list)}

    def locate(result: EpisodeResult) -> Path | None:
        recorded = Path(result.trajectory) if result.trajectory else None
        if recorded is not None and recorded.is_file():
            return recorded
        folder = store.dir / "episodes" / result.task_id / result.agent
        return RunStore.trajectory_in(folder) if folder.is_dir() else None

    echo_json(run(write_atif, results, target, instructions, locate, __version__, overwrite))


def _refuse(message: str) -> None:
    from ...tools.errors import InputError

    raise InputError(message)
