"""Canonical actions: recorded trajectories, free-text rules, and the LLM fallback against the local OpenAI TEST DOUBLE."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
import openai_double  # noqa: E402  (test double: a local OpenAI-compatible server on 127.0.0.1)

from taskloom.tools.environment.trajectory import CriterionResult, EpisodeRecord, Recorder, load_trajectory  # noqa: E402
from taskloom.tools.evaluate.consensus import canonicalize_llm, canonicalize_text, from_trajectory, parse_canonical  # noqa: E402
from taskloom.tools.evaluate.service import EvaluationService  # noqa: E402
from taskloom.tools.llm.client import NoneLLM, OpenAILLM  # noqa: E402
from taskloom.tools.workspace import Workspace  # noqa: E402
from taskloom.tools.tasks.model import SuccessCriterion  # noqa: E402

CASES = [
    # (free text, canonical text, confidence)
    ("Click at (600, 475)", "click(x='600', y='475')", 0.4),
    ('Type "dune"', "type(text='dune')", 0.75),
    ('type "dune" into search', "type(text='dune', element='search')", 0.85),
    ("Typed 'dune' in the Search the catalogue box", "type(text='dune', element='Search the catalogue')", 0.85),
    ('Fill the search field with "dune"', "type(text='dune', element='search')", 0.85),
    ("Enter dune into the Search field", "type(text='dune', element='Search')", 0.6),
    ("Scroll down", "scroll(direction='down')", 0.95),
    ("scrolled up a bit", "scroll(direction='up')", 0.95),
    ("Navigate to https://books.example.org/search?q=dune.", "navigate(url='https://books.example.org/search?q=dune')", 0.95),
    ("Go to books.example.org", "navigate(url='books.example.org')", 0.95),
    ("Go to the homepage", "navigate(url='homepage')", 0.5),
    ("Go back", "go_back()", 0.95),
    ("clicked the 'Submit' button", "click(text='Submit', element='button')", 0.9),
    ("Click on the “Sign in” link", "click(text='Sign in', element='link')", 0.9),
    ("press Submit", "click(text='Submit')", 0.6),
    ("Press Enter", "press(key='Enter')", 0.9),
    ("Select 'Poetry' from the Genre dropdown", "select(option='Poetry', element='Genre')", 0.85),
    ("Hover over 'Menu'", "hover(text='Menu')", 0.85),
    ("[button]  Submit -> CLICK", "click(text='Submit', element='button')", 0.95),
    ("[textbox] Search -> TYPE: dune", "type(text='dune', element='Search')", 0.95),
    ("[combobox]  -> SELECT: Poetry", "select(option='Poetry', element='combobox')", 0.8),
    ("<a> Sign in -> CLICK", "click(text='Sign in', element='link')", 0.95),
    ("pyautogui.click(600, 475)", "click(x='600', y='475')", 0.5),
    ("pyautogui.write('quarterly report')", "type(text='quarterly report')", 0.85),
    ("pyautogui.hotkey('ctrl', 's')", "press(key='ctrl+s')", 0.9),
    ("pyautogui.scroll(-5)", "scroll(direction='down')", 0.9),
    ("click(text='Search', element='button')", "click(text='Search', element='button')", 1.0),
    ("Think about what the user wants", "other(text='Think about what the user wants')", 0.1),
]


@pytest.mark.parametrize(("text", "expected", "confidence"), CASES)
def test_free_text_rules(text: str, expected: str, confidence: float) -> None:
    action = canonicalize_text(text)
    assert action.text == expected
    assert action.confidence == confidence
    assert action.source == text
    assert action.name == expected.split("(")[0]


def test_rule_fields_are_parsed_back() -> None:
    action = canonicalize_text("[textbox] Search -> TYPE: dune")
    assert action.args == {"text": "dune", "element": "Search"}
    assert parse_canonical(action.text) == ("type", {"text": "dune", "element": "Search"})
    assert parse_canonical("click(text='a', element=foo)") is None  # a bare name is not a literal
    assert parse_canonical("clicked Submit") is None


def _record(folder: Path, ok: bool | None) -> Path:
    rec = Recorder(folder, EpisodeRecord(episode_id=folder.name, env="browser", task_id="t-1", agent="claude", model="m-1"))
    now = time.time()
    rec.action(name="snapshot", args={}, canonical="snapshot()", t_start=now, t_end=now)
    rec.action(name="type", args={"ref": "e3", "text": "dune"}, canonical="type(text='dune', element='Search the catalogue')", t_start=now, t_end=now)
    rec.action(name="take_screenshot", args={}, canonical="screenshot(marks='yes')", t_start=now, t_end=now)
    rec.action(name="click", args={"ref": "e4"}, canonical="click(text='Search', element='button')", t_start=now, t_end=now, error="element detached")
    rec.action(name="navigate_back", args={}, canonical="go_back()", t_start=now, t_end=now)
    criterion = SuccessCriterion(kind="text_present", value="Dune")
    rec.close(checks=None if ok is None else [CriterionResult(criterion=criterion, ok=ok, observed="page text")])
    return rec.path


def test_from_trajectory_skips_observations_and_keeps_failed_actions(tmp_path: Path) -> None:
    traj = from_trajectory(load_trajectory(_record(tmp_path / "ep-1", True)))
    assert [a.text for a in traj.actions] == [
        "type(text='dune', element='Search the catalogue')",
        "click(text='Search', element='button')",
        "go_back()",
    ]
    assert [a.name for a in traj.actions] == ["type", "click", "go_back"]
    assert traj.actions[0].args == {"text": "dune", "element": "Search the catalogue"}
    assert all(a.confidence == 1.0 and a.source == "recorded" for a in traj.actions)
    assert (traj.id, traj.task_id, traj.agent, traj.model, traj.success) == ("ep-1", "t-1", "claude", "m-1", True)


def test_from_trajectory_outcome_and_agent_overrides(tmp_path: Path) -> None:
    failed = load_trajectory(_record(tmp_path / "ep-2", False))
    unknown = load_trajectory(_record(tmp_path / "ep-3", None))
    assert from_trajectory(failed).success is False
    assert from_trajectory(unknown).success is False  # unknown counts as not successful
    assert from_trajectory(unknown, success=True, agent="other").model_dump(include={"success", "agent"}) == {"success": True, "agent": "other"}


# -- LLM fallback against the test double ----------------------------------------------------------


@pytest.fixture
def double() -> Iterator[openai_double.OpenAIDouble]:
    with openai_double.OpenAIDouble() as d:
        yield d


def _reply(request: dict[str, Any]) -> str:
    user = request["messages"][-1]["content"]
    if "big green" in user:
        return json.dumps({"function": "click", "parameters": {"text": "Checkout", "element": "button"}, "confidence": 0.8, "necessary": True})
    if "Genre should" in user:
        return json.dumps({"function": "select", "parameters": {"value": "Poetry", "element": "Genre"}, "confidence": 0.7})
    if "dance" in user:
        return json.dumps({"function": "dance", "parameters": {}, "confidence": 0.9})
    return json.dumps({"function": "click", "parameters": {"text": "?"}, "confidence": 0.05})


@pytest.mark.anyio
async def test_llm_is_asked_only_about_low_confidence_texts(double: openai_double.OpenAIDouble) -> None:
    double.handler = _reply
    llm = OpenAILLM(double.base_url, "double-model", max_retries=0)
    texts = ["clicked the 'Submit' button", "The big green one looks right", "Genre should be poetry then", "dance a little", "mumble", "Click at (1, 2)"]
    out = await canonicalize_llm(texts, llm, task="Buy a poetry book")
    asked = [r["messages"][-1]["content"] for r in double.chat_requests()]
    assert len(asked) == 5 and not any("Submit" in a for a in asked)  # 0.9 is above the bound
    assert all("Task: Buy a poetry book" in a for a in asked)
    assert double.chat_requests()[0]["response_format"]["json_schema"]["name"] == "LLMConversion"
    assert out[0].text == "click(text='Submit', element='button')" and out[0].confidence == 0.9
    assert out[1].text == "click(text='Checkout', element='button')" and out[1].confidence == 0.8 and out[1].necessary is True
    assert out[2].text == "select(option='Poetry', element='Genre')" and out[2].confidence == 0.7  # 'value' renamed to 'option'
    assert out[3].text == "other(text='dance a little')"  # unknown function: the rule result stays
    assert out[4].text == "other(text='mumble')" and out[4].confidence == 0.1  # the model was less sure
    assert out[5].text == "click(x='1', y='2')" and out[5].confidence == 0.4
    await llm.aclose()


@pytest.mark.anyio
async def test_llm_failure_keeps_the_rule_result(double: openai_double.OpenAIDouble) -> None:
    double.fail_next(1, status=400)
    llm = OpenAILLM(double.base_url, "double-model", max_retries=0)
    out = await canonicalize_llm(["mumble"], llm)
    assert out[0].text == "other(text='mumble')" and len(double.chat_requests()) == 1
    await llm.aclose()


@pytest.mark.anyio
async def test_without_a_model_the_rules_answer() -> None:
    out = await canonicalize_llm(["mumble", "Scroll down"], NoneLLM())
    assert [a.text for a in out] == ["other(text='mumble')", "scroll(direction='down')"]


@pytest.mark.anyio
async def test_an_import_is_refined_by_the_llm_with_answers_cached(double: openai_double.OpenAIDouble, tmp_path: Path) -> None:
    double.handler = _reply
    log = tmp_path / "agent.jsonl"
    log.write_text(json.dumps({"task_id": "t1", "success": True, "instruction": "Buy a poetry book",
                               "actions": ["Go to shop.test", "The big green one looks right", "clicked the 'Submit' button"]}) + "\n")  # fmt: skip
    llm = OpenAILLM(double.base_url, "double-model", max_retries=0, cache_dir=tmp_path / "cache")
    service = EvaluationService(Workspace(tmp_path / "ws"), llm)
    imported = service.import_trajectories("jsonl", [log])
    assert imported.report.low_confidence == 1  # the green one ("Go to shop.test" is a navigation the rules read)
    refined = await service.refine_with_llm(imported)
    actions = refined.trajectories[0].actions
    assert actions[1].text == "click(text='Checkout', element='button')" and actions[1].kind == "click"
    assert actions[2].text == "click(text='Submit', element='button')"  # confident already: never asked
    assert refined.report.llm_refined == 1 and refined.report.low_confidence == 0
    calls = len(double.chat_requests())
    again = await service.refine_with_llm(imported)
    assert again.trajectories[0].actions[1].text == actions[1].text and len(double.chat_requests()) == calls  # served from the cache
    await llm.aclose()
