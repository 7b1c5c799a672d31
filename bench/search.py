"""Retrieval benchmark: how well graph search finds the passage that answers a reader's question.

``bench/data/search_questions.json`` holds questions written from five real PDFs (Debian R
package documentation in ``tests/data/cache``), each labelled with a *passage*: a short
verbatim, whitespace-collapsed substring of the paragraph that answers it. Every PDF is
ingested once into a temporary workspace (real MiniLM embedder by default); then every
question is sent to ``GraphService.search(graph_id, question, k, mode=...)`` for each search
mode — ``vector`` (embedding similarity), ``lexical`` (BM25 over exact terms) and ``hybrid``
(both fused). A hit is *right* when its node's full text, whitespace-collapsed, contains the
passage (case-insensitive). Per mode it reports

* **MRR** — mean over the questions of 1/rank of the first right hit in the top k (0 if none),
* **recall@k** — share of questions with a right hit in the top k,
* **rank-1** — how many questions have a right hit first,

overall and per PDF, the questions each mode missed (and those every mode missed), and the
ingestion seconds per PDF. The target is hybrid MRR >= 0.75 (printed as PASS/FAIL). When the
installed ``GraphService.search`` has no ``mode`` parameter, only ``vector`` is run.

Run from the repository root::

    .venv/bin/python bench/search.py                      # all five PDFs, MiniLM, k=10
    .venv/bin/python bench/search.py --pdf zoo.pdf        # one PDF
    .venv/bin/python bench/search.py --embedder hashing   # quick plumbing check (low scores)

The last line printed is ``RESULT {json}`` for machines.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

TARGET_HYBRID_MRR = 0.75
ALL_MODES = ("vector", "lexical", "hybrid")
_ROOT = Path(__file__).resolve().parent.parent
_QUESTIONS = _ROOT / "bench" / "data" / "search_questions.json"
_PDF_DIR = _ROOT / "tests" / "data" / "cache"
_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    """Whitespace runs collapsed to one space, lower-cased: the form passages are matched in."""
    return _SPACE.sub(" ", text).strip().lower()


@dataclass(frozen=True)
class Question:
    pdf: str
    question: str
    passage: str


@dataclass
class Outcome:
    """The rank (1-based) of the first right hit of one question in one mode; None when not in the top k."""

    question: Question
    mode: str
    rank: int | None


@dataclass
class Scores:
    n: int = 0
    mrr: float = 0.0
    recall: float = 0.0
    rank1: int = 0
    missed: list[Question] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"questions": self.n, "mrr": round(self.mrr, 4), "recall": round(self.recall, 4), "rank1": self.rank1}


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="MRR and recall@k of graph search (vector, lexical, hybrid) on labelled questions about five PDFs."
    )
    parser.add_argument(
        "--embedder", choices=("minilm", "hashing"), default="minilm", help="embedder for ingestion and queries (default: minilm)"
    )
    parser.add_argument(
        "--pdf", action="append", default=None, metavar="NAME", help="only this PDF, e.g. zoo.pdf (repeatable; default: all)"
    )
    parser.add_argument("--k", type=int, default=10, help="hits per query; a right hit below rank k counts as a miss (default: 10)")
    parser.add_argument("--questions", type=Path, default=_QUESTIONS, help=f"question file (default: {_QUESTIONS.relative_to(_ROOT)})")
    args = parser.parse_args(argv)
    if not 1 <= args.k <= 100:
        parser.error("--k must be between 1 and 100")
    return args


def load_questions(path: Path, only: Sequence[str] | None = None) -> list[Question]:
    """The questions of ``path``, restricted to the PDFs named in ``only`` (with or without ``.pdf``)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    questions = [Question(pdf=item["pdf"], question=item["question"], passage=_SPACE.sub(" ", item["passage"]).strip()) for item in raw]
    if only:
        wanted = {name if name.endswith(".pdf") else f"{name}.pdf" for name in (Path(n).name for n in only)}
        unknown = wanted - {q.pdf for q in questions}
        if unknown:
            raise SystemExit(
                f"no questions for {', '.join(sorted(unknown))}; the file covers {', '.join(sorted({q.pdf for q in questions}))}"
            )
        questions = [q for q in questions if q.pdf in wanted]
    return questions


def check_labels(pdf: Path, questions: Sequence[Question]) -> list[str]:
    """Notes on passages that do not occur exactly once in the PDF's whitespace-collapsed text.

    A passage may occur more than once when each occurrence answers the question; zero is a broken label.
    """
    import pymupdf

    with pymupdf.open(pdf) as doc:
        text = _norm(" ".join(page.get_text() for page in doc))
    warnings = []
    for q in questions:
        count = text.count(q.passage.lower())
        if count != 1:
            note = "; fine only if every occurrence answers the question" if count > 1 else "; the label can never match"
            warnings.append(f"{q.pdf}: passage {q.passage!r} occurs {count} times in the PDF text{note}")
    return warnings


def supported_modes() -> tuple[str, ...]:
    """The search modes the installed GraphService.search accepts ('vector' only when it has no ``mode``)."""
    from taskloom.tools.graph.service import GraphService

    return ALL_MODES if "mode" in inspect.signature(GraphService.search).parameters else ("vector",)


def first_right_rank(hit_texts: Sequence[str], passage: str) -> int | None:
    """1-based rank of the first text containing ``passage`` (whitespace-collapsed, case-insensitive)."""
    needle = passage.lower()
    for rank, text in enumerate(hit_texts, start=1):
        if needle in _norm(text):
            return rank
    return None


def score(outcomes: Sequence[Outcome]) -> Scores:
    n = len(outcomes)
    if n == 0:
        return Scores()
    return Scores(
        n=n,
        mrr=sum(1.0 / o.rank for o in outcomes if o.rank) / n,
        recall=sum(1 for o in outcomes if o.rank) / n,
        rank1=sum(1 for o in outcomes if o.rank == 1),
        missed=[o.question for o in outcomes if o.rank is None],
    )


def run(
    questions: Sequence[Question], embedder: str, k: int, modes: Sequence[str], workspace: Path
) -> tuple[list[Outcome], dict[str, float], float, list[str]]:
    """Ingest each PDF once and search every question in every mode; returns outcomes, ingest seconds, model-load seconds and label warnings."""
    from taskloom.tools.graph.service import GraphService
    from taskloom.tools.settings import Settings

    service = GraphService(Settings(workspace=workspace, embedder=embedder))
    clock = time.perf_counter()
    service.embedder.embed(["warm-up"])  # model load + session warm-up, kept out of the ingest seconds
    model_load = time.perf_counter() - clock

    by_pdf: dict[str, list[Question]] = {}
    for q in questions:
        by_pdf.setdefault(q.pdf, []).append(q)

    outcomes: list[Outcome] = []
    ingest_seconds: dict[str, float] = {}
    warnings: list[str] = []
    for name, pdf_questions in by_pdf.items():
        path = _PDF_DIR / name
        if not path.is_file():
            raise SystemExit(f"no PDF at {path}; fetch the test PDFs with: bash tests/data/fetch-pdfs.sh (or make test-data)")
        warnings += check_labels(path, pdf_questions)
        print(f"ingesting {name} …", flush=True)
        clock = time.perf_counter()
        report = service.ingest_document(path)
        ingest_seconds[name] = time.perf_counter() - clock
        kg = service.load(report.graph_id)
        for q in pdf_questions:
            if not any(q.passage.lower() in _norm(n.text) for n in kg.nodes()):
                warnings.append(f"{name}: no node of the graph contains the passage {q.passage!r}; the question cannot be answered")
            for mode in modes:
                kwargs: dict[str, Any] = {"mode": mode} if modes != ("vector",) else {}
                hits = service.search(report.graph_id, q.question, k=k, **kwargs)
                texts = [kg.node(h.node_id).text if h.node_id in kg else h.text for h in hits]
                outcomes.append(Outcome(q, mode, first_right_rank(texts, q.passage)))
    return outcomes, ingest_seconds, model_load, warnings


def _table(title: str, rows: dict[str, Scores], k: int) -> list[str]:
    lines = [title, f"  {'mode':<8} {'MRR':>6} {f'recall@{k}':>10} {'rank-1':>8}"]
    for mode, s in rows.items():
        lines.append(f"  {mode:<8} {s.mrr:>6.3f} {s.recall:>10.3f} {f'{s.rank1}/{s.n}':>8}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    questions = load_questions(args.questions, args.pdf)
    modes = supported_modes()
    if modes == ("vector",):
        print("note: GraphService.search has no `mode` parameter yet; running the vector search only")
    pdfs = sorted({q.pdf for q in questions})
    print(
        f"{len(questions)} questions over {len(pdfs)} PDFs ({', '.join(f'{p}: {sum(q.pdf == p for q in questions)}' for p in pdfs)}); embedder {args.embedder}; k={args.k}; modes {', '.join(modes)}"
    )

    with tempfile.TemporaryDirectory(prefix="taskloom-search-bench-") as tmp:
        clock = time.perf_counter()
        outcomes, ingest_seconds, model_load, warnings = run(questions, args.embedder, args.k, modes, Path(tmp))
        wall = time.perf_counter() - clock

    for warning in warnings:
        print(f"label note: {warning}", file=sys.stderr)

    overall = {m: score([o for o in outcomes if o.mode == m]) for m in modes}
    per_pdf = {p: {m: score([o for o in outcomes if o.mode == m and o.question.pdf == p]) for m in modes} for p in pdfs}

    out: list[str] = [""]
    out += _table(f"Overall ({len(questions)} questions)", overall, args.k)
    for p in pdfs:
        out += _table(f"{p} ({per_pdf[p][modes[0]].n} questions)", per_pdf[p], args.k)
    rank_of = {(o.question, o.mode): o.rank for o in outcomes}
    for m in modes:
        missed = overall[m].missed
        out.append(f"Missed by {m} ({len(missed)}):")
        for q in missed:
            others = ", ".join(f"{o}: {rank_of[(q, o)] or '-'}" for o in modes if o != m)
            out.append(f"  [{q.pdf}] {q.question}" + (f"  ({others})" if others else ""))
    all_missed = [q for q in questions if all(rank_of[(q, m)] is None for m in modes)]
    out.append(f"Missed by every mode ({len(all_missed)}):")
    out += [f"  [{q.pdf}] {q.question}  — passage: {q.passage!r}" for q in all_missed]
    out.append(f"Ingest seconds (model load + warm-up {model_load:.1f} s, not included):")
    out += [f"  {p:<20} {s:6.1f}" for p, s in ingest_seconds.items()]
    out.append(f"  {'median':<20} {statistics.median(ingest_seconds.values()):6.1f}")
    verdict = None
    if "hybrid" in overall:
        verdict = overall["hybrid"].mrr >= TARGET_HYBRID_MRR
        out.append(f"hybrid MRR {overall['hybrid'].mrr:.3f} vs target {TARGET_HYBRID_MRR}: {'PASS' if verdict else 'FAIL'}")
    else:
        out.append(f"hybrid mode unavailable; target (hybrid MRR >= {TARGET_HYBRID_MRR}) not checked")
    print("\n".join(out))

    result = {
        "embedder": args.embedder,
        "k": args.k,
        "modes": list(modes),
        "questions": len(questions),
        "overall": {m: s.as_dict() for m, s in overall.items()},
        "per_pdf": {p: {m: s.as_dict() for m, s in rows.items()} for p, rows in per_pdf.items()},
        "missed": {m: [q.question for q in s.missed] for m, s in overall.items()},
        "missed_by_all": [q.question for q in all_missed],
        "ingest_seconds": {p: round(s, 2) for p, s in ingest_seconds.items()},
        "model_load_seconds": round(model_load, 2),
        "wall_seconds": round(wall, 1),
        "label_warnings": warnings,
        "target_hybrid_mrr": TARGET_HYBRID_MRR,
        "pass": verdict,
    }
    print("RESULT " + json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
