"""Task DAGs (OmniBench): verified short tasks become subtasks with typed resources, composed by intent.

**Resources.** A web subtask's *input* is the page it starts on; a page is a resource
by its URL (fragment dropped, ``…/index.html`` read as ``…/``), typed by
:func:`page_resource`: ``detail_page`` when the query names one item (``id``,
``item``, ``book``, ``*_id`` …), ``result_list`` when it has any other query or the
path is a listing (``search``, ``results``, ``catalogue`` …), else ``page_state``.
Its *outputs*, read from the gold steps and the verified replay's URLs: each page it
reaches other than its start (link follows → ``detail_page``/``result_list``/…), a
``search_query`` for text typed into a search box and submitted, a ``form_data``
``field=value`` for other typing, a ``filter_state`` ``field=option`` for a select,
and a ``page_state`` ``<url> <selector> visible`` for each element it opens. Text
typed into a search box is also an *input* ``document_fact`` (the normalised text),
which a document task whose gold answer is that text outputs; a document task's
input is its source ``file`` (the graph id). Subtask checks are the task's *state*
success criteria (page, URL, text, element state): no check requires a literal action,
so any route to the same outcome passes. A web task with no state criterion has no
outcome to check and is left out of the pool (counted in ``stats["no_outcome_check"]``
and listed in ``dropped`` with that reason).

**Edges.** ``a -> b`` exactly when an output of ``a`` equals an input of ``b`` (kind
and name).

**Intent grouping.** A composite has one goal, anchored on a *hub* resource that one
subtask produces and another consumes (e.g. one book's detail page). The group is
that producer, its producers walked back (at most ``(max_nodes - 2) // 2``), then
breadth-first every subtask consuming something the group produces, up to
``max_nodes``. A candidate is skipped when it would produce a resource the group
already produces (each resource has one producer, so a dependency is never an
either-or) or close a cycle. Every member is thus tied to the hub through resources;
the intent reads "work with “<hub page title>”". Hubs are tried in a seeded order;
producers and consumers are picked by the same seeded generator.

**Composite.** Subtasks are renamed ``s1…sn`` in (depth, pool) order. Gold steps are
the subtasks' gold steps in the first stored topological order, with a ``navigate``
to a subtask's start page whenever the previous one ended elsewhere, where it ended
is unknown, or it left something open (a dialog or menu may cover the page; the
reload closes it). Success criteria are the state criteria of the last web subtask in
that order: earlier subtasks' state is
transient (the agent navigates on), and the graph evaluator checks it per subtask
through the recorded probes. :func:`verify_composite` replays the gold steps with
every subtask's state checks probed after each action; a composite passes when its
criteria hold at the end and each subtask's state checks held together after some
action. Document subtasks add no steps and no browser checks.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import numpy as np
from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, Field

from ...environment.canonical import canonical
from ...evaluate.checks import answer_visible, check_criteria
from ...environment.episodes import ActionFailed
from ...environment.gold import run_gold_steps
from ...environment.manager import EpisodeManager, unfinished_subtask, watched_checks
from ...environment.trajectory import ActionRecord, load_trajectory
from ...errors import InputError, TaskloomError
from ...llm.client import LLM
from ...security.origin import origin_of
from ...tasks.dag import Dag
from ...tasks.model import Difficulty, GoldStep, Provenance, Resource, Subtask, Task, criterion_key
from .complexity import capabilities_of, capability_id, complexities, satisfies
from .consistency import synthesize, validate

__all__ = ["ComposeReport", "normalise_url", "page_resource", "section", "subtask_from_task", "resource_edges", "compose_dags", "verify_composite"]

Edge = tuple[str, str]
_ROUNDS = 3  # passes over the hubs; later passes pick other producers and consumers
_DETAIL_KEYS = {"id", "item", "pid", "product", "article", "book", "slug", "sku", "record"}
_LIST_STEMS = {"search", "results", "result", "list", "catalogue", "catalog", "browse", "category", "categories", "products"}
_QUOTED = re.compile(r"“([^”]+)”")


def normalise_url(url: str) -> str:
    """The URL without fragment, with ``…/index.html`` read as ``…/``."""
    parts = urlsplit(url)
    path = re.sub(r"/index\.html?$", "/", parts.path) or "/"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def page_resource(url: str) -> Resource:
    """The resource a page represents: ``detail_page``, ``result_list`` or ``page_state``, named by its URL."""
    norm = normalise_url(url)
    parts = urlsplit(norm)
    keys = [k.lower() for k, _ in parse_qsl(parts.query, keep_blank_values=True)]
    stem = parts.path.rstrip("/").rsplit("/", 1)[-1].split(".", 1)[0].lower()
    if any(k in _DETAIL_KEYS or k.endswith("_id") for k in keys):
        return Resource(kind="detail_page", name=norm)
    if keys or stem in _LIST_STEMS:
        return Resource(kind="result_list", name=norm)
    return Resource(kind="page_state", name=norm)


def section(url: str) -> str:
    """The site section a URL belongs to: the last path segment's stem, ``home`` for the root."""
    stem = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1].split(".", 1)[0].lower()
    return "home" if stem in ("", "index") else stem


def _field(canon: str | None, key: str) -> str:
    m = re.search(rf"{key}=(['\"])(.*?)\1(?:,|\))", canon or "")
    return m.group(2) if m else ""


def _fact(text: str) -> str:
    return " ".join(text.split()).lower()


@dataclass
class _Node:
    """A subtask in the pool, with where it starts and ends (None: unknown or not a page)."""

    subtask: Subtask
    task: Task
    start: str | None
    end: str | None
    key: str


def _replay(task: Task) -> list[ActionRecord] | None:
    """The verified replay's actions aligned with the gold steps (its first navigate dropped), if readable."""
    if not task.gold_trajectory or not Path(task.gold_trajectory).is_file():
        return None
    actions = [a for a in load_trajectory(Path(task.gold_trajectory)).actions if a.error is None][1:]
    return actions if len(actions) == len(task.gold_steps) else None


def _literal_end(task: Task, start: str) -> str | None:
    """The end page from a literal ``url_matches`` path pattern; the start when the task never navigates; else None."""
    patterns = [c.value for c in task.success if c.kind == "url_matches"]
    if not patterns:
        return None if any(s.action in ("navigate", "type", "select_option") for s in task.gold_steps) else start
    raw = patterns[0].removesuffix("$")
    tail = re.sub(r"\\(.)", r"\1", raw)
    if not tail.startswith("/") or re.search(r"(?<!\\)[\[\]()*+?|^{}]", raw.replace("\\?", "")):
        return None
    parts = urlsplit(start)
    return normalise_url(f"{parts.scheme}://{parts.netloc}{tail}")


def _node(task: Task) -> _Node:
    if task.kind == "document" and task.gold_answer:
        sub = Subtask(id=task.id, instruction=task.instruction, category="document", source_task=task.id,
                      inputs=[Resource(kind="file", name=task.provenance.graph_id)], outputs=[Resource(kind="document_fact", name=_fact(task.gold_answer or ""))])
        return _Node(sub, task, None, None, f"doc|{task.id}")
    if task.kind != "web" or not task.start_url or not task.gold_steps:
        raise InputError(f"task {task.id!r} is neither a web task with gold steps nor a document task with a gold answer; only those become subtasks")
    start = normalise_url(task.start_url)
    actions = _replay(task)
    inputs, outputs, checks = [page_resource(start)], list[Resource](), [c for c in task.success if c.on_state]
    here = start
    for i, step in enumerate(task.gold_steps):
        done = actions[i] if actions else None
        element = _field(step.canonical, "element")
        if step.action == "type":
            if step.submit or (step.node_id or "").startswith("search_box:"):
                outputs.append(Resource(kind="search_query", name=step.text or ""))
                inputs.append(Resource(kind="document_fact", name=_fact(step.text or "")))
            else:
                outputs.append(Resource(kind="form_data", name=f"{element}={step.text or ''}"))
        elif step.action == "select_option":
            outputs.append(Resource(kind="filter_state", name=f"{element}={step.text or ''}"))
        after = normalise_url(done.url_after) if done and done.url_after else normalise_url(step.text or "") if step.action == "navigate" else None
        if after and after != here:
            here = after
            if after != start:
                outputs.append(page_resource(after))
    end = here if actions else _literal_end(task, start)
    if not actions and end and end != start:
        outputs.append(page_resource(end))
    for c in task.success:
        if c.kind == "element_state" and c.state == "visible":
            outputs.append(Resource(kind="page_state", name=f"{end or start} {c.value} visible"))
    unique = {criterion_key(c): c for c in checks if c.value}
    sub = Subtask(id=task.id, instruction=task.instruction, category=section(start), source_task=task.id,
                  inputs=_dedupe(inputs), outputs=_dedupe(outputs), gold_steps=[s.model_copy() for s in task.gold_steps], checks=list(unique.values()))
    key = f"{start}|" + "|".join(f"{s.action}:{s.selector}:{s.text}:{s.submit}" for s in task.gold_steps)
    return _Node(sub, task, start, end, key)


def _dedupe(resources: list[Resource]) -> list[Resource]:
    return list({(r.kind, r.name): r for r in resources}.values())


def subtask_from_task(task: Task) -> Subtask:
    """A verified web task (or a document task) as a subtask with typed inputs, outputs and checks; its id is the task id."""
    return _node(task).subtask


def resource_edges(subtasks: Sequence[Subtask]) -> list[Edge]:
    """Every ``(a, b)`` where an output of ``a`` is an input of ``b`` (same kind and name), in subtask order."""
    wanted = [{(r.kind, r.name) for r in s.inputs} for s in subtasks]
    return [(a.id, b.id) for a in subtasks for j, b in enumerate(subtasks)
            if a.id != b.id and any((r.kind, r.name) in wanted[j] for r in a.outputs)]


def shaped(task: Task, seed: int) -> Task:
    """``task`` with its edges from its subtasks' resources, its valid orders (up to 50), complexity and capabilities."""
    task.dag = resource_edges(task.subtasks)
    task.orders, task.order_count = Dag([s.id for s in task.subtasks], task.dag).orders(limit=50, seed=seed)
    task.complexity = complexities(task)
    task.capabilities = capabilities_of(task.complexity)
    return task


class ComposeReport(BaseModel):
    """What :func:`compose_dags` built, what it dropped and why, and counts of each stage."""

    tasks: list[Task] = Field(default_factory=list)
    dropped: list[tuple[str, str]] = Field(default_factory=list, description="(composite id, reason).")
    stats: dict[str, Any] = Field(default_factory=dict)


class _Group:
    """Grows one intent group around a hub under the unique-producer and acyclicity rules."""

    def __init__(self, pool: list[_Node], max_nodes: int) -> None:
        self.pool, self.max_nodes = pool, max_nodes
        self.members: list[int] = []

    def produced(self) -> set[tuple[str, str]]:
        return {(r.kind, r.name) for i in self.members for r in self.pool[i].subtask.outputs}

    def add(self, index: int) -> bool:
        if index in self.members or len(self.members) >= self.max_nodes:
            return False
        if self.produced() & {(r.kind, r.name) for r in self.pool[index].subtask.outputs}:
            return False
        trial = [*self.members, index]
        subs = [self.pool[i].subtask for i in trial]
        try:
            Dag([s.id for s in subs], resource_edges(subs))
        except InputError:
            return False
        self.members = trial
        return True


def _grow(pool: list[_Node], hub: tuple[str, str], producers: dict[tuple[str, str], list[int]], consumers: dict[tuple[str, str], list[int]],
          rng: np.random.Generator, max_nodes: int) -> list[int]:
    group = _Group(pool, max_nodes)
    takers = [int(c) for c in rng.permutation(consumers[hub])]
    for p in rng.permutation(producers[hub]):
        group.members = []
        if group.add(int(p)) and any(group.add(c) for c in takers):
            break
    else:
        return []
    current: int | None = group.members[0]
    for _ in range((max_nodes - 2) // 2):
        if current is None:
            break
        needs = [(r.kind, r.name) for r in pool[current].subtask.inputs if (r.kind, r.name) in producers]
        options = [int(i) for key in needs for i in rng.permutation(producers[key])]
        current = next((i for i in options if group.add(i)), None)
    k = 0
    while k < len(group.members):
        outs = sorted({(r.kind, r.name) for r in pool[group.members[k]].subtask.outputs})
        for c in rng.permutation(sorted({i for key in outs for i in consumers.get(key, [])})):
            group.add(int(c))
        k += 1
    return group.members


def _difficulty(nodes: int) -> Difficulty:
    return "easy" if nodes <= 2 else "medium" if nodes <= 4 else "hard" if nodes <= 6 else "expert"


def _intent(pool: list[_Node], members: list[int], hub: tuple[str, str]) -> str:
    """'work with “X”': X is the last quoted value of the hub's producer (the link, query or option that made it), else the hub's name."""
    producer = next(pool[i] for i in members if any((r.kind, r.name) == hub for r in pool[i].subtask.outputs))
    values = _QUOTED.findall(str(producer.task.quality.get("template_instruction") or producer.task.instruction))
    return f"work with “{values[-1] if values else hub[1]}”"


def _allowed(sources: list[Task]) -> list[str]:
    """The sources' allowed domains, plus each source's start origin when they span more than one origin.

    The browser fence is by origin: a task graph whose subtasks start on two sites must
    name both origins, or the second site's pages would be refused.
    """
    domains = {d for t in sources for d in t.allowed_domains}
    origins = {str(o) for t in sources if t.start_url and (o := origin_of(t.start_url)) is not None}
    return sorted(domains | origins) if len(origins) > 1 else sorted(domains)


def _build(pool: list[_Node], members: list[int], hub: tuple[str, str], seed: int) -> Task:
    """The composite task of one group (instruction and checks of consistency are added by the caller)."""
    subs = [pool[i].subtask for i in members]
    tmp = Dag([s.id for s in subs], resource_edges(subs))
    ranked = sorted(members, key=lambda i: (tmp.depth(pool[i].subtask.id), i))
    ids = {i: f"s{n + 1}" for n, i in enumerate(ranked)}
    intent = _intent(pool, members, hub)
    subtasks = [pool[i].subtask.model_copy(update={"id": ids[i], "intent": intent}) for i in ranked]
    edges = resource_edges(subtasks)
    orders, count = Dag([s.id for s in subtasks], edges).orders(limit=50, seed=seed)
    node_of = {ids[i]: pool[i] for i in ranked}
    steps: list[GoldStep] = []
    web = [node_of[s] for s in orders[0] if node_of[s].start]
    here, covered = (web[0].start if web else None), False
    for node in web:
        if node.start != here or covered:
            steps.append(GoldStep(action="navigate", text=node.start, canonical=canonical("navigate", url=node.start)))
        steps.extend(s.model_copy() for s in node.subtask.gold_steps)
        here = node.end
        covered = any(r.kind == "page_state" and r.name.endswith(" visible") for r in node.subtask.outputs)
    checks = [c for c in web[-1].task.success if c.on_state] if web else []
    success = list({criterion_key(c): c for c in checks}.values())
    sources = [pool[i].task for i in ranked]
    digest = hashlib.sha1(repr((sorted(t.id for t in sources), sorted((node_of[a].task.id, node_of[b].task.id) for a, b in edges))).encode()).hexdigest()[:12]
    graph_ids = sorted({t.provenance.graph_id for t in sources})
    return Task(
        id=f"dag-{digest}", kind="composite", type="task_graph", difficulty=_difficulty(len(subtasks)), instruction="",
        start_url=web[0].task.start_url if web else None, allowed_domains=_allowed(sources),
        gold_steps=steps, success=success, subtasks=subtasks, dag=edges, orders=orders, order_count=count,
        provenance=Provenance(graph_id="+".join(graph_ids), template=f"{hub[0]}:{hub[1]}", generator="compose-dag", model="none", seed=seed),
        quality={"intent": intent, "hub": {"kind": hub[0], "name": hub[1]}},
    )


async def _consistent(task: Task, llm: LLM | None, stats: dict[str, int]) -> str | None:
    """Write the instruction; on a mismatch, one explicit re-synthesis; the reason when both fail."""
    reason: str | None = None
    for style in ("natural", "explicit"):
        task.instruction = synthesize(task.subtasks, task.dag, task.orders, style=style, intent=str(task.quality["intent"]))
        ok, inferred, reason = await validate(task, llm)
        if ok:
            by = llm.name if llm is not None and llm.available else "rules"
            task.quality["consistency"] = {"ok": True, "style": style, "inferred": [list(e) for e in inferred], "by": by}
            if style == "explicit":
                stats["resynthesized"] += 1
            return None
    return f"consistency: {reason}"


async def compose_dags(
    tasks: list[Task],
    *,
    count: int = 5,
    seed: int = 0,
    min_nodes: int = 2,
    max_nodes: int = 8,
    capability: str | None = None,
    episodes: EpisodeManager | None = None,
    llm: LLM | None = None,
) -> ComposeReport:
    """Compose up to ``count`` task DAGs from verified tasks; the same tasks and seed give the same DAGs.

    Web tasks need gold steps (a verified replay in ``gold_trajectory`` makes their
    resources exact); document tasks need a gold answer; other tasks are counted as
    ``unusable``. Groups smaller than ``min_nodes``, repeated, or outside
    ``capability``'s test set are skipped and counted in ``stats``; an instruction that
    fails consistency validation twice (natural, then explicit) or a failed replay
    (when ``episodes`` is given) drops the composite into ``dropped``. With an
    available ``llm`` the validator asks it to infer the DAG; otherwise the rules do.
    """
    if not 1 <= count <= 1000:
        raise InputError(f"count={count} is out of range; use 1 to 1000")
    if not 2 <= min_nodes <= max_nodes <= 12:
        raise InputError(f"need 2 <= min_nodes <= max_nodes <= 12, got min_nodes={min_nodes}, max_nodes={max_nodes}")
    wanted = capability_id(capability) if capability else None
    pool: list[_Node] = []
    seen: set[str] = set()
    usable = [t for t in tasks if (t.kind == "web" and t.start_url and t.gold_steps) or (t.kind == "document" and t.gold_answer)]
    report = ComposeReport()
    for task in sorted(usable, key=lambda t: t.id):
        node = _node(task)
        if task.kind == "web" and not node.subtask.checks:
            report.dropped.append((task.id, "no outcome check: its success criteria only name a literal action"))
            continue
        if node.key not in seen:
            seen.add(node.key)
            pool.append(node)
    producers: dict[tuple[str, str], list[int]] = {}
    consumers: dict[tuple[str, str], list[int]] = {}
    for i, node in enumerate(pool):
        for r in node.subtask.outputs:
            producers.setdefault((r.kind, r.name), []).append(i)
        for r in node.subtask.inputs:
            consumers.setdefault((r.kind, r.name), []).append(i)
    hubs = sorted(k for k in producers if k in consumers and any(c not in producers[k] for c in consumers[k]))
    rng = np.random.default_rng(seed)
    stats = dict.fromkeys(("groups", "too_small", "duplicate", "capability_mismatch", "resynthesized", "inconsistent", "replay_failed"), 0)
    stats["no_outcome_check"] = len(report.dropped)
    built: set[tuple[int, ...]] = set()
    attempts = [int(h) for _ in range(_ROUNDS) for h in rng.permutation(len(hubs))]
    for h in attempts:
        if len(report.tasks) >= count:
            break
        members = _grow(pool, hubs[h], producers, consumers, rng, max_nodes)
        stats["groups"] += 1
        if len(members) < min_nodes:
            stats["too_small"] += 1
            continue
        if tuple(sorted(members)) in built:
            stats["duplicate"] += 1
            continue
        built.add(tuple(sorted(members)))
        task = _build(pool, members, hubs[h], seed)
        task.complexity = complexities(task)
        task.capabilities = capabilities_of(task.complexity)
        if wanted and not satisfies(task.complexity, wanted):
            stats["capability_mismatch"] += 1
            continue
        reason = await _consistent(task, llm, stats)
        if reason is None and episodes is not None:
            replay = await verify_composite(task, episodes)
            reason = None if replay is None else f"replay: {replay}"
            stats["replay_failed"] += replay is not None
        elif reason is not None:
            stats["inconsistent"] += 1
        if reason is not None:
            report.dropped.append((task.id, reason))
            continue
        if llm is not None and llm.available:
            task.provenance = task.provenance.model_copy(update={"model": llm.name})
        report.tasks.append(task)
    report.stats = {"tasks": len(tasks), "unusable": len(tasks) - len(usable), "pool": len(pool), "hubs": len(hubs), **stats, "kept": len(report.tasks)}
    return report


async def verify_composite(task: Task, episodes: EpisodeManager) -> str | None:
    """Replay the gold steps in a fresh episode; None when every criterion holds, every subtask completed and a visible answer is shown, else why not.

    On success the replay's trajectory path is kept in ``task.gold_trajectory``.
    """
    if not task.start_url:
        return "the composite has no start URL (no web subtask)"
    episode, _ = await episodes.start(url=task.start_url, agent="gold-replay", allowed_domains=task.allowed_domains or None)
    episode.task, episode.watch = task, watched_checks(task)
    reason: str | None = None
    try:
        await run_gold_steps(episode, task.gold_steps)
        actions = load_trajectory(episode.recorder.path).actions
        failed = [r for r in await check_criteria(episode.page, task.success, actions) if not r.ok]
        reason = "; ".join(f"{r.criterion.kind} {r.criterion.value!r}: {r.observed}" for r in failed) or unfinished_subtask(task, actions)
        if reason is None and task.gold_answer and task.quality.get("answer_visible"):
            shown, observed = await answer_visible(episode.page, task.gold_answer, task.answer_kind)
            reason = None if shown else observed
    except (ActionFailed, TaskloomError) as exc:
        reason = f"a gold step failed: {exc}"
    except PlaywrightError as exc:  # the browser gave up on the page (a snapshot or a check over its limit): this composite is dropped, the rest go on
        reason = f"the browser failed on the replay: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    path = await episodes.close(episode.id, status="closed" if reason is None else "error", reason=reason)
    if reason is None:
        task.gold_trajectory = str(path)
        task.quality["replay"] = {"ok": True, "criteria": len(task.success), "steps": len(task.gold_steps)}
    return reason
