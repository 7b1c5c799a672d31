"""Aggregate a run's episode results into tables: per agent, task type, difficulty, level, kind and task.

:func:`summarize` gives the run-level :class:`RunSummary`; :func:`build_summary` adds one
:class:`TaskRow` per task, which is what a report writes to ``summary.json``.

Choices where the papers leave details open:

- Every rate carries its count ``n`` (and the number of successes), so a 100 % over one episode
  never reads like a 100 % over fifty.
- Means of a score (CR, LC, F1, ROUGE-L, judge…) are taken over the episodes that *have* that
  score, and report that ``n``; an agent with no such episode has ``value=None`` (shown as "—").
  F1 and ROUGE-L in the agent table are over document tasks only, as the answer metrics are
  meaningless for web episodes.
- "Failures by status" counts the unsuccessful episodes by how they ended; a ``finished`` failure
  is an agent that stopped by itself with a wrong answer or an unmet criterion.
- Difficulties sort easy < medium < hard < expert (unknown labels after, alphabetically); levels
  sort numerically; everything else alphabetically. Sums use ``math.fsum`` so the numbers do not
  depend on the order of the results.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError
from .model import EpisodeResult, EpisodeStatus

if TYPE_CHECKING:
    from rich.table import Table

__all__ = [
    "Mean",
    "GroupRate",
    "AgentGroupRate",
    "AgentRow",
    "RunSummary",
    "TaskInfo",
    "TaskAgentRow",
    "TaskRow",
    "ReportSummary",
    "summarize",
    "task_infos",
    "task_rows",
    "build_summary",
    "terminal_summary",
    "rich_summary",
    "Outcome",
    "OUTCOMES",
    "outcome_of",
]

STATUSES: tuple[str, ...] = get_args(EpisodeStatus)
Outcome = Literal["success", "failed", "timeout", "crashed"]
OUTCOMES: tuple[str, ...] = get_args(Outcome)
DIFFICULTY_ORDER = {"easy": 0, "medium": 1, "hard": 2, "expert": 3}


class Mean(BaseModel):
    """A mean and the number of values it is over (``value`` is None when ``n`` is 0)."""

    value: float | None = None
    n: int = 0


class GroupRate(BaseModel):
    """Success over the episodes of one group (a task type, a difficulty, a level…)."""

    group: str
    n: int = Field(description="Episodes in the group.")
    successes: int
    success_rate: float


class AgentGroupRate(GroupRate):
    """Success of one agent over one group."""

    agent: str


class AgentRow(BaseModel):
    """One agent's line in the run table."""

    agent: str
    models: list[str] = Field(default_factory=list, description="Distinct models the agent ran with, sorted.")
    episodes: int
    successes: int
    success_rate: float
    mean_steps: float
    mean_duration_s: float
    cr: Mean = Field(default_factory=Mean, description="Completion rate (graph evaluator).")
    lc: Mean = Field(default_factory=Mean, description="Logical consistency (graph evaluator).")
    f1: Mean = Field(default_factory=Mean, description="Token F1 over document tasks.")
    rouge_l: Mean = Field(default_factory=Mean, description="ROUGE-L over document tasks.")
    tokens: int = Field(0, description="LLM tokens used, summed over episodes.")
    failures: dict[str, int] = Field(default_factory=dict, description="Unsuccessful episodes by status (every status present).")
    scores: dict[str, Mean] = Field(default_factory=dict, description="Mean of every score name seen, over the episodes having it.")


class RunSummary(BaseModel):
    """Everything a report tabulates about a run, independent of how it is drawn."""

    version: int = 1
    run_ids: list[str] = Field(default_factory=list, description="Distinct run ids of the results, sorted.")
    episodes: int = 0
    tasks: int = 0
    agents: int = 0
    successes: int = 0
    success_rate: float | None = Field(None, description="None when there are no episodes.")
    statuses: dict[str, int] = Field(default_factory=dict, description="Episodes by status (every status present).")
    unsuccessful: int = Field(0, description="Episodes that did not succeed, however they ended.")
    outcomes: dict[str, int] = Field(default_factory=dict, description="Episodes by outcome as their badges read: success, failed, timeout, crashed.")
    per_agent: list[AgentRow] = Field(default_factory=list)
    by_kind: list[GroupRate] = Field(default_factory=list)
    by_type: list[GroupRate] = Field(default_factory=list)
    by_difficulty: list[GroupRate] = Field(default_factory=list)
    by_level: list[GroupRate] = Field(default_factory=list, description="Chained (composite) tasks only, by number of subtasks.")
    by_agent_type: list[AgentGroupRate] = Field(default_factory=list)


def outcome_of(result: EpisodeResult) -> Outcome:
    """``success``; else ``timeout`` or ``crashed`` when the episode was ended for it; else ``failed`` (the report's badge)."""
    if result.success:
        return "success"
    if result.status in ("timeout", "crashed"):
        return result.status
    return "failed"


def _mean(values: Sequence[float]) -> Mean:
    return Mean(value=math.fsum(values) / len(values), n=len(values)) if values else Mean()


def _score_mean(results: Iterable[EpisodeResult], name: str) -> Mean:
    return _mean([r.scores[name] for r in results if name in r.scores])


def _rate(group: str, results: Sequence[EpisodeResult]) -> GroupRate:
    wins = sum(1 for r in results if r.success)
    return GroupRate(group=group, n=len(results), successes=wins, success_rate=wins / len(results))


def difficulty_key(label: str) -> tuple[int, str]:
    """Sort key putting known difficulties in order and unknown labels after them."""
    return DIFFICULTY_ORDER.get(label, len(DIFFICULTY_ORDER)), label


def _group(results: Sequence[EpisodeResult], key: Callable[[EpisodeResult], str | None]) -> dict[str, list[EpisodeResult]]:
    groups: dict[str, list[EpisodeResult]] = {}
    for r in results:
        k = key(r)
        if k is not None:
            groups.setdefault(k, []).append(r)
    return groups


def _rates(groups: dict[str, list[EpisodeResult]], sort_key: Callable[[str], Any] = str) -> list[GroupRate]:
    return [_rate(g, groups[g]) for g in sorted(groups, key=sort_key)]


def _agent_row(agent: str, results: Sequence[EpisodeResult]) -> AgentRow:
    docs = [r for r in results if r.task_kind == "document"]
    wins = sum(1 for r in results if r.success)
    failures = {s: sum(1 for r in results if not r.success and r.status == s) for s in STATUSES}
    names = sorted({name for r in results for name in r.scores})
    return AgentRow(
        agent=agent,
        models=sorted({r.model for r in results if r.model}),
        episodes=len(results),
        successes=wins,
        success_rate=wins / len(results),
        mean_steps=math.fsum(r.steps for r in results) / len(results),
        mean_duration_s=math.fsum(r.duration_s for r in results) / len(results),
        cr=_score_mean(results, "cr"),
        lc=_score_mean(results, "lc"),
        f1=_score_mean(docs, "f1"),
        rouge_l=_score_mean(docs, "rouge_l"),
        tokens=sum(r.tokens for r in results),
        failures=failures,
        scores={name: _score_mean(results, name) for name in names},
    )


def summarize(results: Sequence[EpisodeResult]) -> RunSummary:
    """Aggregate episode results into a :class:`RunSummary` (deterministic, independent of input order).

    Examples
    --------
    >>> r = EpisodeResult(task_id="t1", task_kind="web", task_type="search", difficulty="easy", agent="a", success=True, steps=3)
    >>> s = summarize([r, r.model_copy(update={"success": False, "status": "timeout", "steps": 5})])
    >>> s.per_agent[0].success_rate, s.per_agent[0].mean_steps, s.per_agent[0].failures["timeout"]
    (0.5, 4.0, 1)
    """
    rs = list(results)
    by_agent = _group(rs, lambda r: r.agent)
    wins = sum(1 for r in rs if r.success)
    agent_type: list[AgentGroupRate] = []
    for agent in sorted(by_agent):
        for rate in _rates(_group(by_agent[agent], lambda r: r.task_type)):
            agent_type.append(AgentGroupRate(agent=agent, **rate.model_dump()))
    levels = _group(rs, lambda r: str(r.level) if r.level is not None else None)
    return RunSummary(
        run_ids=sorted({r.run_id for r in rs if r.run_id}),
        episodes=len(rs),
        tasks=len({r.task_id for r in rs}),
        agents=len(by_agent),
        successes=wins,
        success_rate=wins / len(rs) if rs else None,
        statuses={s: sum(1 for r in rs if r.status == s) for s in STATUSES},
        unsuccessful=len(rs) - wins,
        outcomes={o: sum(1 for r in rs if outcome_of(r) == o) for o in OUTCOMES},
        per_agent=[_agent_row(a, by_agent[a]) for a in sorted(by_agent)],
        by_kind=_rates(_group(rs, lambda r: r.task_kind)),
        by_type=_rates(_group(rs, lambda r: r.task_type)),
        by_difficulty=_rates(_group(rs, lambda r: r.difficulty), difficulty_key),
        by_level=_rates(levels, int),
        by_agent_type=agent_type,
    )


class TaskInfo(BaseModel):
    """What the report shows about a task besides its results."""

    model_config = ConfigDict(extra="ignore")

    instruction: str = ""
    type: str | None = None
    kind: str | None = None
    difficulty: str | None = None
    level: int | None = None
    family: str | None = Field(None, description="The task's family (the generator that made it), for grouping and filtering.")
    gold_answer: str | None = Field(None, description="The gold answer, shown beside each agent's (the report is for the benchmark team).")


class TaskAgentRow(BaseModel):
    """How one agent did on one task, over its episodes."""

    agent: str
    n: int
    successes: int
    success_rate: float
    mean_steps: float
    mean_duration_s: float
    statuses: dict[str, int] = Field(default_factory=dict)
    scores: dict[str, float] = Field(default_factory=dict, description="Mean of each score over the episodes having it.")
    answers: list[str] = Field(default_factory=list, description="The answers given, in episode order.")
    reasons: list[str] = Field(default_factory=list, description="Distinct failure reasons, sorted.")


class TaskRow(BaseModel):
    """One task's line in ``summary.json`` and its section in the HTML."""

    task_id: str
    kind: str | None = None
    type: str | None = None
    difficulty: str | None = None
    level: int | None = None
    family: str | None = None
    instruction: str = ""
    n: int = 0
    successes: int = 0
    success_rate: float | None = None
    agents: list[TaskAgentRow] = Field(default_factory=list)


class ReportSummary(BaseModel):
    """The content of ``summary.json``."""

    version: int = 1
    run_id: str
    generated_at: str | None = None
    summary: RunSummary
    tasks: list[TaskRow]


def _task_agent_row(agent: str, rs: Sequence[EpisodeResult]) -> TaskAgentRow:
    wins = sum(1 for r in rs if r.success)
    names = sorted({k for r in rs for k in r.scores})
    return TaskAgentRow(
        agent=agent,
        n=len(rs),
        successes=wins,
        success_rate=wins / len(rs),
        mean_steps=math.fsum(r.steps for r in rs) / len(rs),
        mean_duration_s=math.fsum(r.duration_s for r in rs) / len(rs),
        statuses={s: c for s in STATUSES if (c := sum(1 for r in rs if r.status == s))},
        scores={k: math.fsum(vals) / len(vals) for k in names if (vals := [r.scores[k] for r in rs if k in r.scores])},
        answers=[r.answer for r in rs if r.answer is not None],
        reasons=sorted({r.reason for r in rs if r.reason}),
    )


def _episode_key(r: EpisodeResult) -> tuple[str, str, str, str]:
    return r.task_id, r.agent, r.trajectory or "", r.model_dump_json()


def task_infos(tasks: Mapping[str, TaskInfo | Mapping[str, Any]]) -> dict[str, TaskInfo]:
    """Task infos by id, validated (an InputError names a malformed one)."""
    infos: dict[str, TaskInfo] = {}
    for tid, t in tasks.items():
        try:
            infos[tid] = t if isinstance(t, TaskInfo) else TaskInfo.model_validate(t)
        except ValidationError as exc:
            raise InputError(f"task info of {tid!r} is malformed (expected instruction, type, kind, difficulty, level): {exc}") from exc
    return infos


def task_rows(results: Sequence[EpisodeResult], tasks: Mapping[str, TaskInfo | Mapping[str, Any]], extra_ids: Sequence[str] = ()) -> list[TaskRow]:
    """One row per task (those with results, those in ``tasks`` and ``extra_ids``), sorted by id."""
    infos = task_infos(tasks)
    by_task: dict[str, list[EpisodeResult]] = {}
    for r in sorted(results, key=_episode_key):
        by_task.setdefault(r.task_id, []).append(r)
    rows = []
    for tid in sorted(set(by_task) | set(infos) | set(extra_ids)):
        rs = by_task.get(tid, [])
        info = infos.get(tid, TaskInfo())
        first = rs[0] if rs else None
        agents: dict[str, list[EpisodeResult]] = {}
        for r in rs:
            agents.setdefault(r.agent, []).append(r)
        wins = sum(1 for r in rs if r.success)
        rows.append(
            TaskRow(
                task_id=tid,
                kind=info.kind or (first.task_kind if first else None),
                type=info.type or (first.task_type if first else None),
                difficulty=info.difficulty or (first.difficulty if first else None),
                level=info.level if info.level is not None else (first.level if first else None),
                family=info.family,
                instruction=info.instruction,
                n=len(rs),
                successes=wins,
                success_rate=wins / len(rs) if rs else None,
                agents=[_task_agent_row(a, agents[a]) for a in sorted(agents)],
            )
        )
    return rows


def build_summary(
    run_id: str, results: Sequence[EpisodeResult], tasks: Mapping[str, TaskInfo | Mapping[str, Any]], extra_ids: Sequence[str] = (), generated_at: str | None = None
) -> ReportSummary:
    """The ``summary.json`` content: the run summary and the per-task rows."""
    return ReportSummary(run_id=run_id, generated_at=generated_at, summary=summarize(results), tasks=task_rows(results, tasks, extra_ids))


def pct(rate: float | None) -> str:
    """``0.6667`` → ``'66.7%'``; None → ``'—'``."""
    return "—" if rate is None else f"{rate * 100:.1f}%"


def num(value: float | None, digits: int = 2) -> str:
    """A number with fixed decimals; None → ``'—'``."""
    return "—" if value is None else f"{value:.{digits}f}"


def _agent_cells(row: AgentRow) -> list[str]:
    return [
        row.agent,
        str(row.episodes),
        f"{row.successes}/{row.episodes}",
        pct(row.success_rate),
        num(row.mean_steps, 1),
        num(row.cr.value),
        num(row.lc.value),
        num(row.f1.value),
        str(row.tokens),
    ]


AGENT_HEADER = ["agent", "n", "ok", "success", "steps", "CR", "LC", "F1", "tokens"]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def terminal_summary(summary: RunSummary) -> str:
    """A compact plain-text table for the CLI: per agent success (with n), mean steps, CR, LC, F1; then per task type."""
    runs = ", ".join(summary.run_ids) or "(no run id)"
    lines = [
        f"Run {runs}: {summary.episodes} episodes, {summary.tasks} tasks, {summary.agents} agents, "
        f"{summary.successes}/{summary.episodes} succeeded ({pct(summary.success_rate)})",
    ]
    if summary.unsuccessful:
        lines.append(f"{summary.unsuccessful} unsuccessful: " + ", ".join(f"{summary.outcomes.get(o, 0)} {o}" for o in OUTCOMES[1:]))
    if not summary.per_agent:
        return "\n".join(lines) + "\n"
    lines += ["", *_table(AGENT_HEADER, [_agent_cells(r) for r in summary.per_agent])]
    if summary.by_type:
        type_rows = [[g.group, str(g.n), f"{g.successes}/{g.n}", pct(g.success_rate)] for g in summary.by_type]
        lines += ["", *_table(["task type", "n", "ok", "success"], type_rows)]
    return "\n".join(lines) + "\n"


def rich_summary(summary: RunSummary) -> Table:
    """The per-agent table as a ``rich`` table, for a coloured CLI."""
    from rich.table import Table

    table = Table(title=f"{summary.successes}/{summary.episodes} succeeded ({pct(summary.success_rate)})")
    for i, name in enumerate(AGENT_HEADER):
        table.add_column(name, justify="left" if i == 0 else "right")
    for row in summary.per_agent:
        table.add_row(*_agent_cells(row))
    return table
