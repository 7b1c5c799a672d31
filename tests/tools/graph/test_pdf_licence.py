"""A manual's licence appendix: its numbered clauses are neither the document's sections nor task evidence.

The manual is typeset here (pymupdf): chapters "1 Introduction" and "2 Usage" (with "2.1 Options"),
then "Appendix A GNU General Public License" with a preamble and six clauses "0. Definitions." …
"5. Conveying Modified Source Versions." in bold body text, as GNU manuals print the GPL; once with
an outline that lists the chapters and the appendix only, once without an outline. Before, the
clauses became top-level sections 1–5 and "section 1" resolved to "1. Source Code.".
"""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest

from taskloom.tools.generate.document.generator import generate_document_tasks
from taskloom.tools.graph.ingest.pipeline import build_document_graph
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.settings import Settings

CLAUSES = ("Definitions.", "Source Code.", "Basic Permissions.", "Protecting Users' Legal Rights From Anti-Circumvention Law.",
           "Conveying Verbatim Copies.", "Conveying Modified Source Versions.")  # fmt: skip


def _clause(i: int) -> str:
    return (f"Clause text number {i} explains what the licensee may do with the covered work under these terms. "
            "It applies to every copy of the program that is conveyed in source or object form, section by section. ") * 2  # fmt: skip


def _manual(path: Path, outline: bool) -> Path:
    doc = pymupdf.open()
    toc: list[list[object]] = []

    def page(items: list[tuple[str, str]]) -> None:
        pg, y = doc.new_page(), 72.0
        for kind, text in items:
            if kind in ("title", "h1", "h2", "bold"):
                size = {"title": 20, "h1": 14, "h2": 12, "bold": 10}[kind]
                pg.insert_text((150 if kind == "title" else 72, y), text, fontsize=size, fontname="hebo")
                y += {"title": 40, "h1": 24, "h2": 20, "bold": 6}[kind]
                if outline and kind in ("h1", "h2"):
                    toc.append([1 if kind == "h1" else 2, text, doc.page_count])
            else:
                unused = pg.insert_textbox(pymupdf.Rect(72, y, 522, y + 140), text, fontsize=10, fontname="helv")
                y += 140 - unused + 26

    page([("title", "The frobnicate manual"), ("h1", "1 Introduction"),
          ("p", "This manual describes the frobnicate program, which converts data files between formats and checks them. " * 3),
          ("p", "The program reads its input once and writes the converted output in one pass over the file. " * 3),
          ("h1", "2 Usage"), ("p", "Run the program with the input file and the output file as its two arguments. " * 3),
          ("h2", "2.1 Options"), ("p", "The option --check verifies the output against the input after writing it. " * 3)])  # fmt: skip
    licence = [("h1", "Appendix A GNU General Public License"), ("p", "Version 3, 29 June 2007. Everyone may copy and distribute verbatim copies of this document."),
               ("bold", "Preamble"), ("p", "The licenses for most software are designed to take away your freedom to share and change it. " * 2),
               ("bold", "TERMS AND CONDITIONS")]  # fmt: skip
    for i, title in enumerate(CLAUSES[:3]):
        licence += [("bold", f"{i}. {title}"), ("p", _clause(i))]
    page(licence)
    page([item for i, title in enumerate(CLAUSES[3:], start=3) for item in (("bold", f"{i}. {title}"), ("p", _clause(i)))])
    if outline:
        doc.set_toc(toc)
    doc.save(path)
    return path


@pytest.fixture(scope="module", params=[True, False], ids=["outline", "no-outline"])
def manual(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeGraph:
    tmp = tmp_path_factory.mktemp("licence")
    return build_document_graph(_manual(tmp / "manual.pdf", request.param), Settings(workspace=tmp / "ws", embedder="hashing"))


def _under(kg: KnowledgeGraph, section_id: str) -> set[str]:
    out, stack = set(), [section_id]
    while stack:
        for _, child, key in kg.g.out_edges(stack.pop(), keys=True):
            if key == "contains" and child not in out:
                out.add(child)
                stack.append(child)
    return out


def test_section_numbers_are_the_manuals_not_the_licence_clauses(manual: KnowledgeGraph) -> None:
    numbered = {k: manual.node(v).text for k, v in manual.meta.stats["numbered"].items() if k.startswith("section ")}
    assert numbered == {"section 1": "1 Introduction", "section 2": "2 Usage", "section 2.1": "2.1 Options"}
    titles = [s.text for s in manual.nodes("section")]
    assert titles[:4] == ["1 Introduction", "2 Usage", "2.1 Options", "Appendix A GNU General Public License"]
    assert not [t for t in titles if re.match(r"^\d+\.\s", t)]


def test_the_clauses_are_text_of_the_licence_section_and_no_task_stands_on_them(manual: KnowledgeGraph) -> None:
    licence = next(s.id for s in manual.nodes("section") if s.text == "Appendix A GNU General Public License")
    clauses = [p.id for p in manual.nodes("paragraph") if "Clause text number" in p.text]
    assert len(clauses) == len(CLAUSES) and set(clauses) <= _under(manual, licence)
    tasks, _ = generate_document_tasks(manual, None, 10_000, 0, None)
    assert any("frobnicate" in manual.node(e).text for t in tasks for e in t.evidence)  # the manual's own text makes tasks
    assert not [t.instruction for t in tasks if set(t.evidence) & (_under(manual, licence) | {licence})]
