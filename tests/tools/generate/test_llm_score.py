"""Stage 2 of filtering against the local OpenAI-compatible test double (the production openai client over HTTP)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
import openai_double  # noqa: E402  (test double: a local OpenAI-compatible server on 127.0.0.1)

from taskloom.tools.generate.filter.stages import GenerationReport, score_quality  # noqa: E402
from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph, Node  # noqa: E402
from taskloom.tools.llm.client import OpenAILLM  # noqa: E402
from taskloom.tools.tasks.model import Provenance, Task  # noqa: E402


@pytest.fixture
def double() -> Iterator[openai_double.OpenAIDouble]:
    with openai_double.OpenAIDouble() as d:
        yield d


def _task(task_id: str) -> Task:
    return Task(id=task_id, kind="document", type="extraction", instruction=f"Question {task_id}?", gold_answer="42",
                evidence=["p"], provenance=Provenance(graph_id="g", template="t", generator="template"))


def _score(overall: int) -> str:
    return json.dumps({"clarity": 4, "difficulty_fit": 4, "correctness": overall, "overall": overall, "reason": f"overall {overall}"})


@pytest.mark.anyio
async def test_low_and_unparsable_scores_are_dropped_at_the_llm_stage(double: openai_double.OpenAIDouble, tmp_path: Path) -> None:
    kg = KnowledgeGraph(GraphMeta(id="g"))
    kg.add_node(Node(id="p", type="paragraph", text="The answer is 42."))

    def reply(body: dict) -> str:
        question = body["messages"][-1]["content"]
        if "Question good" in question:
            return _score(4)
        if "Question weak" in question:
            return _score(2)
        return "I would rather not say."

    double.handler = reply
    llm = OpenAILLM(double.base_url, "double-model", max_retries=1, cache_dir=tmp_path / "cache", backoff_base=0.01)
    report = GenerationReport()
    kept = await score_quality(kg, [_task("good"), _task("weak"), _task("mute")], llm, report)
    assert [t.id for t in kept] == ["good"]
    assert kept[0].quality["llm_score"]["overall"] == 4
    reasons = {d.task_id: d.reason for d in report.dropped}
    assert reasons["weak"].startswith("overall 2 < 3")
    assert "no usable score" in reasons["mute"]
    assert report.stages["llm_score"] == {"in": 3, "kept": 1}
    assert llm.usage_report()["by_tag"]["good"]["calls"] == 1
