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

and separately whether each task is **well-posed** (:func:`ill_posed`), as a reader would find what it names:

* no other task of the document asks the same question (case and spacing aside) with another gold answer;
* every section it names (``section "T"``, optionally ``(under "P")``, ``(page N)`` or both; the sections of a
  comparison inside their parent) is exactly one section of the graph;
* every passage it quotes the opening of (``the passage beginning "…"``) opens exactly one text node;
* every "Table N" / "Figure N" it names is the number of exactly one table or figure.

Prints per PDF the tasks by type and the pass rate, every failure with its reason, and a last
line ``RESULT {json}``. Target: 100% pass and no ill-posed task. What it cannot see: whether the graph read the PDF
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


#: Where a quoted address ends: the words the templates put after it (titles and openings may hold quotes themselves).
_AFTER_SECTION = r'(?= of the document|, the passage| \(|\), is)'
_AFTER_OPENING = r'(?=, one| says| use it| refers| points| refer| mentions|, "|\.$)'
_QUALIFIER = r'(?: \((?:under "(.+?)"(?=\)|, page))?(?:, )?(?:page (\d+))?\))?'
_SECTION_REF = re.compile(r'\bsection "(.+?)"' + _AFTER_SECTION + _QUALIFIER)
_SIBLINGS = re.compile(r'^Sections "(.+?)" and "(.+?)" are both part of "(.+?)"(?=\. | \()' + _QUALIFIER)
_OPENING = re.compile(r'passages? beginning ("(?:.+?)"' + _AFTER_OPENING + r'(?:, "(?:.+?)"' + _AFTER_OPENING + r')*)')
_QUOTED = re.compile(r'"(.+?)"' + _AFTER_OPENING)
_LABEL = re.compile(r"\b(Table|Figure) (\d+[A-Za-z]?)\b")


def _sections_named(kg: KnowledgeGraph, ix: _Index, title: str, parent: str | None, page: str | None) -> list[str]:
    out = []
    for sec in kg.nodes("section"):
        if _norm(sec.text) != _norm(title) or (page and str(sec.source.page) != page):
            continue
        up = ix.section_of(sec.id)
        if parent and (up is None or _norm(up.text) != _norm(parent)):
            continue
        out.append(sec.id)
    return out


def ill_posed(kg: KnowledgeGraph, ix: _Index, task: Task, asked: dict[str, set[str]]) -> str | None:
    """Why ``task`` does not name one thing a reader can find, or None; ``asked``: question → gold answers of all the document's tasks."""
    question = " ".join(task.instruction.casefold().split())
    if len(asked.get(question, ())) > 1:
        return f"{len(asked[question])} tasks ask this question with different gold answers"
    text = task.instruction
    if (m := _SIBLINGS.match(text)) is not None:
        parents = _sections_named(kg, ix, m.group(3), m.group(4), m.group(5))
        if len(parents) != 1:
            return f"{len(parents)} sections are named {m.group(3)!r} (the parent of a comparison)"
        for title in m.group(1, 2):
            kids = [c.id for c in ix.kids(parents[0], "section") if _norm(c.text) == _norm(title)]
            if len(kids) != 1:
                return f"{len(kids)} sections of {m.group(3)!r} are named {title!r}"
    else:
        for m in _SECTION_REF.finditer(text):
            found = _sections_named(kg, ix, m.group(1), m.group(2), m.group(3))
            if len(found) != 1:
                return f"{len(found)} sections match {m.group(0)!r}"
    texts = [_norm(n.text) for n in kg.nodes("paragraph", "list", "caption", "footnote", "formula", "reference", "table_cell")]
    for m in _OPENING.finditer(text):
        for quoted in _QUOTED.findall(m.group(1) + "."):
            opening = _norm(quoted.removesuffix("…"))
            hits = sum(t.startswith(opening) for t in texts)
            if hits != 1:
                return f"{hits} passages begin {quoted[:50]!r}"
    for kind, number in _LABEL.findall(text):
        same = [n for n in kg.nodes(kind.lower()) if str(n.attrs.get("number", "")) == number]
        if len(same) > 1:
            return f"{len(same)} {kind.lower()}s are numbered {number}"
    return None


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
    parser.add_argument("--pdf", action="append", help="a PDF to audit: a name in tests/data/cache or a path (repeatable; default: the five small ones)")
    parser.add_argument("--count", type=int, default=40, help="tasks generated per PDF (default 40)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", action="append", default=[], metavar="TYPE", help="print the tasks of this type verbatim (repeatable)")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        runtime = Runtime(Settings(workspace=Path(tmp), embedder="hashing"))
        tasks_service = runtime.task_service()
        for name in args.pdf or PDFS:
            path = Path(name) if name.endswith(".pdf") else _ROOT / "tests" / "data" / "cache" / f"{name}.pdf"
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
            asked: dict[str, set[str]] = {}
            for t in tasks:
                asked.setdefault(" ".join(t.instruction.casefold().split()), set()).add(_norm(str(t.gold_answer or "")))
            unclear = [(t, why) for t in tasks if (why := ill_posed(kg, ix, t, asked)) is not None]
            types = Counter(t.type for t in tasks)
            passed = len(tasks) - len(failures)
            facts = graph_facts(kg)
            print(f"{name} graph: " + ", ".join(f"{k} {v}" for k, v in facts.items()))
            results[name] = {
                "graph": facts, "tasks": len(tasks), "passed": passed, "ill_posed": len(unclear), "types": dict(sorted(types.items())),
                "failures": [{"task": t.id, "type": t.type, "why": w} for t, w in failures],
                "ill_posed_tasks": [{"task": t.id, "type": t.type, "why": w} for t, w in unclear],
            }  # fmt: skip
            rate = 100.0 * passed / len(tasks) if tasks else 0.0
            print(f"{name}: {len(tasks)} tasks, audit {passed}/{len(tasks)} ({rate:.1f}%), ill-posed {len(unclear)}; " + ", ".join(f"{k} {v}" for k, v in sorted(types.items())))
            for t in tasks:
                if t.type in args.show:
                    print(f"  {t.type}: {t.instruction}\n    gold: {t.gold_answer!r}")
            for t, why in failures:
                print(f"  FAIL {t.type} {t.id}: {why}\n       {t.instruction[:140]} -> {str(t.gold_answer)[:80]!r}")
            for t, why in unclear:
                print(f"  ILL-POSED {t.type} {t.id}: {why}\n       {t.instruction[:140]} -> {str(t.gold_answer)[:80]!r}")
    total = sum(r["tasks"] for r in results.values())
    passed = sum(r["passed"] for r in results.values())
    unclear = sum(r["ill_posed"] for r in results.values())
    print(f"overall: {passed}/{total} tasks pass ({100.0 * passed / total if total else 0:.1f}%; target 100%); ill-posed {unclear}/{total} (target 0)")
    print("RESULT " + json.dumps({"args": vars(args), "sites": results, "total": total, "passed": passed, "ill_posed": unclear}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
