"""The report's per-episode details, from results and the trajectory files a run left (no browser).

Trajectories are written with the real recorder; the report is rendered by ``render_report``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

import pytest

from taskloom.tools.environment.manager import HAR_FILE, TRACE_FILE
from taskloom.tools.environment.trajectory import CriterionResult, EpisodeRecord, Recorder
from taskloom.tools.evaluate.checks import describe, verdicts
from taskloom.tools.evaluate.model import EpisodeResult
from taskloom.tools.evaluate.report import render_report
from taskloom.tools.evaluate.report_episodes import MAX_STEPS_SHOWN, episode_views, outcome_of
from taskloom.tools.evaluate.summary import TaskInfo
from taskloom.tools.tasks.model import SuccessCriterion

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082")
EVIL = "<b>bold</b>"


def record(folder: Path, actions: int = 2, screenshot_first: bool = True) -> Path:
    """A closed trajectory: ``actions`` clicks (the first with a screenshot on disk, the second failed), an answer, two checks."""
    recorder = Recorder(folder, EpisodeRecord(episode_id=folder.name, env="browser", task_id="t1", agent="alpha", start_url="http://a.test/"))
    for i in range(actions):
        shot = None
        if i == 0 and screenshot_first:
            path, shot = recorder.screenshot_path("click")
            path.write_bytes(PNG)
        recorder.action(name="click", canonical=f"click(text='Item {i}', element='link')", url_after=f"http://a.test/{i}", t_start=1.0, t_end=2.0,
                        screenshot=shot, error="no such ref e9" if i == 1 else None)
    recorder.answer(EVIL)
    checks = [
        CriterionResult(criterion=SuccessCriterion(kind="url_matches", value=r"/1$"), ok=True, observed="http://a.test/1"),
        CriterionResult(criterion=SuccessCriterion(kind="text_present", value=EVIL, scope="main"), ok=False, observed="text not found in the main content"),
    ]
    recorder.close(checks=checks, final_url="http://a.test/1")
    return recorder.path


def result(task: str, agent: str, ok: bool, trajectory: Path | None, **kw: Any) -> EpisodeResult:
    return EpisodeResult(run_id="r", task_id=task, task_kind="web", task_type="lookup", difficulty="easy", agent=agent, success=ok,
                         trajectory=str(trajectory) if trajectory else None, **kw)


def test_outcomes() -> None:
    assert outcome_of(result("t", "a", True, None)) == "success"
    assert outcome_of(result("t", "a", False, None)) == "failed"
    assert outcome_of(result("t", "a", False, None, status="failed")) == "failed"
    assert outcome_of(result("t", "a", False, None, status="timeout")) == "timeout"
    assert outcome_of(result("t", "a", False, None, status="crashed")) == "crashed"


def test_every_criterion_kind_is_described_with_its_value() -> None:
    kinds = get_args(SuccessCriterion.model_fields["kind"].annotation)
    for kind in kinds:
        text = describe(SuccessCriterion(kind=kind, value="VALUE", state="checked"))
        assert "VALUE" in text and ("checked" in text) == (kind == "element_state"), (kind, text)
    assert describe(SuccessCriterion(kind="text_absent", value="x", whole_words=True)) == "no text 'x' on the page (whole words)"


def test_views_read_verdicts_steps_screenshots_and_recordings(tmp_path: Path) -> None:
    path = record(tmp_path / "runs" / "r" / "episodes" / "t1" / "alpha" / "ep-1")
    (path.parent / TRACE_FILE).write_bytes(b"PK\x05\x06" + bytes(18))
    (path.parent / HAR_FILE).write_text('{"log": {"entries": []}}', encoding="utf-8")
    out = tmp_path / "reports" / "r"
    info = TaskInfo(instruction="Find it", family="web-lookup", gold_answer="42", level=3)
    (view,) = episode_views([result("t1", "alpha", False, path, answer=EVIL)], {"t1": info}, {"t1": "task-1"}, out)
    assert (view.anchor, view.task_anchor, view.outcome, view.family, view.level, view.gold, view.answer) == ("ep-1", "task-1", "failed", "web-lookup", 3, "42", EVIL)
    assert view.final_url == "http://a.test/1"
    assert [(c.kind, c.ok, c.observed) for c in view.criteria] == [("url_matches", True, "http://a.test/1"), ("text_present", False, "text not found in the main content")]
    assert view.criteria[1].expected == f"text {EVIL!r} in the main content"
    assert [s.error for s in view.steps] == [None, "no such ref e9"]
    assert view.steps[0].thumbnail == "../../runs/r/episodes/t1/alpha/ep-1/screenshots/0000-click.png" and view.steps[1].thumbnail is None
    assert view.last_screenshot == view.steps[0].thumbnail
    links = {link.label: link for link in view.links}
    assert set(links) == {"trajectory", "HAR", "trace"}
    for link in links.values():
        assert not link.href.startswith("/") and (out / link.href).resolve().is_file()
    assert links["trace"].hint == f"playwright show-trace {(path.parent / TRACE_FILE).resolve()}"


def test_stored_verdicts_win_and_missing_trajectories_are_explained(tmp_path: Path) -> None:
    gone = tmp_path / "nowhere" / "trajectory.jsonl"
    stored = verdicts([CriterionResult(criterion=SuccessCriterion(kind="element_state", value="#ok", state="checked"), ok=False, observed="#ok is not checked")])
    (view,) = episode_views([result("t9", "beta", False, gone, status="timeout", criteria=stored, final_url="http://a.test/x")], {}, {}, tmp_path)
    assert view.outcome == "timeout" and view.instruction == "" and view.family == "lookup" and view.task_anchor is None
    assert view.criteria == stored and view.criteria[0].expected == "#ok is checked" and view.final_url == "http://a.test/x"
    assert view.steps == [] and view.links == [] and view.note == f"the trajectory file {gone} is gone"


def test_long_trajectories_list_their_first_steps_and_count_the_rest(tmp_path: Path) -> None:
    path = record(tmp_path / "ep-long", actions=MAX_STEPS_SHOWN + 3, screenshot_first=False)
    (view,) = episode_views([result("t1", "alpha", False, path)], {}, {}, tmp_path)
    assert len(view.steps) == MAX_STEPS_SHOWN and view.more_steps == 3 and view.last_screenshot is None


def test_the_report_escapes_episode_text_and_links_only_relative_files(tmp_path: Path) -> None:
    path = record(tmp_path / "runs" / "r" / "episodes" / "t1" / "alpha" / "ep-1")
    results = [result("t1", "alpha", False, path, answer=EVIL), result("t1", "<i>beta</i>", True, None)]
    tasks = {"t1": {"instruction": f"Find {EVIL}", "family": "web-lookup", "gold_answer": f"gold {EVIL}", "kind": "web"}}
    html = render_report("r", results, tasks, {}, None, tmp_path / "reports" / "r").html.read_text(encoding="utf-8")
    assert "<b>" not in html and "<i>" not in html
    assert html.count("&lt;b&gt;bold&lt;/b&gt;") >= 5  # instruction (episode line, index, section), answer, gold, expected
    episodes = re.findall(r'<details class="episode (\w+)" id="(ep-\d)"', html)
    assert episodes == [("success", "ep-1"), ("failed", "ep-2")]  # by task, then agent: "<i>beta</i>" sorts before "alpha"
    assert 'data-episodes="[[&#34;&lt;i&gt;beta&lt;/i&gt;&#34;, &#34;success&#34;], [&#34;alpha&#34;, &#34;failed&#34;]]"' in html
    targets = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert targets and all(t.startswith("#") or t.startswith("../../runs/r/episodes/") for t in targets), targets
    assert '<option value="web-lookup">web-lookup</option>' in html


@pytest.mark.parametrize("stored", [True, False])
def test_a_result_without_trajectory_or_task_info_still_renders(tmp_path: Path, stored: bool) -> None:
    results = [result("t1", "alpha", False, None, reason="the agent never started an episode")]
    paths = render_report("r", results, {"t1": {"instruction": "x"}} if stored else {}, {}, None, tmp_path)
    html = paths.html.read_text(encoding="utf-8")
    assert 'id="ep-1"' in html and "the agent never started an episode" in html and "<img" not in html
