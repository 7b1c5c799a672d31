"""Benchmark task generation.

1. Template document tasks per second on lmer.pdf's graph (target ≥ 100/s): all 12
   types, a fixed seed, timed after the graph is built (graph building is
   bench/ingest.py's business).
2. LLM calls per accepted task (target ≤ 2) through TaskService with the LLM path on,
   against the local OpenAI-compatible TEST DOUBLE (tests/tools/llm/openai_double.py):
   no real LLM runs offline here, so the double plays a model that writes grounded
   tasks; what is measured is the pipeline's call count (generation + scoring +
   retries), which does not depend on the model.

Usage: python bench/generate.py [--pdf tests/data/cache/lmer.pdf] [--count 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools" / "llm"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", type=Path, default=ROOT / "tests" / "data" / "cache" / "lmer.pdf")
    parser.add_argument("--count", type=int, default=20, help="template tasks per type")
    parser.add_argument("--llm-tasks", type=int, default=12, help="tasks asked of the LLM path")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import openai_double

    from taskloom.tools.generate.document.generator import generate_document_tasks
    from taskloom.tools.generate.service import TaskService
    from taskloom.tools.graph.ingest.pipeline import build_document_graph
    from taskloom.tools.graph.service import GraphService
    from taskloom.tools.llm.client import OpenAILLM
    from taskloom.tools.settings import Settings

    work = Path(tempfile.mkdtemp(prefix="bench-generate-"))
    settings = Settings(workspace=work, embedder="hashing")
    kg = build_document_graph(args.pdf, settings)
    rates, counts = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        tasks, _ = generate_document_tasks(kg, None, args.count, seed=0)
        seconds = time.perf_counter() - start
        rates.append(len(tasks) / seconds)
        counts.append(len(tasks))
    rate = statistics.median(rates)

    def author(body: dict) -> str:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith("You rate generated agent tasks"):
            return json.dumps({"clarity": 4, "difficulty_fit": 4, "correctness": 4, "overall": 4, "reason": "ok"})
        subgraph = json.loads(user.split("Subgraph (JSON):\n", 1)[1])
        node = next((n for n in subgraph["nodes"] if len(n["text"].split()) >= 6), subgraph["nodes"][0])
        return json.dumps({"question": f"What does node {node['id']} state first?", "answer": " ".join(node["text"].split()[:6]), "evidence": [node["id"]]})

    with openai_double.OpenAIDouble() as double:
        double.handler = author
        graphs = GraphService(settings)
        graph_id = graphs.ingest_document(args.pdf).graph_id
        llm = OpenAILLM(double.base_url, "double-model", cache_dir=work / "llm-cache")
        service = TaskService(graphs, llm=llm)  # document tasks: no browser
        start = time.perf_counter()
        result = asyncio.run(service.generate(graph_id, count=args.llm_tasks, seed=0))
        llm_seconds = time.perf_counter() - start
        usage = llm.usage_report()["total"]
    accepted = len(result.task_ids)
    per_task = usage["calls"] / accepted if accepted else float("inf")

    print(f"template document tasks: {counts[-1]} tasks (12 types x up to {args.count}) from {args.pdf.name}")
    print(f"  tasks/s (median of {args.repeat})      {rate:10.1f}   target >= 100   {'PASS' if rate >= 100 else 'FAIL'}")
    print(f"LLM path against the local test double: {accepted} accepted of {args.llm_tasks} asked in {llm_seconds:.1f} s")
    print(f"  LLM calls                       {usage['calls']:10d}   (HTTP requests {usage['requests']}, cached {usage['cached_calls']})")
    print(f"  LLM calls per accepted task     {per_task:10.2f}   target <= 2     {'PASS' if per_task <= 2 else 'FAIL'}")
    print(f"  tokens: prompt {usage['prompt_tokens']}, completion {usage['completion_tokens']}")
    print("RESULT " + json.dumps({"template_tasks_per_s": round(rate, 1), "template_tasks": counts[-1], "llm_accepted": accepted, "llm_calls": usage["calls"], "llm_calls_per_accepted": round(per_task, 2), "stages": result.report.stages}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
