"""A number field with a few whole values groups records as a category does ("cars with 6 cylinders"); a measure does not."""

from __future__ import annotations

import numpy as np

from taskloom.tools.generate.compose.flow import chain_plan
from taskloom.tools.generate.compose.flowcompose import why_none
from taskloom.tools.generate.web.compare import ListingGroups
from taskloom.tools.generate.web.lookup import listing_data
from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph, Node, NodeType


def _cars() -> KnowledgeGraph:
    kg = KnowledgeGraph(GraphMeta(id="g", kind="web"))
    kg.add_node(Node(id="listing:cars", type=NodeType.LISTING, attrs={"url": "http://h/cars", "complete": True}))
    origins = ("usa", "europe", "japan")
    for i in range(30):
        fields = {
            "name": {"raw": f"car {i}", "value": f"car {i}", "type": "text"},
            "cylinders": {"raw": str((4, 6, 8)[i % 3]), "value": (4, 6, 8)[i % 3], "type": "number"},
            "origin": {"raw": origins[(i // 3) % 3], "value": origins[(i // 3) % 3], "type": "text"},
            "weight": {"raw": str(2000 + 37 * i + (i * i) % 11), "value": 2000 + 37 * i + (i * i) % 11, "type": "number"},
            "acceleration": {"raw": f"{10 + (i * 7) % 13}.{i % 10}", "value": float(f"{10 + (i * 7) % 13}.{i % 10}"), "type": "number"},
        }
        kg.add_node(Node(id=f"record:{i:02d}", type=NodeType.RECORD, attrs={"fields": fields, "listing": "listing:cars", "listings": ["listing:cars"]}))
    return kg


def test_a_cylinder_count_is_a_category_and_a_weight_is_not() -> None:
    groups = ListingGroups(listing_data(_cars())[0])
    assert groups.categories == ["cylinders", "origin"]
    assert "weight" in groups.measures and "weight" not in groups.categories and "acceleration" not in groups.categories


def test_chains_start_from_and_flow_through_a_number_category() -> None:
    groups = ListingGroups(listing_data(_cars())[0])
    plans = [chain_plan(groups, np.random.default_rng(seed), 6) for seed in range(8)]
    assert max(len(p.steps) for p in plans) >= 4
    grouped = {c[0] for p in plans for s in p.steps for c in getattr(s, "conds", []) if c[1] == "eq"}
    grouped |= {s.shared for p in plans for s in p.steps if getattr(s, "relation", None) == "eq"}
    assert "cylinders" in grouped  # "cars with cylinders “6”", or "the same cylinders as …"


def test_a_graph_without_usable_listings_says_why_listing_by_listing() -> None:
    kg = _cars()
    for record in kg.nodes("record"):
        for label in ("weight", "acceleration", "cylinders"):
            del record.attrs["fields"][label]
    kg.add_node(Node(id="listing:part", type=NodeType.LISTING, attrs={"url": "http://h/cars?page=2", "complete": False, "completeness": "2 of 5 pages visited"}))
    kg.add_node(Node(id="record:x", type=NodeType.RECORD, attrs={"fields": {"name": {"raw": "x", "value": "x", "type": "text"}}, "listings": ["listing:part"]}))
    why = why_none(kg)
    assert "1 no number field shown for every record (with 3 values or more), e.g. http://h/cars (30 records)" in why
    assert "1 not seen completely, e.g. http://h/cars?page=2 (1 records): not seen completely (2 of 5 pages visited)" in why


def test_a_version_column_is_no_measure() -> None:
    """__future__'s table: "Mandatory in" reads 2.2, 3.0, 3.7; "the highest mandatory in" or 3.7 − 2.2 = 1.5 is no question a reader would ask."""
    kg = _cars()
    for record in kg.nodes("record"):
        record.attrs["fields"]["Mandatory in"] = dict(record.attrs["fields"]["acceleration"])
        record.attrs["fields"]["Python version"] = dict(record.attrs["fields"]["weight"])
    measures = ListingGroups(listing_data(kg)[0]).measures
    assert "acceleration" in measures and "weight" in measures
    assert "Mandatory in" not in measures and "Python version" not in measures


def test_a_which_question_never_answers_with_a_number_that_is_also_a_count() -> None:
    """A column of small numbers (the buffer page's "readonly"): "more with 2 or with 6?" answered "2" reads as a count when one side has 2 rows."""
    from taskloom.tools.generate.web.compare import _which

    kg = KnowledgeGraph(GraphMeta(id="g", kind="web"))
    kg.add_node(Node(id="listing:req", type=NodeType.LISTING, attrs={"url": "http://h/buffer", "complete": True}))
    values = ["2"] * 6 + ["6"] * 2 + ["4"] * 3
    for i, value in enumerate(values):
        fields = {"Request": {"raw": f"PyBUF_{i}", "value": f"PyBUF_{i}", "type": "text"}, "readonly": {"raw": value, "value": int(value), "type": "number"}}
        kg.add_node(Node(id=f"record:{i:02d}", type=NodeType.RECORD, attrs={"fields": fields, "listing": "listing:req", "listings": ["listing:req"]}))
    groups = ListingGroups(listing_data(kg)[0])
    assert groups.categories == ["readonly"]
    made = [g for seed in range(40) if (g := _which(np.random.default_rng(seed), groups)) is not None]
    assert made  # 2 against 4: 6 rows and 3, answer "2"
    for goal in made:
        assert set(goal["options"]) != {"2", "6"}, goal  # 6 rows against 2: the answer "2" is also a count
