"""Records nothing names (a documentation page's table: no noun in its first column, path or row links) are placed by their page.

"What is the minimum size of the record with C type “unsigned long”?" does not say where to look; the
instruction names the page whose table lists them ("… in the table of the page “array — Efficient arrays …”").
"""

from __future__ import annotations

import numpy as np

from taskloom.tools.generate.web.compare import ListingGroups, _extreme
from taskloom.tools.generate.web.lookup import describe_record, listing_data
from taskloom.tools.generate.web.style import instruction_style
from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph, Node, NodeType

TITLE = "array — Efficient arrays of numeric values"
ROWS = [("b", "signed char", "int", 1), ("B", "unsigned char", "int", 1), ("h", "signed short", "int", 2), ("l", "signed long", "int", 4), ("d", "double", "float", 8)]


def _docs_page(title: str = TITLE, first: str = "Type code", names: tuple[str, ...] = ()) -> KnowledgeGraph:
    kg = KnowledgeGraph(GraphMeta(id="g", kind="web"))
    url = "http://h/library/array.html"
    kg.add_node(Node(id="page:array", type=NodeType.PAGE, attrs={"url": url, "title": title}))
    kg.add_node(Node(id="listing:array", type=NodeType.LISTING, attrs={"url": url, "complete": True, "columns": [first, "C Type", "Python Type", "Minimum size in bytes"]}))
    for i, (code, c_type, py_type, size) in enumerate(ROWS):
        code = names[i] if names else code
        fields = {
            first: {"raw": code, "value": code, "type": "text"},
            "C Type": {"raw": c_type, "value": c_type, "type": "text"},
            "Python Type": {"raw": py_type, "value": py_type, "type": "text"},
            "Minimum size in bytes": {"raw": str(size), "value": size, "type": "number"},
        }
        kg.add_node(Node(id=f"record:{i}", type=NodeType.RECORD, attrs={"fields": fields, "listing": "listing:array", "listings": ["listing:array"]}))
    return kg


def test_a_lookup_on_a_docs_table_names_the_page_it_is_on() -> None:
    data = listing_data(_docs_page())[0]
    assert data.noun == "record" and data.where == f"in the table of the page “{TITLE}”"
    subject = describe_record(data, data.records[2], ["C Type"])
    assert subject == f"the record with “C Type” value “signed short” in the table of the page “{TITLE}”"


def test_comparisons_and_extremes_on_a_docs_table_name_the_page() -> None:
    groups = ListingGroups(listing_data(_docs_page())[0])
    assert groups.group([]).endswith(f"records in the table of the page “{TITLE}”")
    # the place follows the noun, before the conditions ("records in the table of the page … with …", not "… and in the table …")
    assert groups.group([("Minimum size in bytes", "eq", "8")]).startswith(f"records in the table of the page “{TITLE}” with ")
    made = [g for seed in range(20) if (g := _extreme(np.random.default_rng(seed), groups)) is not None]
    assert made and all(f"in the table of the page “{TITLE}”" in g["instruction"] for g in made)
    # a place, not a start page: the style filter keeps them (it drops "On the page “X”, open …")
    assert all(instruction_style(g["instruction"]).style == "goal" for g in made), [g["instruction"] for g in made]


def test_records_a_noun_names_are_not_placed_by_page() -> None:
    data = listing_data(_docs_page(first="Feature", names=("nested_scopes", "generators", "division", "annotations", "generator_stop")))[0]  # "Feature" names what each row is: "the feature with …"
    assert data.noun == "feature" and data.where == ""


def test_a_table_among_several_that_loses_its_noun_is_placed_by_its_table() -> None:
    """Two tables of one page whose first columns both say "Operation": the larger is "the operation …", the other "the record …"; each is placed by its heading."""
    kg = KnowledgeGraph(GraphMeta(id="g", kind="web"))
    url = "http://h/library/stdtypes.html"
    kg.add_node(Node(id="page:t", type=NodeType.PAGE, attrs={"url": url, "title": "Built-in Types"}))
    for table, ops in (("Comparisons", ["less", "less or equal", "greater", "greater or equal"]), ("Boolean Operations", ["either or", "both and"])):
        lid = f"listing:{table}"
        kg.add_node(Node(id=lid, type=NodeType.LISTING, attrs={"url": url, "table": table, "complete": True, "columns": ["Operation", "Meaning"]}))
        for op in ops:
            fields = {"Operation": {"raw": op, "value": op, "type": "text"}, "Meaning": {"raw": f"means {op}", "value": f"means {op}", "type": "text"}}
            kg.add_node(Node(id=f"record:{op}", type=NodeType.RECORD, attrs={"fields": fields, "listing": lid, "listings": [lid]}))
    by_table = {str(d.node.attrs["table"]): d for d in listing_data(kg)}
    assert (by_table["Comparisons"].noun, by_table["Comparisons"].where) == ("operation", "in the table Comparisons of the page “Built-in Types”")  # one table of several: always placed
    assert (by_table["Boolean Operations"].noun, by_table["Boolean Operations"].where) == ("record", "in the table “Boolean Operations” of the page “Built-in Types”")


def test_a_table_headed_by_its_pages_own_title_is_not_named_twice() -> None:
    """pandas' "IO tools" page heads its table "IO tools" too: "in the table of the page “IO tools”", not "in the table “IO tools” of the page “IO tools”"."""
    suffix = " — pandas 1.5.3 documentation"

    def where(table: str) -> str:
        kg = _docs_page(title="IO tools (text, CSV, HDF5, …)" + suffix)
        listing = kg.node("listing:array")
        kg.add_node(listing.model_copy(update={"attrs": {**listing.attrs, "table": table}}))
        for name in ("indexing", "groupby"):  # the site's suffix is what most titles end with
            kg.add_node(Node(id=f"page:{name}", type=NodeType.PAGE, attrs={"url": f"http://h/user_guide/{name}.html", "title": name.title() + suffix}))
        assert kg.node("listing:array").attrs["table"] == table
        return listing_data(kg)[0].where

    assert where("IO tools (text, CSV, HDF5, …)") == "in the table of the page “IO tools (text, CSV, HDF5, …)”"
    assert where("Parsing options") == "in the table “Parsing options” of the page “IO tools (text, CSV, HDF5, …)”"  # a heading of its own is kept
