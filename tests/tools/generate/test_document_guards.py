"""Document tasks never stand on boilerplate, keep one task per passage and type, cap cloze tasks, confirm counts twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from taskloom.tools.generate.document.generator import generate_document_tasks
from taskloom.tools.generate.document.guards import CLOZE_TEMPLATES, boilerplate, cap_cloze, confirmed_count, passage_of
from taskloom.tools.generate.document.index import _Index
from taskloom.tools.graph.model import Edge, EdgeType, GraphMeta, KnowledgeGraph, Node, NodeType
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Provenance, Task

GUIDE = Path(__file__).resolve().parents[3] / "examples" / "documents" / "field-guide.md"
LICENCE = """

## Licence

This guide is free software. Permission is hereby granted to copy it, with or without changes.
The guide is distributed WITHOUT ANY WARRANTY; see the GNU General Public License for details.
It mentions 12 volunteers and the acronym WMO (World Meteorological Organization) twice: WMO, WMO.
"""


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeGraph:
    root = tmp_path_factory.mktemp("doc")
    doc = root / "guide.md"
    doc.write_text(GUIDE.read_text(encoding="utf-8") + LICENCE, encoding="utf-8")
    service = GraphService(Settings(workspace=root / "ws", embedder="hashing"))
    return service.load(service.ingest_document(doc).graph_id)


def test_no_task_stands_on_licence_text_or_the_bibliography(graph: KnowledgeGraph) -> None:
    ix = _Index(graph)
    furniture = boilerplate(ix)
    licence = [n for n in graph.nodes("paragraph") if "Permission is hereby granted" in n.text]
    assert licence and all(n.id in furniture for n in licence)
    assert not any(n.id in furniture for n in graph.nodes("paragraph") if "weather" in n.text.lower())  # ordinary prose is kept
    tasks, report = generate_document_tasks(graph, count=10, seed=3)
    assert tasks
    for task in tasks:
        counted = task.provenance.template == "aggregation_section_citations"
        assert not any(e in furniture and not (counted and ix.nodes[e].type.value == "reference") for e in task.evidence), task.instruction
    assert any(v.get("dropped", {}).get("boilerplate") for e in report["types"].values() for v in e["templates"].values())


def test_one_task_per_passage_and_type_and_few_cloze_tasks(graph: KnowledgeGraph) -> None:
    ix = _Index(graph)
    tasks, report = generate_document_tasks(graph, count=10, seed=1)
    per_type = Counter((t.type, passage_of(t, ix)) for t in tasks)
    assert max(per_type.values()) == 1
    cloze = sum(t.provenance.template in CLOZE_TEMPLATES for t in tasks)
    assert cloze <= 0.10 * len(tasks) and report["total"] == len(tasks)


def _task(i: int, template: str) -> Task:
    return Task(id=f"t{i}", kind="document", type="extraction", instruction=f"q{i}", gold_answer="a", evidence=["p"],
                provenance=Provenance(graph_id="g", template=template, generator="template"))  # fmt: skip


def test_cap_cloze_keeps_the_earliest_within_the_share() -> None:
    tasks = [_task(i, "extraction_cloze") for i in range(5)] + [_task(10 + i, "table_qa_cell") for i in range(18)]
    kept, dropped = cap_cloze(tasks)
    assert [t.id for t in kept if t.provenance.template == "extraction_cloze"] == ["t0", "t1"] and dropped == 3
    alone = [_task(0, "extraction_cloze")]
    assert cap_cloze(alone) == (alone, 0)  # cloze tasks asked for alone are not capped
    assert cap_cloze(alone + [_task(1, "table_qa_cell")]) == ([_task(1, "table_qa_cell")], 1)


def _cites_graph(reference_texts: list[str], paragraph: str) -> _Index:
    kg = KnowledgeGraph(GraphMeta(id="g"))
    kg.add_node(Node(id="s", type=NodeType.SECTION, text="2. Methods"))
    kg.add_node(Node(id="p", type=NodeType.PARAGRAPH, text=paragraph))
    kg.add_edge(Edge(source="s", target="p", type=EdgeType.CONTAINS))
    for i, text in enumerate(reference_texts):
        kg.add_node(Node(id=f"r{i}", type=NodeType.REFERENCE, text=text))
        kg.add_edge(Edge(source="p", target=f"r{i}", type=EdgeType.CITES))
    return _Index(kg)


def test_a_citation_count_needs_the_text_to_agree() -> None:
    refs = ["Smith J (2008). A study. Journal.", "Jones K, Smith J (2010). Another. Journal."]
    agree = _cites_graph(refs, "Mixed models (Smith 2008) were extended by Jones et al. (2010).")
    assert confirmed_count(agree, "aggregation_section_citations", ["s", "p", "r0", "r1"], "2")
    wrong = _cites_graph(refs, "Mixed models (Smith 2008) were extended (Smith and Jones 2010).")  # Smith is not Jones et al.'s first author
    assert not confirmed_count(wrong, "aggregation_section_citations", ["s", "p", "r0", "r1"], "2")
    assert confirmed_count(agree, "table_qa_cell", ["p"], "whatever")  # not a count: nothing to confirm


def test_a_passage_is_quoted_only_up_to_a_double_quote_in_it(tmp_path: Path) -> None:
    """constparty.pdf (r-cran-partykit) once gave 'the passage beginning "The prediction type can either be "node",
    "response",…"': the inner quotes end the quoted opening early. An opening stops before them, or there is none."""
    from taskloom.tools.generate.document.address import Addresses

    doc = tmp_path / "quotes.md"
    doc.write_text(
        "# Predictions\n\nThe prediction type can either be \"node\", \"response\" or \"prob\" for trees of every kind.\n\n"
        "Each tree in the forest is grown on a bootstrap sample and then \"pruned\" by the usual rule of thumb.\n",
        encoding="utf-8",
    )
    service = GraphService(Settings(workspace=tmp_path / "ws", embedder="hashing"))
    kg = service.load(service.ingest_document(doc).graph_id)
    addresses = Addresses(_Index(kg))
    short, long = sorted(kg.nodes("paragraph"), key=lambda n: n.text.index('"'))
    assert addresses.opening(short) is None  # six words before the first quote: too few to be unique
    assert addresses.opening(long) == "Each tree in the forest is grown on…"  # eight words, once in the text


def test_a_reference_to_a_number_two_tables_carry_makes_no_task() -> None:
    """sample631.pdf (texlive-publishers-doc): "Table 1" and its continued page, read as a second table numbered 1,
    made four tasks asking which table "Table 1" is."""

    def index(second_number: str) -> _Index:
        kg = KnowledgeGraph(GraphMeta(id="g"))
        kg.add_node(Node(id="p", type=NodeType.PARAGRAPH, text="The objects of Table 1 are bright."))
        for tid, number in (("t1", "1"), ("t2", second_number)):
            kg.add_node(Node(id=tid, type=NodeType.TABLE, text="a | b", attrs={"number": number}))
        kg.add_edge(Edge(source="p", target="t1", type=EdgeType.REFERS_TO, attrs={"label": "Table 1"}))
        return _Index(kg)

    assert index("1").refers == []
    assert index("2").refers == [("p", "t1", "Table 1")]


def test_code_is_never_prose_and_a_method_name_ends_no_sentence(tmp_path: Path) -> None:
    """RcppEigen-Introduction (r-cran-rcppeigen): section 3.4's summary had R console input as its third sentence and its
    second cut at ".llt()" ("… the corresponding methods are ."). Code paragraphs are no paragraphs to the generator."""
    from taskloom.tools.generate.document.index import split_sentences

    pdf = Path(__file__).resolve().parents[2] / "data" / "cache" / "RcppEigen-Introduction.pdf"
    service = GraphService(Settings(workspace=tmp_path / "ws", embedder="hashing"))
    kg = service.load(service.ingest_document(pdf).graph_id)
    ix = _Index(kg)
    code = [n for n in kg.nodes("paragraph") if n.attrs.get("code")]
    assert code and not {n.id for n in code} & {n.id for n in ix.of("paragraph")} and {n.id for n in code} <= {n.id for n in ix.of("code")}
    held = next(n for n in kg.nodes("paragraph") if ".llt()" in n.text and not n.attrs.get("code"))
    assert any(s.endswith("methods are .llt() and .ldlt().") for s in split_sentences(held.text))
    tasks, _ = generate_document_tasks(kg, count=60, seed=0)
    texts = [json.dumps(t.model_dump(mode="json")) for t in tasks]
    assert tasks and not [t for t in texts if "R> " in t or "methods are .\"" in t]


def _table_graph(caption: str, cells: list[str]) -> KnowledgeGraph:
    kg = KnowledgeGraph(GraphMeta(id="g"))
    kg.add_node(Node(id="table:1", type=NodeType.TABLE, text="", attrs={"number": "2", "caption": caption}))
    for i, text in enumerate(cells):
        kg.add_node(Node(id=f"table:1/r1c{i}", type=NodeType.TABLE_CELL, text=text, attrs={"row": 1, "col": i}))
        kg.add_edge(Edge(source="table:1", target=f"table:1/r1c{i}", type=EdgeType.CONTAINS))
    return kg


def test_tables_whose_rows_are_not_sure_are_never_addressed() -> None:
    """Unseen-PDF audit: psych's Table 2 read its header and nine rows into its caption (a row of values became the
    header: columns "1.86", "1.5"); fitdistrplus's Tables 1 and 2 set formulas whose lines became rows."""
    from taskloom.tools.generate.document.index import _good_sentence

    body = " ".join(f"Row{i} 0.{i}1 -0.0{i} 0.8{i} 0.1{i}" for i in range(9))
    swallowed = _table_graph(f"Table 2: fa2latex A factor analysis table Variable MR1 MR2 MR3 h2 {body}", ["SS loadings", "2.64"])
    formulas = _table_graph("Table 1: Goodness-of-fit statistics.", ["Cramer-von Mises", "1 + nP Fi −2i−1 2 12n 2n i=1"])
    plain = _table_graph("Table 1: Estimates of the model with the interaction of stage and x-ray.", ["n = ∞", "1.571"])
    assert not _Index(swallowed).of("table") and not _Index(formulas).of("table") and _Index(plain).of("table")
    assert not _good_sentence("(as in the case of the sat.act data, the variables are items of a test)")
    assert _good_sentence("(This holds for every data set we tried in the simulation study.)")


def test_a_summary_takes_no_sentence_that_only_introduces_code() -> None:
    from taskloom.tools.generate.document.leaning import INTRODUCES as _INTRODUCES

    assert _INTRODUCES.search("A fit of the MM-estimator with these settings looks as follows.")
    assert _INTRODUCES.search("The simulation is then run with the following call:")
    assert not _INTRODUCES.search("The MM-estimator keeps its efficiency under the normal model.")


def test_sentences_cut_at_a_page_break_or_an_unresolved_citation_are_never_gold() -> None:
    """Third unseen-PDF audit: r-cran-mcmc's demo.pdf gave "Gilks, 1996) that an acceptance rate of about 20% is right …"
    as a summary sentence (its opening "(Gelman, Roberts, and" ended page 3); RcppArmadillo's next-sentence gold stopped
    at "… referred to ?" where LaTeX printed "?" for citations it could not resolve."""
    from taskloom.tools.generate.document.index import _good_sentence, split_sentences

    assert not _good_sentence("Gilks, 1996) that an acceptance rate of about 20% is right for this sampler.")
    assert _good_sentence("The acceptance rate (about 20%) is right for this sampler of ours.")
    assert not _good_sentence("Thurstone Holzinger-Swineford (1937) introduced the bifactor model of a general factor and un-")
    assert _good_sentence("It is “the bifactor model of a general factor and uncorrelated group factors.”")
    from taskloom.tools.generate.document.index import _whole_sentence  # what analysis and synthesis quote

    assert not _whole_sentence("can take the values listed in Table 2.") and not _whole_sentence("(see Table 4).")
    assert _whole_sentence("See Table 4.") and not _whole_sentence("Submit it at http://journals.")
    assert split_sentences("Details are referred to ? as well as ?. The next sentence starts here.") == [
        "Details are referred to ? as well as ?.", "The next sentence starts here."
    ]


def _ingested(tmp_path: Path, name: str) -> KnowledgeGraph:
    service = GraphService(Settings(workspace=tmp_path / "ws", embedder="hashing"))
    return service.load(service.ingest_document(Path(__file__).resolve().parents[2] / "data" / "cache" / f"{name}.pdf").graph_id)


def test_a_reference_whose_words_fit_another_figure_and_a_drawn_grid_make_no_task(tmp_path: Path) -> None:
    """Third unseen-PDF audit, sp's over.pdf: "Figure 5 shows the result of this aggregation … (meuse.grid)" means
    Figure 4 ("aggregation over meuse.grid …"; Figure 5 is a checker board), and made a cross-reference and a synthesis
    task with the checker board as gold ("the line shown in Figure 2" on the same page is Figure 3's); p10's plot of a grid numbered 1-9 was read as a table with the header 1 | 2 | 3."""
    kg = _ingested(tmp_path, "over")
    ix = _Index(kg)
    slip = next(n for n in kg.nodes("paragraph") if "Figure 5 shows the result of this aggregation" in n.text)
    figure5 = next(n for n in kg.nodes("figure") if n.attrs.get("number") == "5")
    assert (slip.id, figure5.id) in {(s, t) for s, t, _ in ix._refers}  # the graph keeps what the text says
    assert (slip.id, figure5.id) not in {(s, t) for s, t, _ in ix.refers}
    line = next(n for n in kg.nodes("paragraph") if "along (or under) the line shown in Figure 2" in n.text)
    assert (line.id, "figure:2") not in {(s, t) for s, t, _ in ix.refers}  # the second slip: that grid is Figure 3's
    kept = [ix.nodes[s].text[:40] for s, t, _ in ix.refers if t.startswith("figure:")]
    assert kept == ["Building on the simple example of sectio"]  # the passage that does mean Figure 5
    grid = [t for t in kg.nodes("table") if not t.attrs.get("caption")]
    assert grid and not {t.id for t in grid} & {t.id for t in ix.of("table")}
    assert [t.attrs.get("number") for t in ix.of("table")] == ["1"]
    tasks, _ = generate_document_tasks(kg, count=30, seed=0)
    assert tasks and not [t for t in tasks if slip.id in t.evidence and figure5.id in t.evidence]


def test_a_first_page_footer_at_the_page_numbers_height_is_no_text(tmp_path: Path) -> None:
    """Third unseen-PDF audit, RcppArmadillo-intro (Elsevier preprint): "Preprint submitted to Computational Statistics
    and Data Analysis / February 10, 2020", printed at the foot of page 1 only, began the paragraph page 2 goes on."""
    kg = _ingested(tmp_path, "RcppArmadillo-intro")
    texts = [n.text for n in kg.nodes() if n.text]
    assert not [t for t in texts if "Preprint submitted" in t]
    assert any("linear program solvers, and" in t for t in texts)  # the text on either side of it is kept
    assert any(t.startswith("Linear algebra is a cornerstone") for t in texts)


def test_code_panels_under_one_header_and_another_works_chapter_make_no_task(tmp_path: Path) -> None:
    """Second unseen-PDF audit, Rcpp-jss-2011 (r-cran-rcpp): Table 1 sets C++ side by side, and the running head above
    it was read as the one header of both columns (five cell tasks named the column "Dirk Eddelbuettel, Romain
    François"); "(?, Chapter 5)", Chapter 5 of 'Writing R Extensions' with its citation unresolved, was linked to
    the paper's own section 5."""
    kg = _ingested(tmp_path, "Rcpp-jss-2011")
    ix = _Index(kg)
    assert [t.attrs.get("number") for t in ix.of("table")] == ["2"] and [t.attrs.get("number") for t in ix.of("unsure_table")] == ["1"]
    chapter = [n for n in kg.nodes("paragraph") if "(?, Chapter 5)" in n.text]
    assert len(chapter) == 2 and [label for s, _, label in ix._refers if s in {n.id for n in chapter}] == ["Section 2"]
    tasks, _ = generate_document_tasks(kg, count=30, seed=0)
    assert tasks and not [t for t in tasks if "Dirk Eddelbuettel" in t.instruction + t.gold_answer]


def test_contents_below_an_abstract_are_no_sections_and_no_prose(tmp_path: Path) -> None:
    """Third unseen-PDF audit, sp's over.pdf: page 1 prints its contents under the abstract; each line became an empty
    section ("1 Introduction" twice), so sections 1-4 could only be named by their page."""
    kg = _ingested(tmp_path, "over")
    numbers = [n.attrs.get("number") for n in kg.nodes("section") if n.attrs.get("number")]
    assert numbers == ["1", "2", "3", "4", "5", "5.1", "5.2", "6", "6.1"]
    listing = [n.text for n in kg.nodes("paragraph") if n.attrs.get("listing")]
    assert "2 Geometry overlays 2" in listing and not [t for t in listing if "According to" in t]
    assert not {n.id for n in kg.nodes("paragraph") if n.attrs.get("listing")} & {n.id for n in _Index(kg).of("paragraph")}


def test_a_paragraph_goes_on_past_floats_and_wrapped_table_rows_are_never_addressed(tmp_path: Path) -> None:
    """Fourth unseen-PDF audit. partykit's constparty.pdf: "… the full learning data are not part of the" (page 8)
    goes on "PMML description …" under a figure and its code on page 9, and became a gold "sentence"; dbscan's OPTICS
    paragraph goes on two pages later, past a page of figures. seriation's Table 1 wraps "Hamiltonian path" /
    "length (restricted)" and "Neighbor-" / "hoods" over two lines (two rows each to the parser), and its wrapped
    method names ("MDS_nonmetric") were read as group labels prefixed to every row below them."""
    constparty = _ingested(tmp_path / "c", "constparty")
    joined = next(n for n in constparty.nodes("paragraph") if "full learning data are not part of the" in n.text)
    assert "not part of the PMML description" in joined.text and joined.attrs.get("end_page") == 9
    dbscan = _ingested(tmp_path / "d", "dbscan")
    optics = next(n for n in dbscan.nodes("paragraph") if n.text.startswith("Unless OPTICS is purely used"))
    assert "mostly affects core and reachability-distance calculation" in optics.text and (optics.source.page, optics.attrs.get("end_page")) == (13, 15)
    seriation = _ingested(tmp_path / "s", "seriation")
    ix = _Index(seriation)
    table = next(t for t in ix.of("table") if t.attrs.get("number") == "1")
    labels = {str(c.attrs.get("row_header")) for c in ix.table_cells(table.id)}
    assert not [label for label in labels if "Spectral_norm" in label and "Genetic" in label]  # no wrapped line as a group label
    cells = {(c.attrs.get("row_header"), c.attrs.get("column_header")): c.text for c in ix.valid_cells(table.id)}
    assert cells[('"ARSA"', "Optimizes")] == "Linear seriation crit." and cells[('"TSP"', "Optimizes")] == "Hamiltonian path length"
    assert ('"OLO"', "Optimizes") not in cells and ("hoods", "method") not in cells  # cut in two by the parser: no task
    tasks, _ = generate_document_tasks(seriation, count=40, seed=0)
    assert tasks and not [t for t in tasks if t.gold_answer in ("Hamiltonian path", "length (restricted)", '"SPIN_STS"')]


def test_a_section_opening_is_its_first_sentence_or_none(tmp_path: Path) -> None:
    """Fourth unseen-PDF audit: comparison_sections gave a sentence from the middle of seriation's 2.8 (whose first
    sentence runs into a formula) and constparty's 2.2 (into R code) as "the point each section opens with"."""
    from taskloom.tools.generate.document.generator import _first_sentence
    from taskloom.tools.generate.document.index import normalise

    for name, number in (("seriation", "2.8"), ("constparty", "2.2")):
        kg = _ingested(tmp_path / name, name)
        ix = _Index(kg)
        section = next(n for n in kg.nodes("section") if n.attrs.get("number") == number)
        assert _first_sentence(ix, section) is None
        opened = [(s, got) for s in kg.nodes("section") if (got := _first_sentence(ix, s)) is not None]
        assert opened and all(ix.kids(s.id, "paragraph")[0].id == p.id and normalise(p.text).startswith(first) for s, (p, first) in opened)


def test_a_figures_answer_is_its_caption_without_the_label_in_any_printed_form() -> None:
    from taskloom.tools.generate.document.index import _CAPTION_PREFIX

    for caption in ("Figure 3.5.: A figure description", "Figure 3.5: A figure description", "Table 3. A figure description", "Fig 2a: A figure description"):
        assert _CAPTION_PREFIX.sub("", caption) == "A figure description", caption  # KOMA-Script prints "Figure 3.5.:"
    assert _CAPTION_PREFIX.sub("", "Figure 12 shows the fit") == "Figure 12 shows the fit"  # prose, not a label


def test_a_row_printed_with_its_quotes_is_quoted_once_in_the_instruction() -> None:
    from taskloom.tools.generate.document.templates import DOCUMENT_TEMPLATES

    table_qa = next(t for t in DOCUMENT_TEMPLATES if t.type == "table_qa")
    variables = {"label": "the table", "caption": "", "column": "port", "row": '"https"', "section": "url.port", "columns": ["protocol", "port"]}
    prompt = table_qa.render_prompt(variables)
    assert '""' not in prompt and 'the row "https"' in prompt  # Node's url.md prints the protocols quoted


def test_an_analysis_task_asks_for_the_named_passages_mentions_only() -> None:
    """forecast's JSS paper mentions Figure 1 in eight sentences of four passages; the gold quotes the named passage's, so the question says so."""
    from taskloom.tools.generate.document.templates import DOCUMENT_TEMPLATES

    template = next(t for t in DOCUMENT_TEMPLATES if t.id == "analysis_referenced_object")
    assert "that passage's sentences that mention {{ label }}" in template.prompt_template


def test_a_caption_cut_off_in_a_formula_is_no_gold() -> None:
    """forecast's Table 2 caption (on a rotated page) was read as far as "… and h+ m =": quoted as a gold, it is not what the page says."""
    from taskloom.tools.generate.document.guards import garbled

    assert garbled("Table 2: Notation. ϕh = ϕ + ϕ2 + · · · + ϕh and h+ m =\nThe damped trend is …")
    assert not garbled("Table 2: Notation for the damped trend methods.\nAs in Table 2, φ lies between 0 and 1.")
