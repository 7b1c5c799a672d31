"""Author–year citations of names with spaces, apostrophes, hyphens and accents.

link_citations only searches a text for the first authors whose first word it holds;
these names must still be found, and look-alikes must not be.
"""

from __future__ import annotations

from taskloom.tools.graph.ingest.blocks import Block, ParsedDocument
from taskloom.tools.graph.ingest.builder import build_graph
from taskloom.tools.graph.ingest.links import link_citations
from taskloom.tools.graph.model import GraphMeta

ENTRIES = [
    "R Core Team (2020). R: A Language and Environment for Statistical Computing.",
    "O'Brien R, Smith J (2001). Irish tables.",
    "van der Berg K (2015). Dutch method.",
    "Smith-Jones A (2012). Hyphenated.",
    "Müller H (2019). Umlaut.",
    "Smith J (2001). Plain.",
    "Holzinger K, Swineford F (1937). The bi-factor method.",
]


def _cited(prose: list[str]) -> dict[str, list[str]]:
    blocks = [Block(kind="heading", text="Intro", level=1)] + [Block(kind="paragraph", text=p) for p in prose]
    blocks += [Block(kind="heading", text="References", level=1)] + [Block(kind="reference", text=e) for e in ENTRIES]
    kg = build_graph(ParsedDocument(path="x.txt", format="text", title="T", blocks=blocks), GraphMeta(id="t"))
    link_citations(kg)
    return {n.text: [kg.node(v).text for _, v, k in kg.g.out_edges(n.id, keys=True) if k == "cites"] for n in kg.nodes("paragraph")}


def test_names_of_several_words_and_punctuation_are_cited() -> None:
    cites = _cited([
        "Computed in R (R Core Team 2020) today.",
        "As O'Brien and Smith (2001) showed.",
        "Following van der Berg (2015), we go.",
        "Smith-Jones (2012) and Smith (2001) differ.",
        "Müller (2019) agrees.",
    ])
    assert cites["Computed in R (R Core Team 2020) today."] == [ENTRIES[0]]
    assert cites["As O'Brien and Smith (2001) showed."] == [ENTRIES[1]]  # Smith is a co-author here
    assert cites["Following van der Berg (2015), we go."] == [ENTRIES[2]]
    assert cites["Smith-Jones (2012) and Smith (2001) differ."] == [ENTRIES[3], ENTRIES[5]]
    assert cites["Müller (2019) agrees."] == [ENTRIES[4]]


def test_a_name_inside_another_word_cites_nothing() -> None:
    cites = _cited(["xSmith (2001) is no name; -Smith (2001) neither.", "Jones-Smith (2012) does not exist."])
    assert cites == {"xSmith (2001) is no name; -Smith (2001) neither.": [], "Jones-Smith (2012) does not exist.": []}


def test_a_pair_joined_by_a_hyphen_cites_the_entry_of_those_two() -> None:
    """psych's intro.pdf: "Holzinger-Swineford (1937)" was not counted (the entry is "Holzinger, K. and Swineford, F.")."""
    cites = _cited(["Holzinger-Swineford (1937) introduced it.", "Smith-Brown (2001) is not Smith alone."])
    assert cites == {"Holzinger-Swineford (1937) introduced it.": [ENTRIES[6]], "Smith-Brown (2001) is not Smith alone.": []}
