"""Every failure has a reason, and a crash says who failed: the agent, Taskloom itself, or the run's input."""

from __future__ import annotations

import pytest
from fastmcp.exceptions import ToolError

from taskloom.harness.agents.command import AgentProcessError
from taskloom.harness.reasons import crash_reason, failure_reason
from taskloom.tools.environment.browser_extra import find_in_snapshot
from taskloom.tools.evaluate.model import CriterionVerdict, EpisodeResult
from taskloom.tools.errors import InputError
from taskloom.tools.tasks.model import Provenance, Task


def _raised(work: object) -> BaseException:
    with pytest.raises(BaseException) as caught:
        work()  # type: ignore[operator]
    return caught.value


def test_a_crash_says_who_failed() -> None:
    assert crash_reason(ToolError("Error calling tool 'search'")).startswith("Taskloom error: the server failed inside tool 'search'")
    assert crash_reason(ToolError("Ref e9 not found in the current page snapshot.")) == (
        "agent error: a tool call failed and the agent did not recover (Ref e9 not found in the current page snapshot.)"
    )
    assert crash_reason(AgentProcessError("command agent 'x' exited with code 3; stderr ends: boom")).startswith("agent error: command agent 'x' exited with code 3")
    assert crash_reason(InputError("replay.jsonl is not a trajectory file")) == "input error: InputError: replay.jsonl is not a trajectory file"
    inside_taskloom = _raised(lambda: find_in_snapshot(None, text="x"))  # type: ignore[arg-type]  # a bug in Taskloom's own code
    assert crash_reason(inside_taskloom).startswith("Taskloom error: AttributeError: ")
    inside_the_agent = _raised(lambda: {}["plan"])  # raised outside Taskloom: the agent's own code
    assert crash_reason(inside_the_agent) == "agent error: the agent crashed (KeyError: 'plan')"


def _task(gold: str | None = None) -> Task:
    return Task(id="web-t", kind="web", type="lookup", instruction="Q?", start_url="http://127.0.0.1:1/", gold_answer=gold, provenance=Provenance(graph_id="g", generator="test"))


def _result(**fields: object) -> EpisodeResult:
    return EpisodeResult.model_validate({"task_id": "web-t", "task_kind": "web", "task_type": "lookup", "difficulty": "easy", "agent": "a", "success": False, **fields})


def test_an_unsuccessful_episode_always_has_a_reason() -> None:
    missed = CriterionVerdict(kind="url_matches", expected="URL matching /b$", observed="http://x/a", ok=False)
    held = CriterionVerdict(kind="text_present", expected="text 'Dune'", observed="found", ok=True)
    assert failure_reason(_task(), _result(criteria=[held, missed]), None) == "url_matches: expected URL matching /b$, observed http://x/a"
    assert failure_reason(_task("42"), _result(), None) == "no answer was given (the agent never called env_answer, nor ended with one)"
    wrong = failure_reason(_task("42"), _result(answer="41", scores={"exact_match": 0.0, "f1": 0.0, "rouge_l": 0.0}), None)
    assert wrong == "the answer '41' does not match the task's answer (exact_match 0, f1 0)"
    assert failure_reason(_task(), _result(reason="agent error: x"), None) == "agent error: x"  # a reason already given stays
    assert failure_reason(_task(), _result(), None)  # never blank
    assert failure_reason(_task(), _result(success=True), None) is None
