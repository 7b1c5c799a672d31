"""Web tasks from web graphs: a meta-path match becomes gold steps, an instruction and success criteria.

Template path (no LLM): every edge of the matched path maps to a browser action —
a link or button that ``navigates_to`` a page is clicked, a search box that ``fills``
a form which ``submits`` is typed into and submitted, a trigger that ``opens`` a
dialog, menu or tab panel is clicked, a filter that ``filters`` a result list gets
an option. Success criteria come from the graph: the final page's URL, the state of
the last element opened, and the key actions. Solvability is verified, not assumed:
:func:`verify_web_tasks` replays the gold steps in a fresh browser episode, checks
the criteria, and keeps the replay as the task's gold trajectory.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import quote_plus, urlparse

import numpy as np
from playwright.async_api import Error as PlaywrightError

from ...browser import EnvironmentUnavailable
from ...environment.canonical import canonical
from ...evaluate.checks import answer_visible, check_criteria
from ...environment.episodes import BrowserEpisode
from ...environment.gold import run_gold_steps
from ...environment.locate import explain
from ...environment.manager import EpisodeManager
from ...environment.trajectory import load_trajectory
from ...errors import TaskloomError
from ...graph.model import KnowledgeGraph, Node
from ...tasks.model import Difficulty, GoldStep, Provenance, SuccessCriterion, Task
from ..filter.stages import Dropped, GenerationReport

__all__ = ["PathEdge", "Verdict", "Replayer", "task_from_path", "verify_web_tasks", "replay_web_task", "keep_verified", "search_terms"]

PathEdge = tuple[str, str, str]
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")
_STOP = {"with", "from", "that", "this", "their", "about", "into", "over", "under", "after", "before", "where", "which"}


def search_terms(kg: KnowledgeGraph) -> list[str]:
    """Words worth searching for: the first long word of each content item's text, in graph order."""
    terms: list[str] = []
    for node in kg.nodes("business_data"):
        for word in _WORD.findall(node.text):
            if word.lower() not in _STOP:
                if word not in terms:
                    terms.append(word)
                break
    return terms


def _name(node: Node) -> str:
    return str(node.attrs.get("name") or node.text or node.type.value).strip()[:80]


def _page_url(kg: KnowledgeGraph, node_id: str) -> str | None:
    node = kg.node(node_id)
    return str(node.attrs["url"]) if node.type.value == "page" else None


def _url_pattern(url: str) -> str:
    """A regex for the URL's path and query; a folder path also matches its ``index.html`` (servers answer both)."""
    parts = urlparse(url)
    query = re.escape(f"?{parts.query}") if parts.query else ""
    path = parts.path or "/"
    if path.endswith("/"):
        return re.escape(path) + "(?:index\\.html)?" + query + "$"
    if path.endswith("/index.html"):
        return re.escape(path[: -len("index.html")]) + "(?:index\\.html)?" + query + "$"
    return re.escape(path) + query + "$"


def _difficulty(steps: int) -> Difficulty:
    return "easy" if steps <= 1 else "medium" if steps <= 3 else "hard" if steps <= 5 else "expert"


class _Builder:
    """Accumulates steps, phrases and criteria while walking a path."""

    def __init__(self, kg: KnowledgeGraph, rng: np.random.Generator) -> None:
        self.kg = kg
        self.rng = rng
        self.steps: list[GoldStep] = []
        self.phrases: list[str] = []
        self.final_url: str | None = None
        self.opened: Node | None = None
        self.search: tuple[str | None, str] | None = None

    def click(self, node: Node, phrase: str) -> None:
        role = str(node.attrs.get("role") or node.type.value)
        self.steps.append(GoldStep(action="click", selector=node.attrs.get("selector"), node_id=node.id, canonical=canonical("click", text=_name(node), element=role)))
        self.phrases.append(phrase)

    def edge(self, u: Node, kind: str, v: Node) -> bool:
        """Turn one path edge into steps; False when the edge cannot be acted on."""
        if kind == "navigates_to" and u.type.value in ("link", "button"):
            if not u.attrs.get("selector"):
                return False
            self.click(u, f"open “{_name(u)}”")
            self.final_url, self.opened = _page_url(self.kg, v.id), None
        elif kind == "opens":
            self.click(u, f"open “{_name(u)}”" if u.type.value != "tab" else f"switch to the “{_name(u)}” tab")
            self.opened = v
        elif kind == "fills" and u.type.value in ("search_box", "input"):
            terms = search_terms(self.kg)
            if not terms:
                return False
            query = terms[int(self.rng.integers(len(terms)))]
            self.steps.append(GoldStep(action="type", selector=u.attrs.get("selector"), text=query, node_id=u.id, canonical=canonical("type", text=query, element=_name(u))))
            self.phrases.append(f"search for “{query}”")
            field = u.attrs.get("field_name")
            self.final_url = None
            self.search = (field, query)
        elif kind == "submits":
            if not self.steps or self.steps[-1].action != "type":
                return False
            self.steps[-1].submit = True
            self.final_url = None
        elif kind == "filters" and u.type.value == "filter":
            options = [o for o in u.attrs.get("options") or [] if not o.lower().startswith(("all", "any"))]
            if not options:
                return False
            option = options[int(self.rng.integers(len(options)))]
            self.steps.append(GoldStep(action="select_option", selector=u.attrs.get("selector"), text=option, node_id=u.id, canonical=canonical("select", option=option, element=_name(u))))
            self.phrases.append(f"filter by {_name(u)} “{option}”")
            self.final_url = None
        elif kind == "contains":
            pass
        else:
            return False
        return True

    def criteria(self) -> list[SuccessCriterion]:
        found: list[SuccessCriterion] = []
        if self.final_url:
            found.append(SuccessCriterion(kind="url_matches", value=_url_pattern(self.final_url)))
        elif self.search is not None and self.search[0]:
            field, query = str(self.search[0]), self.search[1]
            found.append(SuccessCriterion(kind="url_matches", value=f"[?&]{re.escape(field)}={re.escape(quote_plus(query))}"))
        if self.opened is not None and self.opened.attrs.get("selector"):
            found.append(SuccessCriterion(kind="element_state", value=str(self.opened.attrs["selector"]), state="visible"))
        for step in self.steps:
            if step.action == "select_option" and step.selector:
                found.append(SuccessCriterion(kind="element_state", value=step.selector, state=f"label={step.text}"))
        if not found and self.steps and self.steps[-1].canonical:
            found.append(SuccessCriterion(kind="action_performed", value=self.steps[-1].canonical))
        return found


_ACTED = ("navigates_to", "opens", "fills", "filters")


def _start_page(kg: KnowledgeGraph, edges: Sequence[PathEdge]) -> str | None:
    """The page the agent starts on: where the first acted-on element was seen."""
    first = next((u for u, kind, _ in edges if kind in _ACTED), None)
    if first is None:
        return None
    if kg.node_type(first) == "page":
        return first
    url = kg.node(first).attrs.get("page_url")
    return next((n.id for n in kg.nodes("page") if n.attrs.get("url") == url), None)


def task_from_path(kg: KnowledgeGraph, edges: Sequence[PathEdge], pattern_id: str, task_type: str, seed: int, start_page: str | None = None) -> Task | None:
    """A candidate web task for one matched path, or None when the path cannot be acted on.

    ``start_page`` is the page node the agent starts on; by default the page where
    the path's first acted-on element was seen (``contains`` edges take no action).
    """
    rng = np.random.default_rng([seed, int(hashlib.sha1("|".join(f"{u}>{k}>{v}" for u, k, v in edges).encode()).hexdigest()[:8], 16)])
    start = start_page or _start_page(kg, edges)
    if start is None:
        return None
    builder = _Builder(kg, rng)
    here = str(kg.node(start).attrs["url"])
    for u, kind, v in edges:
        if kind == "contains":
            continue  # structure only: no action, and the path may pass through shared containers
        actor = kg.node(u)
        if actor.type.value != "page" and kind in _ACTED and here not in (actor.attrs.get("pages") or []):
            return None  # the element was never seen on the page the agent is on at this step
        if not builder.edge(actor, kind, kg.node(v)):
            return None
        if kind == "navigates_to" and kg.node_type(v) == "page":
            here = str(kg.node(v).attrs["url"])
    if not builder.steps:
        return None
    start_node = kg.node(start)
    url = str(start_node.attrs["url"])
    title = str(start_node.attrs.get("title") or url)
    instruction = f"On the page “{title}”, " + ", then ".join(builder.phrases) + "."
    digest = hashlib.sha1(f"{kg.id}|{pattern_id}|{url}|{[s.model_dump_json() for s in builder.steps]}".encode()).hexdigest()[:12]
    return Task(
        id=f"web-{digest}",
        kind="web",
        type=task_type,
        difficulty=_difficulty(len(builder.steps)),
        instruction=instruction,
        start_url=url,
        allowed_domains=list(kg.meta.stats.get("allowed_domains") or [urlparse(url).hostname or ""]),
        gold_steps=builder.steps,
        success=builder.criteria(),
        reasoning_path=[tuple(e) for e in edges],  # type: ignore[misc]
        provenance=Provenance(graph_id=kg.id, template=pattern_id, generator="template", model="none", seed=seed),
    )


#: A task after its replay: the task (its gold trajectory and replay quality filled in when kept) and why it was dropped (None: kept).
Verdict = tuple[Task, Dropped | None]
#: Replays tasks somewhere else (e.g. on a Ray cluster: :mod:`taskloom.harness.ray_generation`); verdicts in input order.
Replayer = Callable[[list[Task]], Awaitable[list[Verdict]]]


async def verify_web_tasks(tasks: list[Task], episodes: EpisodeManager | None, report: GenerationReport, replay: Replayer | None = None) -> list[Task]:
    """Replay each task's gold steps in a fresh episode; keep the tasks that are not no-ops and whose criteria all hold.

    Stages, each dropping with its reason in ``report``: ``no_op`` (the task's state
    criteria all hold already on its start page, before any step), ``replay`` (a gold
    step failed or a criterion does not hold afterwards), ``answer_visible`` (the gold
    answer is not shown on the final page; skipped when ``quality["answer_visible"]``
    is False, e.g. a computed count, or for yes/no answers).

    The replays run in ``episodes``, ``limits.replay_concurrency`` at once (one at a time on an
    application with a state reset), or in ``replay`` when given; the verdicts come back in input
    order, so the tasks kept are the same either way.
    """
    if replay is not None:
        verdicts = await replay(tasks)
    elif episodes is None:
        raise TaskloomError("verify_web_tasks needs an episode manager or a replayer")
    else:
        verdicts = await replay_all(tasks, episodes)
    return keep_verified(verdicts, report)


async def replay_all(tasks: list[Task], episodes: EpisodeManager) -> list[Verdict]:
    """Every task's :func:`replay_web_task` verdict, in input order, up to ``replay_concurrency`` at once.

    A replay that finds no browser at all stops the others (a task group) and raises.
    """
    at_once = 1 if episodes.state_reset is not None else episodes.limits.replay_concurrency
    if at_once == 1 or len(tasks) < 2:
        return [await replay_web_task(task, episodes) for task in tasks]
    gate = asyncio.Semaphore(at_once)

    async def one(task: Task) -> Verdict:
        async with gate:
            return await replay_web_task(task, episodes)

    try:
        async with asyncio.TaskGroup() as group:
            running = [group.create_task(one(task)) for task in tasks]
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None  # what a replay one at a time would have raised, not "unhandled errors in a TaskGroup"
    return [r.result() for r in running]


async def replay_web_task(task: Task, episodes: EpisodeManager) -> Verdict:
    """One task's verification (see :func:`verify_web_tasks`); a kept task gets its gold trajectory and replay quality.

    Whatever goes wrong in one candidate's replay drops that candidate with its reason,
    never the batch: a gold step Taskloom refused, a start page that did not load in
    time, any Playwright failure, or a replay that ran past ``episodes.limits.replay_timeout``
    seconds (a page that hangs).
    """
    try:
        episode, _ = await episodes.start(url=task.start_url, task_id=None, agent="gold-replay")
    except EnvironmentUnavailable:
        raise  # no browser at all: every candidate would fail alike, so generation stops with the reason
    except (TaskloomError, PlaywrightError) as exc:
        return task, Dropped(task_id=task.id, stage="replay", reason=f"the start page could not be opened: {_why(exc)}")
    limit = episodes.limits.replay_timeout
    try:
        async with asyncio.timeout(limit):
            stage, reason = await _replay(task, episode)
    except TimeoutError:
        stage, reason = "replay", f"the replay did not finish within {limit:g} s (the replay_timeout setting): a page hung or is too slow"
    except TaskloomError as exc:
        stage, reason = "replay", f"a gold step failed: {exc}"
    except PlaywrightError as exc:
        stage, reason = "replay", f"the browser failed during the replay: {explain(exc)}"
    try:
        path = await episodes.close(episode.id, status="closed" if reason is None else "error", reason=reason)
    except (TaskloomError, PlaywrightError) as exc:  # a browser that went away while closing: this candidate is lost, not the batch
        stage, reason = stage if reason is not None else "replay", reason or f"the replay's episode could not be closed: {_why(exc)}"
    if reason is not None:
        return task, Dropped(task_id=task.id, stage=stage, reason=reason)
    task.gold_trajectory = str(path)
    task.quality["replay"] = {"ok": True, "criteria": len(task.success)}
    if task.gold_answer and task.quality.get("answer_visible") is not False and task.answer_kind != "boolean":
        task.quality["answer_visible"] = True
    return task, None


async def _replay(task: Task, episode: BrowserEpisode) -> tuple[str, str | None]:
    """The stage and reason that drop ``task`` after replaying it in ``episode`` (reason None: it passed)."""
    if episode.start_error is not None:
        return "replay", f"the start page did not load: {episode.start_error}"
    at_start = [c for c in task.success if c.on_state]
    if at_start and all(r.ok for r in await check_criteria(episode.page, at_start, [], grace_s=0)):
        return "no_op", "the success criteria already hold on the start page: " + "; ".join(f"{c.kind} {c.value!r}" for c in at_start)
    await run_gold_steps(episode, task.gold_steps)
    results = await check_criteria(episode.page, task.success, load_trajectory(episode.recorder.path).actions)
    failed = [r for r in results if not r.ok]
    if failed:
        return "replay", "; ".join(f"{r.criterion.kind} {r.criterion.value!r}: {r.observed}" for r in failed)
    if task.gold_answer and task.quality.get("answer_visible") is not False and task.answer_kind != "boolean":
        shown, observed = await answer_visible(episode.page, task.gold_answer, task.answer_kind)
        if not shown:
            return "answer_visible", observed
    return "replay", None


def _why(exc: TaskloomError | PlaywrightError) -> str:
    """One readable line for a failure: Taskloom's own message, or Playwright's first line."""
    return str(exc) if isinstance(exc, TaskloomError) else explain(exc)


def keep_verified(verdicts: Sequence[Verdict], report: GenerationReport) -> list[Task]:
    """The kept tasks, in order; the dropped ones and the ``no_op`` and ``replay`` stage counts go into ``report``."""
    kept = [task for task, dropped in verdicts if dropped is None]
    report.dropped.extend(dropped for _, dropped in verdicts if dropped is not None)
    no_ops = sum(dropped is not None and dropped.stage == "no_op" for _, dropped in verdicts)
    report.stage("no_op", len(verdicts), len(verdicts) - no_ops)
    report.stage("replay", len(verdicts) - no_ops, len(kept))
    return kept

