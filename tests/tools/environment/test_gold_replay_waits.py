"""A composite's gold replay waits, at a subtask's last step, for what that subtask asks for: a page that
renders late (as on a busy machine) is not taken for a subtask never done.

The page (served on 127.0.0.1) shows fetched data 1.5 s after the fetch answers, past the
settling that follows every action; the first subtask asks for that text, the second moves on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskloom.tools.environment.canonical import canonical
from taskloom.tools.environment.gold import run_gold_step, subtask_ends
from taskloom.tools.environment.manager import unfinished_subtask, watched_checks
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.generate.compose.dag import verify_composite
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import GoldStep, Provenance, SuccessCriterion, Subtask, Task, criterion_key

from .browser_site import CHROMIUM, serve_answers

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Late</title></head><body>
<h1>Late</h1>
<button id="load" onclick="fetch('data.json').then(r => r.json()).then(d => setTimeout(() => { document.getElementById('out').textContent = 'year ' + d.year; }, 1500))">Load</button>
<a id="next" href="other.html">Other page</a>
<p id="out">nothing yet</p>
</body></html>
"""
OTHER = "<!doctype html><html><head><title>Other</title></head><body><h1>The other page</h1></body></html>"


def _answer(path: str) -> tuple[bytes, str]:
    if path.startswith("/data.json"):
        return json.dumps({"year": 2003}).encode(), "application/json"
    return (OTHER if path.startswith("/other.html") else PAGE).encode(), "text/html; charset=utf-8"


@pytest.fixture(scope="module")
def page_url() -> Iterator[str]:
    with serve_answers(_answer) as base:
        yield f"{base}/index.html"


def _task(url: str) -> Task:
    load = GoldStep(action="click", selector="#load", canonical=canonical("click", text="Load", element="button"))
    move = GoldStep(action="click", selector="#next", canonical=canonical("click", text="Other page", element="link"))
    shown, moved = SuccessCriterion(kind="text_present", value="year 2003"), SuccessCriterion(kind="url_matches", value="other\\.html")
    return Task(
        id="late-1", kind="composite", type="chained", instruction="Load the year, then open the other page.", start_url=url, allowed_domains=["127.0.0.1"],
        gold_steps=[load, move], success=[moved], provenance=Provenance(graph_id="g", generator="test"),
        subtasks=[Subtask(id="s1", instruction="Load the year.", gold_steps=[load], checks=[shown]), Subtask(id="s2", instruction="Open the other page.", gold_steps=[move], checks=[moved])],
    )  # fmt: skip


def test_a_subtask_ends_at_its_own_last_step_within_the_whole_route(page_url: str) -> None:
    task = _task(page_url)
    ends = subtask_ends(task, task.gold_steps)
    assert ends == {0: {criterion_key(task.subtasks[0].checks[0])}, 1: {criterion_key(task.subtasks[1].checks[0])}}
    assert subtask_ends(task, task.gold_steps[1:]) == {0: {criterion_key(task.subtasks[1].checks[0])}}  # s1's steps are not in it
    assert subtask_ends(None, task.gold_steps) == {}


def test_the_replay_waits_for_late_rendering_where_step_by_step_it_is_missed(page_url: str, tmp_path: Path) -> None:
    task = _task(page_url)

    async def go() -> tuple[str | None, list[str], str | None]:
        async with Runtime(Settings(workspace=tmp_path / "ws", embedder="hashing"), screenshots=False) as runtime:
            reason = await verify_composite(task, runtime.episodes)
            held = [h for a in load_trajectory(Path(task.gold_trajectory or "")).actions for h in (a.holds or [])] if reason is None else []
            # the same steps one by one, with nothing expected of them: the text arrives after the probe
            episode, _ = await runtime.episodes.start(url=page_url, agent="step-by-step")
            episode.task, episode.watch = task, watched_checks(task)
            for step in task.gold_steps:
                await run_gold_step(episode, step)
            missed = unfinished_subtask(task, load_trajectory(episode.recorder.path).actions)
            await runtime.episodes.close(episode.id, status="closed")
            return reason, held, missed

    reason, held, missed = asyncio.run(go())
    assert reason is None, reason
    assert criterion_key(task.subtasks[0].checks[0]) in held
    assert missed is not None and "subtask s1" in missed  # the control: without the wait the late text is never seen
