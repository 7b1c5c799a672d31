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
from .consensus.analyze import build_consensus, group_by_task
from .consensus.importers import importers
from .consensus.model import AgentTrajectory, ConsensusGraph, Thresholds
from .episode import evaluate_episode, judge_episode
from .judge import AnswerJudgement, judge_answer
from .metrics import answer_scores, answer_success
from .model import EpisodeResult
from .progress import ProgressResult, evaluate_progress

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")

__all__ = ["AnswerVerdict", "TrajectoryVerdict", "ConsensusBuilt", "ConsensusAnalysis", "EvaluationService"]

SourceFormat = Literal["ours", "mind2web", "jsonl"]


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


class EvaluationService:
    """Evaluation over one workspace (tasks, runs), with an optional LLM judge."""

    def __init__(self, workspace: Workspace, llm: LLM | None = None, tasks: TaskStore | None = None) -> None:
        """Built by the runtime (:meth:`taskloom.tools.runtime.Runtime.evaluation_service`), which passes its LLM and task store."""
        self.workspace = workspace
        self.tasks = tasks if tasks is not None else TaskStore(workspace)
        self.llm = llm

    def _judge_llm(self) -> LLM:
        if self.llm is None or not self.llm.available:
            raise InputError("no LLM is configured for judging; set TASKLOOM_LLM_BACKEND=openai with a base URL and model, or pass judge=false")
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

    def load_source(self, source: SourceFormat | str, paths: list[Path], roots: Roots | None = None) -> list[AgentTrajectory]:
        """Trajectories from our files (success from their close records), Online-Mind2Web folders or JSONL files.

        Folders are searched without following symlinks, within ``roots`` (default: the
        given paths), visiting a bounded number of entries.
        """
        if not paths:
            raise InputError("pass at least one trajectory file or folder")
        load = importers.get(source).factory  # registered importers: ours, mind2web, jsonl, and plugins'
        roots = roots or Roots(paths)
        found: list[AgentTrajectory] = []
        for path in paths:
            if not Path(path).exists():
                raise NotFoundError(f"no such file or folder {path}; check the path")
            found += load(Path(path), roots)
        return found

    def consensus_path(self, task_id: str, run_id: str | None) -> Path:
        """Where a task's consensus graph is stored; ids from imported data are made safe as file names."""
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", task_id).lstrip(".")[:128] or "unknown"
        if run_id is not None and not RUN_ID.fullmatch(run_id):
            raise InputError(f"run_id {run_id[:80]!r} is not valid: 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit")
        run = run_id or "adhoc"
        return self.workspace.runs / run / "consensus" / f"{safe}.json"

    def build(self, trajectories: list[AgentTrajectory], run_id: str | None = None, theta: float = 0.9, thresholds: Thresholds | None = None) -> list[ConsensusBuilt]:
        """One consensus graph per task among ``trajectories``, stored under the run (or ``runs/adhoc``)."""
        built: list[ConsensusBuilt] = []
        for task_id, group in sorted(group_by_task(trajectories).items()):
            graph = build_consensus(group, theta=theta, thresholds=thresholds)
            path = self.consensus_path(task_id or "unknown", run_id)
            atomic_write_json(path, graph.model_dump(mode="json"))
            built.append(ConsensusBuilt(
                task_id=task_id or "unknown", path=str(path), trajectories=len(group),
                action_nodes=graph.summary.action_nodes, edge_classes=graph.summary.edge_classes,
            ))
        return built

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
        )
