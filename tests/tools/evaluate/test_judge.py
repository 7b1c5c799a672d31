"""LLM judges against the local OpenAI-compatible TEST DOUBLE (the production openai client over real HTTP)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
import openai_double  # noqa: E402  (test double: a local OpenAI-compatible server on 127.0.0.1)

from taskloom.tools.environment.trajectory import ActionRecord  # noqa: E402
from taskloom.tools.errors import InputError  # noqa: E402
from taskloom.tools.evaluate.judge import AnswerJudgement, TrajectoryJudgement, judge_answer, judge_trajectory  # noqa: E402
from taskloom.tools.llm.client import LLMError, LLMUnavailable, NoneLLM, OpenAILLM  # noqa: E402
from taskloom.tools.tasks.model import GoldStep, Provenance, Resource, Subtask, SuccessCriterion, Task  # noqa: E402


@pytest.fixture
def double() -> Iterator[openai_double.OpenAIDouble]:
    with openai_double.OpenAIDouble() as d:
        yield d


def _llm(double: openai_double.OpenAIDouble, retries: int = 1) -> OpenAILLM:
    return OpenAILLM(double.base_url, "double-model", max_retries=retries, backoff_base=0.001)


def _doc_task(gold: str | None = "Table 2 reports 1,234 samples.") -> Task:
    return Task(id="doc-1", kind="document", type="table_qa", instruction="How many samples does Table 2 report?",
                gold_answer=gold, answer_kind="text", provenance=Provenance(graph_id="g", generator="template"))


def _content(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body["messages"])


def _reply(**fields: Any) -> str:
    return json.dumps(fields)


# --- the answer judge -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_judge_answer_parses_and_shows_gold_evidence_and_answer(double: openai_double.OpenAIDouble) -> None:
    double.replies.append(_reply(quality=0.9, relevance=1.0, completeness=0.8, rationale="Right count, no unit."))
    llm = _llm(double)
    judgement = await judge_answer(llm, _doc_task(), "About 1234.", evidence=["Table 2: 1,234 samples were drawn.", "  "])
    assert isinstance(judgement, AnswerJudgement)
    assert (judgement.quality, judgement.relevance, judgement.completeness) == (0.9, 1.0, 0.8)
    assert judgement.rationale == "Right count, no unit."
    assert judgement.overall == pytest.approx((0.9 + 1.0 + 0.8) / 3)
    assert judgement.scores() == pytest.approx({"judge_quality": 0.9, "judge_relevance": 1.0, "judge_completeness": 0.8, "judge_overall": 0.9})
    [body] = double.chat_requests()
    text = _content(body)
    assert "How many samples does Table 2 report?" in text
    assert "GOLD STANDARD ANSWER:\nTable 2 reports 1,234 samples." in text
    assert "[1] Table 2: 1,234 samples were drawn." in text and "[2]" not in text  # the blank passage is skipped
    assert "<<<ANSWER\nAbout 1234.\nANSWER>>>" in text
    assert body["temperature"] == 0.0
    assert '"completeness"' in body["messages"][0]["content"]  # the client put the JSON schema in the system message
    assert llm.usage_report()["by_tag"]["judge_answer"]["calls"] == 1
    await llm.aclose()


@pytest.mark.anyio
async def test_judge_answer_accepts_the_papers_key_and_clamps_small_overshoots(double: openai_double.OpenAIDouble) -> None:
    double.replies.append(_reply(answer_quality=1.03, relevance=-0.02, completeness="0.5"))
    llm = _llm(double)
    judgement = await judge_answer(llm, _doc_task(), None)
    assert (judgement.quality, judgement.relevance, judgement.completeness) == (1.0, 0.0, 0.5)
    assert judgement.rationale == ""
    assert "(the agent gave no answer)" in _content(double.chat_requests()[0])
    assert len(double.chat_requests()) == 1  # clamped, not re-asked
    await llm.aclose()


@pytest.mark.anyio
async def test_out_of_scale_score_is_reasked_not_rescaled(double: openai_double.OpenAIDouble) -> None:
    # 4 on a 1-5 scale is beyond the 0.05 tolerance: the client re-asks, and the corrected reply is used
    double.replies.extend([_reply(quality=4, relevance=5, completeness=3), _reply(quality=0.6, relevance=0.8, completeness=0.4)])
    llm = _llm(double)
    judgement = await judge_answer(llm, _doc_task(), "1234")
    assert (judgement.quality, judgement.relevance, judgement.completeness) == (0.6, 0.8, 0.4)
    first, second = double.chat_requests()
    assert "Your reply was not valid" in _content(second) and "quality" in _content(second)
    await llm.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize(
    "bad",
    [
        "The answer looks fine to me.",  # not JSON
        _reply(quality=1.2, relevance=0.5, completeness=0.5),  # 0.2 beyond the range: not clamped
        _reply(quality=0.5, relevance=0.5),  # a dimension missing
        _reply(quality="high", relevance=0.5, completeness=0.5),  # not a number
    ],
)
async def test_unusable_judge_replies_raise_llm_error_not_zero(double: openai_double.OpenAIDouble, bad: str) -> None:
    double.replies.extend([bad, bad])
    llm = _llm(double, retries=1)
    with pytest.raises(LLMError, match=r"no usable AnswerJudgement when judging the answer to task 'doc-1'"):
        await judge_answer(llm, _doc_task(), "1234")
    assert len(double.chat_requests()) == 2  # the first attempt and one retry
    await llm.aclose()


@pytest.mark.anyio
async def test_answer_judge_needs_a_gold_answer_and_a_model(double: openai_double.OpenAIDouble) -> None:
    llm = _llm(double)
    with pytest.raises(InputError, match="no gold answer"):
        await judge_answer(llm, _doc_task(gold=None), "x")
    assert double.chat_requests() == []
    with pytest.raises(LLMUnavailable):
        await judge_answer(NoneLLM(), _doc_task(), "x")
    await llm.aclose()


# --- the trajectory judge -----------------------------------------------------------------------------


def _web_task() -> Task:
    """A web task whose every gold value is a distinctive string that must never reach the judge."""
    return Task(
        id="web-1", kind="composite", type="search_filter_detail", instruction="Find the poetry books about the sea and open the first one.",
        start_url="http://127.0.0.1:8000/index.html", gold_answer="GOLD-ANSWER-5e1",
        gold_steps=[
            GoldStep(action="type", selector="#gold-sel-7f3a", text="gold-typed-4d1e", submit=True, canonical="type(text='gold-typed-4d1e', element='GoldBox')"),
            GoldStep(action="click", selector="button.gold-submit-91c2", canonical="click(text='GoldCanon-55aa', element='button')"),
        ],
        success=[
            SuccessCriterion(kind="url_matches", value=r"/detail\?id=GOLDCRIT-1"),
            SuccessCriterion(kind="text_present", value="GOLDCRIT-2 confirmation"),
            SuccessCriterion(kind="element_state", value="#goldcrit-3", state="value=GOLDCRIT-4"),
            SuccessCriterion(kind="clicked", value="GOLDCRIT-8"),
        ],
        gold_trajectory="runs/gold/GOLDTRAJ-9.jsonl",
        subtasks=[Subtask(id="s1", instruction="SUBTASK-SECRET filter by genre", outputs=[Resource(kind="filter_state", name="GOLDRES-10")],
                          gold_steps=[GoldStep(action="select_option", selector="#goldsub-11", text="GOLDSUB-12")],
                          checks=[SuccessCriterion(kind="text_present", value="GOLDCHECK-6")])],
        provenance=Provenance(graph_id="g", generator="template"),
    )


def _gold_values(task: Task) -> list[str]:
    values = [task.gold_answer or "", task.gold_trajectory or ""]
    for step in [*task.gold_steps, *(s for sub in task.subtasks for s in sub.gold_steps)]:
        values += [step.selector or "", step.text or "", step.canonical or ""]
    for crit in [*task.success, *(c for sub in task.subtasks for c in sub.checks)]:
        values += [crit.value, crit.state or ""]
    for sub in task.subtasks:
        values += [sub.instruction, *(r.name for r in sub.inputs + sub.outputs)]
    return sorted(v for v in set(values) if v)


def _actions() -> list[ActionRecord]:
    home, results = "http://127.0.0.1:8000/index.html", "http://127.0.0.1:8000/search.html?q=sea"
    return [
        ActionRecord(index=0, name="type", args={"ref": "e3", "text": "sea"}, canonical="type(text='sea', element='Search the catalogue')",
                     t_start=0.0, t_end=0.5, url_before=home, url_after=results),
        ActionRecord(index=1, name="click", args={"ref": "e9"}, canonical="click(text='Poetry', element='link')",
                     t_start=0.6, t_end=0.9, url_before=results, url_after=results, error="Element e9 is not visible; take a new snapshot."),
    ]


@pytest.mark.anyio
async def test_trajectory_judge_sees_actions_and_page_but_no_gold(double: openai_double.OpenAIDouble) -> None:
    double.replies.append(_reply(success=False, progress=0.5, rationale="Searched, but the genre filter click failed."))
    llm = _llm(double)
    task = _web_task()
    final_url = "http://127.0.0.1:8000/search.html?q=sea"
    judgement = await judge_trajectory(llm, task, _actions(), final_url, "Results for sea\n\n\n\n12 books found", answer="none yet")
    assert isinstance(judgement, TrajectoryJudgement)
    assert judgement.success is False and judgement.progress == 0.5
    assert judgement.scores() == {"judge_success": 0.0, "judge_progress": 0.5}

    [body] = double.chat_requests()
    seen = _content(body) + "\n" + json.dumps(body, ensure_ascii=False)
    # what it must see: the instruction, each action's canonical form and error, URL changes, the final page
    assert task.instruction in seen
    assert "1. type(text='sea', element='Search the catalogue') -> http://127.0.0.1:8000/search.html?q=sea" in seen
    assert "2. click(text='Poetry', element='link')  [ERROR: Element e9 is not visible; take a new snapshot.]" in seen
    assert f"URL: {final_url}" in seen and "Results for sea\n\n12 books found" in seen
    assert "Actions executed: 2" in seen and "Actions that failed with an error: 1" in seen
    assert "<<<ANSWER\nnone yet\nANSWER>>>" in seen
    # what it must never see: any gold step, criterion, gold answer or subtask detail
    gold = _gold_values(task)
    assert len(gold) == 17  # 2 answer/trajectory + 7 step fields + 6 criterion fields + subtask instruction + resource
    leaked = [v for v in gold if v in seen]
    assert leaked == []
    await llm.aclose()


@pytest.mark.anyio
async def test_trajectory_judge_truncates_page_and_action_list(double: openai_double.OpenAIDouble) -> None:
    double.replies.append(_reply(success="true", progress=1.04, rationale="done"))
    llm = _llm(double)
    page = "HEAD-MARK " + "x" * 5000 + " TAIL-MARK"  # 10 + 5000 + 10 = 5020 characters
    actions = [ActionRecord(index=i, name="scroll", canonical=f"scroll(direction='down', n={i})", t_start=float(i), t_end=float(i))
               for i in range(10)]
    judgement = await judge_trajectory(llm, _web_task(), actions, None, page, max_actions=6, max_page_chars=100)
    assert judgement.success is True and judgement.progress == 1.0  # "true" parsed, 1.04 clamped
    text = _content(double.chat_requests()[0])
    assert "HEAD-MARK" in text and "TAIL-MARK" not in text
    assert "the first 100 of 5020 characters" in text and "URL: unknown" in text
    # max_actions=6: the first 6 // 3 = 2 and the last 4 of 10 are shown, 4 omitted in between
    shown = [i for i in range(10) if f"n={i})" in text]
    assert shown == [0, 1, 6, 7, 8, 9]
    assert "4 in the middle are not shown" in text and "... 4 action(s) not shown ..." in text
    await llm.aclose()


@pytest.mark.anyio
async def test_trajectory_judge_invalid_verdict_raises(double: openai_double.OpenAIDouble) -> None:
    bad = _reply(success="perhaps", progress=0.5)
    double.replies.extend([bad, bad])
    llm = _llm(double, retries=1)
    with pytest.raises(LLMError, match="no usable TrajectoryJudgement when judging the trajectory of task 'web-1'"):
        await judge_trajectory(llm, _web_task(), [], "http://127.0.0.1:8000/", "")
    assert "(no actions)" in _content(double.chat_requests()[0])
    with pytest.raises(InputError):
        await judge_trajectory(llm, _web_task(), [], None, "", max_actions=2)
    await llm.aclose()
