"""Bibliographies of real PDFs: one node per entry, and citations that resolve by first author + year + suffix.

Entry counts were made by reading each PDF's reference pages; the splitter and the
citation matcher are also tested on synthetic lines so that their rules stay general.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from taskloom.tools.graph.ingest.blocks import Block, ParsedDocument
from taskloom.tools.graph.ingest.builder import build_graph
from taskloom.tools.graph.ingest.links import link_citations, parse_reference, reference_key
from taskloom.tools.graph.ingest.pdf import _split_references
from taskloom.tools.graph.ingest.pdf_text import TextBlock, TextLine
from taskloom.tools.graph.ingest.pipeline import build_document_graph
from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph
from taskloom.tools.settings import Settings

pytestmark = pytest.mark.integration

ENTRIES = {"lmer": 46, "countreg": 24, "zoo": 12, "generalsiminf": 30}
FETCH = Path(__file__).resolve().parents[2] / "data" / "fetch-pdfs.sh"


@pytest.fixture(scope="module")
def graphs(real_pdfs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, KnowledgeGraph]:
    """Graphs of the four real PDFs that have a bibliography."""
    cache = real_pdfs["lmer"].parent
    if not all((cache / f"{name}.pdf").is_file() for name in ENTRIES):
        subprocess.run(["bash", str(FETCH)], check=True)
    settings = Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing")
    return {name: build_document_graph(cache / f"{name}.pdf", settings) for name in ENTRIES}


def _entries(kg: KnowledgeGraph) -> list[str]:
    return [node.text for node in kg.nodes("reference")]


def _cited(kg: KnowledgeGraph, snippet: str) -> list[str]:
    """Texts of the entries cited by the one text node containing ``snippet``."""
    sources = [n.id for n in kg.nodes("paragraph", "list", "caption", "footnote") if snippet in n.text]
    assert len(sources) == 1, f"{len(sources)} nodes contain {snippet!r}"
    return [kg.node(v).text for _, v, k in kg.g.out_edges(sources[0], keys=True) if k == "cites"]


def _starting(texts: list[str], prefix: str) -> list[str]:
    return [t for t in texts if t.startswith(prefix)]


# --- real PDFs ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_one_reference_node_per_bibliography_entry(name: str, graphs: dict[str, KnowledgeGraph]) -> None:
    assert len(_entries(graphs[name])) == ENTRIES[name]


@pytest.mark.parametrize("name", ["lmer", "countreg", "zoo"])
def test_author_year_entries_are_neither_cut_nor_merged(name: str, graphs: dict[str, KnowledgeGraph]) -> None:
    for text in _entries(graphs[name]):
        key = parse_reference(text)
        assert key.first and key.year, text
        assert text.count(f"({key.year}{key.suffix})") == 1, text  # exactly one entry opening in the node


@pytest.mark.parametrize(
    ("name", "first", "last"),
    [
        ("lmer", ("Bates", "2015", "MixedModels"), ("Wood", "2014", "gamm4")),
        ("countreg", ("Cameron", "1998", "Regression Analysis"), ("Zeileis", "2008", "AER")),
        ("zoo", ("Heywood", "2009", "its"), ("Zeileis", "2002", "strucchange")),
        ("generalsiminf", ("Bates", "2005", "Fitting linear"), ("Zeileis", "2006", "Object-oriented")),
    ],
)
def test_first_and_last_entries(name: str, first: tuple[str, str, str], last: tuple[str, str, str], graphs: dict[str, KnowledgeGraph]) -> None:
    entries = _entries(graphs[name])
    for text, (author, year, title) in ((entries[0], first), (entries[-1], last)):
        assert reference_key(text)[:2] == (author, year), text
        assert title in text


def test_wrapped_lines_and_url_lines_stay_in_their_entry(graphs: dict[str, KnowledgeGraph]) -> None:
    lmer = _entries(graphs["lmer"])
    assert _starting(lmer, "Belenky G")[0].endswith("doi:10.1046/j.1365-2869.2003.00337.x.")  # author list wraps at "Balkin TJ (2003)"
    assert "URL http://CRAN.R-project.org/package=boot" in _starting(lmer, "Canty A")[0]  # the URL line is set in monospace
    assert not any(t.startswith(("Balkin", "Research,", "URL")) for t in lmer)
    zoo = _entries(graphs["zoo"])
    assert _starting(zoo, "Wuertz D (2016)")[0].endswith("URL http://www.Rmetrics.org/.")  # entry crosses a page break


def test_page_numbers_are_not_entries(graphs: dict[str, KnowledgeGraph]) -> None:
    assert not [t for t in _entries(graphs["generalsiminf"]) if t.strip().isdigit()]


def test_same_first_author_and_year_resolve_by_co_authors(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["lmer"]
    alone = _cited(kg, "the MixedModels package (Bates 2015)")
    assert _starting(alone, "Bates D (2015)") and not _starting(alone, "Bates D, Maechler M (2015)")
    pair = _cited(kg, "(Bates and Maechler 2015)")
    assert _starting(pair, "Bates D, Maechler M (2015)") and not _starting(pair, "Bates D (2015)")


def test_suffix_letters_pick_2014a_or_2014b(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["lmer"]
    a = _cited(kg, "(Bates, Maechler, Bolker, and Walker 2014a)")
    b = _cited(kg, "(Bates, Mullen, Nash, and Varadhan 2014b)")
    assert _starting(a, "Bates D, Maechler M, Bolker B, Walker S (2014a)") and not _starting(a, "Bates D, Mullen KM")
    assert _starting(b, "Bates D, Mullen KM, Nash JC, Varadhan R (2014b)") and not _starting(b, "Bates D, Maechler M, Bolker B")


def test_co_author_citation_does_not_link_to_that_authors_entry(graphs: dict[str, KnowledgeGraph]) -> None:
    countreg = _cited(graphs["countreg"], "was improved by Kleiber and Zeileis (2008)")
    assert _starting(countreg, "Kleiber C, Zeileis A (2008)")
    assert not _starting(countreg, "Zeileis A, Kleiber C (2008)")  # Zeileis is first author there, second here
    lmer = _cited(graphs["lmer"], "Chung, Rabe-Hesketh, Dorie, Gelman, and Liu 2013")
    assert _starting(lmer, "Chung Y") and not _starting(lmer, "Gelman A, Carlin JB")  # Gelman A et al. (2013) exists


def test_citations_after_and_between_years_still_resolve(graphs: dict[str, KnowledgeGraph]) -> None:
    cited = _cited(graphs["generalsiminf"], "are described in Genz (1992); Genz and Bretz (1999); Bretz et al. (2001)")
    assert sorted(reference_key(t)[:2] for t in cited) == [("Bretz", "2001"), ("Genz", "1992"), ("Genz", "1999"), ("Genz", "2002")]
    zoo = _cited(graphs["zoo"], "see Zeileis et al. (2002) and Zeileis (2006)")
    assert sorted(reference_key(t)[:2] for t in zoo) == [("Zeileis", "2002"), ("Zeileis", "2006")]


# --- synthetic: splitter -----------------------------------------------------------------


def _block(rows: list[tuple[float, str]], y0: float = 100.0) -> TextBlock:
    """A text block whose lines start at the given left edges, one per baseline."""
    lines = [
        TextLine(text=text, bbox=(x0, y0 + 12 * i, 500.0, y0 + 12 * i + 10), size=10.0, bold=False, chars=len(text), mono_chars=0, math_chars=0)
        for i, (x0, text) in enumerate(rows)
    ]
    return TextBlock(lines=lines, bbox=(min(x for x, _ in rows), y0, 500.0, y0 + 12 * len(rows)), page=9)


def test_split_hanging_indent_starts_at_the_margin_only() -> None:
    block = _block([
        (72, "Adams P, Brown Q, Clark R, Davis S, Evans T, Fox U,"),
        (84, "Green V (2003). A long title that wraps. Journal,"),
        (84, "4(2), 1–9."),
        (72, "Hill W (1999). Another title. Publisher."),
    ])
    assert _split_references(block) == (
        ["Adams P, Brown Q, Clark R, Davis S, Evans T, Fox U, Green V (2003). A long title that wraps. Journal, 4(2), 1–9.", "Hill W (1999). Another title. Publisher."],
        False,
    )


def test_split_first_line_indent_starts_at_the_indent() -> None:
    block = _block([(84, "Adams P (2001). First title, wrapped"), (72, "over two lines."), (84, "Brown Q (2002). Second title.")])
    assert _split_references(block) == (["Adams P (2001). First title, wrapped over two lines.", "Brown Q (2002). Second title."], False)


def test_split_continuation_rows_before_the_first_margin_row_stay_together() -> None:
    block = _block([(84, "Research, 12, 1–12."), (72, "Brown Q (2002). Second title. Press,"), (84, "London.")])
    assert _split_references(block) == (["Research, 12, 1–12.", "Brown Q (2002). Second title. Press, London."], True)  # the first ends the entry before


def test_split_one_row_of_a_long_author_list_under_a_hanging_indent_opens_no_entry() -> None:
    """MAXtest.pdf (r-cran-coin): a block begins inside an entry whose authors fill four rows; the last of them, with the
    year, looks like an entry's opening. One such row does not turn the block to first-line indents."""
    block = _block([
        (103, "Cambien F, Hengstenberg C, Stark K, Blankenberg S,"),
        (103, "Ghori MJR, Schreiber S, El Mokhtari NE, Hall AS,"),
        (103, "C, Ouwehand W, Deloukas P, Thompson JR, Samani NJ (2008)."),
        (103, "“Repeated replication and a prospective meta-analysis.” Circulation, 117(13), 1675–1684."),
        (81, "Shahbazi M, Pravica V, Nasreen N, Fakhoury H, Fryer A, Strange R,"),
    ])
    entries, continued = _split_references(block)
    assert len(entries) == 2 and continued and entries[1].startswith("Shahbazi M")


def test_split_numbered_without_indent_follows_the_sequence() -> None:
    block = _block([(72, "[1] Smith J. A study of things, vol."), (72, "12. Springer, 2019."), (72, "[2] Lee K. Another study. 2020.")])
    assert _split_references(block) == (["[1] Smith J. A study of things, vol. 12. Springer, 2019.", "[2] Lee K. Another study. 2020."], False)
    dotted = _block([(72, "1. Smith J. A study, pages"), (72, "3. Springer, 2019."), (72, "2. Lee K. Another. 2020.")])
    assert len(_split_references(dotted)[0]) == 2  # "3." breaks the sequence: a wrapped line, not an entry


def test_split_author_year_without_indent_needs_a_finished_row_before() -> None:
    block = _block([
        (72, "Smith J, Jones K (2008a). Title. Journal,"),
        (72, "Baker L (2003). is inside the title here."),
        (72, "Smith J (2008b). Second title."),
    ])
    assert _split_references(block) == (["Smith J, Jones K (2008a). Title. Journal, Baker L (2003). is inside the title here.", "Smith J (2008b). Second title."], False)


def test_split_drops_a_lone_page_number() -> None:
    assert _split_references(_block([(290, "21")])) == ([], False)


# --- synthetic: keys and matcher -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Bates D, Maechler M (2014b). lme4. URL http://x.org/2015.", ("Bates", "2014b", None)),
        ("Smith, J. A., & Jones, B. (2008a). Title. Journal, 3, 1–2.", ("Smith", "2008a", None)),
        ("Mark A. van de Wiel and Ann Lee. A title. Journal, 60(3):257–263, 2006. doi:10.1/2019", ("Wiel", "2006", None)),
        ("R Core Team (2015). R: A Language. Vienna.", ("R Core Team", "2015", None)),
        ("[12] Henderson Jr CR. Analysis. Biometrics, 1982.", ("Henderson", "1982", "12")),
    ],
)
def test_reference_key(text: str, key: tuple[str | None, str | None, str | None]) -> None:
    assert reference_key(text) == key


def _linked(entries: list[str], prose: list[str]) -> dict[str, list[str]]:
    """Build a graph with a References section and return, per prose text, the entry texts it cites."""
    blocks = [Block(kind="heading", text="Intro", level=1)]
    blocks += [Block(kind="paragraph", text=p) for p in prose]
    blocks += [Block(kind="heading", text="References", level=1)] + [Block(kind="reference", text=e) for e in entries]
    kg = build_graph(ParsedDocument(path="x.txt", format="text", title="T", blocks=blocks), GraphMeta(id="t"))
    link_citations(kg)
    return {n.text: [kg.node(v).text for _, v, k in kg.g.out_edges(n.id, keys=True) if k == "cites"] for n in kg.nodes("paragraph")}


def test_matcher_first_author_year_and_suffix() -> None:
    entries = [
        "Smith J, Jones K (2008a). First.",
        "Smith J, Jones K (2008b). Second.",
        "Jones K, Lee M, Park N (2008). Third.",
        "Smith J (2010). Fourth.",
    ]
    cites = _linked(entries, [
        "As shown (Smith and Jones 2008b), it holds.",
        "Both (Smith et al. 2008a, b) agree.",
        "Later (Smith and Jones 2008) said so.",
        "Jones et al. (2008) disagree.",
        "Nobody (Brown 2008; Smith 2011) cited a listed entry.",
        "Then Smith (2010) and Jones et al. (2008) met.",
    ])
    assert cites["As shown (Smith and Jones 2008b), it holds."] == ["Smith J, Jones K (2008b). Second."]
    assert cites["Both (Smith et al. 2008a, b) agree."] == []  # "et al." names three or more authors: these two-author entries are not the ones cited
    assert cites["Later (Smith and Jones 2008) said so."] == []  # no Smith 2008 without a suffix; Jones is not first here
    assert cites["Jones et al. (2008) disagree."] == ["Jones K, Lee M, Park N (2008). Third."]
    assert cites["Nobody (Brown 2008; Smith 2011) cited a listed entry."] == []
    assert sorted(cites["Then Smith (2010) and Jones et al. (2008) met."]) == sorted([entries[2], entries[3]])


def test_a_citations_form_must_fit_the_entrys_authors_even_when_one_entry_has_the_year() -> None:
    """"A and B (year)" never links to "A et al." of that year, nor "A et al." to "A and B": the entry's author count decides."""
    entries = ["Hothorn T, Bretz F, Westfall P (2008). Simultaneous inference.", "Genz A, Bretz F (2009). Computation.", "Zeileis A (2006). Alone."]
    cites = _linked(entries, [
        "As in Hothorn and Bretz (2008), it holds.",
        "As in Hothorn et al. (2008), it holds.",
        "See Genz et al. (2009) and Genz and Bretz (2009).",
        "Zeileis (2006) and Zeileis and Kleiber (2006) differ.",
    ])
    assert cites["As in Hothorn and Bretz (2008), it holds."] == []
    assert cites["As in Hothorn et al. (2008), it holds."] == [entries[0]]
    assert cites["See Genz et al. (2009) and Genz and Bretz (2009)."] == [entries[1]]
    assert cites["Zeileis (2006) and Zeileis and Kleiber (2006) differ."] == [entries[2]]


def test_fragments_without_geometry_join_their_entry() -> None:
    entries = ["Smith J, Jones K (2008). A title that", "wraps onto a second line. Journal, 1, 2–3.", "Lee M (2001). Other."]
    cites = _linked(entries, ["See Smith and Jones (2008)."])
    assert cites["See Smith and Jones (2008)."] == ["Smith J, Jones K (2008). A title that wraps onto a second line. Journal, 1, 2–3."]


#: Footnote marks of each paper, read off its pages: every footnote node is one of them, in order.
FOOTNOTES = {"lmer": [str(n) for n in range(1, 6)], "countreg": ["1", "2"], "zoo": [str(n) for n in range(1, 12)], "generalsiminf": ["∗"]}


@pytest.mark.parametrize("name", sorted(FOOTNOTES))
def test_footnotes_are_the_marked_notes_and_plot_labels_stay_in_their_figure(name: str, graphs: dict[str, KnowledgeGraph]) -> None:
    """Tick labels, axis titles and printed R output at a page's foot are no footnotes; axis labels join their figure's text."""
    marks = [re.match(r"\d+|∗", n.text).group(0) if re.match(r"\d+|∗", n.text) else n.text[:30] for n in graphs[name].nodes("footnote")]
    assert marks == FOOTNOTES[name]
    figures = " ".join(n.text for n in graphs[name].nodes("figure"))
    labels = {"countreg": ["numchron", "Number of years of education"], "zoo": ["Index"]}.get(name, [])
    assert all(label in figures for label in labels), figures[:300]


def _section_of(kg: KnowledgeGraph, label: str, number: str) -> str:
    node = next(n for n in kg.nodes(label) if n.attrs.get("number") == number)
    return next(kg.node(u).text for u, _, k in kg.g.in_edges(node.id, keys=True) if k == "contains")


def test_a_float_typeset_pages_later_belongs_to_the_section_that_first_mentions_it(graphs: dict[str, KnowledgeGraph]) -> None:
    """lmer's profile plots are printed after "6. Conclusion" but described in the profile-plots subsection; generalsiminf's Figure 1 is printed in Section 5's pages, shown in 6.1."""
    assert {_section_of(graphs["lmer"], "figure", n) for n in "234"} == {"General profile zeta and related plots"}
    assert _section_of(graphs["generalsiminf"], "figure", "1").startswith("6.1 Genetic Components")
    assert _section_of(graphs["lmer"], "table", "1").startswith("1.3")  # first mentioned only in an appendix, 39 pages on: it stays where it is printed
