"""Ingestion benchmark: seconds, nodes/s and peak memory of a full PDF ingestion, against embedding every node.

Each run ingests the PDF with ``GraphService.ingest_document`` into a fresh workspace, in a
child process of its own so that its peak resident memory (``ru_maxrss``) is its own. The
embedder is loaded and warmed up (one short text) before the clock starts; model loading is
reported on its own line. The same child then ingests the PDF a second time into the same
workspace (*re-ingest*: every vector comes from the workspace's embedding cache).

*Embedding every node* is what ingestion did before: every node of ``EMBEDDED_TYPES`` with
text (chunks included) embedded on its own, truncated to 256 word pieces. The benchmark
reports the ratio of the model inputs, word pieces and seconds spent to that: inputs and
word pieces exactly; seconds measured by embedding every node's text with a fresh embedder
in the parent (``--every-node measure``), or estimated from a seeded random sample of 1,000
of those texts (``sample``, the default above 6,000 nodes), or not at all (``skip``).

Run from the repository root::

    .venv/bin/python bench/ingest.py                                        # lmer.pdf
    .venv/bin/python bench/ingest.py --pdf tests/data/cache/R-exts.pdf --repeat 3
    .venv/bin/python bench/ingest.py --pdf tests/data/cache/fullrefman.pdf  # 2,415 pages

The last line printed is ``RESULT {json}`` for machines.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

_ROOT = Path(__file__).resolve().parent.parent
_DEFAULT_PDF = _ROOT / "tests" / "data" / "cache" / "lmer.pdf"
_SAMPLE = 1000
_MEASURE_UP_TO = 6000
_EMBED_PHASES = {"embed": "texts to vectors (cache, model, derived)", "link": "semantic_similar links", "store": "vector store upsert"}


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Time a full ingestion of a PDF: seconds, nodes/s, peak memory, and the ratio to embedding every node.")
    parser.add_argument("--pdf", type=Path, default=_DEFAULT_PDF, help=f"PDF to ingest (default: {_DEFAULT_PDF.relative_to(_ROOT)})")
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm", help="embedder (default: minilm)")
    parser.add_argument("--repeat", type=int, default=1, help="runs; the median of each number is reported (default: 1)")
    parser.add_argument(
        "--every-node", choices=("auto", "measure", "sample", "skip"), default="auto",
        help=f"how to time embedding every node: measure, sample {_SAMPLE} texts, skip (auto: measure up to {_MEASURE_UP_TO} nodes)",
    )  # fmt: skip
    parser.add_argument("--workspace", type=Path, default=None, help="parent of the per-run workspaces, kept (default: a temporary directory, deleted)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if not args.pdf.is_file():
        parser.error(f"no PDF at {args.pdf}. Fetch the test PDFs with: bash tests/data/fetch-pdfs.sh (or make test-data).")
    return args


def _settings(workspace: Path, kind: str, pdf: Path) -> Any:
    import pymupdf

    from taskloom.tools.settings import Settings

    with pymupdf.open(pdf) as doc:
        pages = doc.page_count
    base = Settings(workspace=workspace, embedder=kind)
    return base.model_copy(update={"max_pages": max(base.max_pages, pages)})


def _child(pdf: str, kind: str, workspace: str, out: Any) -> None:
    """One run in its own process: warm up, ingest (timed, with peak RSS), ingest again (cache warm)."""
    from taskloom.tools.graph.service import GraphService

    service = GraphService(_settings(Path(workspace), kind, Path(pdf)))
    clock = time.perf_counter()
    service.embedder.embed(["warm-up"])
    model_load = time.perf_counter() - clock
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    clock = time.perf_counter()
    report = service.ingest_document(Path(pdf))
    total = time.perf_counter() - clock
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    clock = time.perf_counter()
    again = service.ingest_document(Path(pdf))
    reingest = time.perf_counter() - clock
    out.put({
        "total": total, "reingest": reingest, "reingest_computed": again.embedding.computed, "model_load": model_load,
        "peak_mb": peak / 1024, "peak_before_mb": rss_before / 1024, "report": report.model_dump(mode="json"),
        "reingest_report": again.model_dump(mode="json"),
    })  # fmt: skip


def _run(pdf: Path, kind: str, workspace: Path) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(str(pdf), kind, str(workspace), queue))
    proc.start()
    try:
        result: dict[str, Any] = queue.get(timeout=3600)
    finally:
        proc.join(timeout=60)
    if proc.exitcode not in (0, None):
        raise SystemExit(f"the ingestion process failed with exit code {proc.exitcode}")
    return result


def _tokenizer() -> Any:
    from tokenizers import Tokenizer

    from taskloom.tools.llm.embedders import _TOKENIZER_PATH

    tok = Tokenizer.from_file(str(_TOKENIZER_PATH))
    tok.no_padding()
    tok.no_truncation()
    return tok


def _every_node(settings: Any, graph_id: str, how: str) -> dict[str, Any]:
    """Inputs, word pieces and (measured or estimated) seconds of embedding every node's text at 256 word pieces."""
    from taskloom.tools.graph.ingest.pipeline import EMBEDDED_TYPES
    from taskloom.tools.graph.store import GraphStore
    from taskloom.tools.llm.embedders import make_embedder
    from taskloom.tools.workspace import Workspace

    kg = GraphStore(Workspace(settings.workspace)).load(graph_id)
    texts = [n.text for n in kg.nodes(*EMBEDDED_TYPES) if n.text.strip()]
    tok = _tokenizer()
    tok.enable_truncation(max_length=256)
    out: dict[str, Any] = {"inputs": len(texts), "word_pieces": sum(len(e.ids) for e in tok.encode_batch(texts)), "how": how, "seconds": None}
    if how == "skip":
        return out
    embedder = make_embedder(settings)
    embedder.embed(["warm-up"])
    sample = texts if how == "measure" else random.Random(0).sample(texts, min(_SAMPLE, len(texts)))
    clock = time.perf_counter()
    embedder.embed(sample)
    out["seconds"] = (time.perf_counter() - clock) * len(texts) / len(sample)
    out["sampled"] = len(sample)
    return out


def _pieces_embedded(settings: Any, graph_id: str) -> int:
    """Word pieces of the model inputs the ingestion embedded, planned again from the stored graph."""
    from taskloom.tools.graph.embedding import plan_inputs, splitter_for
    from taskloom.tools.graph.ingest.pipeline import EMBEDDED_TYPES
    from taskloom.tools.graph.store import GraphStore
    from taskloom.tools.llm.embedders import make_embedder
    from taskloom.tools.workspace import Workspace

    kg = GraphStore(Workspace(settings.workspace)).load(graph_id)
    plan = plan_inputs(kg, EMBEDDED_TYPES, splitter_for(make_embedder(settings)))
    return sum(len(e.ids) for e in _tokenizer().encode_batch(plan.inputs))


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(float(r[key]) for r in runs)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    pdf = args.pdf.resolve()
    import chromadb
    import onnxruntime
    import pymupdf

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    versions = {
        "python": platform.python_version(), "pymupdf": pymupdf.__version__, "onnxruntime": onnxruntime.__version__,
        "chromadb": chromadb.__version__, "cpus": os.cpu_count(), "loadavg": " ".join(f"{x:.2f}" for x in load),
    }  # fmt: skip
    parent = args.workspace.resolve() if args.workspace else Path(tempfile.mkdtemp(prefix="taskloom-bench-"))
    parent.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, Any]] = []
    try:
        for i in range(args.repeat):
            workspace = Path(tempfile.mkdtemp(prefix=f"run{i + 1}-", dir=parent))
            print(f"run {i + 1}/{args.repeat}: ingesting {pdf.name} into {workspace} ...", file=sys.stderr, flush=True)
            runs.append(_run(pdf, args.embedder, workspace))
        report = runs[0]["report"]
        how = args.every_node if args.every_node != "auto" else ("measure" if report["embedded"] <= _MEASURE_UP_TO else "sample")
        print(f"embedding every node ({how}) ...", file=sys.stderr, flush=True)
        settings = _settings(workspace, args.embedder, pdf)
        every = _every_node(settings, report["graph_id"], how)
        pieces = _pieces_embedded(settings, report["graph_id"])
    finally:
        if args.workspace is None:
            shutil.rmtree(parent, ignore_errors=True)

    emb = report["embedding"]
    total, peak = _median(runs, "total"), max(r["peak_mb"] for r in runs)
    phases = {p: statistics.median(r["report"]["seconds"].get(p, 0.0) for r in runs) for p in report["seconds"]}
    inner = {p: statistics.median(r["report"]["embedding"]["seconds"].get(p, 0.0) for r in runs) for p in emb["seconds"]}
    again_phases = {p: statistics.median(r["reingest_report"]["seconds"].get(p, 0.0) for r in runs) for p in report["seconds"]}
    again_inner = {p: statistics.median(r["reingest_report"]["embedding"]["seconds"].get(p, 0.0) for r in runs) for p in emb["seconds"]}
    time_ratio = total / every["seconds"] if every["seconds"] else None
    rows = [
        ("total ingest (wall clock)", f"{total:9.2f} s"),
        *((f"  {p}", f"{s:9.2f} s") for p, s in phases.items()),
        *((f"    {_EMBED_PHASES.get(p, p)}", f"{s:9.2f} s") for p, s in inner.items()),
        ("  other (store.save, report)", f"{max(0.0, total - sum(phases.values())):9.2f} s"),
        ("re-ingest, same workspace (cache warm)", f"{_median(runs, 'reingest'):9.2f} s   ({runs[0]['reingest_computed']} inputs embedded)"),
        *((f"  {p}", f"{s:9.2f} s") for p, s in again_phases.items()),
        *((f"    {_EMBED_PHASES.get(p, p)}", f"{s:9.2f} s") for p, s in again_inner.items()),
        ("nodes/s (graph nodes / total)", f"{report['nodes'] / total:9.1f}   ({report['nodes']} nodes, {report['edges']} edges, {report['pages']} pages)"),
        ("peak memory (ru_maxrss of the run)", f"{peak:9.0f} MB   ({runs[0]['peak_before_mb']:.0f} MB after model load)"),
        ("nodes with a vector", f"{emb['nodes']:9d}   ({emb['derived']} chunks derived from their members)"),
        ("model inputs embedded", f"{emb['computed']:9d}   ({emb['texts']} distinct texts, {emb['split']} split into pieces)"),
        ("every node: inputs", f"{every['inputs']:9d}   ratio {emb['computed'] / every['inputs']:.3f}"),
        ("every node: word pieces", f"{every['word_pieces']:9d}   ratio {pieces / every['word_pieces']:.3f}  ({pieces} embedded)"),
    ]
    if every["seconds"] is not None:
        est = "measured" if every["how"] == "measure" else f"estimated from {every['sampled']} texts"
        rows.append(("every node: embed seconds", f"{every['seconds']:9.2f} s ({est}); total / that = {time_ratio:.3f}"))
    rows.append(("model load + warm-up (untimed)", f"{_median(runs, 'model_load'):9.2f} s"))
    width = max(len(label) for label, _ in rows)
    med = f"median of {len(runs)} runs" if len(runs) > 1 else "1 run"
    print(f"taskloom ingestion benchmark: {pdf.name}, embedder={args.embedder}, {med}")
    print(", ".join(f"{k} {v}" for k, v in versions.items()))
    print("-" * (width + 50))
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    print("-" * (width + 50))
    print("embedded by type: " + ", ".join(f"{t} {n}" for t, n in report["node_types"].items() if t in {"paragraph", "chunk", "heading", "list", "entity"}))
    if len(runs) > 1:
        print("runs: " + ", ".join(f"{r['total']:.2f} s / {r['peak_mb']:.0f} MB" for r in runs))
    result = {
        "pdf": pdf.name, "embedder": args.embedder, "repeat": args.repeat, **versions,
        "seconds": round(total, 3), "phases": {k: round(v, 3) for k, v in phases.items()}, "embed_phases": {k: round(v, 3) for k, v in inner.items()},
        "reingest_seconds": round(_median(runs, "reingest"), 3),
        "reingest_phases": {k: round(v, 3) for k, v in again_phases.items()}, "reingest_embed_phases": {k: round(v, 3) for k, v in again_inner.items()},
        "nodes": report["nodes"], "edges": report["edges"], "pages": report["pages"],
        "nodes_per_s": round(report["nodes"] / total, 2), "peak_mb": round(peak, 1), "embedding": {k: v for k, v in emb.items() if k != "seconds"},
        "every_node": every, "inputs_ratio": round(emb["computed"] / every["inputs"], 4), "word_pieces_embedded": pieces,
        "word_pieces_ratio": round(pieces / every["word_pieces"], 4), "time_ratio": round(time_ratio, 4) if time_ratio else None,
        "runs": [{"seconds": round(r["total"], 3), "peak_mb": round(r["peak_mb"], 1)} for r in runs],
    }  # fmt: skip
    print("RESULT " + json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
