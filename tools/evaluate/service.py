"""Evaluation as library calls: score an answer, score a trajectory, build and analyse consensus graphs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ..environment.trajectory import load_trajectory
from ..errors import InputError, NotFoundError
from ..llm.client import LLM
from ..security.roots import Roots
from ..tasks.store import TaskStore
from ..workspace import Workspace, atomic_write_json
from .consensus.analyze import MergeMode, build_consensus, group_by_task
from .consensus.fields import DEFAULT_PIXEL_TOLERANCE
from .consensus.importers import importers
from .consensus.model import AgentTrajectory, ConsensusGraph, Thresholds
from .consensus.canonicalize import canonicalize_llm
from .consensus.model import ACTION_KINDS
from .consensus.reports import LOW_CONFIDENCE, ImportLog, ImportOptions, ImportReport, ImportResult
from .consensus.sets import SetSummary, load_imports, load_set, number_runs, save_set, summarize_set
from .episode import evaluate_episode, judge_episode
from .judge import AnswerJudgement, judge_answer
from .metrics import answer_scores, answer_success
from .model import EpisodeResult
from .progress import ProgressResult, evaluate_progress

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")

__all__ = ["AnswerVerdict", "TrajectoryVerdict", "ConsensusBuilt", "ConsensusBuildResult", "ConsensusAnalysis", "SetBuilt", "EvaluationService"]

SourceFormat = Literal["ours", "abp", "mind2web", "browsergym", "code", "jsonl", "playwright-mcp", "browser-use"]


class AnswerVerdict(BaseModel):
    """How an answer to a document task scores."""

    task_id: str
    success: bool
    scores: dict[str, float]
    judge: AnswerJudgement | None = None


class TrajectoryVerdict(BaseModel):
    """How a trajectory scores: the episode result and, for composite tasks, the graph evaluator's detail."""

    result: EpisodeResult
    progress: ProgressResult | None = None


class ConsensusBuilt(BaseModel):
    """A consensus graph that was built and stored."""

    task_id: str
    path: str
    trajectories: int
    action_nodes: int
    edge_classes: dict[str, int]


class ConsensusBuildResult(BaseModel):
    """What an import-and-build did: the import's counts (skips with reasons) and the graphs stored."""

    imported: ImportReport
    graphs: list[ConsensusBuilt]


class SetBuilt(BaseModel):
    """An imported set built into consensus graphs, with its cross-task summary."""

    set_id: str
    graphs: int
    folder: str
    summary: SetSummary


class EdgeView(BaseModel):
    source: str
    target: str
    count: int
    success_rate: float
    edge_class: str


class ConsensusAnalysis(BaseModel):
    """What a consensus graph says: traps, critical steps, bottlenecks, important nodes, agents and strategies."""

    task_id: str
    traps: list[EdgeView]
    critical: list[EdgeView]
    bottlenecks: list[EdgeView]
    important: list[tuple[str, float]] = Field(description="(action label, importance), most important first.")
    necessary: list[str] = Field(description="Labels of actions on a shortest successful route.")
    agents: list[dict[str, object]]
    strategy_entropy: float
    mean_step_inflation: float | None
    reference_source: str | None = None
    not_computable: dict[str, str] = Field(default_factory=dict, description="Analyses left out and why (e.g. a single run).")


class EvaluationService:
    """Evaluation over one workspace (tasks, runs), with an optional LLM judge."""

    def __init__(self, workspace: Workspace, llm: LLM | None = None, tasks: TaskStore | None = None) -> None:
        """Built by the runtime (:meth:`taskloom.tools.runtime.Runtime.evaluation_service`), which passes its LLM and task store."""
        self.workspace = workspace
        self.tasks = tasks if tasks is not None else TaskStore(workspace)
        self.llm = llm

    def _judge_llm(self) -> LLM:
        if self.llm is None or not self.llm.available:
            raise InputError("no LLM is configured; set TASKLOOM_LLM_BACKEND=openai with a base URL and model (or leave out judge / --llm)")
        return self.llm

    async def answer(self, task_id: str, answer: str, judge: bool = False) -> AnswerVerdict:
        task = self.tasks.load(task_id)
        if task.kind != "document" or task.gold_answer is None:
            raise InputError(f"task {task_id} is a {task.kind} task without a gold answer; score it with eval_trajectory")
        scores = answer_scores(task, answer)
        verdict = AnswerVerdict(task_id=task_id, success=answer_success(task, scores), scores=scores)
        if judge:
            verdict.judge = await judge_answer(self._judge_llm(), task, answer)
        return verdict

    async def trajectory(self, task_id: str, path: Path, agent: str | None = None, judge: bool = False) -> TrajectoryVerdict:
        task = self.tasks.load(task_id)
        if not Path(path).is_file():
            raise NotFoundError(f"no trajectory file {path}; give the path of a trajectory.jsonl (taskloom://runs/{{run_id}} lists them)")
        trajectory = load_trajectory(Path(path))
        result = evaluate_episode(task, trajectory, agent or trajectory.episode.agent or "agent", trajectory_path=str(path))
        if judge:
            result = await judge_episode(result, task, trajectory, self._judge_llm())
        progress = evaluate_progress(task, trajectory) if task.kind == "composite" and task.subtasks else None
        return TrajectoryVerdict(result=result, progress=progress)

    def import_trajectories(self, source: SourceFormat | str, paths: list[Path], options: ImportOptions | None = None) -> ImportResult:
        """Trajectories from files in a registered format, with the import's report (every skip and its reason).

        Folders are searched without following symlinks, within ``options.roots`` (default: the
        given paths), visiting a bounded number of entries.
        """
        if not paths:
            raise InputError("pass at least one trajectory file or folder")
        load = importers.get(source).factory  # registered importers: ours, abp, mind2web, browsergym, code, jsonl, playwright-mcp, browser-use, and plugins'
        options = (options or ImportOptions()).model_copy()
        options.roots = options.roots or Roots(paths)
        log = ImportLog(options)
        found: list[AgentTrajectory] = []
        for path in paths:
            if not Path(path).exists():
                raise NotFoundError(f"no such file or folder {path}; check the path")
            found += load(Path(path), log)
        return log.result(str(source), [Path(p) for p in paths], number_runs(found))

    async def refine_with_llm(self, result: ImportResult, min_confidence: float = LOW_CONFIDENCE) -> ImportResult:
        """Ask the configured LLM about the import's low-confidence actions (free text it could not parse well).

        An answer replaces the parsed action when the model is more confident; the rest stay as
        parsed. The LLM client's disk cache answers repeated texts without a call.
        """
        llm = self._judge_llm()
        refined = 0
        out: list[AgentTrajectory] = []
        for traj in result.trajectories:
            low = [i for i, a in enumerate(traj.actions) if a.confidence < min_confidence]
            if not low:
                out.append(traj)
                continue
            before = [traj.actions[i] for i in low]
            after = await canonicalize_llm([a.source for a in before], llm, min_confidence=min_confidence, task=traj.instruction, initial=before)
            actions = list(traj.actions)
            for i, old, new in zip(low, before, after):
                if new is not old:
                    actions[i] = new.model_copy(update={"url": old.url})
                    refined += 1
            out.append(traj.model_copy(update={"actions": actions}))
        report = result.report.model_copy(update={
            "llm_refined": refined, "low_confidence": sum(a.confidence < LOW_CONFIDENCE for t in out for a in t.actions),
            "kinds": {k: n for k in ACTION_KINDS if (n := sum(a.kind == k for t in out for a in t.actions))},
        })  # fmt: skip
        return ImportResult(trajectories=out, report=report)

    def load_source(self, source: SourceFormat | str, paths: list[Path], roots: Roots | None = None) -> list[AgentTrajectory]:
        """Trajectories only (unknown outcomes skipped); see :meth:`import_trajectories` for the report."""
        return self.import_trajectories(source, paths, ImportOptions(unknown="skip", roots=roots)).trajectories

    def consensus_path(self, task_id: str, run_id: str | None) -> Path:
        """Where a task's consensus graph is stored; ids from imported data are made safe as file names."""
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", task_id).lstrip(".")[:128] or "unknown"
        if run_id is not None and not RUN_ID.fullmatch(run_id):
            raise InputError(f"run_id {run_id[:80]!r} is not valid: 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit")
        run = run_id or "adhoc"
        return self.workspace.runs / run / "consensus" / f"{safe}.json"

    def build(
        self,
        trajectories: list[AgentTrajectory],
        run_id: str | None = None,
        theta: float = 0.9,
        thresholds: Thresholds | None = None,
        mode: MergeMode = "fields",
        pixel_tolerance: float = DEFAULT_PIXEL_TOLERANCE,
    ) -> list[ConsensusBuilt]:
        """One consensus graph per task among ``trajectories``, stored under the run (or ``runs/adhoc``)."""
        built: list[ConsensusBuilt] = []
        for task_id, group in sorted(group_by_task(trajectories).items()):
            graph = build_consensus(group, theta=theta, thresholds=thresholds, mode=mode, pixel_tolerance=pixel_tolerance)
            path = self.consensus_path(task_id or "unknown", run_id)
            atomic_write_json(path, graph.model_dump(mode="json"))
            built.append(ConsensusBuilt(
                task_id=task_id or "unknown", path=str(path), trajectories=len(group),
                action_nodes=graph.summary.action_nodes, edge_classes=graph.summary.edge_classes,
            ))
        return built

    def _set_id(self, set_id: str) -> str:
        if not RUN_ID.fullmatch(set_id):
            raise InputError(f"set name {set_id[:80]!r} is not valid: 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit")
        return set_id

    def save_set(self, set_id: str, results: list[ImportResult]) -> Path:
        """Store imported trajectories as the set ``set_id`` (replacing it); repeated runs are numbered (:func:`number_runs`)."""
        trajectories = number_runs([t for r in results for t in r.trajectories])
        return save_set(self.workspace.runs, self._set_id(set_id), trajectories, [r.report for r in results])

    def build_set(
        self, set_id: str, theta: float = 0.9, mode: MergeMode = "fields", pixel_tolerance: float = DEFAULT_PIXEL_TOLERANCE, thresholds: Thresholds | None = None
    ) -> SetBuilt:
        """Build the consensus graph of every task of an imported set, and its cross-task summary (``set-summary.json``)."""
        set_id = self._set_id(set_id)
        trajectories = load_set(self.workspace.runs, set_id)
        folder = self.workspace.runs / set_id
        for old in sorted((folder / "consensus").glob("*.json")):
            old.unlink()
        built = self.build(trajectories, set_id, theta, thresholds, mode, pixel_tolerance)
        graphs = [ConsensusGraph.model_validate_json(Path(b.path).read_text(encoding="utf-8")) for b in built]
        summary = summarize_set(set_id, graphs, trajectories, load_imports(self.workspace.runs, set_id))
        atomic_write_json(folder / "set-summary.json", summary.model_dump(mode="json"))
        return SetBuilt(set_id=set_id, graphs=len(built), folder=str(folder), summary=summary)

    def built_graphs(self, set_id: str) -> list[ConsensusBuilt]:
        """The stored graphs of a built set, as :class:`ConsensusBuilt` rows."""
        _, graphs = self.set_graphs(set_id)
        return [
            ConsensusBuilt(task_id=g.task_id or "unknown", path=str(self.consensus_path(g.task_id or "unknown", set_id)), trajectories=g.summary.trajectories,
                           action_nodes=g.summary.action_nodes, edge_classes=g.summary.edge_classes)
            for g in graphs
        ]  # fmt: skip

    def set_graphs(self, set_id: str) -> tuple[SetSummary, list[ConsensusGraph]]:
        """A built set's summary and graphs (build it first)."""
        folder = self.workspace.runs / self._set_id(set_id)
        path = folder / "set-summary.json"
        if not path.is_file():
            load_set(self.workspace.runs, set_id)  # a clear error when the set does not exist
            raise NotFoundError(f"set {set_id!r} is not built yet; run `taskloom consensus build --set {set_id}`")
        graphs = [ConsensusGraph.model_validate_json(p.read_text(encoding="utf-8")) for p in sorted((folder / "consensus").glob("*.json"))]
        return SetSummary.model_validate_json(path.read_text(encoding="utf-8")), graphs

    def render_set(self, set_id: str) -> Path:
        """Write a built set's HTML report to ``reports/<set>/report.html``; returns its path."""
        from .set_report import write_set_report  # the report page needs Jinja and the drawing assets only here

        summary, graphs = self.set_graphs(set_id)
        return write_set_report(self.workspace.reports / set_id, summary, graphs)

    def is_set(self, name: str) -> bool:
        """True when ``name`` is an imported set (not a run of agents)."""
        return RUN_ID.fullmatch(name) is not None and (self.workspace.runs / name / "trajectories.jsonl").is_file()

    def analyze(self, graph: ConsensusGraph, top: int = 5) -> ConsensusAnalysis:
        """The headline findings of a consensus graph."""
        label = {n.id: n.label for n in graph.nodes}

        def edges(kind: str) -> list[EdgeView]:
            chosen = sorted((e for e in graph.edges if e.edge_class == kind), key=lambda e: (-e.count, e.source, e.target))[:top]
            return [EdgeView(source=label[e.source], target=label[e.target], count=e.count, success_rate=e.success_rate, edge_class=kind) for e in chosen]

        actions = [n for n in graph.nodes if n.kind == "action"]
        return ConsensusAnalysis(
            task_id=graph.task_id or "unknown",
            traps=edges("trap"),
            critical=edges("critical"),
            bottlenecks=edges("bottleneck"),
            important=[(n.label, round(n.importance, 4)) for n in sorted(actions, key=lambda n: (-n.importance, n.label))[:top]],
            necessary=sorted(n.label for n in actions if n.necessary),
            agents=[p.model_dump(mode="json") for p in graph.agents],
            strategy_entropy=graph.strategies.entropy,
            mean_step_inflation=graph.summary.mean_step_inflation,
            reference_source=graph.summary.reference_source,
            not_computable=graph.not_computable,
        )
