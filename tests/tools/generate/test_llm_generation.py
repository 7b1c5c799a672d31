"""LLM-written document tasks (against the local OpenAI-compatible test double) through TaskService."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
import openai_double  # noqa: E402  (test double: a local OpenAI-compatible server on 127.0.0.1)

from taskloom.tools.generate.service import TaskService  # noqa: E402
from taskloom.tools.graph.service import GraphService  # noqa: E402
from taskloom.tools.llm.client import OpenAILLM  # noqa: E402
from taskloom.tools.settings import Settings  # noqa: E402

GUIDE = Path(__file__).resolve().parents[3] / "examples" / "documents" / "field-guide.md"


def author(body: dict) -> str:
    """The double's 'model': writes a task from the first text node it is given, or scores a task."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    if system.startswith("You rate generated agent tasks"):
        return json.dumps({"clarity": 4, "difficulty_fit": 4, "correctness": 5, "overall": 4, "reason": "grounded"})
    subgraph = json.loads(user.split("Subgraph (JSON):\n", 1)[1])
    node = next(n for n in subgraph["nodes"] if len(n["text"].split()) >= 6)
    answer = " ".join(node["text"].split()[:6])
    return json.dumps({"question": f"Which words open the passage about {subgraph['task_type']} ({node['id']})?", "answer": answer, "evidence": [node["id"]]})


@pytest.fixture
def double() -> Iterator[openai_double.OpenAIDouble]:
    with openai_double.OpenAIDouble() as d:
        d.handler = author
        yield d


def test_llm_writes_grounded_tasks_citing_node_ids(double: openai_double.OpenAIDouble, tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path, embedder="hashing")
    graphs = GraphService(settings)
    graph_id = graphs.ingest_document(GUIDE).graph_id
    llm = OpenAILLM(double.base_url, "double-model", cache_dir=tmp_path / "cache")
    service = TaskService(graphs, llm=llm)  # document tasks: no episode manager needed
    result = asyncio.run(service.generate(graph_id, count=4, seed=1))
    tasks = service.list()
    kg = graphs.load(graph_id)
    assert result.llm == "double-model" and tasks
    for task in tasks:
        assert task.provenance.generator == "llm" and task.provenance.model == "double-model"
        assert task.gold_answer and task.gold_answer.lower() in " ".join(kg.node(n).text for n in task.evidence).lower()
        assert task.quality["llm_score"]["overall"] == 4
    usage = llm.usage_report()["total"]
    assert usage["calls"] / len(tasks) <= 2.5
    assert {"llm_generate", "llm_score"} <= set(result.report.stages)


def test_llm_rewrites_web_instructions_only_when_every_value_survives(double: openai_double.OpenAIDouble) -> None:
    from taskloom.tools.generate.web.paths import llm_instructions
    from taskloom.tools.tasks.model import Provenance, Task

    def rewrite(body: dict) -> str:
        text = body["messages"][-1]["content"]
        if "“Nature”" in text:
            return json.dumps({"instruction": "From “Home”, please look for “sea” books and narrow them to “Nature”."})
        return json.dumps({"instruction": "Please search for something about the sea."})  # drops “sea”

    double.handler = rewrite
    keep = Task(id="web-a", kind="web", type="search", instruction="On the page “Home”, search for “sea”, then filter by Genre “Nature”.",
                provenance=Provenance(graph_id="g", generator="template"))
    drop = Task(id="web-b", kind="web", type="search", instruction="On the page “Home”, search for “sea”.",
                provenance=Provenance(graph_id="g", generator="template"))
    llm = OpenAILLM(double.base_url, "double-model")
    asyncio.run(llm_instructions([keep, drop], llm))
    assert keep.instruction == "From “Home”, please look for “sea” books and narrow them to “Nature”."
    assert keep.provenance.generator == "template+llm" and keep.quality["template_instruction"].startswith("On the page “Home”")
    assert drop.instruction == "On the page “Home”, search for “sea”." and drop.provenance.generator == "template"
