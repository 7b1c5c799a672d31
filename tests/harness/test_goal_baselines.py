"""Baselines on goal tasks, through the real harness and a real browser: on a small paged catalogue built here, the
explorer answers a lookup question from a record's detail page and opens that page for a find task; the word-matching
baseline, which follows the instruction's words into link texts, solves neither; the run report counts both per family."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskloom.harness.service import Harness
from taskloom.harness.store import RunStore
from taskloom.server.app import build_server
from taskloom.tools.environment.site import serve_static
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import GoldStep, Provenance, SuccessCriterion, Task
from taskloom.tools.tasks.store import TaskStore
from taskloom.tools.workspace import Workspace

pytestmark = pytest.mark.integration

NAV = '<nav><a href="index.html">Home</a> <a href="records.html">Penguin records</a> <a href="about.html">About the study</a></nav>'
# (individual id, species, study, body mass): N12A1 is in both studies, so the study is needed to name one record
PENGUINS = [
    ("N1A1", "Adelie", "PAL0708", 3750), ("N2A1", "Adelie", "PAL0708", 3250), ("N12A1", "Gentoo", "PAL0708", 4400),
    ("N5A2", "Chinstrap", "PAL0809", 3500), ("N12A1", "Gentoo", "PAL0809", 5100), ("N7A1", "Adelie", "PAL0809", 3900),
]


def _page(title: str, body: str) -> str:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{NAV}<main><h1>{title}</h1>{body}</main></body></html>"


def build_catalogue(folder: Path) -> None:
    """Home, an about page, a listing of 3 records per page (id, species, study; no body mass) and one detail page per record."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(_page("Antarctic field station", "<p>Observations from three islands.</p>"))
    (folder / "about.html").write_text(_page("About the study", "<p>Nesting observations, 2007 to 2009.</p>"))
    pages = [PENGUINS[:3], PENGUINS[3:]]
    for number, rows in enumerate(pages, 1):
        cells = "".join(
            f"<tr><td>{pid}</td><td>{species} penguin</td><td>{study}</td><td><a href='record-{study}-{pid}.html'>Details</a></td></tr>"
            for pid, species, study, _ in rows
        )
        pager = f"<a href='records{number + 1}.html'>Next</a>" if number < len(pages) else "<a href='records.html'>Previous</a>"
        table = f"<table><thead><tr><th>Individual ID</th><th>Species</th><th>Study name</th><th></th></tr></thead><tbody>{cells}</tbody></table>"
        (folder / ("records.html" if number == 1 else f"records{number}.html")).write_text(_page(f"Penguin records, page {number}", table + pager))
    for pid, species, study, mass in PENGUINS:
        facts = f"<dl><dt>Individual ID</dt><dd>{pid}</dd><dt>Species</dt><dd>{species} penguin</dd><dt>Study name</dt><dd>{study}</dd>"
        facts += f"<dt>Body mass (g)</dt><dd>{mass}</dd></dl>"
        (folder / f"record-{study}-{pid}.html").write_text(_page(f"Record {pid}", facts))


def _task(task_id: str, family: str, instruction: str, base: str, steps: list[str], answer: str | None, success: list[SuccessCriterion]) -> Task:
    return Task(
        id=task_id, kind="web", type=family.removeprefix("web-"), instruction=instruction, start_url=base + "/index.html", allowed_domains=["127.0.0.1"],
        gold_steps=[GoldStep(action="click", selector=s, node_id=f"{task_id}-{i}") for i, s in enumerate(steps)],
        gold_answer=answer, answer_kind="number" if answer else "text", metrics=["numeric", "exact_match"] if answer else [],
        success=success, provenance=Provenance(graph_id="hand-written", generator=family),
    )


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("catalogue")
    build_catalogue(folder)
    with serve_static(folder) as site:
        yield site.url


def test_explorer_reaches_goals_that_word_matching_misses(catalogue: str, tmp_path: Path) -> None:
    detail = catalogue + "/record-PAL0809-N12A1.html"
    gold = ["nav a[href='records.html']", "a[href='records2.html']", "a[href='record-PAL0809-N12A1.html']"]
    tasks = [
        _task("web-lookup-mass", "web-lookup", "What body mass was recorded for the Gentoo penguin with individual ID N12A1 and study name PAL0809?",
              catalogue, gold, "5100", []),
        _task("web-find-record", "web-find", "Find the Gentoo penguin with individual ID N12A1 and study name PAL0809, and bring up its own page.",
              catalogue, gold, None, [SuccessCriterion(kind="page_is", value=detail)]),
    ]
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing", record_screenshots=False)
    store = TaskStore(Workspace(settings.workspace))
    for task in tasks:
        store.save(task)
    agents = ["oracle", "explorer", "word-match"]
    report = asyncio.run(Harness(settings, build_server).run(tasks, agents, concurrency=2, max_steps=20, timeout_s=90, run_id="goals"))
    results = {(r.agent, r.task_id): r for r in RunStore(Workspace(settings.workspace), "goals").results()}
    assert len(results) == 6
    outcome = {key: (r.success, r.answer) for key, r in results.items()}
    assert outcome[("oracle", "web-lookup-mass")] == (True, "5100") and outcome[("oracle", "web-find-record")][0] is True
    assert outcome[("explorer", "web-lookup-mass")] == (True, "5100"), results[("explorer", "web-lookup-mass")]
    assert outcome[("explorer", "web-find-record")][0] is True, results[("explorer", "web-find-record")]
    assert outcome[("word-match", "web-lookup-mass")][0] is False and outcome[("word-match", "web-lookup-mass")][1] != "5100"
    assert outcome[("word-match", "web-find-record")][0] is False
    explored = [a.canonical for a in load_trajectory(Path(results[("explorer", "web-lookup-mass")].trajectory or "")).actions]
    assert any("Next" in a for a in explored) and any("Details" in a for a in explored), explored  # it paged on, then opened the row
    matched = [a.canonical for a in load_trajectory(Path(results[("word-match", "web-lookup-mass")].trajectory or "")).actions]
    assert matched and not any("Details" in a or "Next" in a for a in matched), matched  # it only follows shared words
    # the report's per-family table counts exactly these episodes
    table = {(row.agent, row.family): (row.episodes, row.successes) for row in report.families}
    assert table == {
        ("explorer", "web-find"): (1, 1), ("explorer", "web-lookup"): (1, 1), ("oracle", "web-find"): (1, 1),
        ("oracle", "web-lookup"): (1, 1), ("word-match", "web-find"): (1, 0), ("word-match", "web-lookup"): (1, 0),
    }
    text = report.family_text()
    assert text.splitlines()[0].split() == ["family", "explorer", "oracle", "word-match"]
    assert "web-lookup" in text and "0/1 (0%)" in text and "1/1 (100%)" in text
