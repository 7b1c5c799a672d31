"""The end of a run: a consensus graph per task across its agents, then the report.

Consensus graphs are written to ``runs/{run_id}/consensus/{task_id}.json``; the report
(``report.html`` + ``summary.json``) to ``reports/{run_id}/``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..tools.environment.trajectory import load_trajectory
from ..tools.evaluate.consensus.analyze import build_consensus
from ..tools.evaluate.consensus.canonicalize import from_trajectory
from ..tools.evaluate.consensus.model import ConsensusGraph
from ..tools.evaluate.model import EpisodeResult
from ..tools.evaluate.report import render_report
from ..tools.evaluate.summary import RunSummary, summarize
from ..tools.tasks.model import Task
from ..tools.workspace import Workspace, atomic_write_json
from .store import RunStore

__all__ = ["FamilyRow", "RunReport", "consensus_for_run", "family_of", "family_rows", "family_table", "finish_run"]


class FamilyRow(BaseModel):
    """One agent's episodes on the tasks of one family (the generator that made them)."""

    agent: str
    family: str
    episodes: int
    successes: int
    rate: float


class RunReport(BaseModel):
    """Where a finished run's outputs are."""

    run_id: str
    html: Path
    summary_json: Path
    consensus: dict[str, Path]
    summary: RunSummary
    families: list[FamilyRow] = Field(default_factory=list, description="Success per agent and task family (provenance.generator).")

    def family_text(self) -> str:
        """The per-family table as plain text (empty without episodes)."""
        return family_table(self.families)


def family_rows(results: list[EpisodeResult], tasks: dict[str, Task]) -> list[FamilyRow]:
    """Episodes and successes per (agent, family), sorted by agent then family; tasks not given count as ``unknown``."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for result in results:
        task = tasks.get(result.task_id)
        cell = counts[(result.agent, family_of(task) if task else "unknown")]
        cell[0] += 1
        cell[1] += int(result.success)
    return [FamilyRow(agent=a, family=f, episodes=n, successes=ok, rate=round(ok / n, 4)) for (a, f), (n, ok) in sorted(counts.items())]


def family_of(task: Task) -> str:
    """A task's family: the generator that made it (``web-lookup``; an LLM rewrite's ``+llm`` dropped); a generic one (template, llm) with the task type."""
    generator = task.provenance.generator.removesuffix("+llm")
    return f"{generator}:{task.type}" if generator in ("template", "llm") else generator


def family_table(rows: list[FamilyRow]) -> str:
    """Rows as a text table: one line per family, one ``ok/n (rate)`` column per agent."""
    if not rows:
        return ""
    agents = list(dict.fromkeys(r.agent for r in rows))
    cells = {(r.agent, r.family): f"{r.successes}/{r.episodes} ({r.rate:.0%})" for r in rows}
    table = [["family", *agents]] + [[f, *(cells.get((a, f), "-") for a in agents)] for f in sorted({r.family for r in rows})]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table) + "\n"


def _analysis(graph: ConsensusGraph) -> dict[str, Any]:
    """The numbers of a consensus graph worth a table in the report."""
    classes: dict[str, int] = defaultdict(int)
    for edge in graph.edges:
        classes[edge.edge_class] += 1
    return {
        "trajectories": len(graph.trajectories),
        "action nodes": sum(1 for n in graph.nodes if n.kind == "action"),
        "edges": len(graph.edges),
        **{f"{k} edges": v for k, v in sorted(classes.items())},
        "strategy entropy (bits)": round(graph.strategies.entropy, 3),
    }


def consensus_for_run(store: RunStore, results: list[EpisodeResult], theta: float = 0.9) -> dict[str, ConsensusGraph]:
    """One consensus graph per task from every agent's trajectory of it (tasks without trajectories are skipped)."""
    by_task: dict[str, list[EpisodeResult]] = defaultdict(list)
    for result in results:
        if result.trajectory and Path(result.trajectory).is_file():
            by_task[result.task_id].append(result)
    graphs: dict[str, ConsensusGraph] = {}
    for task_id in sorted(by_task):
        trajectories = [from_trajectory(load_trajectory(Path(r.trajectory or "")), r.success, r.agent) for r in by_task[task_id]]
        trajectories = [t for t in trajectories if t.actions]
        if not trajectories:
            continue
        graph = build_consensus(trajectories, theta=theta)
        graphs[task_id] = graph
        atomic_write_json(store.dir / "consensus" / f"{task_id}.json", graph.model_dump(mode="json"))
    return graphs


def finish_run(store: RunStore, tasks: dict[str, Task], workspace: Workspace, theta: float = 0.9) -> RunReport:
    """Consensus graphs and the report of a run, from what its store holds."""
    results = store.results()
    graphs = consensus_for_run(store, results, theta)
    info = {
        t.id: {"instruction": t.instruction, "type": t.type, "kind": t.kind, "difficulty": t.difficulty, "level": t.level, "family": family_of(t), "gold_answer": t.gold_answer}
        for t in tasks.values()
    }
    paths = render_report(
        store.run_id,
        results,
        info,
        {tid: g.to_drawing() for tid, g in graphs.items()},
        {tid: _analysis(g) for tid, g in graphs.items()},
        workspace.reports / store.run_id,
    )
    return RunReport(
        run_id=store.run_id,
        html=paths.html,
        summary_json=paths.summary,
        consensus={tid: store.dir / "consensus" / f"{tid}.json" for tid in graphs},
        summary=summarize(results),
        families=family_rows(results, tasks),
    )
