"""``taskloom run --judge``: every episode also gets the LLM judge's scores (against the local OpenAI test double)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "llm"))
import openai_double  # noqa: E402  (test double: a local OpenAI-compatible server on 127.0.0.1)

from taskloom.harness.service import Harness  # noqa: E402
from taskloom.server.app import build_server  # noqa: E402
from taskloom.tools.errors import InputError  # noqa: E402
from taskloom.tools.generate.service import TaskService  # noqa: E402
from taskloom.tools.graph.service import GraphService  # noqa: E402
from taskloom.tools.settings import Settings  # noqa: E402
from taskloom.tools.tasks import TaskStore  # noqa: E402
from taskloom.tools.workspace import Workspace  # noqa: E402

GUIDE = Path(__file__).resolve().parents[2] / "examples" / "documents" / "field-guide.md"


def test_a_judged_run_adds_judge_scores_without_showing_agents_anything(tmp_path: Path) -> None:
    plain = Settings(workspace=tmp_path / "ws", embedder="hashing")
    graphs = GraphService(plain)
    graph_id = graphs.ingest_document(GUIDE).graph_id
    ids = asyncio.run(TaskService(graphs).generate(graph_id, count=1, seed=3, use_llm=False, verify=False)).task_ids
    task = TaskStore(Workspace(plain.workspace)).load(ids[0])
    with pytest.raises(InputError, match="--judge needs an LLM"):
        asyncio.run(Harness(plain, build_server).run([task], ["oracle"], judge=True))
    with openai_double.OpenAIDouble() as double:
        double.handler = lambda body: json.dumps({"quality": 0.75, "relevance": 1.0, "completeness": 0.5, "rationale": "ok"})
        settings = plain.model_copy(update={"llm_backend": "openai", "llm_base_url": double.base_url, "llm_model": "double-model"})
        report = asyncio.run(Harness(settings, build_server).run([task], ["oracle"], run_id="judged", judge=True))
        requests: list[dict[str, Any]] = double.chat_requests()
    [row] = report.summary.per_agent
    assert row.agent == "oracle" and row.success_rate == 1.0
    result = json.loads((settings.workspace / "runs" / "judged" / "results.jsonl").read_text().splitlines()[0])
    assert (result["scores"]["judge_quality"], result["scores"]["judge_relevance"], result["scores"]["judge_completeness"]) == (0.75, 1.0, 0.5)
    assert len(requests) == 1  # one judge call per episode; agents never talk to the LLM here
