"""Ingestion benchmark: time a full PDF ingestion against a floor measured in the same run.

The *floor* is the work no PDF ingester built on pymupdf and MiniLM can skip:

* ``page.get_text("dict")`` on every page (opening the document included),
* ``page.find_tables(use_layout=False, strategy="lines")`` on every page,
* embedding exactly the texts the ingestion embedded, with a fresh embedder of the
  same kind and batch size, in one ``embed()`` call.

The ratio ``total / floor`` has a target of at most 1.5. Both the ingestion and the
floor embedder are warmed up (one short text embedded) before timing, so model
loading is not in either number; it is reported on its own line.

Run from the repository root::

    .venv/bin/python bench/ingest.py                 # lmer.pdf, real MiniLM, once
    .venv/bin/python bench/ingest.py --repeat 3      # median of three runs
    .venv/bin/python bench/ingest.py --embedder hashing

The last line printed is ``RESULT {json}`` for machines.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

TARGET_RATIO = 1.5
_ROOT = Path(__file__).resolve().parent.parent
_DEFAULT_PDF = _ROOT / "tests" / "data" / "cache" / "lmer.pdf"


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Time a full ingestion of a PDF and compare it with the pymupdf + embedding floor measured in the same run."
    )
    parser.add_argument("--pdf", type=Path, default=_DEFAULT_PDF, help=f"PDF to ingest (default: {_DEFAULT_PDF.relative_to(_ROOT)})")
    parser.add_argument(
        "--embedder", choices=("minilm", "hashing"), default="minilm", help="embedder for ingestion and floor (default: minilm)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs; the median of each number is reported (default: 1)")
    parser.add_argument(
        "--workspace",
        type=Path,
        default=None,
        help="parent directory for the per-run workspaces, kept afterwards (default: a temporary directory, deleted)",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if not args.pdf.is_file():
        hint = " Fetch it with: bash tests/data/fetch-pdfs.sh (or make test-data)." if args.pdf == _DEFAULT_PDF else ""
        parser.error(f"no PDF at {args.pdf}.{hint}")
    return args


def _floor_pdf(pdf: Path) -> dict[str, float]:
    """Seconds of get_text("dict") (with opening the file) and of find_tables, over every page."""
    import pymupdf

    clock = time.perf_counter()
    doc = pymupdf.open(pdf)
    get_text = time.perf_counter() - clock
    find_tables = 0.0
    try:
        for number in range(doc.page_count):
            clock = time.perf_counter()
            page = doc.load_page(number)
            page.get_text("dict")
            get_text += time.perf_counter() - clock
            clock = time.perf_counter()
            page.find_tables(use_layout=False, strategy="lines")
            find_tables += time.perf_counter() - clock
    finally:
        doc.close()
    return {"get_text": get_text, "find_tables": find_tables}


def _one_run(pdf: Path, kind: str, workspace: Path) -> dict[str, Any]:
    from taskloom.tools.graph.ingest.pipeline import EMBEDDED_TYPES
    from taskloom.tools.graph.service import GraphService
    from taskloom.tools.llm.embedders import make_embedder
    from taskloom.tools.settings import Settings

    settings = Settings(workspace=workspace, embedder=kind)
    service = GraphService(settings)

    # Model load + session warm-up, outside the timed ingestion.
    clock = time.perf_counter()
    service.embedder.embed(["warm-up"])
    model_load = time.perf_counter() - clock

    clock = time.perf_counter()
    report = service.ingest_document(pdf)
    total = time.perf_counter() - clock

    floor = _floor_pdf(pdf)

    # The texts the ingestion embedded, selected as pipeline._embed selects them.
    kg = service.store.load(report.graph_id)
    nodes = [n for n in kg.nodes(*EMBEDDED_TYPES) if n.text.strip()]
    texts = [n.text for n in nodes]
    if len(texts) != report.embedded:
        print(f"warning: {len(texts)} texts selected from the stored graph, but the ingestion embedded {report.embedded}", file=sys.stderr)
    by_type: dict[str, int] = {}
    chars_by_type: dict[str, int] = {}
    for n in nodes:
        by_type[n.type.value] = by_type.get(n.type.value, 0) + 1
        chars_by_type[n.type.value] = chars_by_type.get(n.type.value, 0) + len(n.text)

    fresh = make_embedder(settings)
    clock = time.perf_counter()
    fresh.embed(["warm-up"])
    floor_model_load = time.perf_counter() - clock
    clock = time.perf_counter()
    fresh.embed(texts)
    floor["embed"] = time.perf_counter() - clock

    floor_total = floor["get_text"] + floor["find_tables"] + floor["embed"]
    phases = dict(report.seconds)
    chunks = report.node_types.get("chunk", 0)
    return {
        "total": total,
        "phases": phases,
        "other": max(0.0, total - sum(phases.values())),
        "floor": floor,
        "floor_total": floor_total,
        "ratio": total / floor_total if floor_total else float("inf"),
        "model_load": model_load,
        "floor_model_load": floor_model_load,
        "pages": report.pages,
        "nodes": report.nodes,
        "edges": report.edges,
        "chunks": chunks,
        "embedded": report.embedded,
        "embedded_chars": sum(len(t) for t in texts),
        "embedded_by_type": dict(sorted(by_type.items())),
        "embedded_chars_by_type": dict(sorted(chars_by_type.items())),
        "batch_size": settings.embed_batch_size,
        "chunks_per_s": chunks / total if total else 0.0,
        "embedded_per_s": report.embedded / total if total else 0.0,
        "floor_embedded_per_s": len(texts) / floor["embed"] if floor["embed"] else 0.0,
    }


def _median(runs: list[dict[str, Any]], *keys: str) -> float:
    values = []
    for run in runs:
        value: Any = run
        for key in keys:
            value = value.get(key, 0.0)
        values.append(float(value))
    return statistics.median(values)


def _summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    first = runs[0]
    phases = list(dict.fromkeys(p for run in runs for p in run["phases"]))  # pipeline order
    return {
        "total": _median(runs, "total"),
        "phases": {p: _median(runs, "phases", p) for p in phases},
        "other": _median(runs, "other"),
        "floor": {k: _median(runs, "floor", k) for k in ("get_text", "find_tables", "embed")},
        "floor_total": _median(runs, "floor_total"),
        "ratio": _median(runs, "ratio"),
        "model_load": _median(runs, "model_load"),
        "floor_model_load": _median(runs, "floor_model_load"),
        "chunks_per_s": _median(runs, "chunks_per_s"),
        "embedded_per_s": _median(runs, "embedded_per_s"),
        "floor_embedded_per_s": _median(runs, "floor_embedded_per_s"),
        **{
            k: first[k]
            for k in (
                "pages",
                "nodes",
                "edges",
                "chunks",
                "embedded",
                "embedded_chars",
                "embedded_by_type",
                "embedded_chars_by_type",
                "batch_size",
            )
        },
    }


def _print_table(args: argparse.Namespace, s: dict[str, Any], runs: list[dict[str, Any]], versions: dict[str, str]) -> None:
    verdict = "PASS" if s["ratio"] <= TARGET_RATIO else "FAIL"
    med = f"median of {len(runs)} runs" if len(runs) > 1 else "1 run"
    rows: list[tuple[str, str]] = [
        ("total ingest (wall clock)", f"{s['total']:9.2f} s"),
    ]
    for phase, secs in s["phases"].items():
        rows.append((f"  {phase}", f"{secs:9.2f} s"))
    rows.append(("  other (store.save, report)", f"{s['other']:9.2f} s"))
    rows += [
        ("floor", f"{s['floor_total']:9.2f} s"),
        ("  get_text('dict'), all pages", f"{s['floor']['get_text']:9.2f} s"),
        ("  find_tables(lines), all pages", f"{s['floor']['find_tables']:9.2f} s"),
        ("  embed same texts, one call", f"{s['floor']['embed']:9.2f} s"),
        ("ratio total / floor", f"{s['ratio']:9.2f}   target <= {TARGET_RATIO}  {verdict}"),
        ("chunks/s (chunk nodes / total)", f"{s['chunks_per_s']:9.2f}   ({s['chunks']} chunks)"),
        ("embedded texts/s (ingest)", f"{s['embedded_per_s']:9.2f}   ({s['embedded']} texts, {s['embedded_chars']} chars)"),
        ("embedded texts/s (floor)", f"{s['floor_embedded_per_s']:9.2f}"),
        ("pages", f"{s['pages']:9d}"),
        ("nodes", f"{s['nodes']:9d}"),
        ("edges", f"{s['edges']:9d}"),
        ("model load + warm-up (untimed)", f"{s['model_load']:9.2f} s ingest, {s['floor_model_load']:.2f} s floor"),
    ]
    width = max(len(label) for label, _ in rows)
    print(f"taskloom ingestion benchmark: {args.pdf.name}, embedder={args.embedder} (batch {s['batch_size']}), {med}")
    print(
        f"python {versions['python']}, pymupdf {versions['pymupdf']}, onnxruntime {versions['onnxruntime']}, "
        f"chromadb {versions['chromadb']}, {versions['cpus']} CPUs, load average {versions['loadavg']}"
    )
    print("embedders warmed up (one short text embedded) before both timings; model load is not in either.")
    print("-" * (width + 40))
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    print("-" * (width + 40))
    share = ", ".join(f"{t} {n} ({s['embedded_chars_by_type'][t]} chars)" for t, n in s["embedded_by_type"].items())
    print(f"embedded by type: {share}")
    if len(runs) > 1:
        for i, run in enumerate(runs, 1):
            print(f"run {i}: total {run['total']:.2f} s, floor {run['floor_total']:.2f} s, ratio {run['ratio']:.2f}")


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    pdf = args.pdf.resolve()

    clock = time.perf_counter()
    import chromadb  # noqa: F401  - one-time process cost, kept out of the timed ingestion
    import onnxruntime
    import pymupdf

    import taskloom.tools.graph.service  # noqa: F401

    imports = time.perf_counter() - clock
    versions = {
        "python": platform.python_version(),
        "pymupdf": pymupdf.__version__,
        "onnxruntime": onnxruntime.__version__,
        "chromadb": chromadb.__version__,
        "cpus": str(os.cpu_count()),
        "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a",
    }

    if args.workspace is not None:
        parent = args.workspace.resolve()
        parent.mkdir(parents=True, exist_ok=True)
        cleanup = False
    else:
        parent = Path(tempfile.mkdtemp(prefix="taskloom-bench-"))
        cleanup = True
    runs = []
    try:
        for i in range(args.repeat):
            workspace = Path(tempfile.mkdtemp(prefix=f"run{i + 1}-", dir=parent))
            print(f"run {i + 1}/{args.repeat}: ingesting {pdf.name} into {workspace} ...", file=sys.stderr, flush=True)
            runs.append(_one_run(pdf, args.embedder, workspace))
    finally:
        if cleanup:
            shutil.rmtree(parent, ignore_errors=True)

    summary = _summarise(runs)
    _print_table(args, summary, runs, versions)
    result = {
        "pdf": pdf.name,
        "embedder": args.embedder,
        "repeat": args.repeat,
        "target_ratio": TARGET_RATIO,
        "pass": summary["ratio"] <= TARGET_RATIO,
        "imports_seconds": round(imports, 3),
        **versions,
        **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in summary.items() if not isinstance(v, dict)},
        **{
            k: ({kk: round(vv, 3) for kk, vv in v.items()} if k in ("phases", "floor") else v)
            for k, v in summary.items()
            if isinstance(v, dict)
        },
        "runs": [{"total": round(r["total"], 3), "floor_total": round(r["floor_total"], 3), "ratio": round(r["ratio"], 3)} for r in runs],
    }
    print("RESULT " + json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
