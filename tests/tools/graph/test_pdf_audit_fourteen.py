"""The fourteenth truth audit's PDFs, read by a person against their pages.

- developers-reference.pdf (Sphinx): a chapter opens with "CHAPTER" / "FIVE" / "MANAGING PACKAGES" as three blocks,
  and even pages carry running heads "8 Chapter 2. Applying to Become a Member" (the page number first), which became
  sections; 5.4 goes on below its bullet list at the heading's edge, and its paragraphs were put under chapter 5,
  whose summary then spoke of 5.4; an inline link title's full stop cut "… distributions. should be followed as usual.";
  two tables of one section share the columns "alpha", "arm".
- pari-doc's tutorial.pdf: a chatty tutorial whose "Chapter 3" is the User's Manual's, not its own section 3; its
  summaries took questions ("But what if we wanted …?") and "The result is a vector …" of a command above.
- r-cran-robustbase's lmrob_simulation.pdf: "The variability of the estimators, on the other hand, …" leans on a
  paragraph before it.
"""

from __future__ import annotations

import re

import pytest

from taskloom.tools.generate.document.generator import generate_document_tasks, normalise
from taskloom.tools.generate.document.index import _Index
from taskloom.tools.generate.document.leaning import leans_back, question
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.tasks.model import Task

from .conftest import ingest_cached

PDFS = ("developers-reference", "tutorial", "lmrob_simulation")


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, KnowledgeGraph]:
    return ingest_cached(tmp_path_factory, PDFS)


@pytest.fixture(scope="module")
def tasks(graphs: dict[str, KnowledgeGraph]) -> dict[str, list[Task]]:
    return {name: generate_document_tasks(kg, count=40, seed=0)[0] for name, kg in graphs.items()}


def _section_of(kg: KnowledgeGraph, node_id: str) -> str:
    parent = next(e.source for e in kg.edges_into(node_id, "contains"))
    return normalise(kg.node(parent).text)


def test_sphinx_chapters_keep_their_numbers_and_running_heads_are_no_sections(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["developers-reference"]
    sections = [normalise(s.text) for s in kg.nodes("section")]
    assert "1 SCOPE OF THIS DOCUMENT" in sections and "5 MANAGING PACKAGES" in sections
    assert not [s for s in sections if re.match(r"^\d+ Chapter \d+\.", s)]  # "8 Chapter 2. Applying to Become a Member"
    assert not [p for p in kg.nodes("paragraph") if normalise(p.text) in ("CHAPTER", "ONE", "FIVE")]
    numbered = kg.meta.stats["numbered"]
    assert normalise(kg.node(numbered["section 5"]).text) == "5 MANAGING PACKAGES" and kg.meta.stats["chapters"] is True
    layout = [n for n in kg.nodes("paragraph") if normalise(n.text).startswith("For the native packages, the source package includes")]
    assert len(layout) == 1 and _section_of(kg, layout[0].id).startswith("5.4 ")  # below 5.4's bullets, still in 5.4


def test_a_chapter_of_another_book_refers_to_nothing_here(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["tutorial"]
    assert kg.meta.stats["chapters"] is False
    mentions = [n for n in kg.nodes("paragraph") if "Chapter 3" in n.text]
    assert mentions  # the tutorial points at the User's Manual's Chapter 3 several times
    assert not [e for n in mentions for e in kg.edges_from(n.id, "refers_to") if "Chapter" in str(e.attrs.get("label"))]


def test_no_question_is_a_statement_and_no_summary_leans_on_what_came_before(tasks: dict[str, list[Task]]) -> None:
    assert question("But what if we wanted the expansion around a point different from 0?")
    assert leans_back("The result is a vector with 4 components, showing that 7 is totally split.")
    assert leans_back("The variability of the estimators, on the other hand, can be compared over all simulated error distributions.")
    assert not leans_back("The result of a fit is stored in an object of class lmrob.")
    for name, made in tasks.items():
        for task in made:
            if task.type == "summarization":
                lines = [line for line in str(task.gold_answer).split("\n") if line]
                assert not [s for s in lines if question(s) or leans_back(s)], (name, task.gold_answer)
            if task.type == "fact_verification":
                assert not question(task.instruction.split("Statement:", 1)[1].strip()), (name, task.instruction)
            if task.type == "synthesis" or task.provenance.template == "cross_reference_section":
                assert "Chapter 3" not in task.instruction or name != "tutorial", task.instruction


def test_no_sentence_ends_at_a_link_titles_full_stop(tasks: dict[str, list[Task]]) -> None:
    golds = "\n".join(str(t.gold_answer) for made in tasks.values() for t in made)
    assert "oldstable distributions.\n" not in golds and not re.search(r"(?m)^should be followed", golds)


def test_a_table_is_not_named_by_columns_another_table_of_its_section_has_too(graphs: dict[str, KnowledgeGraph]) -> None:
    ix = _Index(graphs["developers-reference"])
    named = {t.id: ix.table_name(t) for t in graphs["developers-reference"].nodes("table")}
    for tid, name in named.items():
        if name is None or not name.startswith("the table"):
            continue
        listed = set(re.findall(r'"([^"]+)"', name.split("with the columns", 1)[1]))
        where = name.split(" with the columns", 1)[0]
        others = [o for o, n in named.items() if o != tid and n is not None and n.split(" with the columns", 1)[0] == where]
        assert not [o for o in others if listed <= set(re.findall(r'"([^"]+)"', str(named[o]).split("with the columns", 1)[1]))], name
