"""The eighth and ninth truth audits (glpk's graphs.pdf, gbm.pdf, lmtest-intro.pdf: 75 tasks, 1 wrong, 8 ill-posed; glpk's
cnfsat.pdf, party.pdf, cfitsio's quick.pdf: 74 tasks, 0 wrong, 9 ill-posed).

True/false statements were made false by changing a figure reference ("Figure 2 and 0") or a variable's coding ("y = 0"
for "y = 1"); a summary took a sentence that points at a list ("… the utility functions listed below.") and an opening
the next sentence takes back ("… seldom seems to overfit." / "This is not true as …"). Since audit 14 such a section is not
summarised at all: a summary is made only where every paragraph's opening stands as a key statement.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from taskloom.tools.generate.document.falsify import _NUMBER, _stated_number
from taskloom.tools.generate.document.generator import generate_document_tasks
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings


@pytest.mark.parametrize(
    ("sentence", "stated"),
    [
        ("These results can both be seen in Figure 2 and 3.", []),
        ("If the data are sorted (such as cases for which y = 1 come first), shuffle them.", []),
        ("This distribution implements the LambdaMart algorithm [1].", []),
        ("Friedman (2002) proposed the stochastic gradient boosting algorithm.", []),
        ("See Section 4.1 for 3 examples of 12 hours each.", ["3", "12"]),
        ("In 1998 the method was 20% faster (Smith 1999; Jones, 2001).", ["1998", "20"]),
        ("The parameter P specifies the problem object for the 0-1 programming problem.", []),  # audit 9: glpk's cnfsat.pdf
        ("Let x be a k × 1-vector of regressors.", []),  # audit 11: strucchange-intro.pdf, a number of the notation
        ("The update θ(i+1) is computed from the 3 posteriors.", ["3"]),  # audit 11: mixture-regressions.pdf
        ("As a restriction to condition 1 above, the file must hold 2 blocks.", ["2"]),  # audit 11: latexdiff-man.pdf
        ("The run takes at least 4 times longer than 3 others.", ["3"]),  # audit 13: mcmc's bfst.pdf, a bound
    ],
)
def test_a_false_copy_changes_only_numbers_the_passage_states(sentence: str, stated: list[str]) -> None:
    assert [m.group(0) for m in _NUMBER.finditer(sentence) if _stated_number(sentence, m)] == stated


DOC = """# Boosting notes

## Learning rate

As several authors have phrased it, boosting seldom seems to overfit, no matter how many terms are included in the expansion. This is not true as the discussion points out.

Shrinking the learning rate improves the model's performance on new data, at the cost of more iterations and a longer fit. Values near 0.01 are common.

For consistency with typical usage, our goal is to maximize one of the utility functions listed below.

The number of iterations is chosen by cross-validation or by an out-of-bag estimate of the improvement in the loss. Both are offered.

## Trees

Each tree is grown on a random half of the training rows, drawn again for every iteration of the fit.

The depth of the trees sets the order of the interactions the model can represent, and stumps fit additive models.
"""


def test_a_summary_skips_openings_taken_back_or_pointing_at_a_list(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text(DOC, encoding="utf-8")
    service = GraphService(Settings(workspace=tmp_path / "ws", embedder="hashing"))
    kg = service.load(service.ingest_document(tmp_path / "notes.md").graph_id)
    summaries = [t for seed in range(4) for t in generate_document_tasks(kg, count=30, seed=seed)[0] if t.type == "summarization"]
    assert summaries
    for task in summaries:  # the learning rate's openings leave two of its four paragraphs out: it is not summarised at all
        gold = str(task.gold_answer)
        assert "seldom seems to overfit" not in gold and "listed below" not in gold and "Shrinking the learning rate" not in gold, gold
        assert gold.split("\n") == ["Each tree is grown on a random half of the training rows, drawn again for every iteration of the fit.",
                                     "The depth of the trees sets the order of the interactions the model can represent, and stumps fit additive models."]


GRAPHS = Path(__file__).resolve().parents[3] / "tests" / "data" / "cache" / "graphs.pdf"


@pytest.mark.skipif(not GRAPHS.is_file(), reason="test PDF missing; run tests/data/fetch-pdfs.sh")
def test_headings_lose_their_footnote_number_and_one_at_a_pages_top_is_no_running_head(tmp_path: Path) -> None:
    """glpk's graphs.pdf: "Comments" + raised "7" (a footnote's mark); "Example" opens pages 17, 28 and 60 as a heading, and
    ten more pages below their top: it was dropped there as a running head, so page 28's text ran on under "Comments"."""
    service = GraphService(Settings(workspace=tmp_path / "ws", embedder="hashing"))
    kg = service.load(service.ingest_document(GRAPHS).graph_id)
    titles = [n.text for n in kg.nodes("section")]
    assert "Comments" in titles and not [t for t in titles if t.startswith("Comments") and t != "Comments"], titles
    assert "DIMACS clique/coloring format" in titles
    examples = [n for n in kg.nodes("section") if n.text == "Example"]
    pages = sorted(n.source.page for n in examples if n.source is not None and n.source.page is not None)
    assert len(examples) >= 12 and {28, 60} <= set(pages), pages  # page 17's follows a list of references, which takes it in (left)


GBM = Path(__file__).resolve().parents[3] / "tests" / "data" / "cache" / "gbm.pdf"


@pytest.mark.skipif(not GBM.is_file(), reason="test PDF missing; run tests/data/fetch-pdfs.sh")
def test_a_heading_whose_number_stands_beside_three_rows_of_title_is_a_heading(tmp_path: Path) -> None:
    """r-cran-gbm's gbm.pdf: "2" beside "Improving boosting methods … interpretation" on three rows is four lines; section 2
    was read as a paragraph, and its first passage was placed in section 1.1."""
    service = GraphService(Settings(workspace=tmp_path / "ws", embedder="hashing"))
    kg = service.load(service.ingest_document(GBM).graph_id)
    titles = [n.text for n in kg.nodes("section")]
    assert "2 Improving boosting methods using control of the learning rate, sub-sampling, and a decomposition for interpretation" in titles, titles


def test_statements_stand_alone_false_copies_keep_counts_positive_and_indexed_variables_are_no_acronyms(tmp_path: Path) -> None:
    """Audit 9: "This is less obvious for nodes 2 and 3." (true, but says nothing alone), "the first 0 routines" (a count of 3
    made 0), "… (____, . . . , Yn)" with the gold "Y1" (a variable, blanked as an acronym)."""
    from taskloom.tools.generate.document.falsify import _falsify
    from taskloom.tools.generate.document.index import _Index
    from taskloom.tools.graph.ingest.entities import extract_entities

    assert extract_entities("the hypothesis H0 on (Y1, . . . , Yn) read by NASA's MP3 decoder") == [("acronym", "NASA"), ("acronym", "MP3")]
    doc = tmp_path / "routines.md"
    doc.write_text(
        "# Routines\n\n## Use\n\nThe last routine simply combines the function of the first 3 routines of this section. "
        "This is less obvious for nodes 2 and, especially, 3 of the tree that the routine draws.\n",
        encoding="utf-8",
    )
    service = GraphService(Settings(workspace=tmp_path / "ws", embedder="hashing"))
    kg = service.load(service.ingest_document(doc).graph_id)
    ix = _Index(kg)
    (para,) = [p for p in kg.nodes("paragraph")]
    sentence = "The last routine simply combines the function of the first 3 routines of this section."
    import numpy as np

    changed = {_falsify(ix, para, sentence, [], np.random.default_rng(seed))[0] for seed in range(40)}  # type: ignore[index]
    assert "the first 0 routines" not in " ".join(changed) and len(changed) >= 2, changed
    statements = [t.instruction for seed in range(6) for t in generate_document_tasks(kg, count=20, seed=seed)[0] if t.type == "fact_verification"]
    assert not [s for s in statements if "less obvious" in s], statements
