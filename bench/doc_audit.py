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

The **structure audit** (printed after the tasks; alone with ``--structure``, which needs no task generation
and defaults to all twenty-one PDFs, the five above, the long vignettes crq, strucplot, sandwich-CL, adjcurve,
survival, clm_article, the vignettes first read unseen: MAXtest, Implementation, LegoCondInf, chfls1, rq,
validate, paper2JSS, RcppEigen-Introduction, and texlive-base's pdfTeX and Kpathsea manuals, pdftex-a and kpathsea) sets what the graph read against what the PDF prints, read apart from the graph with pymupdf:
tables and figures found against the "Table N" / "Figure N" captions (and how many carry a printed number),
numbered sections against bold numbered headings, footnote nodes against footnotes set small at a page's foot
behind a raised mark, reference nodes that look like entries (a year, on or after the bibliography heading),
and section titles or table/figure/section numbers the graph holds more than once. Cells are checked
against hand-written truth in ``tests/tools/graph/test_pdf_long_vignettes.py``, ``test_pdf_vignette_tables.py``
and ``test_pdf_tables.py``.

Run from the repository root::

    .venv/bin/python bench/doc_audit.py
    .venv/bin/python bench/doc_audit.py --pdf lmer --count 60
    .venv/bin/python bench/doc_audit.py --structure
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
#: The long vignettes added for the structure audit (issue 36): booktabs tables, many numbered sections, run-in headings.
LONG_PDFS = (
    "crq", "strucplot", "sandwich-CL", "adjcurve", "survival", "clm_article", "MAXtest", "Implementation", "LegoCondInf", "chfls1", "rq",
    "validate", "paper2JSS", "RcppEigen-Introduction", "pdftex-a", "kpathsea",
)  # fmt: skip
_TOC_LINE = re.compile(r"(?:\.\s?){3,}\s*\d+\s*$|\s{2,}\d{1,4}\s*$")
#: Control characters: glyphs of old TeX fonts without a Unicode map (ligatures "ff" → \x1b, "fi" → \x1c, en dash → \x15).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_NUMBER_TAIL = re.compile(r"\d+: ")
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
    if garbled(task.instruction) or garbled(answer) or _CONTROL.search(task.instruction + answer):
        return "broken glyphs in the question or answer"
    if _NUMBER_TAIL.match(answer):
        return f"answer opens with the tail of a dotted number (\"Figure 2.4:\" read as Figure 2): {answer[:40]!r}"
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
_AFTER_SECTION = r'(?= of the document|, the passage| \((?:under|page)|\), is)'
_AFTER_OPENING = r'(?=, one| says| use it| refers| points| refer| mentions|, "|\.$)'
_QUALIFIER = r'(?: \((?:under "(.+?)"(?=\)|, page))?(?:, )?(?:page (\d+))?\))?'
_SECTION_REF = re.compile(r'\bsection "(.+?)"' + _AFTER_SECTION + _QUALIFIER)
_SIBLINGS = re.compile(r'^Sections "(.+?)" and "(.+?)" are both part of "(.+?)"(?=\. | \()' + _QUALIFIER)
_OPENING = re.compile(r'passages? beginning ("(?:.+?)"' + _AFTER_OPENING + r'(?:, "(?:.+?)"' + _AFTER_OPENING + r')*)')
_QUOTED = re.compile(r'"(.+?)"' + _AFTER_OPENING)
_LABEL = re.compile(r"\b(Table|Figure) (\d+(?:\.\d+)*[A-Za-z]?)\b")  # "Figure 2.5" names 2.5, not 2


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


# --- structure audit (--structure): what the graph read against what the PDF prints -------------------------

_CAPTION_LINE = re.compile(r"^(Table|Figure) (\d+(?:\.\d+)*[A-Za-z]?)(?::|\.(?!\d))", re.M)
_HEADING = re.compile(r"^((?:\d+|[A-Z])(?:\.\d+)*)\.?\s+([A-Z][^\n]{1,90})$")
_MARKS = "0123456789*∗†‡§¶ "
_YEAR = re.compile(r"\b(?:1[89]|20)\d\d[a-z]?\b")
_BIBLIOGRAPHY = re.compile(r"^\s*(?:\d+\.?\s+)?(References|Bibliography)\s*$", re.M | re.I)


def _bold(span: dict[str, Any]) -> bool:
    return bool(span["flags"] & 16) or any(k in span["font"] for k in ("Bold", "CMBX", "Semibold", "-BX"))


def pdf_truth(path: Path) -> dict[str, Any]:
    """What the PDF prints, read apart from the graph: pages, caption numbers, bold numbered headings, footnote texts.

    Headings: a block of bold spans at body size or larger reading "3.2 Title" ("A Title" for appendices);
    ``None`` when the PDF's fonts carry no bold (Type 3 fonts). Footnotes: blocks in the lowest third of a
    page set smaller than the body whose first span is a raised digit or symbol.
    """
    import pymupdf

    captions: dict[str, set[str]] = {"Table": set(), "Figure": set()}
    headings: list[tuple[int, str, str]] = []
    footnotes: list[tuple[int, str]] = []
    bib_page: int | None = None
    any_bold = False
    with pymupdf.open(path) as doc:
        pages = [page.get_text("dict")["blocks"] for page in doc]
        heights = [page.rect.height for page in doc]
        sizes: Counter[int] = Counter()
        for blocks in pages:
            for block in blocks:
                for span in (s for line in block.get("lines", []) for s in line["spans"]):
                    sizes[round(span["size"])] += len(span["text"])
                    any_bold = any_bold or _bold(span)
        body = sizes.most_common(1)[0][0] if sizes else 10
        for number, blocks in enumerate(pages, 1):
            for block in blocks:
                spans = [s for line in block.get("lines", []) for s in line["spans"] if s["text"].strip()]
                if not spans:
                    continue
                text = " ".join(" ".join(s["text"] for s in spans).split())
                for line in block["lines"]:
                    if (m := _CAPTION_LINE.match("".join(s["text"] for s in line["spans"]).strip())) is not None:
                        captions[m.group(1)].add(m.group(2))
                if bib_page is None and _BIBLIOGRAPHY.match(text) and all(_bold(s) for s in spans):
                    bib_page = number
                m = _HEADING.match(text)
                if m and len(spans) <= 40 and all(_bold(s) for s in spans) and spans[0]["size"] >= body - 0.5:
                    headings.append((number, m.group(1), m.group(2)))
                small = sorted(s["size"] for s in spans)[len(spans) // 2] < body - 0.5  # most of it set small (a URL's code font may not be)
                if block["bbox"][1] > heights[number - 1] * 2 / 3 and small:
                    footnotes += [(number, note) for note in _notes(block["lines"])]
    return {
        "pages": len(pages), "tables": captions["Table"], "figures": captions["Figure"],
        "headings": headings if any_bold and headings else None, "footnotes": footnotes, "bibliography_page": bib_page,
    }  # fmt: skip


def _notes(lines: list[dict[str, Any]]) -> list[str]:
    """The footnotes of a block set small at a page's foot: each opens on a line whose first span is a raised mark."""
    notes: list[list[str]] = []
    for line in lines:
        spans = [s for s in line["spans"] if s["text"].strip()]
        if not spans:
            continue
        mark = spans[0]["text"].strip()
        raised = len(mark) <= 3 and not mark.strip(_MARKS) and (spans[0]["flags"] & 1 or spans[0]["size"] < spans[-1]["size"] - 1)
        if raised:
            notes.append([])
        if notes:
            notes[-1].append("".join(s["text"] for s in (spans[1:] if raised else spans)))
    return [_squash(" ".join(n)) for n in notes if len(" ".join(n)) > 8]


def _squash(text: str) -> str:
    return "".join(_norm(text).split())


def _real_footnote(node: Any, truth: list[tuple[int, str]]) -> bool:
    """A footnote node is real when its opening is the opening of a footnote printed at the foot of its page."""
    text = _squash(node.text.lstrip(_MARKS))[:20]
    return bool(text) and any(page == node.source.page and body.startswith(text) for page, body in truth)


def _real_reference(node: Any, bib_page: int | None) -> bool:
    return bool(_YEAR.search(node.text)) and len(node.text) >= 30 and (bib_page is None or (node.source.page or 0) >= bib_page)


def structure(kg: KnowledgeGraph, truth: dict[str, Any]) -> dict[str, Any]:
    """One row of the structure audit: tables and figures against their captions, headings, footnotes, references, addresses."""
    tables = [t for t in kg.nodes("table") if not t.attrs.get("inferred")]
    figures = [f for f in kg.nodes("figure") if not f.attrs.get("inferred")]
    sections = list(kg.nodes("section"))
    numbers = {
        kind: Counter(str(n.attrs["number"]) for n in nodes if n.attrs.get("number"))
        for kind, nodes in (("table", tables), ("figure", figures), ("section", sections))
    }  # fmt: skip
    heads = truth["headings"]
    titles = Counter(_norm(s.text) for s in sections)
    footnotes = list(kg.nodes("footnote"))
    references = list(kg.nodes("reference"))
    return {
        "pages": truth["pages"],
        "tables_captioned": len(truth["tables"]),
        "tables_found": len(tables),
        "tables_numbered_right": len(set(numbers["table"]) & truth["tables"]),
        "tables_uncaptioned": sum(1 for t in tables if not t.attrs.get("number")),
        "cells": sum(1 for _ in kg.nodes("table_cell")),
        "figures_captioned": len(truth["figures"]),
        "figures_found": len(figures),
        "figures_numbered_right": len(set(numbers["figure"]) & truth["figures"]),
        "headings_numbered": None if heads is None else len({n for _, n, _ in heads}),
        "sections": len(sections),
        "sections_numbered": sum(numbers["section"].values()),
        "headings_matched": None if heads is None else len({n for _, n, _ in heads} & {k.rstrip(".") for k in numbers["section"]}),
        "footnotes_printed": len(truth["footnotes"]),
        "footnotes": len(footnotes),
        "footnotes_real": sum(_real_footnote(n, truth["footnotes"]) for n in footnotes),
        "references": len(references),
        "references_real": sum(_real_reference(n, truth["bibliography_page"]) for n in references),
        "titles_shared": sum(c for c in titles.values() if c > 1),
        "numbers_shared": sum(c for counts in numbers.values() for c in counts.values() if c > 1),
        "shared": [f"section title {t!r} x{c}" for t, c in titles.items() if c > 1]
        + [f"{kind} {n} x{c}" for kind, counts in numbers.items() for n, c in counts.items() if c > 1],
    }


_COLUMNS = (
    ("pdf", "{name}"), ("pages", "{pages}"),
    ("tables found/captioned (numbered right)", "{tables_found}/{tables_captioned} ({tables_numbered_right})"),
    ("cells", "{cells}"),
    ("figures found/captioned (numbered right)", "{figures_found}/{figures_captioned} ({figures_numbered_right})"),
    ("sections (numbered)", "{sections} ({sections_numbered})"),
    ("numbered headings matched/printed", "{headings_matched}/{headings_numbered}"),
    ("footnotes real/nodes (printed)", "{footnotes_real}/{footnotes} ({footnotes_printed})"),
    ("references real/nodes", "{references_real}/{references}"),
    ("shared titles / numbers", "{titles_shared} / {numbers_shared}"),
)  # fmt: skip


def structure_table(rows: dict[str, dict[str, Any]]) -> str:
    """The structure audit as a Markdown table, one row per PDF."""
    lines = ["| " + " | ".join(h for h, _ in _COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
    for name, row in rows.items():
        lines.append("| " + " | ".join(f.format(name=name, **{k: "—" if v is None else v for k, v in row.items()}) for _, f in _COLUMNS) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", action="append", help="a PDF to audit: a name in tests/data/cache or a path (repeatable; default: the five small ones)")
    parser.add_argument("--count", type=int, default=40, help="tasks generated per PDF (default 40)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--structure", action="store_true", help="only the structure audit (no tasks); default PDFs: all nineteen")
    parser.add_argument("--show", action="append", default=[], metavar="TYPE", help="print the tasks of this type verbatim (repeatable)")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        runtime = Runtime(Settings(workspace=Path(tmp), embedder="hashing"))
        tasks_service = runtime.task_service()
        rows: dict[str, dict[str, Any]] = {}
        for name in args.pdf or (PDFS + LONG_PDFS if args.structure else PDFS):
            path = Path(name) if name.endswith(".pdf") else _ROOT / "tests" / "data" / "cache" / f"{name}.pdf"
            if not path.is_file():
                print(f"{name}: {path} is missing; run `make test-data`")
                continue
            graph_id = runtime.graphs.ingest_document(path).graph_id
            kg = runtime.graphs.load(graph_id)
            rows[name] = structure(kg, pdf_truth(path))
            if args.structure:
                results[name] = {"structure": rows[name]}
                continue

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
                "graph": facts, "structure": rows[name], "tasks": len(tasks), "passed": passed, "ill_posed": len(unclear), "types": dict(sorted(types.items())),
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
    print("structure audit (found by the graph / printed in the PDF):\n" + structure_table(rows))
    for name, row in rows.items():
        if row["shared"]:
            print(f"  {name} non-unique addresses: " + "; ".join(row["shared"]))
    if args.structure:
        print("RESULT " + json.dumps({"args": vars(args), "sites": results}))
        return 0
    total = sum(r["tasks"] for r in results.values())
    passed = sum(r["passed"] for r in results.values())
    unclear = sum(r["ill_posed"] for r in results.values())
    print(f"overall: {passed}/{total} tasks pass ({100.0 * passed / total if total else 0:.1f}%; target 100%); ill-posed {unclear}/{total} (target 0)")
    print("RESULT " + json.dumps({"args": vars(args), "sites": results, "total": total, "passed": passed, "ill_posed": unclear}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
