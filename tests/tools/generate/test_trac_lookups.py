"""Lookups on Trac (issue 33): a value unique among a filtered query's tickets is not unique on the site.

Trac's query pages (``query?status=!closed&type=defect``) list only the tickets their filter
keeps; a lookup naming a ticket by a value unique among them may name several tickets of the
site. Such listings are skipped with their reason, and no question holds its own answer. The
lookup generator runs on the shared ``trac`` crawl (tests/tools/generate/conftest.py).
A query filtered on one milestone is a scope once the listings showing the Milestone column
prove it: its compares name the milestone and are recounted in trac.db.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.registry import GenerationRequest
from taskloom.tools.generate.web.compare import web_compare
from taskloom.tools.generate.web.lookup import filtered_on, gives_away, listing_data, web_lookup
from taskloom.tools.generate.web.scope import Scope, listing_scope
from taskloom.tools.llm.embedders import make_embedder

from .conftest import TracRun


@pytest.mark.integration
@pytest.mark.slow
def test_no_lookup_reads_a_filtered_query_unless_it_names_its_scope_and_none_gives_its_answer_away(trac: TracRun, trac_site: Any) -> None:
    report = GenerationReport()
    request = GenerationRequest(trac.kg, 12, None, None, 0, None, make_embedder(trac.settings), trac.settings, report)
    tasks = asyncio.run(web_lookup(request)).tasks
    listings = {d.node.id: d for d in listing_data(trac.kg)}
    filtered = {i for i, d in listings.items() if filtered_on(d) is not None}
    scoped = {i for i in filtered if isinstance(listing_scope(listings[i], list(listings.values())), Scope)}
    print("filtered listings:", sorted(str(listings[i].node.attrs.get("url")) for i in filtered))
    for task in tasks:
        print(task.instruction, "->", task.gold_answer)
    assert any("status" in str(listings[i].node.attrs.get("url")) for i in filtered - scoped), "Trac's open-ticket queries are seen as filtered"
    reasons = {s["listing"]: s["reason"] for s in report.generator["skipped"] if "listing" in s}
    assert all(i in reasons for i in filtered - scoped), "every filtered listing with no proven scope is skipped, with its reason"
    assert any("filters on its own field" in reasons[i] for i in filtered - scoped)
    trac_site.state.reset()
    tickets = _tickets(trac_site.db)
    assert any("scope" in t.quality["lookup"] for t in tasks), "the per-milestone queries give lookups"
    for task in tasks:
        lookup = task.quality["lookup"]
        assert lookup["listing"] not in filtered - scoped, task.instruction
        assert not gives_away(task.gold_answer or "", task.instruction, [str(v) for v in lookup["identify"].values()]), task.instruction
        if "scope" in lookup:  # named with its milestone, one ticket of trac.db, the gold its value there
            scope = lookup["scope"]
            assert f"milestone {scope['value']}" in task.instruction.replace("“", "").replace("”", ""), task.instruction
            named = [t for t in tickets if t["Milestone"] == scope["value"] and all(t[k] == v for k, v in lookup["identify"].items())]
            assert len(named) == 1, (task.instruction, len(named))
            assert named[0][lookup["field"]] == task.gold_answer, (task.instruction, named[0])


#: The query columns as trac.db's ticket table holds them.
_TICKET_COLUMNS = {"Summary": "summary", "Owner": "owner", "Type": "type", "Priority": "priority", "Component": "component", "Resolution": "resolution", "Status": "status", "Milestone": "milestone"}


def _tickets(db: Path) -> list[dict[str, str]]:
    with sqlite3.connect(db) as con:
        rows = con.execute(f"SELECT {', '.join(_TICKET_COLUMNS.values())} FROM ticket").fetchall()
    con.close()
    return [{label: value or "" for label, value in zip(_TICKET_COLUMNS, row)} for row in rows]


@pytest.mark.integration
@pytest.mark.slow
def test_compares_over_a_milestones_query_name_the_milestone_and_are_true_in_tracs_database(trac: TracRun, trac_site: Any) -> None:
    """Each milestone's query (the Milestone column hidden, "60 matches" stated) is proven to hold exactly that milestone's
    tickets by the listings that show the column; its compares name the milestone and each gold is recounted in trac.db."""
    report = GenerationReport()
    request = GenerationRequest(trac.kg, 12, None, None, 0, None, make_embedder(trac.settings), trac.settings, report)
    tasks = asyncio.run(web_compare(request)).tasks
    print([s["reason"][:160] for s in report.generator["skipped"]])
    scoped = [t for t in tasks if "scope" in t.quality["compare"]]
    assert len(scoped) >= 2, report.generator
    trac_site.state.reset()
    tickets = _tickets(trac_site.db)

    def count(conds: list[list[Any]]) -> int:
        assert all(op == "eq" and label in _TICKET_COLUMNS for label, op, _ in conds), conds
        return sum(1 for t in tickets if all(t[label] == value for label, _, value in conds))

    for task in scoped:
        goal = task.quality["compare"]
        scope = goal["scope"]
        print(task.instruction, "→", task.gold_answer, scope)
        assert scope["field"] == "Milestone" and f"milestone {scope['value']}" in task.instruction.replace("“", "").replace("”", "") and scope["shared"] >= 3
        assert "tickets" in task.instruction and "bruno" not in task.instruction.split("tickets")[0], "tickets, never “bruno tickets”"
        conds = [*goal["conditions"], ["Milestone", "eq", scope["value"]]]
        if goal["op"] == "count":
            assert count(conds) == int(task.gold_answer or ""), task.instruction
        elif goal["op"] in ("which", "count_difference"):
            na, nb = (count([*conds, [goal["field"], "eq", v]]) for v in goal["options"])
            expected = str(na - nb) if goal["op"] == "count_difference" else goal["options"][0 if na > nb else 1]
            assert expected == task.gold_answer, (task.instruction, na, nb)
        else:
            pytest.fail(f"an aggregate over no number field: {goal['op']}")


@pytest.mark.integration
def test_a_filter_is_a_scope_only_when_other_listings_prove_it(trac: TracRun) -> None:
    """Trac's per-milestone queries are scopes; the active-ticket queries (several statuses, a negation) are not."""
    listings = listing_data(trac.kg)
    found = {str(d.node.attrs["url"]): listing_scope(d, listings) for d in listings if filtered_on(d) is not None}
    for url, scope in sorted(found.items()):
        print(url, "→", scope)
    scopes = [s for s in found.values() if isinstance(s, Scope)]
    # every milestone query the crawl reached (all four here; a loaded machine's crawl may miss one)
    assert len(scopes) >= 2 and {s.value for s in scopes} <= {"Release 1.0", "Release 1.1", "Release 2.0", "Someday"}, found
    assert all(isinstance(s, Scope) for u, s in found.items() if "status=" not in u and "milestone=" in u), found
    assert all(s.label == "Milestone" for s in scopes)
    assert all(isinstance(s, str) for u, s in found.items() if "status=" in u), "a query over several statuses or !closed is no single scope"
