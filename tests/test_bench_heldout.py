"""bench/heldout_truth.py: golds recomputed from a SQLite file behind Datasette URLs, find targets from a site's files."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph, Node, NodeType, Source
from taskloom.tools.tasks.model import Provenance, SuccessCriterion, Task

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from heldout_truth import FolderTruth, SqliteTruth  # noqa: E402

ROOT = "http://127.0.0.1:9"


def _task(quality: dict, answer: str | None = None, page: str | None = None) -> Task:
    success = [SuccessCriterion(kind="page_is", value=ROOT + page)] if page else []
    return Task(
        id="t",
        kind="web",
        type="x",
        instruction="?",
        gold_answer=answer,
        quality=quality,
        success=success,
        provenance=Provenance(graph_id="g", generator="test"),
    )


@pytest.fixture
def truth(tmp_path: Path) -> SqliteTruth:
    db = tmp_path / "d.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("create table cities (name text primary key, state text, people numeric)")
        rows = [("A", "X", 10), ("B", "X", 30), ("C", "Y", 20), ("D", "Y", 5), ("E", "Y", 7), ("A2", "Z", 10)]
        con.executemany("insert into cities values (?, ?, ?)", rows)
    meta = tmp_path / "m.json"
    meta.write_text(json.dumps({"databases": {"d": {"queries": {"big": {"sql": "select * from cities where people >= 10"}}}}}))
    return SqliteTruth(db, meta, ROOT)


def _kg(url: str) -> KnowledgeGraph:
    kg = KnowledgeGraph(GraphMeta(id="g", kind="web"))
    kg.add_node(Node(id="listing:1", type=NodeType.LISTING, text="l", attrs={"url": ROOT + url}, source=Source(url=ROOT + url)))
    return kg


def test_populations_of_table_pages_canned_and_adhoc_queries(truth: SqliteTruth) -> None:
    assert truth.population("/d/cities?state=Y&_sort=name&_next=C") == ('select * from cities where "state" = ?', ["Y"])
    assert truth.population("/d/big") == ("select * from (select * from cities where people >= 10)", [])
    assert truth.population("/d?sql=select+name+from+cities") == ("select * from (select name from cities)", [])
    assert truth.population("/d/nothing") is None


def test_compare_golds_are_recomputed_over_the_whole_population(truth: SqliteTruth) -> None:
    count = {"op": "count", "conditions": [["people", "gt", 8]], "answer": "2", "listing": "listing:1"}  # as if counted over a cut page
    verdict = truth.check(_task({"compare": count}, "2"), _kg("/d/cities?state=Y"))
    assert verdict["verdict"] == "WRONG" and verdict["true"] == 1  # only C (20) among state Y
    verdict = truth.check(_task({"compare": {**count, "answer": "4"}}, "4"), _kg("/d/big"))
    assert (verdict["verdict"], verdict["true"]) == ("ok", 4)
    top = {"op": "max", "conditions": [], "measure": "people", "field": "name", "answer": "B", "listing": "listing:1"}
    assert truth.check(_task({"compare": top}, "B"), _kg("/d/cities"))["verdict"] == "ok"
    low = {"op": "min", "conditions": [["state", "eq", "X"]], "measure": "people", "field": "name", "answer": "A", "listing": "listing:1"}
    assert truth.check(_task({"compare": low}, "A"), _kg("/d/cities"))["verdict"] == "ok"
    which = {"op": "which", "conditions": [], "field": "state", "options": ["X", "Y"], "answer": "X", "listing": "listing:1"}
    assert truth.check(_task({"compare": which}, "X"), _kg("/d/cities")) | {"population": ""} == {
        "population": "",
        "verdict": "WRONG",
        "true": "Y",
        "counts": [2, 3],
    }
    spread = {"op": "range", "conditions": [], "measure": "people", "value": 25, "answer": "25", "listing": "listing:1"}
    assert truth.check(_task({"compare": spread}, "25"), _kg("/d/cities"))["verdict"] == "ok"


def test_a_lookup_needs_exactly_one_record_with_the_gold_value(truth: SqliteTruth) -> None:
    good = {"identify": {"name": "C"}, "field": "people", "raw": "20", "answer_page": ROOT + "/d/cities"}
    assert truth.check(_task({"lookup": good}, "20"), None)["verdict"] == "ok"
    shared = {"identify": {"people": 10}, "field": "name", "raw": "A", "answer_page": ROOT + "/d/cities"}
    verdict = truth.check(_task({"lookup": shared}, "A"), None)
    assert verdict["verdict"] == "WRONG" and verdict["matches"] == 2


def test_a_find_sentence_must_stand_on_the_target_page_alone(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text("<p><b>ROWS</b>: The frame counts rows.</p><script>var x = 'Only here.'</script>")
    (tmp_path / "sub" / "a.html").write_text("<p>Only here. Also shared text.</p>")
    (tmp_path / "sub" / "b.html").write_text("<div>Also shared\n text.</div>")
    folder = FolderTruth(tmp_path, ROOT)

    def check(sentence: str, page: str) -> dict:
        return folder.check(_task({"target": {"kind": "content", "sentence": sentence}}, page=page), None)

    assert check("ROWS: The frame counts rows.", "/")["verdict"] == "ok"  # markup inside the sentence, and / is /index.html
    assert check("Only here.", "/sub/a.html")["verdict"] == "ok"  # script text is not page text
    shared = check("Also shared text.", "/sub/a.html")
    assert shared["verdict"] == "WRONG" and shared["pages holding it"] == ["/sub/a.html", "/sub/b.html"]
    assert check("Only here.", "/sub/b.html")["verdict"] == "WRONG"
    assert check("Nowhere at all.", "/sub/b.html")["verdict"] == "unchecked"
