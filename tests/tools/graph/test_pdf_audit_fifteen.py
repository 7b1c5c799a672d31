"""The fifteenth truth audit's PDFs, read by a person against their pages (75 tasks: 1 wrong, 9 ill-posed).

- maint-guide.en.pdf (Debian New Maintainers' Guide), mixtools.pdf (r-cran-mixtools) and debian-faq.en.pdf: a cloze
  blanked an acronym right after the words it abbreviates ("the Filesystem Hierarchy Standard (____)"); a synthesis
  gathered passages that only send the reader elsewhere ("Please see Section 6.1 for more information.", "For more
  information on the available distributions read Section 6.1."); summaries took an editorial note ("Authors' note: …"),
  sentences that lean on an equation ("Consider the mixture model described by equation (1).") or a numbered step
  ("Note that step 3, …"), and sections whose openings leave out what they say.
"""

from __future__ import annotations


import pytest

from taskloom.tools.generate.document.generator import generate_document_tasks, spelled_out
from taskloom.tools.generate.document.leaning import leans_back, pointer
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.tasks.model import Task

from .conftest import ingest_cached

PDFS = ("maint-guide.en", "mixtools", "debian-faq.en")


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Task]]:
    graphs: dict[str, KnowledgeGraph] = ingest_cached(tmp_path_factory, PDFS)
    return {name: generate_document_tasks(kg, count=40, seed=0)[0] for name, kg in graphs.items()}


def test_the_audits_sentences_are_told_apart() -> None:
    assert spelled_out("Files go where the Filesystem Hierarchy Standard (FHS) says.", "FHS")
    assert spelled_out("Debian has a bug tracking system (BTS) which files details of bugs.", "BTS")
    assert not spelled_out("Report it to the BTS (see below).", "BTS")
    assert pointer("Please see Section 6.1 for more information.")
    assert pointer("For more information on the available distributions read Section 6.1.")
    assert not pointer("Please read the licence before you upload a package.")
    for s in ("Authors' note: The original version of this vignette was produced using an article.",
              "Consider the mixture model described by equation (1).",
              "Note that step 3, which is not part of a standard parametric bootstrap, is needed here.",
              "Keywords: cutpoint, EM algorithm, mixture of regressions.",  # the abstract's metadata, read as a paragraph
              "Notice the curvature provided by the estimates from the IGLE fit.",  # tells the reader to look: nothing true or false
              "The converse is probably also true, that is, a program will probably succeed."):  # fmt: skip
        assert leans_back(s), s
    assert not leans_back("The mixtools package implements a parametric bootstrap algorithm in the boot.se function.")


def test_no_cloze_reads_off_an_acronyms_words_and_no_synthesis_of_pointers(tasks: dict[str, list[Task]]) -> None:
    clozes = [t for made in tasks.values() for t in made if t.provenance.template == "extraction_cloze"]
    assert clozes
    for task in clozes:
        passage = task.instruction.rsplit("\n", 1)[0]  # the blanked sentence, without the question under it
        assert not spelled_out(passage.replace("____", str(task.gold_answer)), str(task.gold_answer)), task.instruction
        assert "/____" not in passage, task.instruction  # "/usr/share/doc/autotools-dev/____.Debian.gz": a path is no acronym's place
    for name, made in tasks.items():
        for task in made:
            if task.type == "synthesis":
                assert not [line for line in str(task.gold_answer).split("\n") if pointer(line)], (name, task.gold_answer)
            if task.type == "summarization":
                assert not [line for line in str(task.gold_answer).split("\n") if leans_back(line)], (name, task.gold_answer)
