"""Evaluation as MCP tools (full profile): ``eval_answer``, ``eval_trajectory``, ``consensus_build``, ``consensus_analyze``."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated

import anyio.to_thread
from fastmcp import Context, FastMCP
from pydantic import Field

from ..errors import InputError, NotFoundError
from ..security.mcp import within_roots
from ..security.roots import Roots
from .consensus.analyze import MergeMode
from .consensus.model import ConsensusGraph, Thresholds
from .consensus.reports import ImportOptions, Unknown
from .service import AnswerVerdict, ConsensusAnalysis, ConsensusBuildResult, EvaluationService, SourceFormat, TrajectoryVerdict

__all__ = ["register_eval", "register_consensus"]

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
WRITES = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
Judge = Annotated[bool, Field(description="Also ask the configured LLM judge (needs an LLM endpoint).")]


def _readable(roots: Roots, text: str, argument: str) -> Path:
    return roots.readable(text, argument)


def register_eval(mcp: FastMCP, service: EvaluationService, roots: Roots) -> None:
    """Add ``answer`` and ``trajectory`` (seen as ``eval_answer``, ``eval_trajectory``)."""

    @mcp.tool(annotations=READ_ONLY)
    async def answer(
        task_id: Annotated[str, Field(description="A document task.")],
        answer: Annotated[str, Field(description="The answer to score.")],
        judge: Judge = False,
    ) -> AnswerVerdict:
        """Score an answer to a document task: exact match, token F1, ROUGE-L, numeric tolerance; optionally an LLM judge."""
        return await service.answer(task_id, answer, judge)

    @mcp.tool(annotations=READ_ONLY)
    async def trajectory(
        task_id: Annotated[str, Field(description="The task the trajectory attempted.")],
        path: Annotated[str, Field(description="Path of a trajectory.jsonl file (inside the allowed roots).")],
        ctx: Context,
        agent: Annotated[str | None, Field(description="Agent name (default: the one recorded).")] = None,
        judge: Judge = False,
    ) -> TrajectoryVerdict:
        """Score a recorded trajectory: success criteria checked on the final page, answer metrics, and CR/LC for composite tasks."""
        file = await within_roots(ctx, roots, lambda r: r.readable_file(path, "path"))
        return await service.trajectory(task_id, file, agent, judge)


def register_consensus(mcp: FastMCP, service: EvaluationService, roots: Roots) -> None:
    """Add ``build`` and ``analyze`` (seen as ``consensus_build``, ``consensus_analyze``)."""

    @mcp.tool(annotations=WRITES)
    async def build(
        paths: Annotated[list[str], Field(description="Trajectory files or folders inside the allowed roots (ours: folders are searched for trajectory.jsonl).")],
        ctx: Context,
        source: Annotated[
            SourceFormat,
            Field(description="ours (Taskloom), abp (Agent Browser Protocol result folders), mind2web (Online-Mind2Web result folders), "
                  "browsergym (BrowserGym/AgentRewardBench JSON), code (Playwright calls, JSON Lines), jsonl (free text or action objects), "
                  "playwright-mcp (@playwright/mcp session.md logs) or browser-use (history.json files)."),
        ] = "ours",
        run_id: Annotated[str | None, Field(description="Store the trajectories and graphs as this set (then report_render shows it); default: runs/adhoc.")] = None,
        mode: Annotated[MergeMode, Field(description="fields: compare typed actions (kind, target, value, URL); string: the paper's Levenshtein on canonical strings.")] = "fields",
        theta: Annotated[float, Field(ge=0.5, le=1.0, description="string mode: merge actions whose normalised Levenshtein similarity reaches θ.")] = 0.9,
        unknown: Annotated[Unknown, Field(description="What an outcome that is neither a known success nor failure means: error, skip, fail or success.")] = "error",
        tasks_file: Annotated[str | None, Field(description="A task file (JSON list or JSON Lines with task_id, reference_length, level, confirmed_task) inside the roots.")] = None,
        llm: Annotated[bool, Field(description="Ask the configured LLM about actions the format parser read with low confidence (answers cached).")] = False,
    ) -> ConsensusBuildResult:  # fmt: skip
        """Import many agents' trajectories and merge those of each task into a consensus graph; returns the import counts (skips with reasons) and the graphs."""
        if not paths:
            raise InputError("paths is empty; pass at least one trajectory file or folder")
        checked: list[Path] = []
        for i, text in enumerate(paths):
            checked.append(await within_roots(ctx, roots, partial(_readable, text=text, argument=f"paths[{i}]")))
        task_path = None if tasks_file is None else await within_roots(ctx, roots, lambda r: r.readable_file(tasks_file, "tasks_file"))
        options = ImportOptions(unknown=unknown, tasks=task_path, roots=roots.with_roots(checked))
        imported = await anyio.to_thread.run_sync(lambda: service.import_trajectories(source, checked, options))
        if llm:
            imported = await service.refine_with_llm(imported)
        if run_id is None:
            graphs = await anyio.to_thread.run_sync(lambda: service.build(imported.trajectories, None, theta, Thresholds(), mode))
        else:
            await anyio.to_thread.run_sync(lambda: service.save_set(run_id, [imported]))
            await anyio.to_thread.run_sync(lambda: service.build_set(run_id, theta, mode))
            graphs = service.built_graphs(run_id)
        return ConsensusBuildResult(imported=imported.report, graphs=graphs)

    @mcp.tool(annotations=READ_ONLY)
    def analyze(
        task_id: Annotated[str, Field(description="Task whose consensus graph to analyse.")],
        run_id: Annotated[str | None, Field(description="The run it was built in (default: the ad-hoc graph).")] = None,
        top: Annotated[int, Field(ge=1, le=50, description="How many of each finding.")] = 5,
    ) -> ConsensusAnalysis:
        """Traps, critical and bottleneck steps, the most important actions, necessity, per-agent profiles and strategy entropy."""
        path = service.consensus_path(task_id, run_id)
        if not path.is_file():
            raise NotFoundError(f"no consensus graph for task {task_id!r} in {run_id or 'adhoc'}; build it with consensus_build or taskloom run")
        return service.analyze(ConsensusGraph.model_validate_json(path.read_text(encoding="utf-8")), top)
