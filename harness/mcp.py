"""Run-level evaluation as MCP tools (full profile): ``eval_run`` and ``report_render``."""

from __future__ import annotations

from typing import Annotated

import anyio.to_thread
from fastmcp import FastMCP
from pydantic import BaseModel, Field

from ..tools.evaluate.consensus.sets import SetSummary
from ..tools.evaluate.service import EvaluationService
from ..tools.evaluate.summary import RunSummary, summarize
from .service import Harness
from .store import RunStore

__all__ = ["register_run_eval", "register_report", "Rendered"]

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
RunId = Annotated[str, Field(description="A run id (taskloom://runs lists them).")]


class Rendered(BaseModel):
    """A rendered report: of a run (``summary``) or of an imported set (``set_summary``)."""

    run_id: str
    html: str
    summary_json: str
    consensus_graphs: int
    summary: RunSummary | None = None
    set_summary: SetSummary | None = None


def register_run_eval(mcp: FastMCP, harness: Harness) -> None:
    """Add ``run`` (seen as ``eval_run``)."""

    @mcp.tool(annotations=READ_ONLY)
    def run(run_id: RunId) -> RunSummary:
        """Score a run: success rates per agent, task type, difficulty and level, with CR/LC, F1 and ROUGE-L means."""
        return summarize(RunStore(harness.workspace, run_id).results())


def register_report(mcp: FastMCP, harness: Harness) -> None:
    """Add ``render`` (seen as ``report_render``)."""

    @mcp.tool(annotations={**READ_ONLY, "readOnlyHint": False})
    async def render(run_id: RunId) -> Rendered:
        """Build the run's consensus graphs and write its self-contained HTML report and JSON summary (an imported set's too)."""
        sets = EvaluationService(harness.workspace)
        if sets.is_set(run_id):
            html = await anyio.to_thread.run_sync(lambda: sets.render_set(run_id))
            summary, graphs = sets.set_graphs(run_id)
            folder = harness.workspace.runs / run_id
            return Rendered(run_id=run_id, html=str(html), summary_json=str(folder / "set-summary.json"), consensus_graphs=len(graphs), set_summary=summary)
        report = await anyio.to_thread.run_sync(lambda: harness.report(run_id))
        return Rendered(run_id=run_id, html=str(report.html), summary_json=str(report.summary_json), consensus_graphs=len(report.consensus), summary=report.summary)
