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
from .consensus.model import ConsensusGraph, Thresholds
from .service import ConsensusAnalysis, ConsensusBuilt, EvaluationService, SourceFormat, TrajectoryVerdict, AnswerVerdict

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
        source: Annotated[SourceFormat, Field(description="ours (Taskloom trajectories), mind2web (Online-Mind2Web result folders) or jsonl (AgentSynth/InSTA action sequences).")] = "ours",
        run_id: Annotated[str | None, Field(description="Store the graphs with this run (default: runs/adhoc).")] = None,
        theta: Annotated[float, Field(ge=0.5, le=1.0, description="Merge actions whose normalised Levenshtein similarity reaches θ.")] = 0.9,
    ) -> list[ConsensusBuilt]:
        """Merge many agents' trajectories of each task into a consensus graph (one per task) and store it."""
        if not paths:
            raise InputError("paths is empty; pass at least one trajectory file or folder")
        checked: list[Path] = []
        for i, text in enumerate(paths):
            checked.append(await within_roots(ctx, roots, partial(_readable, text=text, argument=f"paths[{i}]")))
        allowed = roots.with_roots(checked)
        trajectories = await anyio.to_thread.run_sync(lambda: service.load_source(source, checked, allowed))
        return await anyio.to_thread.run_sync(lambda: service.build(trajectories, run_id, theta, Thresholds()))

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
