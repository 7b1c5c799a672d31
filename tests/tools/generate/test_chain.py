"""Chained long tasks (AgentSynth) on the example site: grown in a real browser, every level replayed to success."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
import openai_double  # noqa: E402  (test double: a local OpenAI-compatible server on 127.0.0.1)

from taskloom.tools.evaluate.checks import check_criteria  # noqa: E402
from taskloom.tools.environment.gold import run_gold_step, run_gold_steps  # noqa: E402
from taskloom.tools.environment.manager import EpisodeManager, watched_checks  # noqa: E402
from taskloom.tools.evaluate.progress import evaluate_progress  # noqa: E402
from taskloom.tools.runtime import Runtime  # noqa: E402
from taskloom.tools.environment.site import serve_static  # noqa: E402
from taskloom.tools.environment.trajectory import load_trajectory  # noqa: E402
from taskloom.tools.generate.compose.chain import ChainReport, ChainRun, FollowUps, Proposal, build_chains  # noqa: E402
from taskloom.tools.generate.compose.levels import level_difficulty, level_stats, quoted_values, split_instruction, template_summary  # noqa: E402
from taskloom.tools.generate.filter.stages import GenerationReport  # noqa: E402
from taskloom.tools.generate.web.paths import task_from_path, verify_web_tasks  # noqa: E402
from taskloom.tools.errors import InputError  # noqa: E402
from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph  # noqa: E402
from taskloom.tools.llm.client import OpenAILLM  # noqa: E402
from taskloom.tools.settings import Settings  # noqa: E402
from taskloom.tools.tasks.model import GoldStep, Provenance, SuccessCriterion, Task, criterion_key  # noqa: E402
from taskloom.tools.workspace import Workspace  # noqa: E402

pytestmark = pytest.mark.slow  # the slow tier: `make test` runs it, `make test-fast` leaves it out

integration = pytest.mark.integration
T = TypeVar("T")


# ---------------------------------------------------------------------------------------- pure parts


def test_template_summary_orders_clauses_and_keeps_the_start_page() -> None:
    assert template_summary("Home", ["search for “sea”"]) == "On the page “Home”, search for “sea”."
    assert template_summary("Home", ["a", "b"]) == "On the page “Home”, first a, and then b."
    assert template_summary(None, ["a", "b", "c"]) == "First a, then b, and finally c."
    assert split_instruction("On the page “Search – X”, open “Genres”, then open “Poetry”.") == ("Search – X", "open “Genres”, then open “Poetry”")
    assert split_instruction("Open the “Details” tab.") == (None, "open the “Details” tab")
    assert quoted_values("open “A”, then “B”, then “A” again") == ["A", "B"]


def test_difficulty_and_level_stats_are_computed_by_hand() -> None:
    assert [level_difficulty(k) for k in range(1, 7)] == ["easy", "medium", "medium", "hard", "hard", "expert"]
    stats = level_stats([(2, 3, 3, 2), (1, 1, 2, 1), (2, 5, 4, 3), (1, 2, 2, 2)])
    assert [(s.level, s.tasks, s.mean_steps, s.mean_pages, s.mean_element_types) for s in stats] == [(1, 2, 1.5, 2.0, 1.5), (2, 2, 4.0, 3.5, 2.5)]


def test_bad_arguments_and_non_web_seeds_are_reported_without_a_browser(tmp_path: Path) -> None:
    kg = KnowledgeGraph(GraphMeta(id="g", kind="web"))
    document = Task(id="doc-1", kind="document", type="extraction", instruction="Q?", gold_answer="A", provenance=Provenance(graph_id="g", generator="template"))

    async def go() -> ChainReport:
        async with Runtime(Settings(workspace=tmp_path, embedder="hashing"), screenshots=False) as runtime:  # Chromium launches only when an episode starts; none does here
            episodes = runtime.episodes
            with pytest.raises(InputError, match="levels=0"):
                await build_chains([document], kg, episodes, levels=0)
            with pytest.raises(InputError, match="retries=-1"):
                await build_chains([document], kg, episodes, retries=-1)
            return await build_chains([document], kg, episodes)

    report = asyncio.run(go())
    assert report.tasks == [] and report.chains == [] and report.levels == []
    assert [(d.task_id, d.stage) for d in report.dropped] == [("doc-1", "seed")] and "web task" in report.dropped[0].reason


# ---------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def site_graph(tmp_path_factory: pytest.TempPathFactory, crawl_site: Callable[..., str]) -> Iterator[tuple[KnowledgeGraph, Path]]:
    workspace = tmp_path_factory.mktemp("ws")
    runtime = Runtime(Settings(workspace=workspace, embedder="hashing", crawl_delay=0))
    with serve_static() as site:
        graph_id = crawl_site(runtime, site.url)
        yield runtime.graphs.load(graph_id), workspace


def _in_browser(workspace: Path, work: Callable[[EpisodeManager], Awaitable[T]]) -> T:
    ws = Workspace(workspace)

    async def go() -> T:
        async with Runtime(Settings(workspace=ws.root, embedder="hashing"), screenshots=False) as runtime:
            return await work(runtime.episodes)

    return asyncio.run(go())


def _search_seed(kg: KnowledgeGraph) -> Task:
    fills = next((e.source, "fills", e.target) for e in kg.edges("fills") if kg.node(e.source).attrs.get("name") == "Search the catalogue")
    submits = next((fills[2], "submits", e.target) for e in kg.edges("submits") if e.source == fills[2])
    task = task_from_path(kg, [fills, submits], "search", "search", seed=1)
    assert task is not None
    return task


@pytest.fixture(scope="module")
def seeds(site_graph: tuple[KnowledgeGraph, Path]) -> list[Task]:
    kg, workspace = site_graph
    report = GenerationReport()
    kept = _in_browser(workspace, lambda episodes: verify_web_tasks([_search_seed(kg)], episodes, report))
    assert len(kept) == 1, report.dropped
    return kept


@pytest.fixture(scope="module")
def chains(site_graph: tuple[KnowledgeGraph, Path], seeds: list[Task]) -> ChainReport:
    kg, workspace = site_graph
    return _in_browser(workspace, lambda episodes: build_chains(seeds, kg, episodes, levels=6, retries=3, seed=0))


# ---------------------------------------------------------------------------------------- chains


@integration
def test_the_chain_reaches_level_six_and_every_level_replays_to_success(site_graph: tuple[KnowledgeGraph, Path], seeds: list[Task], chains: ChainReport) -> None:
    _, workspace = site_graph
    assert [(c.seed_task, c.reached) for c in chains.chains] == [(seeds[0].id, 6)], chains.chains
    assert [t.level for t in chains.tasks] == [1, 2, 3, 4, 5, 6], chains.dropped

    async def replay_all(episodes: EpisodeManager) -> list[list[str]]:
        gate = asyncio.Semaphore(3)

        async def replay(task: Task) -> list[str]:
            async with gate:
                episode, _ = await episodes.start(url=task.start_url, agent="test-replay")
                await run_gold_steps(episode, task.gold_steps)
                await episode.page.wait_for_load_state("networkidle")
                results = await check_criteria(episode.page, task.success, load_trajectory(episode.recorder.path).actions)
                await episodes.close(episode.id)
                return [f"{r.criterion.kind} {r.criterion.value}: {r.observed}" for r in results if not r.ok]

        return list(await asyncio.gather(*(replay(t) for t in chains.tasks)))

    assert _in_browser(workspace, replay_all) == [[]] * 6
    for task in chains.tasks:
        trajectory = load_trajectory(Path(task.gold_trajectory or ""))
        assert len(trajectory.actions) == 1 + len(task.gold_steps) and all(a.error is None for a in trajectory.actions)
        assert trajectory.closed is not None and trajectory.closed.status == "closed"


@integration
def test_each_level_is_a_composite_of_its_verified_subtasks(seeds: list[Task], chains: ChainReport) -> None:
    top = chains.tasks[-1]
    for task in chains.tasks:
        k = task.level or 0
        assert task.kind == "composite" and task.type == "chained" and len(task.subtasks) == k
        assert task.difficulty == level_difficulty(k) and task.start_url == seeds[0].start_url
        assert task.provenance.generator == "compose-chain" and task.provenance.template == seeds[0].id
        assert task.dag == [(f"s{i}", f"s{i + 1}") for i in range(1, k)]
        assert task.gold_steps == [s for sub in task.subtasks for s in sub.gold_steps]
        # a level extends the level below it: same subtasks, one more at the end
        assert [s.model_dump() for s in task.subtasks] == [s.model_dump() for s in top.subtasks[:k]]
        last = {criterion_key(c) for c in task.subtasks[-1].checks}
        assert last <= {criterion_key(c) for c in task.success}
    assert top.subtasks[0].source_task == seeds[0].id and top.subtasks[0].checks == [c for c in seeds[0].success if c.on_state]
    signatures = [tuple((s.action, s.selector, s.text) for s in sub.gold_steps) for sub in top.subtasks]
    assert len(set(signatures)) == len(signatures)  # no subtask is proposed twice in a chain


@integration
def test_no_criterion_names_a_literal_action_and_a_newcomer_route_passes(site_graph: tuple[KnowledgeGraph, Path], chains: ChainReport) -> None:
    """Every criterion is an outcome; a route that reaches each subtask's page by URL instead of the gold clicks passes and completes every subtask."""
    _, workspace = site_graph
    for task in chains.tasks:
        assert all(c.on_state for c in task.success) and all(c.on_state for s in task.subtasks for c in s.checks), task.id

    async def newcomer(episodes: EpisodeManager) -> list[tuple[str, list[str], float, int]]:
        out = []
        for task in (chains.tasks[1], chains.tasks[-1]):  # level 2 (the case) and the deepest level
            gold = load_trajectory(Path(task.gold_trajectory or "")).actions  # action 0 is the start navigation
            episode, _ = await episodes.start(url=task.start_url, agent="newcomer")
            episode.task, episode.watch = task, watched_checks(task)
            done, navigated = 0, 0
            for sub in task.subtasks:
                done += len(sub.gold_steps)
                if all(c.kind in ("url_matches", "page_is", "text_present", "text_absent") for c in sub.checks):
                    await run_gold_step(episode, GoldStep(action="navigate", text=gold[done].url_after or ""))  # not the gold click: its page
                    navigated += 1
                else:  # an opened element is reached by its own steps
                    await run_gold_steps(episode, sub.gold_steps)
            await episode.page.wait_for_load_state("networkidle")
            actions = load_trajectory(episode.recorder.path).actions
            failed = [f"{r.criterion.kind} {r.criterion.value}: {r.observed}" for r in await check_criteria(episode.page, task.success, actions) if not r.ok]
            path = await episodes.close(episode.id)
            out.append((task.id, failed, evaluate_progress(task, load_trajectory(path)).cr, navigated))
        return out

    routes = _in_browser(workspace, newcomer)
    assert [(t, f, cr) for t, f, cr, _ in routes] == [(t.id, [], 1.0) for t in (chains.tasks[1], chains.tasks[-1])]
    assert sum(n for *_, n in routes) >= len(routes)  # the route really differs from the gold: pages reached by URL, not by clicks


@integration
def test_the_instruction_keeps_every_subtask_value(chains: ChainReport) -> None:
    for task in chains.tasks:
        values = [v for sub in task.subtasks for v in quoted_values(sub.instruction)]
        assert values and all(v in task.instruction for v in values), (task.instruction, values)
        assert task.quality["summary"]["by"] == "template"
    assert chains.tasks[0].instruction == chains.tasks[0].subtasks[0].instruction
    assert " first " in chains.tasks[1].instruction and ", and then " in chains.tasks[1].instruction
    assert ", and finally " in chains.tasks[-1].instruction


@integration
def test_per_level_statistics_match_the_tasks_and_grow_with_the_level(chains: ChainReport) -> None:
    assert [s.level for s in chains.levels] == [1, 2, 3, 4, 5, 6] and all(s.tasks == 1 for s in chains.levels)
    assert [s.mean_steps for s in chains.levels] == [float(len(t.gold_steps)) for t in chains.tasks]
    steps = [s.mean_steps for s in chains.levels]
    assert steps == sorted(steps) and steps[0] == 1.0 and steps[-1] >= 6
    assert [s.mean_pages for s in chains.levels] == sorted(s.mean_pages for s in chains.levels)
    assert chains.levels[0].mean_element_types == 1.0 and chains.levels[-1].mean_element_types >= 3


@integration
def test_same_seed_same_chain(site_graph: tuple[KnowledgeGraph, Path], seeds: list[Task], chains: ChainReport) -> None:
    kg, workspace = site_graph
    again = _in_browser(workspace, lambda episodes: build_chains(seeds, kg, episodes, levels=2, retries=3, seed=0))
    assert [(t.id, t.instruction, t.gold_steps) for t in again.tasks] == [(t.id, t.instruction, t.gold_steps) for t in chains.tasks[:2]]


@integration
def test_a_failed_proposal_is_recorded_revised_and_the_state_rebuilt(site_graph: tuple[KnowledgeGraph, Path], seeds: list[Task]) -> None:
    kg, workspace = site_graph
    follow = FollowUps(kg, seed=0)

    async def work(episodes: EpisodeManager) -> tuple[str | None, ChainRun, Proposal, list[str], list[str]]:
        run = ChainRun(episodes, follow, seeds[0], seed=0)
        assert await run.open() is None
        urls, ids = [run.live.page.url], [run.live.id]
        page = follow.page_for(urls[0])
        assert page is not None
        menu = next(p for p in follow.candidates(page) if p.task.provenance.template == "menu_navigation")
        impossible = [SuccessCriterion(kind="text_present", value="This text is on no page of the site")]
        stopped = await run.extend([replace(menu, task=menu.task.model_copy(update={"success": impossible}))], retries=1)
        urls.append(run.live.page.url)
        ids.append(run.live.id)
        await run.close()
        return stopped, run, menu, urls, ids

    stopped, run, menu, urls, ids = _in_browser(workspace, work)
    assert len(menu.task.gold_steps) == 2 and stopped is None and len(run.links) == 2
    assert [(f.level, f.source) for f in run.failed] == [(2, "template")] and "text_present" in run.failed[0].reason
    revised = run.links[1]
    # the reviser keeps what was actually done: the menu opened, its link not followed
    assert revised.source == "revision" and revised.task.gold_steps == menu.task.gold_steps[:1]
    assert [c.kind for c in revised.task.success] == ["element_state"]
    # the planted attempt navigated away; the state was rebuilt in a fresh episode, back on the search results
    assert ids[0] != ids[1] and urls[1] == urls[0] and revised.url_before == urls[0]


def _summary_or_proposal(calls: dict[str, Any]) -> Callable[[dict[str, Any]], str]:
    """The double's replies: a proposal naming a ref that is not on the page, then a header link the chain has not used."""

    def reply(body: dict[str, Any]) -> str:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if "propose" in system:
            calls["propose"] += 1
            if calls["propose"] == 1:
                return json.dumps({"ref": "e99999", "action": "click", "instruction": "Click something that is not there."})
            done, page = user.split("Failed proposals:")[0], user.split("Current page:")[1].splitlines()[0]
            for name, path in (("About & hours", "about.html"), ("Genres", "genres.html"), ("Catalogue", "search.html")):
                ref = re.search(rf'link "{re.escape(name)}" \[ref=(\w+)\]', user)
                if ref and f"“{name}”" not in done and path not in page:
                    calls["picked"] = name
                    return json.dumps({"ref": ref.group(1), "action": "click", "instruction": f"Go to {name}."})
            return json.dumps({"ref": "e0", "action": "click"})
        lines = re.findall(r"^\d+\. (.*)$", user, re.M)
        if len(lines) == 2:
            return json.dumps({"instruction": "Search the catalogue and then look around."})  # drops the quoted values
        return json.dumps({"instruction": "Please: " + " After that, ".join(lines)})

    return reply


@integration
def test_llm_proposals_and_summaries_keep_values_or_fall_back(site_graph: tuple[KnowledgeGraph, Path], seeds: list[Task], tmp_path: Path) -> None:
    kg, workspace = site_graph
    calls: dict[str, Any] = {"propose": 0}
    with openai_double.OpenAIDouble() as double:
        double.handler = _summary_or_proposal(calls)
        llm = OpenAILLM(double.base_url, "double-model", max_retries=0, cache_dir=None, backoff_base=0.01)
        report = _in_browser(workspace, lambda episodes: build_chains(seeds, kg, episodes, levels=3, retries=2, seed=0, llm=llm))
    assert [t.level for t in report.tasks] == [1, 2, 3], (report.chains, report.dropped, report.failed_proposals)
    not_there = [f for f in report.failed_proposals if "e99999" in f.reason]
    assert [(f.level, f.source) for f in not_there] == [(2, "llm")]
    assert report.tasks[2].quality["sources"] == ["seed", "template", "llm"]
    assert report.tasks[2].subtasks[2].instruction == f"Open “{calls['picked']}”."
    assert all(c.on_state for t in report.tasks for c in [*t.success, *(c for s in t.subtasks for c in s.checks)])  # an LLM click is checked by where it led
    one, two, three = report.tasks
    assert one.quality["summary"]["by"] == "llm" and one.instruction.startswith("Please: ") and one.provenance.model == "double-model"
    title, first = split_instruction(two.subtasks[0].instruction)
    assert two.quality["summary"]["by"] == "template" and two.quality["summary"]["llm"] == "Search the catalogue and then look around."
    assert two.instruction == template_summary(title, [first, split_instruction(two.subtasks[1].instruction)[1]])
    assert two.quality["summary"]["missing"] and two.provenance.model == "none"
    assert two.instruction.startswith("On the page “") and all(v in two.instruction for s in two.subtasks for v in quoted_values(s.instruction))
    assert three.quality["summary"]["by"] == "llm" and all(v in three.instruction for s in three.subtasks for v in quoted_values(s.instruction))
    assert three.quality["failed_proposals"] and all(f["level"] <= 3 for f in three.quality["failed_proposals"])
