"""Chained long tasks, second half: summarise verified subtasks into one level-k composite task.

The summariser (AgentSynth's sixth agent) turns subtasks 1..k into one instruction.
Without an LLM it is a template — ``On the page “…”, first A, then B, and finally C.``
— built from each subtask's clause (its instruction without the ``On the page “…”``
prefix). An LLM summary is kept only when every concrete value quoted in “…” in the
subtask instructions survives in it; otherwise the template summary is used and the
missing values are recorded in ``quality["summary"]``.

Success of a level-k task (checked after replaying its gold steps in a fresh episode) is
outcomes only, never a literal action (a newcomer who reaches the same pages by other
clicks passes): the state criteria of subtasks 1..k that still held on the live page right
after subtask k was verified (all of subtask k's, since it was just verified). An earlier
subtask whose state did not last is checked by the graph evaluator: each subtask's checks
are its source task's state criteria, probed after every action, and the replay must see
each subtask's checks hold together after some action
(:func:`~taskloom.tools.generate.compose.dag.unfinished_subtask`). A proposal whose criteria
name only a literal action enters a chain checked by the page it led to, or not at all
(:mod:`.chain`).

Difficulty from the level: 1 easy, 2–3 medium, 4–5 hard, 6 and more expert. Every level
is replayed in a fresh episode (its gold steps only, no failed attempts); a level whose
criteria do not all hold is dropped, and the replay is the kept task's gold trajectory and
the source of the per-level statistics (steps, distinct pages visited, distinct roles of
the elements acted on). The report models of :func:`~taskloom.tools.generate.compose.chain.build_chains`
live here too.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, Field

from ...evaluate.checks import CriterionResult, check_criteria
from ...environment.episodes import ActionFailed
from ...environment.gold import run_gold_steps
from ...environment.manager import EpisodeManager, unfinished_subtask, watched_checks
from ...environment.trajectory import ActionRecord, Trajectory, load_trajectory
from ...errors import TaskloomError
from ...llm.client import LLM
from ...llm.templates import render_prompt
from ...tasks.model import Difficulty, Provenance, Resource, SuccessCriterion, Subtask, Task, criterion_key
from ..filter.stages import Dropped

__all__ = [
    "FailedProposal",
    "ChainOutcome",
    "ChainReport",
    "Link",
    "LevelStats",
    "quoted_values",
    "split_instruction",
    "template_summary",
    "llm_summary",
    "level_difficulty",
    "level_success",
    "compose_level",
    "trajectory_stats",
    "level_stats",
    "settled_check",
    "reason_of",
    "replay_level",
    "summarise",
    "compose_chain",
    "Source",
]

Source = Literal["seed", "template", "revision", "llm"]
REPLAYS_AT_ONCE = 3  # level replays are independent episodes; a few run concurrently
_QUOTED = re.compile(r"“([^”]+)”")
_ON_PAGE = re.compile(r"^On the page “([^”]*)”,\s*(.*?)\.?\s*$", re.S)


@dataclass
class Link:
    """One verified subtask of a chain, with what was observed when it was verified."""

    task: Task = field(repr=False)
    instruction: str
    clause: str
    url_before: str
    url_after: str
    still: list[SuccessCriterion] = field(default_factory=list)  # state criteria of subtasks 1..k that held right after this one
    source: str = "template"


class LevelStats(BaseModel):
    """Statistics of the verified level-k tasks (from their gold replays)."""

    level: int
    tasks: int
    mean_steps: float
    mean_pages: float
    mean_element_types: float


def quoted_values(text: str) -> list[str]:
    """The concrete values quoted in “…” in ``text``, in order, without repeats."""
    return list(dict.fromkeys(_QUOTED.findall(text)))


def split_instruction(text: str) -> tuple[str | None, str]:
    """``(page title, clause)`` of a template web instruction ``On the page “T”, clause.``; title None otherwise."""
    found = _ON_PAGE.match(text.strip())
    if found:
        return found.group(1), found.group(2)
    clause = text.strip().rstrip(".")
    return None, clause[:1].lower() + clause[1:]


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def template_summary(title: str | None, clauses: Sequence[str]) -> str:
    """One instruction for clauses 1..k: ``[On the page “T”, ]first A, then B, and finally C.``"""
    if not clauses:
        return ""
    if len(clauses) == 1:
        body = clauses[0]
    elif len(clauses) == 2:
        body = f"first {clauses[0]}, and then {clauses[1]}"
    else:
        body = "first " + ", then ".join(clauses[:-1]) + f", and finally {clauses[-1]}"
    return (f"On the page “{title}”, {body}." if title else _upper(body) + ".")


class _Summary(BaseModel):
    instruction: str


async def llm_summary(llm: LLM, instructions: Sequence[str], tag: str) -> tuple[str | None, list[str]]:
    """An LLM's one-instruction summary of subtask instructions, and the quoted values it dropped.

    Returns ``(None, [])`` when the call fails; the caller then keeps the template summary.
    """
    values = [v for text in instructions for v in quoted_values(text)]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": render_prompt("summary_system.j2")},
        {"role": "user", "content": render_prompt("summary_user.j2", instructions=instructions)},
    ]
    try:
        completion = await llm.complete(messages, schema=_Summary, tag=tag)
    except TaskloomError:
        return None, []
    text = completion.parsed.instruction.strip()
    if not text:
        return None, []
    return text, [v for v in dict.fromkeys(values) if v not in text]


def level_difficulty(level: int) -> Difficulty:
    """Difficulty of a chained task from its number of subtasks."""
    return "easy" if level <= 1 else "medium" if level <= 3 else "hard" if level <= 5 else "expert"


def _resources(link: Link) -> tuple[list[Resource], list[Resource]]:
    inputs = [Resource(kind="page_state", name=link.url_before)]
    outputs = [Resource(kind="page_state", name=link.url_after)]
    for step in link.task.gold_steps:
        if step.action == "type" and step.text:
            outputs.append(Resource(kind="search_query", name=step.text))
        elif step.action == "select_option" and step.text:
            outputs.append(Resource(kind="filter_state", name=step.text))
    return inputs, outputs


def _subtask(index: int, link: Link) -> Subtask:
    inputs, outputs = _resources(link)
    start = link.url_before.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0] or "index"
    return Subtask(
        id=f"s{index}",
        instruction=link.instruction,
        intent=link.task.type,
        category=start,
        inputs=inputs,
        outputs=outputs,
        gold_steps=[s.model_copy() for s in link.task.gold_steps],
        checks=[c.model_copy() for c in link.task.success if c.on_state],
        source_task=link.task.id,
    )


def _dedupe(criteria: Sequence[SuccessCriterion]) -> list[SuccessCriterion]:
    seen: dict[str, SuccessCriterion] = {}
    for criterion in criteria:
        seen.setdefault(criterion_key(criterion), criterion)
    return list(seen.values())


def level_success(links: Sequence[Link]) -> list[SuccessCriterion]:
    """Success criteria of the level-len(links) task (see the module docstring)."""
    last = links[-1]
    found = [c for c in [*last.still, *last.task.success] if c.on_state]
    return _dedupe([c.model_copy() for c in found])


def compose_level(
    links: Sequence[Link],
    seed_task: Task,
    graph_id: str,
    seed: int,
    summary: str,
    model: str,
    failed: list[dict[str, Any]],
) -> Task:
    """The level-k composite task of the first k verified links of one chain (k = len(links))."""
    k = len(links)
    subtasks = [_subtask(i, link) for i, link in enumerate(links, 1)]
    signature = "|".join(f"{s.action}:{s.selector}:{s.text}:{s.submit}" for link in links for s in link.task.gold_steps)
    digest = hashlib.sha1(f"{graph_id}|{seed_task.id}|{seed}|{signature}".encode()).hexdigest()[:12]
    return Task(
        id=f"chain-{digest}-l{k}",
        kind="composite",
        type="chained",
        difficulty=level_difficulty(k),
        instruction=summary,
        start_url=seed_task.start_url,
        allowed_domains=list(seed_task.allowed_domains),
        gold_steps=[s.model_copy() for link in links for s in link.task.gold_steps],
        success=level_success(links),
        subtasks=subtasks,
        dag=[(f"s{i}", f"s{i + 1}") for i in range(1, k)],
        level=k,
        provenance=Provenance(graph_id=graph_id, template=seed_task.id, generator="compose-chain", model=model, seed=seed),
        quality={"failed_proposals": failed, "sources": [link.source for link in links]},
    )


def trajectory_stats(trajectory: Trajectory) -> tuple[int, int]:
    """``(distinct pages visited, distinct element roles acted on)`` of a replay trajectory."""
    pages = {trajectory.episode.start_url or ""} | {a.url_after or "" for a in trajectory.actions if a.error is None}
    roles = {a.target.role for a in trajectory.actions if a.error is None and a.target is not None and a.target.role}
    return len(pages - {""}), len(roles)


def level_stats(rows: Sequence[tuple[int, int, int, int]]) -> list[LevelStats]:
    """Per-level means of ``(level, steps, pages, element types)`` rows, levels ascending."""
    out: list[LevelStats] = []
    for level in sorted({r[0] for r in rows}):
        mine = [r for r in rows if r[0] == level]
        n = len(mine)
        out.append(
            LevelStats(
                level=level,
                tasks=n,
                mean_steps=round(sum(r[1] for r in mine) / n, 3),
                mean_pages=round(sum(r[2] for r in mine) / n, 3),
                mean_element_types=round(sum(r[3] for r in mine) / n, 3),
            )
        )
    return out


async def settled_check(page: Any, criteria: list[SuccessCriterion], actions: list[ActionRecord], timeout: float = 3.0) -> list[CriterionResult]:
    """:func:`check_criteria`, re-checked every 0.2 s up to ``timeout`` while a state criterion fails (scripts still rendering)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            results = await check_criteria(page, criteria, actions)
        except PlaywrightError:
            results = None  # the page is mid-navigation
        if results is not None and (all(r.ok or not r.criterion.on_state for r in results) or time.monotonic() >= deadline):
            return results
        if results is None and time.monotonic() >= deadline:
            return await check_criteria(page, criteria, actions)
        await asyncio.sleep(0.2)


def reason_of(results: list[CriterionResult]) -> str | None:
    """One line naming every failed criterion and what was observed; None when all held."""
    failed = [r for r in results if not r.ok]
    return "; ".join(f"{r.criterion.kind} {r.criterion.value!r} failed: {r.observed}" for r in failed) or None


async def replay_level(episodes: EpisodeManager, task: Task) -> tuple[str | None, str | None, tuple[int, int]]:
    """Replay a composite's gold steps in a fresh episode: (trajectory path or None, failure reason, (pages, element types))."""
    episode, _ = await episodes.start(url=task.start_url, agent="gold-replay", allowed_domains=task.allowed_domains or None)
    episode.task, episode.watch = task, watched_checks(task)
    reason: str | None = None
    try:
        await run_gold_steps(episode, task.gold_steps)
        actions = load_trajectory(episode.recorder.path).actions
        reason = reason_of(await settled_check(episode.page, task.success, actions)) or unfinished_subtask(task, actions)
    except (ActionFailed, TaskloomError) as exc:
        reason = f"a gold step failed: {exc}"
    path = await episodes.close(episode.id, status="closed" if reason is None else "error", reason=reason)
    return (str(path) if reason is None else None), reason, trajectory_stats(load_trajectory(path))


async def summarise(llm: LLM | None, links: Sequence[Link], tag: str) -> tuple[str, dict[str, Any]]:
    """The level instruction and how it was made (``quality["summary"]``): the LLM's when it keeps every value, else the template."""
    title, _ = split_instruction(links[0].instruction)
    template = template_summary(title, [link.clause for link in links])
    if llm is None:
        return template, {"by": "template"}
    text, missing = await llm_summary(llm, [link.instruction for link in links], tag)
    if text is None:
        return template, {"by": "template", "llm": "no usable reply"}
    if missing:
        return template, {"by": "template", "llm": text, "missing": missing}
    return text, {"by": "llm", "template": template}


class FailedProposal(BaseModel):
    """A proposed subtask that could not be executed or verified."""

    chain: str = Field(description="Id of the seed task the chain started from.")
    level: int = Field(description="The level the proposal was for.")
    instruction: str
    source: Source
    reason: str


class ChainOutcome(BaseModel):
    """How far one chain got, and why it stopped."""

    seed_task: str
    reached: int
    stopped: str


class ChainReport(BaseModel):
    """What :func:`build_chains` made: verified level-k tasks, per-level statistics, failures."""

    tasks: list[Task] = Field(default_factory=list)
    levels: list[LevelStats] = Field(default_factory=list)
    chains: list[ChainOutcome] = Field(default_factory=list)
    failed_proposals: list[FailedProposal] = Field(default_factory=list)
    dropped: list[Dropped] = Field(default_factory=list)


async def compose_chain(
    links: Sequence[Link],
    failed: Sequence[FailedProposal],
    seed_task: Task,
    graph_id: str,
    seed: int,
    llm: LLM | None,
    episodes: EpisodeManager,
    report: ChainReport,
) -> list[tuple[int, int, int, int]]:
    """Summarise, compose and replay every level 1..len(links) of one chain into ``report``; the statistics rows of the kept levels.

    Each level is replayed in its own fresh episode (up to :data:`REPLAYS_AT_ONCE` at a time); the kept tasks keep level order.
    """
    tasks: list[Task] = []
    for k in range(1, len(links) + 1):
        summary, how = await summarise(llm, links[:k], f"chain-summary:{seed_task.id}:{k}")
        model = llm.name if llm is not None and how["by"] == "llm" else "none"
        task = compose_level(links[:k], seed_task, graph_id, seed, summary, model, [f.model_dump() for f in failed if f.level <= k])
        task.quality["summary"] = how
        task.quality["values"] = [v for link in links[:k] for v in quoted_values(link.instruction)]
        tasks.append(task)
    gate = asyncio.Semaphore(REPLAYS_AT_ONCE)

    async def replay(task: Task) -> tuple[str | None, str | None, tuple[int, int]]:
        async with gate:
            return await replay_level(episodes, task)

    rows: list[tuple[int, int, int, int]] = []
    for task, (path, reason, (pages, types)) in zip(tasks, await asyncio.gather(*(replay(t) for t in tasks)), strict=True):
        if path is None:
            report.dropped.append(Dropped(task_id=task.id, stage="replay", reason=reason or "replay failed"))
            continue
        task.gold_trajectory = path
        task.quality["replay"] = {"ok": True, "criteria": len(task.success)}
        report.tasks.append(task)
        rows.append((task.level or 0, len(task.gold_steps), pages, types))
    return rows
