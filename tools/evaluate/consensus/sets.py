"""Imported trajectory sets: stored in the workspace, built into one consensus graph per task, summarised across tasks.

A set lives in ``runs/<set_id>/`` beside the runs: ``trajectories.jsonl`` (one
:class:`AgentTrajectory` per line), ``imports.json`` (the :class:`ImportReport` of each import),
``consensus/<task>.json`` (the graphs) and ``set-summary.json`` (:class:`SetSummary`).

The cross-task summary answers what a benchmark team asks first: which agents, how often they
succeed, how far their paths run past the reference (per level when the task file gives levels),
which traps and critical steps recur (an edge's target action in several tasks), which traps
several agents fall into on the same task, and which single steps separate success from failure.
Runs are first-class: an agent's figures pool its runs, and pass@k / pass^k (:mod:`.stats`) say how
reliably it solves a task over k runs. Every labelled step carries its Fisher p-value, its support
(several agents or one agent) and each agent's runs and successes through it.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from ...errors import InputError, NotFoundError
from ...workspace import atomic_write_json, atomic_write_text
from .model import AgentTrajectory, ConsensusGraph
from .reports import ImportReport
from .stats import fisher_exact, pass_at_k, pass_hat_k, pass_ks

__all__ = [
    "SetSummary", "AgentRow", "AgentTaskRow", "TaskRow", "Distribution", "Finding", "SharedTrap", "SeparatingStep", "number_runs", "save_set", "load_set",
    "load_imports", "summarize_set",
]  # fmt: skip


class Distribution(BaseModel):
    """Quantiles of a sample (step inflation)."""

    count: int
    mean: float | None = None
    p10: float | None = None
    median: float | None = None
    p90: float | None = None
    histogram: dict[str, int] = Field(default_factory=dict, description="Counts per bucket: <1, 1–1.5, 1.5–2, 2–3, 3–5, ≥5.")


class AgentRow(BaseModel):
    """One agent over the set: its runs pooled."""

    agent: str
    tasks: int
    trajectories: int
    successes: int
    success_rate: float
    inflation: Distribution
    runs_per_task: float = Field(0.0, description="Mean runs per task it attempted.")
    pass_at_k: dict[int, float] = Field(default_factory=dict, description="k → mean over its tasks of pass@k (k up to its fewest runs on a task).")
    pass_hat_k: dict[int, float] = Field(default_factory=dict, description="k → mean over its tasks of pass^k (all k runs succeed).")


class AgentTaskRow(BaseModel):
    """One agent on one task: its runs, successes, pass@k and pass^k (k = 1 … runs)."""

    agent: str
    task_id: str
    runs: int
    successes: int
    pass_at_k: dict[int, float]
    pass_hat_k: dict[int, float]


class TaskRow(BaseModel):
    """One task in the index (the report lists tasks by instruction)."""

    task_id: str
    instruction: str | None
    level: str | None
    trajectories: int
    successes: int
    agents: list[str]
    shared_nodes: int = Field(description="Action nodes visited by at least two agents.")
    reference_steps: int | None
    reference_source: str | None
    mean_step_inflation: float | None
    edge_classes: dict[str, int]
    not_computable: dict[str, str]


class Finding(BaseModel):
    """An action that ends trap (or critical) edges in several tasks."""

    label: str
    tasks: int
    traversals: int
    agents: list[str]
    task_ids: list[str]


class SharedTrap(BaseModel):
    """A labelled edge (trap or critical) of one task, with the statistics behind its label."""

    task_id: str
    source: str
    target: str
    agents: list[str]
    count: int
    success_rate: float
    edge_class: str = "trap"
    runs: int = Field(0, description="Runs taking the step.")
    run_successes: int = 0
    success_without: float | None = Field(None, description="Success rate of the task's other runs.")
    p_value: float | None = Field(None, description="Fisher's exact test, two-sided.")
    support: str | None = Field(None, description="'agents' or 'one agent'.")
    attribution: dict[str, tuple[int, int]] = Field(default_factory=dict, description="Per agent: (runs taking the step, successful ones).")
    same_runs_as: str | None = Field(None, description="Set when exactly the runs of an earlier labelled edge take it: one finding, not a new one.")


class SeparatingStep(BaseModel):
    """A step of one task whose presence splits successful from failed trajectories."""

    task_id: str
    label: str
    with_step: int = Field(description="Trajectories visiting the step.")
    success_with: float
    success_without: float
    gap: float = Field(description="success_with − success_without.")
    p_value: float = Field(1.0, description="Fisher's exact test (two-sided) of success with vs without the step.")


class SetSummary(BaseModel):
    """The cross-task summary of an imported set."""

    set_id: str
    formats: list[str]
    tasks: int
    trajectories: int
    successes: int
    success_rate: float
    agents: list[AgentRow]
    inflation: Distribution
    inflation_by_level: dict[str, Distribution]
    tasks_with_shared_nodes: int = Field(description="Tasks with ≥2 agents where at least two agents share an action node.")
    tasks_with_several_agents: int
    recurring_traps: list[Finding]
    recurring_critical: list[Finding]
    shared_traps: list[SharedTrap]
    separating_steps: list[SeparatingStep]
    traps: int = Field(0, description="Trap edges over all tasks.")
    critical: int = Field(0, description="Critical edges over all tasks.")
    trap_findings: int = Field(0, description="Trap edges not taken by exactly the runs of an earlier trap (distinct findings).")
    critical_findings: int = Field(0, description="Critical edges not taken by exactly the runs of an earlier critical edge.")
    one_agent_traps: int = Field(0, description="Trap edges taken by one agent only (its runs alone make the label).")
    one_agent_critical: int = Field(0, description="Critical edges taken by one agent only.")
    labelled_steps: list[SharedTrap] = Field(
        default_factory=list, description="Distinct trap and critical findings (no same_runs_as), strongest evidence (smallest p) first (up to 30)."
    )
    agent_tasks: list[AgentTaskRow] = Field(default_factory=list, description="Every agent on every task it attempted: runs, pass@k, pass^k.")
    task_index: list[TaskRow]
    imports: list[ImportReport] = Field(default_factory=list)


_BUCKETS = ((1.0, "<1"), (1.5, "1-1.5"), (2.0, "1.5-2"), (3.0, "2-3"), (5.0, "3-5"), (math.inf, ">=5"))


def _distribution(values: Sequence[float]) -> Distribution:
    xs = sorted(values)
    if not xs:
        return Distribution(count=0)
    hist = {label: 0 for _, label in _BUCKETS}
    for x in xs:
        hist[next(label for bound, label in _BUCKETS if x < bound)] += 1
    q = statistics.quantiles(xs, n=10, method="inclusive") if len(xs) > 1 else [xs[0]] * 9
    return Distribution(count=len(xs), mean=round(math.fsum(xs) / len(xs), 4), p10=round(q[0], 4), median=round(statistics.median(xs), 4), p90=round(q[8], 4), histogram=hist)


def _set_dir(runs: Path, set_id: str) -> Path:
    return runs / set_id


def number_runs(trajectories: Sequence[AgentTrajectory]) -> list[AgentTrajectory]:
    """The trajectories of one or more imports as distinct runs.

    The same file (or line) imported twice for one agent is an error. Two runs of one agent on one
    task that share an id (e.g. two result folders imported with one ``--agent``) are repeated runs:
    that agent's runs of that task are numbered 0, 1, … (keeping distinct numbers the logs gave) and
    their ids become ``<agent>/<task>#<run>``.
    """
    sources = Counter((t.agent, t.source) for t in trajectories if t.source)
    twice = sorted(src for (_, src), n in sources.items() if n > 1)
    if twice:
        raise InputError(f"{len(twice)} files are imported twice (e.g. {twice[0]}); import each source once")
    ids = Counter((t.agent, t.id) for t in trajectories)
    clash = {(t.agent, t.task_id) for t in trajectories if ids[(t.agent, t.id)] > 1}
    if not clash:
        return list(trajectories)
    groups: dict[tuple[str, str | None], list[int]] = defaultdict(list)
    for i, t in enumerate(trajectories):
        if (t.agent, t.task_id) in clash:
            groups[(t.agent, t.task_id)].append(i)
    out = list(trajectories)
    for (agent, task), members in groups.items():
        given = [trajectories[i].run for i in members]
        numbers = given if None not in given and len(set(given)) == len(given) else list(range(len(members)))
        for i, n in zip(members, numbers):
            out[i] = trajectories[i].model_copy(update={"run": n, "id": f"{agent}/{task}#{n}"})
    left = [k for k, n in Counter((t.agent, t.id) for t in out).items() if n > 1]
    if left:
        raise InputError(f"trajectory {left[0][1]!r} of agent {left[0][0]!r} is imported twice; import each source once")
    return out


def save_set(runs: Path, set_id: str, trajectories: Sequence[AgentTrajectory], reports: Sequence[ImportReport]) -> Path:
    """Write a set's trajectories and import reports (replacing a set of that name); returns its folder."""
    folder = _set_dir(runs, set_id)
    if (folder / "spec.json").exists():
        raise InputError(f"{set_id!r} is a run of agents, not an imported set; choose another set name")
    atomic_write_text(folder / "trajectories.jsonl", "".join(t.model_dump_json() + "\n" for t in trajectories))
    atomic_write_json(folder / "imports.json", [r.model_dump(mode="json") for r in reports])
    return folder


def load_set(runs: Path, set_id: str) -> list[AgentTrajectory]:
    """The trajectories of an imported set."""
    path = _set_dir(runs, set_id) / "trajectories.jsonl"
    if not path.is_file():
        raise NotFoundError(f"no imported set {set_id!r}; import one with `taskloom consensus import FORMAT PATH --set {set_id}`")
    return [AgentTrajectory.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_imports(runs: Path, set_id: str) -> list[ImportReport]:
    path = _set_dir(runs, set_id) / "imports.json"
    return [ImportReport.model_validate(r) for r in json.loads(path.read_text(encoding="utf-8"))] if path.is_file() else []


def _separating(graph: ConsensusGraph, min_each: int = 2) -> list[SeparatingStep]:
    """Steps visited by ≥ ``min_each`` trajectories and missed by ≥ ``min_each``: success rate with the step vs without."""
    total, ok = graph.summary.trajectories, graph.summary.successes
    out = []
    for n in graph.nodes:
        without = total - n.trajectories
        if n.kind != "action" or n.trajectories < min_each or without < min_each:
            continue
        with_rate, without_rate = n.successes / n.trajectories, (ok - n.successes) / without
        p = fisher_exact(n.successes, n.trajectories - n.successes, ok - n.successes, without - (ok - n.successes))
        out.append(SeparatingStep(task_id=graph.task_id or "", label=n.label, with_step=n.trajectories, success_with=round(with_rate, 4),
                                  success_without=round(without_rate, 4), gap=round(with_rate - without_rate, 4), p_value=round(p, 6)))  # fmt: skip
    return out


def _agent_tasks(trajectories: Sequence[AgentTrajectory]) -> list[AgentTaskRow]:
    """Runs, successes, pass@k and pass^k of every (agent, task) pair."""
    groups: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for t in trajectories:
        groups[(t.agent, t.task_id or "")].append(t.success)
    rows = []
    for (agent, task), outcomes in sorted(groups.items()):
        n, c = len(outcomes), sum(outcomes)
        rows.append(AgentTaskRow(
            agent=agent, task_id=task, runs=n, successes=c, pass_at_k={k: round(pass_at_k(n, c, k), 4) for k in pass_ks(n)},
            pass_hat_k={k: round(pass_hat_k(n, c, k), 4) for k in pass_ks(n)},
        ))  # fmt: skip
    return rows


def summarize_set(set_id: str, graphs: Sequence[ConsensusGraph], trajectories: Sequence[AgentTrajectory], imports: Sequence[ImportReport] = ()) -> SetSummary:
    """The cross-task summary (see the module notes); ``graphs`` one per task, built from ``trajectories``."""
    if not graphs:
        raise InputError(f"set {set_id!r} has no consensus graphs; build them with `taskloom consensus build --set {set_id}`")
    inflation: list[float] = []
    by_level: dict[str, list[float]] = defaultdict(list)
    per_agent: dict[str, list[float]] = defaultdict(list)
    agent_tasks: dict[str, set[str]] = defaultdict(set)
    for g in graphs:
        for r in g.trajectories:
            agent_tasks[r.agent].add(g.task_id or "")
            if r.step_inflation is not None:
                inflation.append(r.step_inflation)
                per_agent[r.agent].append(r.step_inflation)
                if g.level:
                    by_level[g.level].append(r.step_inflation)
    pairs = _agent_tasks(trajectories)
    rows = []
    for agent in sorted(agent_tasks):
        mine = [t for t in trajectories if t.agent == agent]
        wins = sum(t.success for t in mine)
        theirs = [r for r in pairs if r.agent == agent]
        ks = pass_ks(min((r.runs for r in theirs), default=0))
        rows.append(AgentRow(
            agent=agent, tasks=len(agent_tasks[agent]), trajectories=len(mine), successes=wins, success_rate=round(wins / len(mine), 4) if mine else 0.0,
            inflation=_distribution(per_agent[agent]), runs_per_task=round(len(mine) / len(theirs), 4) if theirs else 0.0,
            pass_at_k={k: round(math.fsum(r.pass_at_k[k] for r in theirs) / len(theirs), 4) for k in ks},
            pass_hat_k={k: round(math.fsum(r.pass_hat_k[k] for r in theirs) / len(theirs), 4) for k in ks},
        ))  # fmt: skip
    findings: dict[str, dict[str, Finding]] = {"trap": {}, "critical": {}}
    shared: list[SharedTrap] = []
    labelled: list[SharedTrap] = []
    index: list[TaskRow] = []
    separating: list[SeparatingStep] = []
    several = with_shared = 0
    for g in graphs:
        label = {n.id: n.label for n in g.nodes}
        for e in g.edges:
            if e.edge_class not in findings:
                continue
            f = findings[e.edge_class].setdefault(label[e.target], Finding(label=label[e.target], tasks=0, traversals=0, agents=[], task_ids=[]))
            if g.task_id not in f.task_ids:
                f.tasks += 1
                f.task_ids.append(g.task_id or "")
            f.traversals += e.count
            f.agents = sorted(set(f.agents) | set(e.agents))
            step = SharedTrap(
                task_id=g.task_id or "", source=label[e.source], target=label[e.target], agents=e.agents, count=e.count, success_rate=e.success_rate,
                edge_class=e.edge_class, runs=e.runs, run_successes=e.run_successes, success_without=e.success_without, p_value=e.p_value,
                support=e.support, attribution=e.attribution, same_runs_as=e.same_runs_as,
            )  # fmt: skip
            labelled.append(step)
            if e.edge_class == "trap" and len(e.agents) >= 2:
                shared.append(step)
        agents = sorted({p.agent for p in g.agents})
        shared_nodes = sum(1 for n in g.nodes if n.kind == "action" and len(n.agents) >= 2)
        if len(agents) >= 2:
            several += 1
            with_shared += shared_nodes > 0
        separating += _separating(g)
        index.append(TaskRow(
            task_id=g.task_id or "", instruction=g.instruction, level=g.level, trajectories=g.summary.trajectories, successes=g.summary.successes,
            agents=agents, shared_nodes=shared_nodes, reference_steps=g.summary.reference_steps, reference_source=g.summary.reference_source,
            mean_step_inflation=g.summary.mean_step_inflation, edge_classes=g.summary.edge_classes, not_computable=g.not_computable,
        ))  # fmt: skip

    def top(kind: str) -> list[Finding]:
        return sorted((f for f in findings[kind].values() if f.tasks >= 2), key=lambda f: (-f.tasks, -f.traversals, f.label))[:15]

    wins = sum(t.success for t in trajectories)
    return SetSummary(
        set_id=set_id, formats=sorted({r.format for r in imports}), tasks=len(graphs), trajectories=len(trajectories), successes=wins,
        success_rate=round(wins / len(trajectories), 4) if trajectories else 0.0, agents=rows, inflation=_distribution(inflation),
        inflation_by_level={lvl: _distribution(v) for lvl, v in sorted(by_level.items())}, tasks_with_shared_nodes=with_shared,
        tasks_with_several_agents=several, recurring_traps=top("trap"), recurring_critical=top("critical"),
        shared_traps=sorted(shared, key=lambda s: (-len(s.agents), -s.count, s.task_id, s.target))[:15],
        separating_steps=sorted((s for s in separating if s.gap > 0), key=lambda s: (s.p_value, -s.gap, -s.with_step, s.task_id, s.label))[:15],
        traps=sum(s.edge_class == "trap" for s in labelled), critical=sum(s.edge_class == "critical" for s in labelled),
        trap_findings=sum(s.edge_class == "trap" and s.same_runs_as is None for s in labelled),
        critical_findings=sum(s.edge_class == "critical" and s.same_runs_as is None for s in labelled),
        one_agent_traps=sum(s.edge_class == "trap" and s.support == "one agent" for s in labelled),
        one_agent_critical=sum(s.edge_class == "critical" and s.support == "one agent" for s in labelled),
        labelled_steps=sorted((s for s in labelled if s.same_runs_as is None), key=lambda s: (s.p_value if s.p_value is not None else 1.0, s.task_id, s.target))[:30], agent_tasks=pairs,
        task_index=sorted(index, key=lambda r: ((r.instruction or "").casefold(), r.task_id)), imports=list(imports),
    )  # fmt: skip
