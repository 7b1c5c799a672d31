"""Lookups on Trac (issue 33): a value unique among a filtered query's tickets is not unique on the site.

Trac's query pages (``query?status=!closed&type=defect``) list only the tickets their filter
keeps; a lookup naming a ticket by a value unique among them may name several tickets of the
site. Such listings are skipped with their reason, and no question holds its own answer. The
lookup generator runs on the shared ``trac`` crawl (tests/tools/generate/conftest.py).
"""

from __future__ import annotations

import asyncio

import pytest

from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.registry import GenerationRequest
from taskloom.tools.generate.web.lookup import filtered_on, gives_away, listing_data, web_lookup
from taskloom.tools.llm.embedders import make_embedder

from .conftest import TracRun


@pytest.mark.integration
@pytest.mark.slow
def test_no_lookup_reads_a_filtered_query_and_none_gives_its_answer_away(trac: TracRun) -> None:
    report = GenerationReport()
    request = GenerationRequest(trac.kg, 12, None, None, 0, None, make_embedder(trac.settings), trac.settings, report)
    tasks = asyncio.run(web_lookup(request)).tasks
    listings = {d.node.id: d for d in listing_data(trac.kg)}
    filtered = {i for i, d in listings.items() if filtered_on(d) is not None}
    print("filtered listings:", sorted(str(listings[i].node.attrs.get("url")) for i in filtered))
    for task in tasks:
        print(task.instruction, "->", task.gold_answer)
    assert any("status" in str(listings[i].node.attrs.get("url")) for i in filtered), "Trac's open-ticket queries are seen as filtered"
    reasons = {s["listing"]: s["reason"] for s in report.generator["skipped"] if "listing" in s}
    assert all(i in reasons for i in filtered), "every filtered listing is skipped, with its reason"
    assert any("filters on its own field" in reasons[i] for i in filtered)
    for task in tasks:
        lookup = task.quality["lookup"]
        assert lookup["listing"] not in filtered, task.instruction
        assert not gives_away(task.gold_answer or "", task.instruction, [str(v) for v in lookup["identify"].values()]), task.instruction
