"""``taskloom consensus import|build|report``: consensus graphs from other harnesses' agent logs.

``import`` reads logs in a registered format into a named set (``runs/<set>/``), printing what was
imported and what was skipped, with reasons; ``build`` merges each task's trajectories into a
consensus graph and summarises the set; ``report`` writes its HTML report.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import typer

from ...tools.evaluate.consensus.analyze import MergeMode
from ...tools.evaluate.consensus.fields import DEFAULT_PIXEL_TOLERANCE
from ...tools.evaluate.consensus.reports import ImportOptions, ImportReport, Unknown
from ...tools.evaluate.consensus.sets import SetSummary
from ...tools.evaluate.service import EvaluationService
from ...tools.runtime import Runtime
from .common import echo_json, roots, run, settings

app = typer.Typer(help="Consensus graphs from agent logs: import a set, build its graphs, report on it.", no_args_is_help=True)

SET = typer.Option(..., "--set", "-s", help="Name of the imported set (stored in the workspace under runs/<set>/).")


def _service() -> EvaluationService:
    return run(lambda: Runtime(settings())).evaluation_service()


def _pct(n: int, total: int) -> str:
    return f"{100 * n / total:.1f}%" if total else "-"


def import_lines(report: ImportReport) -> list[str]:
    """The import report in a few lines for the terminal."""
    lines = [
        f"{report.format}: {report.found} found, {report.imported} imported, {len(report.skipped)} skipped; "
        f"{report.tasks} tasks, agents: {', '.join(report.agents) or '-'}",
        f"outcomes: {report.outcomes.get('success', 0)} success, {report.outcomes.get('failure', 0)} failure; statuses: "
        + ", ".join(f"{k} {v}" for k, v in report.statuses.items()),
        f"actions: {report.actions} ("
        + ", ".join(f"{k} {_pct(v, report.actions)}" for k, v in sorted(report.kinds.items(), key=lambda kv: -kv[1]))
        + f"); low confidence {report.low_confidence} (re-read by the LLM: {report.llm_refined}); no-action markers {report.no_action_markers}; observations {report.observations}; with reference length {report.with_reference}",
    ]
    lines.insert(1, f"runs per agent: {', '.join(f'{a} {n}' for a, n in report.runs_per_agent.items()) or '-'}; agent-task pairs with repeated runs: "
                 f"{report.repeated}; verdicts from: {', '.join(f'{k} {v}' for k, v in report.verdict_sources.items()) or '-'}")
    if report.layouts:
        lines.insert(2, "layout: " + ", ".join(f"{k} ({v})" for k, v in report.layouts.items()))
    lines.append(f"empty runs {report.empty_runs}; unparsed actions {report.unparsed} ({_pct(report.unparsed, report.actions)})")
    lines += [f"  unparsed x{n}: {text}" for text, n in report.unparsed_examples]
    lines += [f"skipped {n} ({reason})" for reason, n in report.skip_reasons.items()]
    lines += [f"note: {note}" for note in report.notes]
    return lines


def summary_lines(summary: SetSummary) -> list[str]:
    """The set summary's headline in a few lines."""
    lines = [
        f"set {summary.set_id}: {summary.tasks} tasks, {summary.trajectories} trajectories, success {_pct(summary.successes, summary.trajectories)}",
        f"tasks with >=2 agents: {summary.tasks_with_several_agents}, of which with shared nodes: {summary.tasks_with_shared_nodes}",
        f"step inflation: median {summary.inflation.median}, p90 {summary.inflation.p90} over {summary.inflation.count} trajectories",
    ]
    lines += [f"  level {lvl}: median {d.median}, mean {d.mean} ({d.count})" for lvl, d in summary.inflation_by_level.items()]
    lines += [
        f"  agent {a.agent}: {a.successes}/{a.trajectories} success over {a.tasks} tasks ({a.runs_per_task:g} runs each), "
        f"pass@{max(a.pass_at_k, default=1)} {a.pass_at_k.get(max(a.pass_at_k, default=1), '-')}, pass^{max(a.pass_hat_k, default=1)} "
        f"{a.pass_hat_k.get(max(a.pass_hat_k, default=1), '-')}, median inflation {a.inflation.median}"
        for a in summary.agents
    ]
    lines.append(f"labelled steps (Fisher's exact test, p <= alpha): {summary.traps} traps ({summary.trap_findings} distinct, {summary.one_agent_traps} "
                 f"from one agent only), {summary.critical} critical ({summary.critical_findings} distinct, {summary.one_agent_critical} from one agent only)")  # fmt: skip
    for step in summary.labelled_steps[:5]:
        who = ", ".join(f"{a} {ok}/{n}" for a, (n, ok) in step.attribution.items())
        lines.append(f"  {step.edge_class} [{step.support}] {step.task_id}: {step.target} — {step.run_successes}/{step.runs} runs succeed vs "
                     f"{step.success_without:.0%} of the others, p={step.p_value:.3g}; by agent: {who}")  # fmt: skip
    return lines


@app.command("import")
def import_set(
    source: str = typer.Argument(..., help="Log format: ours, abp, mind2web, browsergym, code, jsonl, playwright-mcp, browser-use (or a plugin's; `taskloom plugins`)."),
    paths: list[Path] = typer.Argument(..., help="Files or folders to import."),
    set_id: str = SET,
    unknown: Unknown = typer.Option("error", "--unknown", help="An outcome that is neither a known success nor failure: error, skip, fail or success."),
    tasks_file: Path | None = typer.Option(None, "--tasks", help="Task file with task_id and reference_length / level / confirmed_task (e.g. Online_Mind2Web.json)."),
    labels: Path | None = typer.Option(None, "--labels", help="Outcome labels by task id (WebJudge JSON Lines or a JSON object); they override the logs."),
    agent: str | None = typer.Option(None, "--agent", help="Agent name for formats that do not name one."),
    llm: bool = typer.Option(False, "--llm", help="Ask the configured LLM about actions the format parser read with low confidence (cached)."),
    as_json: bool = typer.Option(False, "--json", help="Print the import report as JSON."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be imported (runs, layout, actions, skips) without storing the set."),
) -> None:
    """Import agent logs into a named set; prints what was imported and skipped (with reasons). Exits 1 when no run is imported."""
    service = _service()
    allowed = roots(settings())
    checked = [run(allowed.readable, str(p), "path") for p in paths]
    options = ImportOptions(
        unknown=unknown, agent=agent, roots=allowed.with_roots(checked),
        tasks=None if tasks_file is None else run(allowed.readable_file, tasks_file, "--tasks"),
        labels=None if labels is None else run(allowed.readable_file, labels, "--labels"),
    )  # fmt: skip
    result = run(service.import_trajectories, source, checked, options)
    if llm and not dry_run:
        result = run(anyio.run, service.refine_with_llm, result)
    folder = None if dry_run or not result.report.imported else run(service.save_set, set_id, [result])
    if as_json:
        echo_json(result.report)
    else:
        typer.echo("\n".join(import_lines(result.report)))
    if not result.report.imported:
        typer.echo(f"0 runs imported from {', '.join(map(str, paths))}; nothing stored", err=True)
        raise typer.Exit(1)
    if not as_json:
        typer.echo(f"dry run: nothing stored (set {set_id} would hold {result.report.imported} runs)" if folder is None else f"stored: {folder}; next: taskloom consensus build --set {set_id}")


@app.command("build")
def build_set(
    set_id: str = SET,
    mode: MergeMode = typer.Option("fields", "--mode", help="fields: typed comparison; string: the paper's Levenshtein on canonical strings."),
    theta: float = typer.Option(0.9, "--theta", min=0.5, max=1.0, help="string mode: the similarity threshold."),
    pixel_tolerance: float = typer.Option(DEFAULT_PIXEL_TOLERANCE, "--pixel-tolerance", min=0.0, help="fields mode: coordinate clicks on one page merge within this many pixels."),
    as_json: bool = typer.Option(False, "--json", help="Print the set summary as JSON."),
) -> None:
    """Build one consensus graph per task of an imported set, and the cross-task summary."""
    built = run(_service().build_set, set_id, theta, mode, pixel_tolerance)
    if as_json:
        echo_json(built.summary)
        return
    typer.echo("\n".join(summary_lines(built.summary)))
    typer.echo(f"graphs: {built.graphs} in {built.folder}/consensus; next: taskloom consensus report --set {set_id}")


@app.command("report")
def report_set(set_id: str = SET) -> None:
    """Write the set's HTML report (a cross-task summary, a task index, each task's graph)."""
    service = _service()
    path = run(service.render_set, set_id)
    typer.echo(f"report: {path}")
