"""Value flow across two tables on the Python docs (Debian's python3.11-doc): join chains and count graphs, true against the HTML.

Three real pages are served alone (array, struct, sqlite3): no table of them has a number field and two categories, so
no listing carries a value by itself; two tables do. array's type codes and struct's format characters share the
"C Type" column; struct's and sqlite3's tables share "Python type". Every gold is recomputed here from the HTML files
on disk (tables parsed apart from the crawler), every instruction is checked to state no intermediate value, and every
composite was replayed and confirmed by a second read.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from taskloom.tools.generate.compose.consistency import check_consistency
from taskloom.tools.generate.compose.dag import resource_edges
from taskloom.tools.generate.compose.flowtasks import leaks
from taskloom.tools.runtime import Runtime
from taskloom.tools.tasks.model import Task

from .conftest import CrawledSite, crawl

pytestmark = pytest.mark.integration

DOCS = Path("/usr/share/doc/python3.11/html")
PAGES = ("array.html", "struct.html", "sqlite3.html")


def _text(html: str) -> str:
    html = re.sub(r'<a class="(?:headerlink|footnote-reference)[^"]*"[^>]*>.*?</a>', "", html, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def _tables(page: str) -> list[tuple[list[str], list[list[str]]]]:
    """Each table of a docs page on disk: its header cells and its body rows' cells (parsed here, not by the crawler)."""
    html = (DOCS / "library" / page).read_text(encoding="utf-8")
    out = []
    for table in re.findall(r"<table.*?</table>", html, re.S):
        head = [_text(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", table, re.S)]
        body = re.search(r"<tbody>(.*?)</tbody>", table, re.S)
        rows = [[_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)] for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1) if body else "", re.S)]
        out.append((head, rows))
    return out


def _table_of(kg: Any, listing_id: str) -> list[dict[str, str]]:
    """The disk table a listing was read from (its page, the same header), as rows of header → cell."""
    listing = kg.node(listing_id)
    page = str(listing.attrs["url"]).rsplit("/", 1)[-1]
    found = [rows for head, rows in _tables(page) if [h.casefold() for h in head] == [str(c).casefold() for c in listing.attrs["columns"]]]
    assert found, (page, listing.attrs["columns"])
    table = found[int((listing.attrs.get("position") or [1])[0]) - 1] if len(found) > 1 else found[0]
    head = list(listing.attrs["columns"])
    return [dict(zip(head, row)) for row in table]


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).strip("'\"“”") == " ".join(b.split()).strip("'\"“”")  # case kept: format "b" is not "B"


def _true_answer(kg: Any, task: Task) -> str:
    spec, level = task.quality["flow"]["join"], task.level or 1
    rows_a, rows_b = _table_of(kg, spec["a"]), _table_of(kg, spec["b"])
    sources = [r for r in rows_a if all(_same(r[lb], raw) for lb, raw in spec["identify"].items())]
    assert len(sources) == 1, spec
    value = sources[0][spec["label_a"]]
    if level == 1:
        return value
    targets = [r for r in rows_b if _same(r[spec["label_b"]], value)]
    assert len(targets) == 1, (value, spec)
    if level == 2:
        return targets[0][spec["asked"]]
    count = sum(1 for r in rows_b if r is not targets[0] and _same(r[spec["category"]], targets[0][spec["category"]]))
    return str(count) if level == 3 else str(len(_table_of(kg, spec["third"])) - count)


@pytest.fixture(scope="module")
def three_pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrawledSite]:
    from taskloom.tools.environment.site import serve_static

    root = tmp_path_factory.mktemp("docs3")
    (root / "library").mkdir()
    for page in PAGES:
        shutil.copy(DOCS / "library" / page, root / "library" / page)
    with serve_static(root) as site:
        yield crawl(site.url, site.url + "/library/array.html", tmp_path_factory.mktemp("cross") / "ws", max_pages=5, max_depth=1, max_states=0, click_budget=0)


def _compose(site: CrawledSite, mode: str, **kw: Any) -> tuple[Any, list[Task]]:
    async def go() -> tuple[Any, list[Task]]:
        async with Runtime(site.settings) as rt:
            result = await rt.task_service().compose(site.graph_id, mode, **kw)
            return result, [rt.tasks.load(i) for i in result.task_ids]

    return asyncio.run(go())


def test_join_chains_are_true_against_the_html_and_hide_the_joining_value(three_pages: CrawledSite) -> None:
    result, tasks = _compose(three_pages, "chain", count=3, levels=6, seed=0)
    assert len(result.chains) == 3 and all(c.stopped for c in result.chains)
    assert max(c.reached for c in result.chains) == 4 and sum(c.reached for c in result.chains) == len(tasks), result.chains
    for task in tasks:
        assert task.provenance.generator == "compose-join" and task.quality["replay"]["ok"] and len(task.quality["confirmed"]) == 2
        assert _same(str(task.gold_answer), _true_answer(three_pages.kg, task)), (task.instruction, task.gold_answer)
        hidden = [h for h in task.quality["flow"]["hidden"] if h != task.gold_answer]
        assert (task.level == 1) == (not hidden) and not leaks(task.instruction, hidden), task.instruction
        assert task.dag == [(f"s{i}", f"s{i + 1}") for i in range(1, task.level or 1)] == resource_edges(task.subtasks)
    two = next(t for t in tasks if t.level == 2)
    assert " with the same " in two.instruction and two.instruction.count(" of the page “") == 2  # both tables are named
    for four in (t for t in tasks if t.level == 4):  # the count of level 3 set against a third table: three pages named, the count never
        print(four.instruction, four.gold_answer)
        assert four.instruction.startswith("How many more ") and four.instruction.count(" of the page “") == 3 and four.difficulty == "hard"
        third = four.quality["flow"]["join"]["third"]
        assert third in four.evidence and three_pages.kg.node(third).attrs["url"] in {four.start_url} | {s.text for s in four.gold_steps}


def test_count_graphs_subtract_two_whole_tables(three_pages: CrawledSite) -> None:
    result, tasks = _compose(three_pages, "dag", count=2, seed=0)
    assert len(tasks) == 2, (result.reason, result.dropped)
    for task in tasks:
        assert task.provenance.generator == "compose-count-graph" and len(task.subtasks) == 3 and task.order_count == 2
        assert task.dag == resource_edges(task.subtasks) and check_consistency(task)[0] and task.quality["replay"]["ok"]
        rows = sorted((len(_table_of(three_pages.kg, lid)) for lid in task.quality["flow"]["counts"]), reverse=True)
        assert task.gold_answer == str(rows[0] - rows[1])
        assert task.instruction.startswith("Goal: find how many more ") and not leaks(task.instruction, [str(n) for n in rows] + [task.gold_answer or ""])
        assert task.instruction.count("in the table") >= 4 and " on the page “" not in task.instruction  # a table is counted, not what its page mentions


def test_a_single_table_is_placed_as_a_table_and_cards_by_their_page() -> None:
    """"count the functions on the page “Call Protocol”" would count the functions its prose documents too; its table's are meant."""
    from taskloom.tools.generate.compose.crossflow import _place
    from taskloom.tools.generate.web.lookup import listing_data
    from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph, Node, NodeType

    kg = KnowledgeGraph(GraphMeta(id="g", kind="web"))
    for name, shown_as in (("call", "table"), ("poetry", "cards")):
        url = f"http://h/{name}.html"
        kg.add_node(Node(id=f"page:{name}", type=NodeType.PAGE, attrs={"url": url, "title": name.title()}))
        kg.add_node(Node(id=f"listing:{name}", type=NodeType.LISTING, attrs={"url": url, "complete": True, "columns": ["Function"], "shown_as": shown_as}))
        for i in range(4):
            fields = {"Function": {"raw": f"{name}_{i}", "value": f"{name}_{i}", "type": "text"}}
            kg.add_node(Node(id=f"record:{name}{i}", type=NodeType.RECORD, attrs={"fields": fields, "listing": f"listing:{name}", "listings": [f"listing:{name}"]}))
    places = {str(d.node.attrs["url"]): _place(kg, d) for d in listing_data(kg)}
    assert places == {"http://h/call.html": "in the table of the page Call", "http://h/poetry.html": "on the page Poetry"}
