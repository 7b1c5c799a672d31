"""Task generation as MCP tools (full profile only): ``tasks_generate``, ``tasks_list``, ``tasks_get``, ``tasks_export``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

from ..errors import InputError
from ..security.mcp import within_roots
from ..security.roots import Roots
from ..tasks.harbor import write_harbor_tasks
from ..tasks.model import Task
from .document.draft import Draft, Submission, Verdict
from .compose.composer import ComposeResult
from .service import GenerateResult, TaskService

__all__ = ["register", "TaskSummary"]

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


class TaskSummary(BaseModel):
    """A stored task, briefly."""

    id: str
    kind: str
    type: str
    difficulty: str
    instruction: str
    graph_id: str


class Exported(BaseModel):
    """Tasks exported: text written to ``path`` or inline in ``content``; a folder format (harbor) written under ``path``."""

    count: int
    path: str | None = None
    content: str | None = None
    skipped: dict[str, str] = Field(default_factory=dict, description="Folder formats: task id → why it was not written.")


def register(mcp: FastMCP, tasks: TaskService, roots: Roots) -> None:
    """Add the task tools to ``mcp`` (mounted under the ``tasks`` namespace)."""

    @mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False})
    async def generate(
        graph_id: Annotated[str, Field(description="Graph to generate from (graph_list).")],
        count: Annotated[int, Field(ge=1, le=1000, description="How many tasks to keep.")] = 10,
        types: Annotated[list[str] | None, Field(description="Document task types (e.g. table_qa, cross_reference) or web pattern ids / task types.")] = None,
        difficulty: Annotated[Literal["easy", "medium", "hard", "expert"] | None, Field(description="Only this difficulty.")] = None,
        seed: Annotated[int, Field(ge=0, description="Random seed: the same graph, settings and seed give the same result.")] = 0,
        use_llm: Annotated[bool, Field(description="Score tasks with the configured LLM (skipped when none is configured).")] = True,
        verify: Annotated[bool, Field(description="Web: replay every candidate's gold steps in a real browser and keep only those that succeed.")] = True,
    ) -> GenerateResult:
        """Generate tasks from a knowledge graph: document questions with grounded gold answers, or web tasks verified by replay.

        Same graph, settings and seed give the same tasks. The report says what each
        filter stage (reachability, replay, LLM score, de-duplication, coverage) kept and dropped.
        """
        return await tasks.generate(graph_id, count, types, difficulty, seed, use_llm, verify)

    @mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False})
    async def compose(
        graph_id: Annotated[str, Field(description="A web graph whose verified web tasks are composed (run tasks_generate on it first), or desktop:gnumeric (chain, dag: values flow between a workbook's cells).")],
        mode: Annotated[
            Literal["chain", "dag", "walk", "pages"],
            Field(
                description="chain: long tasks whose subtasks feed each other values from the site's records, one task per level; "
                "dag: task graphs whose subtasks' outputs are other subtasks' inputs; walk / pages: the older chains and graphs "
                "composed from verified web tasks along click paths and shared pages (any site)."
            ),
        ] = "chain",
        count: Annotated[int, Field(ge=1, le=100, description="chain: how many chains; dag: how many task graphs.")] = 3,
        levels: Annotated[int, Field(ge=1, le=12, description="chain: the longest chain, in subtasks (AgentSynth: 1 to 6).")] = 6,
        retries: Annotated[int, Field(ge=0, le=20, description="chain: failed proposals tolerated per level before the chain stops.")] = 3,
        capability: Annotated[str | None, Field(description="dag: keep only graphs in this capability test set, e.g. parallel_planning.")] = None,
        seed: Annotated[int, Field(ge=0, description="Random seed: the same graph, settings and seed give the same result.")] = 0,
        use_llm: Annotated[bool, Field(description="Use the configured LLM for proposals, summaries and consistency checks.")] = True,
    ) -> ComposeResult:
        """Compose harder tasks from verified short ones: chained long tasks (levels 1..k) or task DAGs with five complexities.

        Every composite is verified by replaying its gold steps in a real browser (a desktop
        composite: in a fresh desktop session) and is stored like any task (tasks_list, tasks_export, runs and evaluation handle it).
        """
        return await tasks.compose(graph_id, mode, count, levels, retries, capability, seed, use_llm)

    @mcp.tool(annotations=READ_ONLY)
    def draft(
        graph_id: Annotated[str, Field(description="Document graph to write a task from.")],
        template_id: Annotated[str | None, Field(description="Template to follow (default: drawn with the seed).")] = None,
        seed: Annotated[int, Field(ge=0, description="Random seed: the same graph, settings and seed give the same result.")] = 0,
    ) -> Draft:
        """Get a sampled subgraph and instructions for writing ONE task yourself; then call tasks_submit.

        For callers that are models (IDE assistants, agents): you write the question and
        the gold answer from the nodes given, citing the evidence node ids.
        """
        return tasks.draft(graph_id, template_id, seed)

    @mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False})
    def submit(
        graph_id: Annotated[str, Field(description="The draft's graph_id.")],
        template_id: Annotated[str, Field(description="The draft's template_id.")],
        question: Annotated[str, Field(description="The task's question or instruction.")],
        answer: Annotated[str, Field(description="The gold answer, copied or computed from the evidence.")],
        evidence: Annotated[list[str], Field(description="Ids of the nodes the answer rests on.")],
        difficulty: Annotated[Literal["easy", "medium", "hard", "expert"] | None, Field(description="Default: the template's.")] = None,
    ) -> Verdict:
        """Submit a task you wrote from a draft. It is checked (evidence exists, the answer is grounded in it,
        the evidence is within the template's hop limit, not a near-duplicate) and stored, or refused with the reasons."""
        return tasks.submit(graph_id, template_id, Submission(question=question, answer=answer, evidence=evidence, difficulty=difficulty))

    @mcp.tool(name="list", annotations=READ_ONLY)
    def list_tasks(
        kind: Annotated[Literal["document", "web", "composite"] | None, Field(description="Only tasks of this kind.")] = None,
        graph_id: Annotated[str | None, Field(description="Only tasks from this graph.")] = None,
    ) -> list[TaskSummary]:
        """List stored tasks (id, kind, type, difficulty, instruction)."""
        return [
            TaskSummary(id=t.id, kind=t.kind, type=t.type, difficulty=t.difficulty, instruction=t.instruction, graph_id=t.provenance.graph_id)
            for t in tasks.list(kind, graph_id)
        ]

    @mcp.tool(annotations=READ_ONLY)
    def get(task_id: Annotated[str, Field(description="A task id from tasks_list.")]) -> Task:
        """One task in full, gold answer, steps and success criteria included (never exposed to agents under test)."""
        return tasks.get(task_id)

    @mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False})
    async def export(
        ctx: Context,
        path: Annotated[str | None, Field(description="Write the JSONL here (inside the allowed roots) instead of returning it.")] = None,
        kind: Annotated[Literal["document", "web", "composite"] | None, Field(description="Only tasks of this kind.")] = None,
        format: Annotated[
            Literal["jsonl", "inspect", "harbor"],
            Field(description="jsonl: full tasks; inspect: inspect-ai Samples (id, input, target, metadata); harbor: Harbor task directories under path (a folder)."),
        ] = "jsonl",
        overwrite: Annotated[bool, Field(description="Replace the file at path (harbor: the task folders) if it exists.")] = False,
    ) -> Exported:
        """Export tasks as JSON Lines (full tasks, or inspect-ai Samples) or as Harbor task directories. Gold included: for evaluators, not agents."""
        if format == "harbor":
            if path is None:
                raise InputError("format harbor writes a folder: give path (a folder inside the allowed roots)")
            folder = await within_roots(ctx, roots, lambda r: r.resolve(path, "path"))
            documents = {m.id: Path(m.sources[0]) for m in tasks.graphs.list_graphs() if m.kind == "document" and m.sources}
            report = write_harbor_tasks(tasks.list(kind), folder, documents, overwrite)
            return Exported(count=len(report.written), path=report.out, skipped=report.skipped)
        target = None if path is None else await within_roots(ctx, roots, lambda r: r.writable_file(path, "path", overwrite))
        text = tasks.export(target, kind, format)
        count = text.count("\n")
        return Exported(count=count, path=str(target) if target else None, content=None if target else text)
