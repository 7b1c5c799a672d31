"""TaskService: generate, store, list and export tasks — what the CLI and the ``tasks_*`` tools call.

The pipeline for one graph: candidates (document templates, or web meta-path
matches) → (web) instruction style, click scripts dropped → stage 1 reachability →
(web) lookup and compare golds re-derived by a second route (:mod:`.web.confirm`) → (web)
no-op check and replay in a real browser → stage 2 LLM
score when an LLM is configured → stage 3 embedding de-duplication → MMR coverage
selection of ``count`` tasks → the task store. A :class:`GenerationReport` says what
each stage kept and dropped, and why. Without an LLM, web and desktop candidates are
verified only as the coverage selection reaches them (:mod:`.filter.lazy`), with the same
tasks kept.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic import BaseModel, Field

from ..environment.manager import EpisodeManager
from ..errors import InputError
from ..graph.model import KnowledgeGraph
from ..graph.service import GraphService
from ..llm.client import LLM, NoneLLM
from ..registry import RegistrySpec
from ..security.private import private_write_text
from ..tasks.formats import ExportFormat, export_text
from ..tasks.model import Task
from ..tasks.store import TaskStore
from .compose.composer import ComposeMode, ComposeResult, compose_tasks
from .compose.flowcompose import FlowResult
from .desktop.compose import compose_desktop
from .desktop.families import desktop_graph, is_desktop_graph
from .desktop.verify import verify_desktop_tasks
from .document.draft import Draft, Submission, Verdict, check_submission, make_draft
from .filter.lazy import Verify, select_verified
from .filter.stages import GenerationReport, deduplicate, filter_reachable, mmr_select, score_quality
from .registry import GenerationRequest, generators, pick_generator
from .web.confirm import Rereader, confirm_gold
from .web.paths import Replayer, verify_web_tasks
from .web.rewrite import llm_instructions
from .web.style import filter_scripts

__all__ = ["TaskService", "GenerateResult", "SkippedPattern"]


class SkippedPattern(BaseModel):
    """A meta-path whose bounded search ran out of steps, so generation went on without it there."""

    pattern: str = Field(description="Meta-path id.")
    scope: str = Field(description="'seed' (a seed's sampled subgraph) or 'graph' (the whole graph).")
    searches: int = Field(1, description="Searches of this pattern in this scope that ran out.")
    steps: int = Field(description="Steps counted by the largest of them.")
    budget: int | None = Field(None, description="The step budget of one search.")
    reason: str = ""


class GenerateResult(BaseModel):
    """What a generation run stored, and its report."""

    graph_id: str
    kind: str
    task_ids: list[str]
    report: GenerationReport
    llm: str = Field("none", description="The LLM that scored the tasks, or 'none'.")
    generator: RegistrySpec | None = Field(None, description="The registered generator that made the candidates, with its arguments.")
    skipped_patterns: list[SkippedPattern] = Field(default_factory=list, description="Patterns skipped because their search exceeded its step budget.")


class TaskService:
    """Task generation and storage over one workspace."""

    def __init__(self, graphs: GraphService, episodes: EpisodeManager | None = None, llm: LLM | None = None, store: TaskStore | None = None) -> None:
        """Built by the runtime (:meth:`taskloom.tools.runtime.Runtime.task_service`).

        ``episodes`` replays web tasks in a real browser; document tasks need none
        (without it, web generation with verification and composition are refused).
        ``llm`` None means no LLM (template-only paths); ``store`` defaults to the
        graphs' workspace's task store.
        """
        self.graphs = graphs
        self.settings = graphs.settings
        self.store = store if store is not None else TaskStore(graphs.workspace, graphs.settings.lock_timeout)
        self._episodes = episodes
        self.llm: LLM = llm if llm is not None else NoneLLM()

    @property
    def episodes(self) -> EpisodeManager:
        """The episode manager web tasks are replayed in; an InputError when this service has none."""
        if self._episodes is None:
            raise InputError("web tasks are verified and composed in a real browser, and this task service has no episode manager; build it with taskloom.tools.runtime.Runtime")
        return self._episodes

    async def generate(
        self,
        graph_id: str,
        count: int = 10,
        types: list[str] | None = None,
        difficulty: str | None = None,
        seed: int = 0,
        use_llm: bool = True,
        verify: bool = True,
        generator: str | None = None,
        replay: Replayer | None = None,
    ) -> GenerateResult:
        """Generate up to ``count`` tasks from a graph (document or web, by the graph's kind).

        ``generator`` names a registered task generator (``taskloom plugins``); by default the
        graph kind's own: ``document-templates``, ``document-llm`` (an LLM is on) or ``web-goals``.
        ``replay`` replays web candidates elsewhere (e.g. on a Ray cluster, see
        :mod:`taskloom.harness.ray_generation`) instead of one by one in this service's browser;
        the tasks kept are the same.
        """
        if not 1 <= count <= 1000:
            raise InputError(f"count={count} is out of range; use 1 to 1000")
        kg = desktop_graph(graph_id) if is_desktop_graph(graph_id) else self.graphs.load(graph_id)  # desktop:<app> is no stored graph
        if kg.meta.kind == "desktop" and not is_desktop_graph(graph_id):
            app = kg.meta.sources[0] if kg.meta.sources else "<app>"
            raise InputError(f"{graph_id} is an explored application (its menus and dialogs, for search); desktop tasks are generated with desktop:{app}")
        report = GenerationReport()
        llm_on = use_llm and self.llm.available
        name = pick_generator(kg.meta.kind, llm_on, generator)  # a registered generator (see .registry)
        request = GenerationRequest(kg, count, types, difficulty, seed, self.llm if llm_on else None, self.graphs.embedder, self.settings, report)
        tasks, hops = await generators.get(name).factory(request)
        args = {"count": count, "types": types, "difficulty": difficulty, "seed": seed, "llm": self.llm.name if llm_on else "none"}
        spec = RegistrySpec(kind="generator", name=name, args=args, origin=generators.get(name).origin)
        if difficulty:
            tasks = [t for t in tasks if t.difficulty == difficulty]
        report.candidates = len(tasks)
        if kg.meta.kind == "web":
            tasks = filter_scripts(kg, tasks, report)  # goals only: a click script is dropped with the rule that caught it
        tasks = filter_reachable(kg, tasks, hops, report)
        if verify and not llm_on and replay is None and kg.meta.kind in ("web", "desktop") and count < len(tasks):
            async with self._verifier(kg) as check:  # only the candidates the selection reaches are verified
                ahead = self.episodes.limits.replay_concurrency - 1 if kg.meta.kind == "web" and self.episodes.state_reset is None else 0
                chosen = await select_verified(kg, tasks, count, check, self.graphs.embedder, self.settings.dedup_threshold, report, ahead)
            return self._stored(kg, chosen, report, spec, scored=False)
        if kg.meta.kind == "web" and verify:
            tasks = await confirm_gold(kg, tasks, self.graphs.browsers, report)  # a second route re-derives each lookup and compare gold
            tasks = await verify_web_tasks(tasks, None if replay is not None else self.episodes, report, replay)
        if kg.meta.kind == "desktop" and verify:
            tasks = await verify_desktop_tasks(tasks, self.graphs.workspace.runs / "episodes", report)  # no-ops dropped, gold replayed in a fresh session
        if kg.meta.kind == "web" and llm_on:
            await llm_instructions(tasks, self.llm, kg)
        scored = llm_on
        if scored:
            tasks = await score_quality(kg, tasks, self.llm, report)
        tasks = deduplicate(tasks, self.graphs.embedder, self.settings.dedup_threshold, report)
        chosen = mmr_select(kg, tasks, count)
        report.stage("coverage", len(tasks), len(chosen))
        return self._stored(kg, chosen, report, spec, scored)

    def _stored(self, kg: KnowledgeGraph, chosen: list[Task], report: GenerationReport, spec: RegistrySpec, scored: bool) -> GenerateResult:
        report.kept = len(chosen)
        for task in chosen:
            self.store.save(task)
        skipped = [SkippedPattern.model_validate(s) for s in report.generator.get("skipped_patterns", [])]
        return GenerateResult(
            graph_id=kg.id, kind=kg.meta.kind, task_ids=[t.id for t in chosen], report=report, llm=self.llm.name if scored else "none", generator=spec, skipped_patterns=skipped
        )

    @contextlib.asynccontextmanager
    async def _verifier(self, kg: KnowledgeGraph) -> AsyncIterator[Verify]:
        """One candidate's verification, as the whole pipeline verifies it (one second-read browser context for all).

        Web candidates may be verified a few at a time (``replay_concurrency``), never on an
        application with a state reset (every replay starts from the same state) nor on a desktop.
        """
        pool = self.graphs.browsers
        reader = Rereader(pool, kg) if kg.meta.kind == "web" and pool is not None else None

        async def check(task: Task) -> tuple[bool, GenerationReport]:
            part = GenerationReport()
            if kg.meta.kind == "web":
                kept = await confirm_gold(kg, [task], None, part, reader) if reader is not None else [task]
                kept = await verify_web_tasks(kept, self.episodes, part) if kept else []
            else:
                kept = await verify_desktop_tasks([task], self.graphs.workspace.runs / "episodes", part)
            return bool(kept), part

        try:
            yield check
        finally:
            if reader is not None:
                await reader.close()

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
        """Chained long tasks or task DAGs from a web graph's verified tasks (see :mod:`.compose`), or on ``desktop:gnumeric``'s workbooks."""
        if is_desktop_graph(graph_id):
            return self._compose_desktop(graph_id, mode, await compose_desktop(graph_id, mode, count, levels, seed, self.graphs.workspace.runs / "episodes"))
        kg = self.graphs.load(graph_id)
        if kg.meta.kind != "web":
            raise InputError(f"graph {graph_id} is a {kg.meta.kind} graph; compose works on web graphs (crawl a site first)")
        llm = self.llm if use_llm and self.llm.available else None
        return await compose_tasks(self.store, kg, self.episodes, mode, count, levels, retries, capability, seed, llm)

    def _compose_desktop(self, graph_id: str, mode: ComposeMode, flow: FlowResult) -> ComposeResult:
        """Store desktop composites (every one replay-verified) and report them as a web composition is reported."""
        for task in flow.tasks:
            self.store.save(task)
        stats = {"chains": len(flow.chains), "reached": {c.chain: c.reached for c in flow.chains}} if mode == "chain" else {"graphs": len(flow.tasks)}
        return ComposeResult(graph_id=graph_id, mode=mode, task_ids=[t.id for t in flow.tasks], chains=flow.chains, dropped=flow.dropped, reason=flow.reason, stats=stats)

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

    def export(self, path: Path | None = None, kind: str | None = None, fmt: ExportFormat | str = "jsonl") -> str:
        """Tasks in a registered export format (``jsonl``: full tasks; ``inspect``: inspect-ai Samples; plugins' own), written to ``path`` when given."""
        text = export_text(fmt, self.list(kind))
        if path is not None:
            private_write_text(Path(path), text)  # gold: 0600, in folders made 0700
        return text
