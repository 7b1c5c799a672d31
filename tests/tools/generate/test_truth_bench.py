"""bench/truth_check.py: golds recomputed from the real sources (books.json, penguins-raw.csv) over a small real graph."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph, Node, NodeType
from taskloom.tools.tasks.model import GoldStep, Provenance, Task

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("truth_check", ROOT / "bench" / "truth_check.py")
assert _spec is not None and _spec.loader is not None
truth = importlib.util.module_from_spec(_spec)
sys.modules["truth_check"] = truth
_spec.loader.exec_module(truth)

BOOKS = json.loads((ROOT / "examples" / "site" / "data" / "books.json").read_text(encoding="utf-8"))


def _field(raw: str) -> dict[str, Any]:
    number = truth.number_of(raw) if truth._NUMBER.fullmatch(raw) else None
    return {"raw": raw, "value": number if number is not None else raw, "type": "number" if number is not None else "text", "unit": None}


def _graph(source: Any, listing_url: str, records: list[dict[str, str]], **listing: Any) -> Any:
    kg = KnowledgeGraph(GraphMeta(id="g", kind="web"))
    kg.add_node(Node(id="listing:a", type=NodeType.LISTING, attrs={"url": listing_url, **listing}))
    for i, fields in enumerate(records):
        kg.add_node(
            Node(
                id=f"record:{i}",
                type=NodeType.RECORD,
                attrs={"listing": "listing:a", "listings": ["listing:a"], "fields": {k: _field(v) for k, v in fields.items()}},
            )
        )
    return truth.Graph(kg, source)


def _task(quality: dict[str, Any], gold: str | None = None, url: str = "http://s/", evidence: list[str] | None = None) -> Task:
    return Task(
        id="t",
        kind="web",
        type="x",
        instruction="?",
        gold_answer=gold,
        start_url="http://s/",
        evidence=evidence or [],
        gold_steps=[GoldStep(action="navigate", text=url)],
        quality=quality,
        provenance=Provenance(graph_id="g", template="x", generator="web-x", model="none", seed=0),
    )


@pytest.fixture(scope="module")
def books() -> Any:
    """Every book as a search card shows it (title, Year, Genre): a listing of source rows."""
    return _graph(
        truth.books_source(),
        "http://s/search.html",
        [{"title": b["title"], "Year": str(b["year"]), "Genre": b["genre"]} for b in BOOKS],
        complete=True,
        total_stated=36,
    )


def test_compare_count_is_recomputed_over_every_source_row(books: Any) -> None:
    after_2015 = sum(1 for b in BOOKS if b["year"] > 2015)
    goal = {"op": "count", "conditions": [["Year", "gt", 2015]], "listing": "listing:a"}
    assert truth.check(_task({"compare": goal}, str(after_2015)), books).status == "right"
    verdict = truth.check(_task({"compare": goal}, str(after_2015 - 2)), books)
    assert (verdict.status, verdict.truth) == ("wrong", str(after_2015))


def test_max_names_the_source_record_and_a_tie_is_wrong(books: Any) -> None:
    most = max(BOOKS, key=lambda b: b["copies"])
    goal = {"op": "max", "conditions": [], "measure": "Copies", "field": "title", "listing": "listing:a"}
    assert truth.check(_task({"compare": goal}, most["title"]), books).status == "right"
    assert truth.check(_task({"compare": goal}, "Harbour Voices"), books).status == "wrong"
    fewest = min(b["copies"] for b in BOOKS)
    assert sum(1 for b in BOOKS if b["copies"] == fewest) > 1  # several books share the fewest copies
    tie = {"op": "min", "conditions": [], "measure": "Copies", "field": "title", "listing": "listing:a"}
    verdict = truth.check(_task({"compare": tie}, next(b["title"] for b in BOOKS if b["copies"] == fewest)), books)
    assert verdict.status == "wrong" and verdict.truth.startswith("a tie")


def test_lookup_needs_one_source_row_and_a_field_the_source_has(books: Any) -> None:
    book = BOOKS[6]
    goal = {"listing": "listing:a", "identify": {"title": book["title"]}, "field": "Shelf"}
    assert truth.check(_task({"lookup": goal}, book["shelf"]), books).status == "right"
    assert truth.check(_task({"lookup": goal}, "XXX YYY"), books).status == "wrong"
    by_author = {"listing": "listing:a", "identify": {"author": book["author"]}, "field": "Year"}  # two books by Margaret Oyelaran
    assert truth.check(_task({"lookup": by_author}, str(book["year"])), books).status == "wrong"
    unknown = {"listing": "listing:a", "identify": {"title": book["title"]}, "field": "Loan period"}
    assert truth.check(_task({"lookup": unknown}, "21 days"), books).status == "unchecked"


def test_a_listing_of_other_things_is_unchecked_not_wrong() -> None:
    hours = _graph(truth.books_source(), "http://s/about.html", [{"Day": "Monday", "Opens": "09:00"}, {"Day": "Sunday", "Opens": "12:00"}])
    goal = {"listing": "listing:a", "identify": {"Day": "Sunday"}, "field": "Opens"}
    assert truth.check(_task({"lookup": goal}, "12:00"), hours).status == "unchecked"


def test_filter_view_matches_the_source_set_and_sort_its_extreme(books: Any) -> None:
    poetry = [b for b in BOOKS if b["genre"] == "Poetry"]
    view = _graph(
        truth.books_source(),
        "http://s/search.html?genre=poetry",
        [{"title": b["title"]} for b in poetry],
        complete=True,
        total_stated=len(poetry),
    )
    task = _task({"target": {"kind": "filter", "param": "genre", "value": "poetry"}}, url="http://s/search.html?genre=poetry")
    assert truth.check(task, view).status == "right"
    short = _graph(
        truth.books_source(),
        "http://s/search.html?genre=poetry",
        [{"title": b["title"]} for b in poetry[:-1]],
        complete=True,
        total_stated=len(poetry) - 1,
    )
    assert truth.check(task, short).status == "wrong"
    newest = str(max(b["year"] for b in BOOKS))
    assert truth.check(_task({"target": {"kind": "sort", "field": "Year", "direction": "desc", "first": newest}}), books).status == "right"
    assert truth.check(_task({"target": {"kind": "sort", "field": "Year", "direction": "asc", "first": newest}}), books).status == "wrong"


def test_penguin_values_compare_within_the_rounding_the_site_shows() -> None:
    penguins = truth.penguins_source()
    row = next(r for r in penguins.rows if r["Delta 13 C (o/oo)"] is not None and r["Body Mass (g)"] is not None)
    shown = {k: ("NA" if v is None else format(v, ".10g") if isinstance(v, float) else v) for k, v in row.items() if k != "id"}
    graph = _graph(penguins, "http://s/content/", [shown])
    goal = {
        "listing": "listing:a",
        "identify": {"Individual ID": row["Individual ID"], "studyName": row["studyName"]},
        "field": "Delta 13 C (o/oo)",
    }
    assert truth.check(_task({"lookup": goal}, format(row["Delta 13 C (o/oo)"], ".10g")), graph).status == "right"
    assert truth.check(_task({"lookup": goal}, format(row["Delta 13 C (o/oo)"] + 0.01, ".10g")), graph).status == "wrong"
    mass = {**goal, "field": "Body Mass (g)"}
    assert truth.check(_task({"lookup": mass}, f"{int(row['Body Mass (g)']):,} g"), graph).status == "right"
    assert truth.check(_task({"lookup": mass}, f"{int(row['Body Mass (g)']) + 50:,} g"), graph).status == "wrong"


def test_query_goal_names_exactly_the_source_rows_meeting_its_conditions(books: Any) -> None:
    conditions = [["Genre", "eq", "Poetry"], ["Year", "gt", 2015]]
    ids = [f"record:{i}" for i, b in enumerate(BOOKS) if b["genre"] == "Poetry" and b["year"] > 2015]
    assert 2 <= len(ids) < 7  # a real restriction
    goal = {"kind": "query", "conditions": conditions, "records": ids}
    assert truth.check(_task({"change": goal}, evidence=["listing:a", *ids]), books).status == "right"
    fewer = {**goal, "records": ids[:-1]}
    assert truth.check(_task({"change": fewer}, evidence=["listing:a", *ids[:-1]]), books).status == "wrong"
    form = {"kind": "form", "values": {"#loan-name": "Ada Finch"}}
    assert truth.check(_task({"change": form}), books).status == "unchecked"
