"""The eleventh to thirteenth truth audits' PDFs, read by a person against their pages.

- latexdiff's latexdiff-man.pdf has no outline: its option names ("-s or --simplify") are headings whose text is
  indented under them, and "Note that the three mode options are mutually exclusive …", set back at the heading's
  edge, belongs to the section above the options; it was summarised under the option (audit 11's wrong gold).
- r-cran-gmm's gmm_with_R.pdf breaks a sentence at a display ("… the two-step GMM defined as:"): no answer ends there.
- r-cran-actuar's distributions.pdf opens two appendix sections with one sentence: no comparison of the two.
- rubber's manual points elsewhere ("See Chapter 3 [Directives], page 6."): no synthesis of such pointers.
- fasta3-doc's fasta_guide.pdf heads "3.5 FASTLIBS" in 12 pt typewriter (1.10× the body), read as code, so 3.4 took
  its text; Table 2 sets "Target file(s)" 9.5 pt from "Function" (0.87× the body), read as one column.
- r-cran-mcmc's bfst.pdf opens "3.1 Setup" with a one-line paragraph indented as paragraphs are: no option list, so
  3.1 is not closed by the next paragraph at the heading's edge.
"""

from __future__ import annotations


import pytest

from taskloom.tools.generate.document.generator import generate_document_tasks, normalise, split_sentences
from taskloom.tools.generate.document.leaning import leans_back, pointer
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.tasks.model import Task

from .conftest import ingest_cached

PDFS = ("latexdiff-man", "gmm_with_R", "distributions", "rubber", "fasta_guide", "bfst")


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, KnowledgeGraph]:
    return ingest_cached(tmp_path_factory, PDFS)


@pytest.fixture(scope="module")
def tasks(graphs: dict[str, KnowledgeGraph]) -> dict[str, list[Task]]:
    return {name: generate_document_tasks(kg, count=40, seed=0)[0] for name, kg in graphs.items()}


def _section_of(kg: KnowledgeGraph, node_id: str) -> str:
    parent = next(e.source for e in kg.edges_into(node_id, "contains"))
    return normalise(kg.node(parent).text)


def test_text_back_at_an_option_headings_edge_leaves_the_options_section(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["latexdiff-man"]
    note = [n for n in kg.nodes("paragraph") if "three mode options are mutually exclusive" in n.text]
    assert len(note) == 1
    assert _section_of(kg, note[0].id) == "4 OPTIONS"
    described = [n for n in kg.nodes("paragraph") if normalise(n.text).startswith("Run in SIMPLIFY mode")]
    assert len(described) == 1 and _section_of(kg, described[0].id) == "-s or --simplify"  # the option's own text stays under it


def test_answers_do_not_end_at_a_display_and_sections_are_told_apart(tasks: dict[str, list[Task]]) -> None:
    nexts = [t for t in tasks["gmm_with_R"] if t.type == "comprehension"]
    assert nexts and not [t for t in nexts if str(t.gold_answer).rstrip().endswith(":")]
    compared = [t for t in tasks["distributions"] if t.provenance.template == "comparison_sections"]
    for task in compared:
        lines = [line for line in str(task.gold_answer).split("\n") if line]
        assert len(set(lines)) == len(lines), task.gold_answer


def test_no_synthesis_of_pointers_and_no_statement_that_leans_on_its_surroundings(tasks: dict[str, list[Task]]) -> None:
    for name, made in tasks.items():
        for task in made:
            if task.type == "synthesis":
                assert not [line for line in str(task.gold_answer).split("\n") if pointer(line)], (name, task.gold_answer)
            if task.type == "summarization":
                assert not [line for line in str(task.gold_answer).split("\n") if leans_back(line)], (name, task.gold_answer)
            if task.type == "fact_verification":
                statement = task.instruction.split("Statement:", 1)[1].strip()
                assert not leans_back(statement), (name, statement)


def test_a_numbered_heading_in_typewriter_stays_a_heading_and_close_columns_stay_apart(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["fasta_guide"]
    assert "3.5 FASTLIBS" in [normalise(s.text) for s in kg.nodes("section")]
    table = next(t for t in kg.nodes("table") if t.attrs.get("number") == "2")
    headers = {kg.node(e.target).attrs.get("column_header") for e in kg.edges_from(table.id, "contains")}
    assert {"Target file(s)", "Function"} <= headers and "Target file(s) Function" not in headers


def test_spaced_dots_end_no_sentence_and_cut_cells_are_not_asked(graphs: dict[str, KnowledgeGraph], tasks: dict[str, list[Task]]) -> None:
    text = next(n.text for n in graphs["bfst"].nodes("paragraph") if "use the integers 1, . . ., k" in normalise(n.text))
    assert [s for s in split_sentences(text) if s.startswith("In using ST") and s.endswith("k for both.")]
    tables = [t for t in tasks["fasta_guide"] if t.type in ("table_qa", "comparison", "reasoning") and "Table 2" in t.instruction]
    assert tables and not [t for t in tables if str(t.gold_answer).rstrip().endswith(("/", " or no", " would be"))]


def test_a_one_line_indented_opening_is_no_option_list(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["bfst"]
    row = [n for n in kg.nodes("paragraph") if normalise(n.text).startswith("In each row, 1 indicates the predictor")]
    assert len(row) == 1 and _section_of(kg, row[0].id) == "3.1 Setup"
