"""Chained long tasks (AgentSynth): grow verified subtasks into chains, one composite task per level.

Each verified web seed task runs in a fresh episode at its start URL (gold steps, then
its criteria). Then, up to ``levels`` subtasks:

* **propose** follow-ups that build on the state the chain left: on the page node whose
  URL matches the live page (exact, else the same path with the most shared query
  parameters; ``/index.html`` is ``/``), every meta-path match or single actionable edge
  (``navigates_to``, ``opens``, ``filters``, search ``fills`` + ``submits``) of at most
  :data:`MAX_FOLLOW_UP_STEPS` steps whose first acted element was seen there, built by
  :func:`task_from_path` ``(start_page=…)``. Ranked deterministically: element types the
  chain acted on least first, then meta-path tier (business → general → basic → single
  edges), then a seeded random key. An LLM's proposal — an element named by its
  ``[ref=…]`` in the live snapshot, mapped by selector to a graph candidate with that
  first step, else to a one-step subtask — is tried first. Skipped (not an attempt): a
  first element not visible now, a repeat of a subtask of the chain (same gold steps),
  or a proposal whose state criteria all hold already (it would change nothing).
* **execute** its gold steps in the same episode and **verify** its criteria on the live
  page and this attempt's actions (state criteria get up to 3 s to settle).
  Criteria are outcomes: a proposal whose criteria name only a literal action (``clicked``,
  ``typed``, ``action_performed``) is checked by where it led (``url_matches`` of the page
  reached), or refused when it left the page as it was.
* **revise** on failure, up to ``retries`` more attempts: the longest prefix of the failed
  path whose steps all succeeded (AgentSynth's reviser: what was actually done), else the
  best-ranked remaining proposal with fewer steps (simpler), else the next-ranked one.
  Every failed proposal is recorded. **Recovery**: an attempt that changed anything (a
  successful action, or another URL) may leave state a URL cannot restore (an open
  dialog, a tab, ``localStorage``), so the episode is closed and a fresh one replays the
  chain's verified steps, then re-checks the last subtask's still-holding state
  criteria; if they do not hold, the chain stops there.

A chain that stops early yields the levels it reached. Each level-k task
(:func:`~taskloom.tools.generate.compose.levels.compose_chain`) is replayed in a fresh
episode — its concatenated gold steps only — and kept when all its criteria hold.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import parse_qsl, urlparse

import numpy as np
from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, Field

from ...environment.canonical import canonical
from ...evaluate.checks import check_criteria, probe_state
from ...browser.dom import DESCRIBE_JS
from ...browser.settle import settle, track_requests
from ...environment.episodes import ActionFailed, BrowserEpisode
from ...environment.gold import run_gold_step, run_gold_steps
from ...environment.manager import EpisodeManager
from ...environment.trajectory import load_trajectory
from ...errors import InputError, TaskloomError
from ...graph.model import KnowledgeGraph
from ...llm.client import LLM
from ...llm.templates import render_prompt
from ...tasks.model import GoldStep, Provenance, SuccessCriterion, Task, criterion_key
from .dag import normalise_url
from .levels import ChainOutcome, ChainReport, FailedProposal, Link, Source, compose_chain, level_stats, reason_of, settled_check, split_instruction
from ..filter.stages import Dropped
from ..metapath.engine import bounded_match
from ..web.families import GRAPH_STEPS
from ..metapath.patterns import TIERS, patterns_by_priority
from ..web.paths import PathEdge, _url_pattern, task_from_path

__all__ = ["Proposal", "FailedProposal", "ChainOutcome", "ChainReport", "FollowUps", "ChainRun", "build_chains"]

_SINGLE_TIER = len(TIERS)
_ACTED = ("navigates_to", "opens", "fills", "filters")
_STEP_WAIT_MS = 4_000
_SETTLE_MS = 5_000
MAX_FOLLOW_UP_STEPS = 3  # AgentSynth's subtasks are simple: "a few atomic actions"


@dataclass(frozen=True)
class Proposal:
    """A candidate subtask: a web task, the graph path it came from, and how it was proposed."""

    task: Task
    edges: tuple[PathEdge, ...] = ()
    tier: int = 0
    kind: str = ""  # graph node type (or role) of the first element acted on
    page: str | None = None  # the page node it was proposed from
    source: Source = "template"

    @property
    def signature(self) -> tuple[tuple[str, str | None, str | None, bool], ...]:
        return tuple((s.action, s.selector, s.text, s.submit) for s in self.task.gold_steps)


def _norm_url(url: str) -> tuple[str, frozenset[tuple[str, str]]]:
    parts = urlparse(url)
    path = parts.path[: -len("index.html")] if parts.path.endswith("/index.html") else parts.path
    return f"{parts.scheme}://{parts.netloc}{path or '/'}", frozenset(parse_qsl(parts.query))


class FollowUps:
    """Follow-up candidates from a web graph: meta-path matches and single actionable edges, per page node."""

    def __init__(self, kg: KnowledgeGraph, seed: int, limit: int = 200) -> None:
        self.kg = kg
        self.seed = seed
        self.paths: list[tuple[str, str, int, tuple[PathEdge, ...]]] = []
        for pattern in patterns_by_priority():
            outcome = bounded_match(kg, pattern.compiled, limit=limit, max_steps=GRAPH_STEPS)
            if outcome.exceeded:
                continue  # too expensive on this graph; the other patterns and single edges still apply
            found = outcome.matches
            tier = TIERS.index(pattern.tier)
            self.paths.extend((pattern.id, pattern.task_type, tier, tuple(m.edges)) for m in found)
        for edge in kg.edges("navigates_to", "opens", "filters", "fills"):
            kind = edge.type.value
            if kind == "fills":
                submits = kg.edges_from(edge.target, "submits")
                if not submits:
                    continue
                self.paths.append(("single_search", "search", _SINGLE_TIER, ((edge.source, kind, edge.target), (edge.target, "submits", submits[0].target))))
            else:
                task_type = {"navigates_to": "navigation", "opens": "click", "filters": "filter"}[kind]
                self.paths.append((f"single_{kind}", task_type, _SINGLE_TIER, ((edge.source, kind, edge.target),)))
        self._pages = [(n.id, _norm_url(str(n.attrs["url"]))) for n in kg.nodes("page")]
        self._cache: dict[str, list[Proposal]] = {}

    def page_for(self, url: str) -> str | None:
        """The page node of a live URL: exact, else the same path sharing the most query parameters."""
        base, query = _norm_url(url)
        same = [(pid, q) for pid, (b, q) in self._pages if b == base]
        exact = [pid for pid, q in same if q == query]
        if exact:
            return exact[0]
        subsets = [(len(q), -i, pid) for i, (pid, q) in enumerate(same) if q <= query]
        return max(subsets)[2] if subsets else None

    def candidates(self, page: str) -> list[Proposal]:
        """Distinct candidate subtasks starting on ``page``, in pattern-priority order."""
        if page not in self._cache:
            found: list[Proposal] = []
            seen: set[Any] = set()
            for pattern_id, task_type, tier, edges in self.paths:
                task = task_from_path(self.kg, edges, pattern_id, task_type, self.seed, start_page=page)
                if task is None or len(task.gold_steps) > MAX_FOLLOW_UP_STEPS or not self._reachable(task, edges):
                    continue
                proposal = Proposal(task=task, edges=edges, tier=tier, kind=self.kind_of(task), page=page)
                if proposal.signature not in seen:
                    seen.add(proposal.signature)
                    found.append(proposal)
            self._cache[page] = found
        return self._cache[page]

    def _reachable(self, task: Task, edges: Sequence[PathEdge]) -> bool:
        """False when a later step acts on an element the crawl saw hidden and the step before it opens nothing."""
        kinds = [kind for _, kind, _ in edges if kind in _ACTED]
        for i, step in enumerate(task.gold_steps[1:], 1):
            hidden = bool(step.node_id) and self.kg.node(str(step.node_id)).attrs.get("visible") is False
            if hidden and (i > len(kinds) or kinds[i - 1] != "opens"):
                return False
        return True

    def kind_of(self, task: Task) -> str:
        """The graph node type of the first element a task acts on (its action when the element is not in the graph)."""
        node = task.gold_steps[0].node_id if task.gold_steps else None
        return self.kg.node_type(node) if node and node in self.kg else (task.gold_steps[0].action if task.gold_steps else "")

    def revision(self, failed: Proposal, done: int) -> Proposal | None:
        """The longest prefix of a failed path whose steps all succeeded, as a new proposal; None if there is none."""
        steps = failed.signature
        limit = done if done < len(steps) else len(steps) - 1
        for n in range(len(failed.edges) - 1, 0, -1):
            task = task_from_path(self.kg, failed.edges[:n], f"{failed.task.provenance.template}~revised", failed.task.type, self.seed, start_page=failed.page)
            if task is None:
                continue
            shorter = replace(failed, task=task, edges=failed.edges[:n], source="revision")
            if 1 <= len(shorter.signature) <= limit and shorter.signature == steps[: len(shorter.signature)]:
                return shorter
        return None


class _Proposed(BaseModel):
    ref: str = Field(description="The [ref=…] of the element to act on, from the snapshot.")
    action: Literal["click", "type", "select"] = "click"
    value: str | None = Field(None, description="Text to type or option to choose.")
    instruction: str = ""


class ChainRun:
    """One chain: its live episode, verified links and failed proposals."""

    def __init__(self, episodes: EpisodeManager, follow: FollowUps, seed_task: Task, seed: int = 0, llm: LLM | None = None) -> None:
        self.episodes = episodes
        self.follow = follow
        self.seed_task = seed_task
        self.seed = seed
        self.llm = llm
        self.links: list[Link] = []
        self.failed: list[FailedProposal] = []
        self.episode: BrowserEpisode | None = None
        # keyed on what the seed does, not its id (which hashes the site's URL, port included)
        steps = "|".join(f"{s.action}:{s.selector}:{s.text}" for s in seed_task.gold_steps)
        self.key = int(hashlib.sha1(f"{seed_task.instruction}|{steps}".encode()).hexdigest()[:8], 16)

    @property
    def live(self) -> BrowserEpisode:
        if self.episode is None:
            raise InputError("the chain has no open episode; call open() first")
        return self.episode

    async def open(self) -> str | None:
        """Start at the seed's start URL and run + verify the seed; the reason when it fails."""
        self.episode, _ = await self.episodes.start(url=self.seed_task.start_url, agent="chain-builder", allowed_domains=self.seed_task.allowed_domains or None)
        seed = Proposal(task=self.seed_task, edges=tuple(self.seed_task.reasoning_path), kind=self.follow.kind_of(self.seed_task), source="seed")
        reason, _ = await self._try(seed)
        return reason

    async def close(self) -> None:
        if self.episode is not None:
            await self.episodes.close(self.episode.id, status="closed", reason=f"chain built to level {len(self.links)}")
            self.episode = None

    async def _try(self, proposal: Proposal) -> tuple[str | None, int]:
        """Run and verify one proposal in the live episode; on success append a link. Returns (reason, steps done)."""
        episode = self.live
        before, url_before = len(load_trajectory(episode.recorder.path).actions), episode.page.url
        done = 0
        try:
            for step in proposal.task.gold_steps:
                if step.selector and done:  # fail fast on an element that never shows up (the default wait is 5 s)
                    await episode.page.locator(step.selector).first.wait_for(state="visible", timeout=_STEP_WAIT_MS)
                await run_gold_step(episode, step)
                done += 1
            actions = load_trajectory(episode.recorder.path).actions[before:]
            reason = reason_of(await settled_check(episode.page, proposal.task.success, actions))
        except (ActionFailed, PlaywrightError) as exc:
            steps = proposal.task.gold_steps
            what = f"step {done + 1} ({steps[done].canonical or steps[done].action})" if done < len(steps) else "the final-state check"
            reason = f"{what} failed: {str(exc).splitlines()[0]}"
        if reason is not None:
            return reason, done
        await self._settle()
        if not any(c.on_state for c in proposal.task.success):  # only a literal action: check where it led instead, or refuse it
            if normalise_url(episode.page.url) == normalise_url(url_before):
                return "it has no outcome check (its criteria name only a literal action) and it left the page as it was", done
            proposal = replace(proposal, task=proposal.task.model_copy(update={"success": [SuccessCriterion(kind="url_matches", value=_url_pattern(episode.page.url))]}))
        earlier = [c for link in self.links for c in link.task.success if c.on_state] + [c for c in proposal.task.success if c.on_state]
        holding = set(await probe_state(episode.page, earlier))
        still = list({criterion_key(c): c for c in earlier if criterion_key(c) in holding}.values())
        text = str(proposal.task.quality.get("template_instruction") or proposal.task.instruction)
        _, clause = split_instruction(text)
        instruction = text if proposal.source == "seed" else clause[:1].upper() + clause[1:] + "."
        self.links.append(Link(task=proposal.task, instruction=instruction, clause=clause, url_before=url_before, url_after=episode.page.url,
                               still=still, source=proposal.source))
        return None, done

    async def _restore(self) -> str | None:
        """Rebuild the chain's state in a fresh episode (see the module docstring); the reason when it cannot."""
        await self.episodes.close(self.live.id, status="error", reason="a follow-up attempt failed; the state is rebuilt in a fresh episode")
        self.episode, _ = await self.episodes.start(url=self.seed_task.start_url, agent="chain-builder", allowed_domains=self.seed_task.allowed_domains or None)
        try:
            await run_gold_steps(self.episode, [s for link in self.links for s in link.task.gold_steps])
        except ActionFailed as exc:
            return f"the chain's state could not be rebuilt: {exc}"
        results = await settled_check(self.episode.page, self.links[-1].still, [])
        reason = reason_of(results)
        return None if reason is None else f"the chain's state could not be rebuilt: {reason}"

    async def _settle(self) -> None:
        """Let the page finish loading and rendering, so what is visible (and so what is proposed) does not depend on timing."""
        page = self.live.page
        if not hasattr(page, "inflight"):
            track_requests(page)
        with contextlib.suppress(PlaywrightError):
            await page.wait_for_load_state("load", timeout=_SETTLE_MS)
        await settle(page, quiet=0.25)  # no request in flight for 0.25 s (a page that keeps the network busy: inspected after 3 s)

    async def _skip(self, proposal: Proposal) -> str | None:
        """Why a proposal is not worth an attempt now (not visible, a repeat, or no change); None to try it."""
        if proposal.signature in {Proposal(task=link.task).signature for link in self.links}:
            return "it repeats a subtask of this chain"
        selector = proposal.task.gold_steps[0].selector if proposal.task.gold_steps else None
        try:
            loc = self.live.page.locator(selector) if selector else None
            if loc is None or await loc.count() != 1 or not await loc.first.is_visible():
                return f"its first element {selector!r} is not visible on the page"
            state = [c for c in proposal.task.success if c.on_state]
            if state and all(r.ok for r in await check_criteria(self.live.page, state, [])):
                return "its state checks already hold, so it would change nothing"
        except PlaywrightError as exc:
            return f"the page could not be inspected: {str(exc).splitlines()[0]}"
        return None

    def ranked(self, level: int) -> list[Proposal]:
        """Follow-up candidates from the live page, ranked (see the module docstring)."""
        page = self.follow.page_for(self.live.page.url)
        if page is None:
            return []
        found = self.follow.candidates(page)
        used = Counter(self.follow.kind_of(link.task) for link in self.links)
        keys = np.random.default_rng([self.seed, self.key, level]).random(len(found))
        return [found[i] for i in sorted(range(len(found)), key=lambda i: (used[found[i].kind], found[i].tier, float(keys[i])))]

    def _fail(self, level: int, proposal: Proposal | None, reason: str, source: Source | None = None) -> None:
        instruction = proposal.task.instruction if proposal is not None else "(no usable proposal)"
        self.failed.append(FailedProposal(chain=self.seed_task.id, level=level, instruction=instruction, source=source or (proposal.source if proposal else "llm"), reason=reason))

    async def extend(self, proposals: Sequence[Proposal], retries: int = 3, spent: int = 0) -> str | None:
        """Add one verified subtask from ``proposals`` (propose → execute → verify → revise); the reason when none works.

        At most ``1 + retries - spent`` attempts (``spent``: attempts already used, e.g. an unusable LLM proposal).
        """
        level = len(self.links) + 1
        pending = list(proposals)
        attempts = 1 + retries - spent
        await self._settle()
        tried: set[Any] = set()
        revision: Proposal | None = None
        last: Proposal | None = None
        while attempts > 0 and (revision is not None or pending):
            if revision is not None:
                proposal, revision = revision, None
            else:
                simpler = [p for p in pending if last is not None and len(p.signature) < len(last.signature)]
                proposal = (simpler or pending)[0]
                pending.remove(proposal)
            if proposal.signature in tried:
                continue
            tried.add(proposal.signature)
            skip = await self._skip(proposal)
            if skip is not None:
                if proposal.source == "llm":
                    attempts -= 1
                    self._fail(level, proposal, f"not attempted: {skip}")
                continue
            attempts -= 1
            before = len(load_trajectory(self.live.recorder.path).actions)
            url_before = self.live.page.url
            reason, done = await self._try(proposal)
            if reason is None:
                return None
            self._fail(level, proposal, reason)
            changed = self.live.page.url != url_before or any(a.error is None for a in load_trajectory(self.live.recorder.path).actions[before:])
            if changed:
                stuck = await self._restore()
                if stuck is not None:
                    return stuck
                await self._settle()
            revision = self.follow.revision(proposal, done) if proposal.edges else None
            last = proposal
        used = 1 + retries - attempts
        return f"no follow-up verified at level {level} after {used} attempt(s)" if used > 0 else f"no follow-up could be proposed at level {level}"

    async def propose_llm(self, ranked: list[Proposal]) -> Proposal | None:
        """The LLM's follow-up from the live snapshot and the chain's history; None (recorded) when unusable."""
        if self.llm is None:
            return None
        level = len(self.links) + 1
        observation = await self.live.observe()
        snapshot = observation.snapshot or ""
        user = render_prompt(
            "chain_propose_user.j2",
            done=[link.instruction for link in self.links],
            failed=self.failed,
            url=observation.url,
            title=observation.title,
            snapshot=snapshot,
        )
        messages: list[dict[str, Any]] = [{"role": "system", "content": render_prompt("chain_propose_system.j2")}, {"role": "user", "content": user}]
        try:
            completion = await self.llm.complete(messages, schema=_Proposed, tag=f"chain-propose:{self.seed_task.id}:{level}")
        except TaskloomError as exc:
            self._fail(level, None, f"the LLM gave no proposal: {exc}", "llm")
            return None
        proposed = completion.parsed
        if f"[ref={proposed.ref}]" not in snapshot:
            self._fail(level, None, f"the LLM named element ref {proposed.ref!r}, which is not in the page snapshot", "llm")
            return None
        loc = self.live.page.locator(f"aria-ref={proposed.ref}")
        if await loc.count() != 1:
            self._fail(level, None, f"element ref {proposed.ref!r} no longer resolves on the page", "llm")
            return None
        info = await loc.evaluate(DESCRIBE_JS)
        return self._map_llm(proposed, info, ranked)

    def _map_llm(self, proposed: _Proposed, info: dict[str, Any], ranked: list[Proposal]) -> Proposal | None:
        action = {"click": "click", "type": "type", "select": "select_option"}[proposed.action]
        selector = str(info["selector"])
        for candidate in ranked:
            first = candidate.task.gold_steps[0]
            if first.selector == selector and first.action == action and (proposed.value is None or first.text == proposed.value):
                return replace(candidate, source="llm")
        name = str(info.get("name") or info.get("text") or selector).strip()[:80]
        role = str(info.get("role") or info.get("tag") or "element")
        value = (proposed.value or "").strip()
        if action != "click" and not value:
            self._fail(len(self.links) + 1, None, f"the LLM asked to {proposed.action} into “{name}” without a value", "llm")
            return None
        if action == "click":
            step = GoldStep(action="click", selector=selector, canonical=canonical("click", text=name, element=role))
            phrase, criteria = f"click “{name}”", [SuccessCriterion(kind="clicked", value=name)]
        elif action == "type":
            step = GoldStep(action="type", selector=selector, text=value, submit=True, canonical=canonical("type", text=value, element=name))
            phrase, criteria = f"type “{value}” into “{name}”", [SuccessCriterion(kind="typed", value=value)]
        else:
            step = GoldStep(action="select_option", selector=selector, text=value, canonical=canonical("select", option=value, element=name))
            phrase, criteria = f"choose “{value}” in “{name}”", [SuccessCriterion(kind="element_state", value=selector, state=f"label={value}")]
        digest = hashlib.sha1(f"{self.seed_task.id}|{step.model_dump_json()}".encode()).hexdigest()[:12]
        task = Task(
            id=f"web-llm-{digest}", kind="web", type=f"llm_{proposed.action}", instruction=phrase[:1].upper() + phrase[1:] + ".",
            start_url=self.live.page.url, allowed_domains=list(self.seed_task.allowed_domains), gold_steps=[step], success=criteria,
            provenance=Provenance(graph_id=self.follow.kg.id, template="llm-proposal", generator="llm", model=str(getattr(self.llm, "name", "llm")), seed=self.seed),
            quality={"llm_instruction": proposed.instruction},
        )
        return Proposal(task=task, kind=self.follow.kind_of(task), page=self.follow.page_for(self.live.page.url), source="llm")

    async def next_level(self, retries: int = 3) -> str | None:
        """Propose, execute, verify and revise one follow-up; the reason the chain stops, or None."""
        await self._settle()
        ranked = self.ranked(len(self.links) + 1)
        first = await self.propose_llm(ranked)
        return await self.extend(([first] if first is not None else []) + ranked, retries, spent=1 if self.llm is not None and first is None else 0)


async def build_chains(
    seeds: list[Task],
    kg: KnowledgeGraph,
    episodes: EpisodeManager,
    *,
    levels: int = 6,
    retries: int = 3,
    seed: int = 0,
    llm: LLM | None = None,
) -> ChainReport:
    """Chain each verified web seed into up to ``levels`` verified subtasks; one replay-verified composite per level reached."""
    if not 1 <= levels <= 12:
        raise InputError(f"levels={levels} is out of range; use 1 to 12 (AgentSynth uses 1 to 6)")
    if not 0 <= retries <= 20:
        raise InputError(f"retries={retries} is out of range; use 0 to 20")
    model = llm if llm is not None and llm.available else None
    follow = FollowUps(kg, seed)
    report = ChainReport()
    rows: list[tuple[int, int, int, int]] = []
    for seed_task in seeds:
        if seed_task.kind != "web" or not seed_task.start_url or not seed_task.gold_steps:
            report.dropped.append(Dropped(task_id=seed_task.id, stage="seed", reason="not a web task with a start URL and gold steps; pass verified web tasks"))
            continue
        run = ChainRun(episodes, follow, seed_task, seed, model)
        try:
            stopped = await run.open()
            if stopped is not None:
                report.dropped.append(Dropped(task_id=seed_task.id, stage="seed", reason=f"the seed did not verify: {stopped}"))
            while stopped is None and len(run.links) < levels:
                stopped = await run.next_level(retries)
        finally:
            await run.close()
        report.chains.append(ChainOutcome(seed_task=seed_task.id, reached=len(run.links), stopped=stopped or f"reached level {levels}"))
        report.failed_proposals.extend(run.failed)
        rows.extend(await compose_chain(run.links, run.failed, seed_task, kg.id, seed, model, episodes, report))
    report.levels = level_stats(rows)
    return report
