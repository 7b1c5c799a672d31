"""TaskService: generate, store, list and export tasks — what the CLI and the ``tasks_*`` tools call.

The pipeline for one graph: candidates (document templates, or web meta-path
matches) → stage 1 reachability → (web) replay in a real browser → stage 2 LLM
score when an LLM is configured → stage 3 embedding de-duplication → MMR coverage
selection of ``count`` tasks → the task store. A :class:`GenerationReport` says what
each stage kept and dropped, and why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from ..environment.manager import EpisodeManager
from ..errors import InputError
from ..graph.service import GraphService
from ..llm.client import LLM, make_llm
from ..tasks.formats import ExportFormat, to_inspect_sample
from ..tasks.model import Task
from ..tasks.store import TaskStore
from ..workspace import atomic_write_text
from .compose.composer import ComposeMode, ComposeResult, compose_tasks
from .document.draft import Draft, Submission, Verdict, check_submission, make_draft
from .document.llm import generate_llm_document_tasks
from .document.templates import templates_by_id
from .filter.stages import GenerationReport, deduplicate, filter_reachable, mmr_select, score_quality
from .web.paths import llm_instructions, task_from_path, verify_web_tasks

__all__ = ["TaskService", "GenerateResult"]


class GenerateResult(BaseModel):
    """What a generation run stored, and its report."""

    graph_id: str
    kind: str
    task_ids: list[str]
    report: GenerationReport
    llm: str = Field("none", description="The LLM that scored the tasks, or 'none'.")


class TaskService:
    """Task generation and storage over one workspace."""

    def __init__(self, graphs: GraphService, episodes: EpisodeManager, llm: LLM | None = None) -> None:
        self.graphs = graphs
        self.settings = graphs.settings
        self.store = TaskStore(graphs.workspace, graphs.settings.lock_timeout)
        self.episodes = episodes
        self.llm = llm if llm is not None else make_llm(self.settings, graphs.workspace.cache / "llm")

    async def generate(
        self,
        graph_id: str,
        count: int = 10,
        types: list[str] | None = None,
        difficulty: str | None = None,
        seed: int = 0,
        use_llm: bool = True,
        verify: bool = True,
    ) -> GenerateResult:
        """Generate up to ``count`` tasks from a graph (document or web, by the graph's kind)."""
        if not 1 <= count <= 1000:
            raise InputError(f"count={count} is out of range; use 1 to 1000")
        kg = self.graphs.load(graph_id)
        report = GenerationReport()
        pool = max(count * 4, 20)
        llm_on = use_llm and getattr(self.llm, "available", False)
        if kg.meta.kind == "web":
            pool = max(count * 2, 8)
            tasks, hops = self._web_candidates(kg, pool, types, seed, report)
        elif llm_on:
            tasks = await generate_llm_document_tasks(kg, self.llm, self.graphs.embedder, count, seed, types, self.settings.dedup_threshold, report)
            hops = {tid: t.max_hops + 1 for tid, t in templates_by_id().items()}
        else:
            tasks, hops = self._document_candidates(kg, pool, types, difficulty, seed, report)
        if difficulty:
            tasks = [t for t in tasks if t.difficulty == difficulty]
        report.candidates = len(tasks)
        tasks = filter_reachable(kg, tasks, hops, report)
        if kg.meta.kind == "web" and verify:
            tasks = await verify_web_tasks(tasks, self.episodes, report)
        if kg.meta.kind == "web" and llm_on:
            await llm_instructions(tasks, self.llm)
        scored = llm_on
        if scored:
            tasks = await score_quality(kg, tasks, self.llm, report)
        tasks = deduplicate(tasks, self.graphs.embedder, self.settings.dedup_threshold, report)
        chosen = mmr_select(kg, tasks, count)
        report.stage("coverage", len(tasks), len(chosen))
        report.kept = len(chosen)
        for task in chosen:
            self.store.save(task)
        return GenerateResult(graph_id=kg.id, kind=kg.meta.kind, task_ids=[t.id for t in chosen], report=report, llm=self.llm.name if scored else "none")

    def _document_candidates(self, kg: Any, pool: int, types: list[str] | None, difficulty: str | None, seed: int, report: GenerationReport) -> tuple[list[Task], dict[str, int]]:
        from .document.generator import generate_document_tasks

        per_type = max(2, -(-pool // len(types or range(12))))  # generate_document_tasks counts per type
        tasks, generator_report = generate_document_tasks(kg, types, per_type, seed, difficulty)
        report.generator = generator_report
        return tasks, {tid: t.max_hops for tid, t in templates_by_id().items()}

    def _web_candidates(self, kg: Any, pool: int, types: list[str] | None, seed: int, report: GenerationReport) -> tuple[list[Task], dict[str, int]]:
        """Seed-driven (Graph2Eval §3.4): draw task seeds, sample each one's 3-hop subgraph, match the
        meta-paths inside it; whole-graph matches fill in only when the seeds yield too few candidates."""
        from ..graph.sampling import SampleSpec, sample_document_subgraph, web_seeds
        from .metapath.engine import match
        from .metapath.patterns import patterns_by_priority

        rng = np.random.default_rng(seed)
        patterns = [p for p in patterns_by_priority() if not types or p.task_type in types or p.id in types]
        hops = {p.id: max(2, 2 * (len(p.pattern.split("->")) + 1)) for p in patterns}
        tasks: list[Task] = []
        seen: set[str] = set()
        found: dict[str, int] = {}

        def add(graph: Any, pattern: Any, limit: int, take: int) -> None:
            matches = match(graph, pattern.pattern, limit=limit)
            found[pattern.id] = found.get(pattern.id, 0) + len(matches)
            for index in rng.permutation(len(matches))[:take]:
                task = task_from_path(kg, matches[int(index)].edges, pattern.id, pattern.task_type, seed)
                if task is not None and task.id not in seen:
                    seen.add(task.id)
                    tasks.append(task)

        seeds = web_seeds(kg, seed, count=max(4, pool // 2))
        for seed_node in seeds:
            sub = sample_document_subgraph(kg, SampleSpec(seed_nodes=[seed_node], k_hops=3, max_nodes=80, seed=seed))
            for pattern in patterns:
                add(sub, pattern, 20, 1)
            if len(tasks) >= pool:
                break
        from_seeds = len(tasks)
        if len(tasks) < pool:
            per_pattern = max(1, -(-(pool - len(tasks)) // max(1, len(patterns))))  # every replay costs a browser episode
            for pattern in patterns:
                add(kg, pattern, 200, per_pattern)
        report.generator = {"seeds": seeds, "from_seeds": from_seeds, "from_whole_graph": len(tasks) - from_seeds, "matches_per_pattern": found}
        return tasks[: max(pool, from_seeds)], hops

    async def compose(
        self,
        graph_id: str,
        mode: ComposeMode = "chain",
        count: int = 3,
        levels: int = 6,
        retries: int = 3,
        capability: str | None = None,
        seed: int = 0,
        use_llm: bool = True,
    ) -> ComposeResult:
        """Chained long tasks or task DAGs from a web graph's verified tasks (see :mod:`.compose`)."""
        kg = self.graphs.load(graph_id)
        if kg.meta.kind != "web":
            raise InputError(f"graph {graph_id} is a {kg.meta.kind} graph; compose works on web graphs (crawl a site first)")
        llm = self.llm if use_llm and getattr(self.llm, "available", False) else None
        return await compose_tasks(self.store, kg, self.episodes, mode, count, levels, retries, capability, seed, llm)

    def draft(self, graph_id: str, template_id: str | None = None, seed: int = 0) -> Draft:
        """A subgraph and instructions for a calling model to write one task from."""
        return make_draft(self.graphs.load(graph_id), template_id, seed)

    def submit(self, graph_id: str, template_id: str, submission: Submission, model: str = "caller") -> Verdict:
        """Check a client-written task and store it when it passes."""
        kg = self.graphs.load(graph_id)
        existing = self.store.list(graph_id=kg.id)
        verdict = check_submission(kg, template_id, submission, self.graphs.embedder, existing, self.settings.dedup_threshold, model)
        if verdict.task is not None:
            self.store.save(verdict.task)
        return verdict

    def list(self, kind: str | None = None, graph_id: str | None = None) -> list[Task]:
        return self.store.list(kind, graph_id)

    def get(self, task_id: str) -> Task:
        return self.store.load(task_id)

    def export(self, path: Path | None = None, kind: str | None = None, fmt: ExportFormat = "jsonl") -> str:
        """Tasks as JSON Lines (one full task per line, or one inspect-ai Sample), written to ``path`` when given."""
        if fmt not in ("jsonl", "inspect"):
            raise InputError(f"unknown export format {fmt!r}; use jsonl or inspect")
        rows = [t.model_dump(mode="json") if fmt == "jsonl" else to_inspect_sample(t) for t in self.list(kind)]
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        if path is not None:
            atomic_write_text(Path(path), text)
        return text
