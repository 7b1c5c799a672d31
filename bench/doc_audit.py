"""Audit generated document tasks on real PDFs: is every gold answer grounded, every count right, nothing boilerplate?

For each PDF (Debian package docs in ``tests/data/cache/``, fetched by ``make test-data``) the
script ingests it with the hashing embedder, generates ``--count`` tasks through the full
pipeline (``TaskService.generate``: templates, reachability, de-duplication, coverage), and
re-checks every task independently of the generator:

* **grounded** — text answers: every line (or ``; ``-separated piece) of the gold answer occurs in
  its evidence nodes' text (whitespace and case folded, NFKC); true/false statements: the
  statement occurs in its paragraph exactly when the answer is ``true``;
* **counts** — a numeric answer equals the number of counted evidence nodes (table cells of
  distinct rows, references, tables or figures) and the second route of
  :func:`taskloom.tools.generate.document.guards.confirmed_count`;
* **not furniture** — no evidence in licence, contents, index or bibliography text
  (:func:`~taskloom.tools.generate.document.guards.boilerplate`); no answer that is a
  table-of-contents line (dot leaders, or a title followed by a page number); no broken glyphs.

Prints per PDF the tasks by type and the pass rate, every failure with its reason, and a last
line ``RESULT {json}``. Target: 100% pass. What it cannot see: whether the graph read the PDF
right in the first place (a table whose rows were merged gives a grounded but wrong answer);
the graph tests (``tests/tools/graph/test_pdf_*.py``) check that against the PDFs.

Run from the repository root::

    .venv/bin/python bench/doc_audit.py
    .venv/bin/python bench/doc_audit.py --pdf lmer --count 60
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

from taskloom.tools.generate.document.guards import boilerplate, confirmed_count, garbled
from taskloom.tools.generate.document.index import _Index
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Task

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
_ROOT = Path(__file__).resolve().parent.parent

PDFS = ("lmer", "countreg", "zoo", "generalsiminf", "xtableGallery")
_TOC_LINE = re.compile(r"(?:\.\s?){3,}\s*\d+\s*$|\s{2,}\d{1,4}\s*$")
_COUNTED = {"aggregation_table_rows": "table_cell", "aggregation_section_citations": "reference"}


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def audit(kg: KnowledgeGraph, ix: _Index, furniture: set[str], task: Task) -> str | None:
    """Why ``task`` fails the audit, or None."""
    answer = str(task.gold_answer or "")
    evidence = [kg.node(e) for e in task.evidence if e in kg]
    if len(evidence) != len(task.evidence):
        return "evidence node missing from the graph"
    counted_refs = task.provenance.template == "aggregation_section_citations"
    if any(n.id in furniture and not (counted_refs and n.type.value == "reference") for n in evidence):
        return "evidence in boilerplate (licence, contents, index or bibliography)"
    if garbled(task.instruction) or garbled(answer):
        return "broken glyphs in the question or answer"
    if _TOC_LINE.search(answer):
        return f"answer looks like a table-of-contents line: {answer[:60]!r}"
    if task.answer_kind == "boolean":
        statement = task.instruction.rsplit("Statement: ", 1)[-1]
        para = next((n for n in evidence if n.type.value == "paragraph"), None)
        if para is None or (_norm(statement) in _norm(para.text)) != (answer == "true"):
            return "true/false does not match the paragraph"
        return None
    if task.answer_kind == "number":
        kind = _COUNTED.get(task.provenance.template or "", evidence[0].type.value if evidence else "")
        if not answer.isdigit() or int(answer) != sum(n.type.value == kind for n in evidence):
            return f"count {answer} is not the number of {kind} nodes in the evidence"
        if not confirmed_count(ix, task.provenance.template or "", task.evidence, answer):
            return "count not confirmed by a second route"
        return None
    blob = _norm("\n".join(n.text for n in evidence))
    pieces = [p for p in re.split(r"\n|; ", answer) if p.strip()]
    missing = [p for p in pieces if _norm(p) not in blob]
    return f"answer piece not in the evidence: {missing[0][:60]!r}" if missing or not pieces else None


def graph_facts(kg: KnowledgeGraph) -> dict[str, int]:
    """What the graph read: tables (numbered), captions linked to the node of their kind and number, references."""
    tables = list(kg.nodes("table"))
    caption_of = [(e.source, e.target) for e in kg.edges() if e.type.value == "caption_of"]
    paired = sum(
        1
        for cap, target in caption_of
        if kg.node(cap).attrs.get("number") == kg.node(target).attrs.get("number")
        and kg.node(target).type.value == kg.node(cap).attrs.get("label")
        and not kg.node(target).attrs.get("inferred")
    )
    return {
        "tables": sum(1 for t in tables if not t.attrs.get("inferred")),
        "numbered_tables": sum(1 for t in tables if t.attrs.get("number") and not t.attrs.get("inferred")),
        "figures": sum(1 for _ in kg.nodes("figure")),
        "captions": sum(1 for _ in kg.nodes("caption")),
        "captions_paired": paired,
        "references": sum(1 for _ in kg.nodes("reference")),
        "formulas": sum(1 for _ in kg.nodes("formula")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", action="append", choices=(*PDFS, "R-exts"), help="a PDF to audit (repeatable; default: the five small ones)")
    parser.add_argument("--count", type=int, default=40, help="tasks generated per PDF (default 40)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", action="append", default=[], metavar="TYPE", help="print the tasks of this type verbatim (repeatable)")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        runtime = Runtime(Settings(workspace=Path(tmp), embedder="hashing"))
        tasks_service = runtime.task_service()
        for name in args.pdf or PDFS:
            path = _ROOT / "tests" / "data" / "cache" / f"{name}.pdf"
            if not path.is_file():
                print(f"{name}: {path} is missing; run `make test-data`")
                continue
            graph_id = runtime.graphs.ingest_document(path).graph_id
            kg = runtime.graphs.load(graph_id)

            async def go(gid: str = graph_id) -> Any:
                return await tasks_service.generate(gid, count=args.count, seed=args.seed)

            made = runtime.run(go)
            tasks = [tasks_service.store.load(i) for i in made.task_ids]
            ix = _Index(kg)
            furniture = boilerplate(ix)
            failures = [(t, why) for t in tasks if (why := audit(kg, ix, furniture, t)) is not None]
            types = Counter(t.type for t in tasks)
            passed = len(tasks) - len(failures)
            facts = graph_facts(kg)
            print(f"{name} graph: " + ", ".join(f"{k} {v}" for k, v in facts.items()))
            results[name] = {"graph": facts, "tasks": len(tasks), "passed": passed, "types": dict(sorted(types.items())), "failures": [{"task": t.id, "type": t.type, "why": w} for t, w in failures]}
            rate = 100.0 * passed / len(tasks) if tasks else 0.0
            print(f"{name}: {len(tasks)} tasks, audit {passed}/{len(tasks)} ({rate:.1f}%); " + ", ".join(f"{k} {v}" for k, v in sorted(types.items())))
            for t in tasks:
                if t.type in args.show:
                    print(f"  {t.type}: {t.instruction}\n    gold: {t.gold_answer!r}")
            for t, why in failures:
                print(f"  FAIL {t.type} {t.id}: {why}\n       {t.instruction[:140]} -> {str(t.gold_answer)[:80]!r}")
    total = sum(r["tasks"] for r in results.values())
    passed = sum(r["passed"] for r in results.values())
    print(f"overall: {passed}/{total} tasks pass ({100.0 * passed / total if total else 0:.1f}%; target 100%)")
    print("RESULT " + json.dumps({"args": vars(args), "sites": results, "total": total, "passed": passed}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
