"""Compose value-flow chains and task graphs over a web graph's records, verify each by replay, say why each chain stopped.

Listings the crawl saw completely, with categories and measures (:class:`~..web.compare.ListingGroups`),
are the material; a graph without one gets no composite, and the report says so (``taskloom
compose --mode walk`` still chains click paths there). Each chain's plan (:func:`.flow.chain_plan`)
gives its level tasks (:func:`.flowtasks.level_task`); each is replayed in a fresh browser
(:func:`.dag.verify_composite`) and kept only when its outcome checks hold (and a visible
answer is shown where the replay ends). A chain stops at the first level that cannot be made
or fails its replay, with the reason: no follow-up consumes the value, the level's check
failed (which criterion, what was observed), or the step budget (``levels``) ran out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterable

import numpy as np
from pydantic import BaseModel, Field

from ...environment.manager import EpisodeManager
from ...graph.model import KnowledgeGraph
from ...llm.client import LLM
from ...tasks.model import Task
from ..web.compare import ListingGroups
from ..web.lookup import is_meta_listing, listing_data, site_order, start_page
from .consistency import synthesize, validate
from .dag import shaped, verify_composite
from .flow import MAX_SET, MIN_SET, Plan, chain_plan, pair_key, two_branch_plan
from .flowtasks import graph_task, leaks, level_task, nouns

__all__ = ["ChainStop", "FlowResult", "usable_listings", "why_none", "verify_levels", "shape_graph", "compose_value_chains", "compose_value_graphs"]


class ChainStop(BaseModel):
    """How far one chain got and why it stopped there."""

    chain: str
    listing: str
    reached: int = Field(description="Levels verified (0: none).")
    stopped: str


class FlowResult(BaseModel):
    """Verified composites, why chains stopped, and what was dropped (task id, reason)."""

    tasks: list[Task] = Field(default_factory=list)
    chains: list[ChainStop] = Field(default_factory=list)
    dropped: list[tuple[str, str]] = Field(default_factory=list)
    reason: str | None = Field(None, description="Why nothing could be composed at all.")


def usable_listings(kg: KnowledgeGraph) -> list[ListingGroups]:
    """Content listings seen completely, with a measure and at least two categories: the material of value flow."""
    out = []
    for data in listing_data(kg):
        if data.node.attrs.get("complete") and not is_meta_listing(data):
            groups = ListingGroups(data)
            if groups.measures and len(groups.categories) >= 2:
                out.append(groups)
    return sorted(out, key=lambda g: (-len(g.data.records), site_order(g.data.node), g.data.node.id))


def _listing_seed(groups: ListingGroups) -> int:
    """A listing's share of a plan's seed, from its place in the site (the same whatever port serves it)."""
    return int(hashlib.sha1("|".join(site_order(groups.data.node)).encode()).hexdigest()[:8], 16)


_NONE = "no listing the crawl saw completely has a number field and two category fields, so no value can flow from one subtask to the next"


def why_none(kg: KnowledgeGraph) -> str:
    """Why no listing of the graph can carry a value, listing by listing (counted by cause, the largest of each named)."""
    causes: dict[str, list[str]] = {}
    for data in sorted(listing_data(kg), key=lambda d: -len(d.records)):
        url = str(data.node.attrs.get("url") or data.node.id)
        if not data.node.attrs.get("complete"):
            cause = f"not seen completely ({data.node.attrs.get('completeness') or 'no proof'})"
        elif is_meta_listing(data):
            cause = "describes the site's own structure"
        else:
            groups = ListingGroups(data)
            if not groups.measures:
                cause = "no number field shown for every record (with 3 values or more)"
            elif len(groups.categories) < 2:
                cause = f"{len(groups.categories)} category field(s) (text, or a few whole numbers, each value on 2 records), 2 needed"
            else:
                continue
        causes.setdefault(cause.split(" (")[0] if cause.startswith("not seen") else cause, []).append(f"{url} ({len(data.records)} records)" + (f": {cause}" if cause.startswith("not seen") else ""))
    if not causes:
        return "the crawl found no listing of records (a table, cards or a list with several records)"
    parts = [f"{len(found)} {cause}, e.g. {found[0]}" for cause, found in sorted(causes.items(), key=lambda c: -len(c[1]))]
    return _NONE + ": " + "; ".join(parts)


async def verify_levels(
    made: Iterable[tuple[Task | None, str]],
    episodes: EpisodeManager,
    result: FlowResult,
    budget: str,
    confirm: Callable[[Task], Awaitable[str | None]] | None = None,
    first: int = 1,
) -> tuple[int, str]:
    """Verify a chain's levels ``first``, ``first`` + 1, … in order into ``result`` (each made only once the one before it passed).

    ``confirm``, when given, re-derives a level's gold by a second route before its replay (None: it holds).
    Returns how many levels passed and why the chain stopped: a level that could not be made (its
    reason), one whose gold a second route did not confirm, one that failed its replay, or ``budget`` when every level passed.
    """
    reached = 0
    for level, (task, why) in enumerate(made, start=first):
        if task is None:
            return reached, f"level {level}: {why}"
        failed = (await confirm(task) if confirm is not None else None) or await verify_composite(task, episodes)
        if failed is not None:
            result.dropped.append((task.id, failed))
            return reached, f"level {level} failed verification: {failed}"
        result.tasks.append(task)
        reached += 1
    return reached, budget


def chain_plans(listings: list[ListingGroups], count: int, levels: int, seed: int) -> list[Plan]:
    """The plans of ``count`` chains over ``listings`` in turn, each from its own first record, seeded by ``seed`` and the listing's place in the site."""
    plans: list[Plan] = []
    firsts: set[str] = set()
    for index in range(count):
        groups = listings[index % len(listings)]
        plan = chain_plan(groups, np.random.default_rng([seed, index, _listing_seed(groups)]), levels, avoid=firsts)
        if plan.steps:
            firsts.add(plan.steps[0].record.id)  # type: ignore[union-attr]
        plans.append(plan)
    return plans


async def compose_value_chains(kg: KnowledgeGraph, episodes: EpisodeManager, count: int, levels: int, seed: int) -> FlowResult:
    """``count`` chains (seeded plans over the usable listings in turn), each giving its verified levels 1..k."""
    result = FlowResult()
    listings, start = usable_listings(kg), start_page(kg)
    if not listings or start is None:
        result.reason = why_none(kg) if start is not None else "the graph has no start page"
        return result
    for index, plan in enumerate(chain_plans(listings, count, levels, seed)):
        groups = plan.groups
        chain_id = hashlib.sha1(f"{kg.id}|{groups.data.node.id}|{seed}|{index}".encode()).hexdigest()[:10]
        made = (level_task(kg, plan, level, start, seed, chain_id) for level in range(1, len(plan.steps) + 1))
        reached, stopped = await verify_levels(made, episodes, result, plan.stopped or f"the step budget ran out at level {levels}")
        result.chains.append(ChainStop(chain=chain_id, listing=groups.data.node.id, reached=reached, stopped=stopped))
    return result


async def shape_graph(task: Task, seed: int, llm: LLM | None, capability: str | None, names: tuple[str, ...] = ()) -> str | None:
    """Give a task graph its edges, orders, complexity and explicit instruction; None when it may be replayed, else why it is dropped
    (outside the capability set, an intermediate value stated, the instruction read back to other edges)."""
    shaped(task, seed)
    if capability and capability not in task.capabilities:
        return f"not in the capability set {capability}"
    task.instruction = synthesize(task.subtasks, task.dag, task.orders, style="explicit", intent=str(task.quality["intent"]))
    if leaked := leaks(task.instruction, task.quality["flow"]["hidden"] + [task.gold_answer or ""], names):
        return f"the instruction states intermediate values {leaked}"
    ok, inferred, why = await validate(task, llm)
    task.quality["consistency"] = {"ok": ok, "style": "explicit", "inferred": [list(e) for e in inferred], "by": "rules" if llm is None else llm.name}
    return None if ok else f"consistency: {why}"


async def compose_value_graphs(kg: KnowledgeGraph, episodes: EpisodeManager, count: int, seed: int, llm: LLM | None = None, capability: str | None = None) -> FlowResult:
    """``count`` task graphs, alternating three and five subtasks, each consistency-checked and verified by replay."""
    result = FlowResult()
    listings, start = usable_listings(kg), start_page(kg)
    if not listings or start is None:
        result.reason = why_none(kg) if start is not None else "the graph has no start page"
        return result
    seen: set[str] = set()
    for attempt in range(count * 4):
        if len(result.tasks) >= count:
            break
        groups = listings[attempt % len(listings)]
        rng = np.random.default_rng([seed, attempt, _listing_seed(groups)])
        branches = two_branch_plan(groups, rng, avoid=seen)  # a graph per pair of picks: the other shape would ask the same twice
        if branches is None:
            continue
        seen.add(pair_key(branches[0], branches[1]))
        task = graph_task(kg, groups, branches, five=len(result.tasks) % 2 == 1, start=start, seed=seed)
        if task is None:
            continue
        if (dropped := await shape_graph(task, seed, llm, capability, nouns(groups))) is not None:
            result.dropped.append((task.id, dropped))
            continue
        failed = await verify_composite(task, episodes)
        if failed is not None:
            result.dropped.append((task.id, failed))
            continue
        result.tasks.append(task)
    if not result.tasks:
        why = "; ".join(f"{tid}: {reason}" for tid, reason in result.dropped[:3]) or f"no two picks from one category's groups lead, through a category of 3 or more values, to counts of {MIN_SET} to {MAX_SET} records that differ by 3 or more"
        result.reason = f"no task graph after {count * 4} attempts over {len(listings)} listing(s): {why}"
    return result
