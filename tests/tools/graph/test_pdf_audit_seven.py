"""The seventh truth audit's three PDFs, read by a person against their pages (75 tasks: 13 wrong, 6 ill-posed before).

- r-cran-effects's partial-residuals.pdf sets x₁² as a superscript over a subscript; PyMuPDF starts a new text block
  at the subscript, so captions and sentences were cut at "E(y|x) = x2" and "1 + x2x3, with …" stood apart. Its figure
  panels are titled in small type right under their captions ("x1 predictor effect plot"), which were glued on.
- graphviz-doc's dotguide.pdf has a footnote at a page's foot between a paragraph's two halves, a paragraph cut by a
  page of figures right after a full stop, and passages that name two figures at once ("Figures 7 and 8").
- r-cran-flexmix's flexmix-intro.pdf writes R's TRUE ("weighted=TRUE"), which was blanked out as an acronym.
"""

from __future__ import annotations


import pytest

from taskloom.tools.generate.document.generator import generate_document_tasks, normalise, split_sentences
from taskloom.tools.generate.document.leaning import INTRODUCES as _INTRODUCES
from taskloom.tools.graph.model import KnowledgeGraph

from .conftest import ingest_cached

PDFS = ("partial-residuals", "dotguide", "flexmix-intro")


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, KnowledgeGraph]:
    return ingest_cached(tmp_path_factory, PDFS)


def _texts(kg: KnowledgeGraph, kind: str) -> list[str]:
    return [normalise(n.text) for n in kg.nodes(kind)]


def test_a_subscript_under_a_superscript_keeps_its_row_and_a_panel_title_is_no_caption_tail(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["partial-residuals"]
    captions = _texts(kg, "caption")
    (seven,) = [c for c in captions if c.startswith("Figure 7:")]
    (nine,) = [c for c in captions if c.startswith("Figure 9:")]
    assert seven.endswith("E(y|x) = x2 1 +x2x3, with moderately correlated predictors."), seven
    assert nine.endswith("and for {x1, x2}, which corresponds to an interaction that is not in the model."), nine
    assert not [c for c in captions if "effect plot" in c], "a panel's title in smaller type is no part of a caption"
    paragraphs = _texts(kg, "paragraph")
    assert not [p for p in paragraphs if p.startswith("1 +")]
    assert [p for p in paragraphs if "true model E(y|x) = x2 1 + x2 + x3, where the predictors are moderately correlated" in p]


def test_a_paragraph_goes_on_past_a_footnote_at_the_foot_of_its_page(graphs: dict[str, KnowledgeGraph]) -> None:
    paragraphs = _texts(graphs["dotguide"], "paragraph")
    assert [p for p in paragraphs if "avoid using too many bright colors" in p and "choose a narrower range of colors" in p]
    assert not [p for p in paragraphs if p.startswith("choose a narrower range")]
    # a page of figures between a paragraph's halves, the break right after a full stop: the next page's paragraph opens
    # flush left where the document's paragraphs open indented, so it goes on
    assert [p for p in paragraphs if "must have a unique node identifier. The inode number or full path name" in p]


def test_r_literals_are_no_acronyms(graphs: dict[str, KnowledgeGraph]) -> None:
    acronyms = {n.text for n in graphs["flexmix-intro"].nodes("entity") if n.attrs.get("kind") == "acronym"}
    assert "EM" in acronyms and not acronyms & {"TRUE", "FALSE", "NULL", "NA"}


def test_tasks_ask_for_one_figure_and_summaries_are_made_of_paragraph_openings(graphs: dict[str, KnowledgeGraph]) -> None:
    for name, kg in graphs.items():
        openings = {next(iter(split_sentences(p)), "") for p in _texts(kg, "paragraph")}
        tasks, _ = generate_document_tasks(kg, count=25, seed=0)
        assert len(tasks) >= 20, name
        for task in tasks:
            assert 'says "Figures' not in task.instruction and 'says "Tables' not in task.instruction, task.instruction
            assert task.gold_answer not in ("TRUE", "FALSE", "NULL"), task.instruction
            if task.type == "summarization":
                assert all(line in openings for line in str(task.gold_answer).split("\n")), (name, task.gold_answer)


def test_below_alone_does_not_make_a_sentence_an_introduction() -> None:
    assert not _INTRODUCES.search("For reproducibility, we set a known seed for the generator, reported below.")
    assert _INTRODUCES.search("The output is shown below.") and _INTRODUCES.search("The model looks as follows.")
    assert _INTRODUCES.search("We fit it with the following call:")
    assert _INTRODUCES.search("This leads to the following model which is the best with respect to the BIC.")  # audit 11
    assert not _INTRODUCES.search("In the following years that method spread widely.")
    assert _INTRODUCES.search("An entry of Table 2 deserves a few additional words.")  # audit 12: actuar's distributions.pdf
