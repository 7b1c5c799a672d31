"""Goal or click script: ``instruction_style`` on hand-written instructions, and the generation stage that drops scripts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from taskloom.tools.environment.site import serve_static
from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.web.style import filter_scripts, gold_names, instruction_style, quoted
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import GoldStep, Provenance, Task

# ../shared/TASKS.md, "Good", every instruction verbatim
GOOD = [
    "What body mass was recorded for the Gentoo penguin N12A1 in study PAL0809?",
    "Were more Adelie penguins sampled on Dream island or on Torgersen island?",
    "How many of the Chinstrap penguins in the study did not complete their clutch?",
    "Show the penguin records ordered from heaviest to lightest.",
    "In which Python version was the function returning the integer square root added to the math module?",
    "Open the page documenting the module for reading and writing comma-separated values.",
    "Open the catalogue entry of the poetry e-book.",
    'Request "The Lantern Keeper\'s Secret" for pickup at any branch, in the name of Ada Finch with library card 12345678.',
    'Add the todos "Buy milk" and "Call Anna", mark "Buy milk" done, and leave only unfinished todos on screen.',
    "Open the record of the lightest penguin with an egg date in 2009 on the island where the heaviest Chinstrap penguin was found.",
]
# ../shared/TASKS.md, "Bad" click scripts (the "…" elisions filled in)
BAD = [
    "On the page “Framework documentation”, open “Table of contents”, then open “API reference”.",
    "On the page “Database: demo”, open “home”.",
    "On the page “table: 3,376 rows”, open “9”.",
    "Open “Table of contents”, then open “Python documentation”, then open “next”, then open “Table of contents”.",
    "Goal: work with “X”. First open “Y”, then open “Z”.",
]
MORE_GOALS = [
    "List the library's e-books in one genre.",
    "Add a todo 'Renew passport' and mark it done, leaving the others unchanged.",
    "Find the opening hours of the branch by the harbour on Saturdays.",
    "Which author wrote the most books in the mystery genre?",
    "Delete the todo “Call Anna” and leave the rest as they are.",
    "Show only the books that are available now, newest first.",
    "Rename the todo “Buy milk” to “Buy oat milk”.",
    "How many e-books does the library hold in total?",
    "Sign up for the newsletter with the address ada@example.org.",
    "What is the culmen length of the heaviest Adelie penguin from Biscoe?",
    "Open the documentation of the function that returns the greatest common divisor.",
    "Is the book about seabirds of the western cliffs currently on loan?",
    "Who wrote the novel in which a linguist translates the clicks and hums rising from the deep?",
    "Get to the list of penguins sampled in 2008, longest flippers first.",
]
MORE_SCRIPTS = [
    "Click the “Search” button.",
    "Select “Poetry” from the Genre dropdown.",
    "Type “lantern” into the search box and press Enter.",
    "Switch to the “Details” tab.",
    "Press the “Request a loan” button and fill in your card number.",
    "Go to “About & hours”.",
    "Scroll down to the footer and open the contact link.",
    "Choose Mystery from the Browse menu.",
    "On the “Catalogue” page, pick the first result.",
    "Tick the checkbox next to Buy milk, then click Clear completed.",
    "First, open the catalogue. Then search for poetry.",
    "Use the Genre drop-down to show poetry books.",
    "Double-click the todo to edit it.",
    "Hit Enter after typing the todo text.",
    "Open the “Genres” link.",
    "Tap on “Menu” and follow “Contact”.",
]


@pytest.mark.parametrize("text", GOOD + MORE_GOALS)
def test_goals_are_goals(text: str) -> None:
    verdict = instruction_style(text)
    assert verdict.style == "goal", verdict.reason


@pytest.mark.parametrize("text", BAD + MORE_SCRIPTS)
def test_scripts_are_scripts_with_a_reason(text: str) -> None:
    verdict = instruction_style(text)
    assert verdict.style == "script" and verdict.reason


def test_quoting_the_gold_path_is_a_script_but_naming_the_subject_is_not() -> None:
    gold = ["Browse the catalogue", "Poetry", "Tidelines", "Request a loan"]
    # the subject the goal names may appear once, even quoted
    assert instruction_style("Request “Tidelines” for pickup at the harbour branch.", gold).style == "goal"
    assert instruction_style("Open the catalogue entry of the poetry e-book.", gold).style == "goal"
    # two of the gold path's control texts, or one given as the thing to open, is a script
    two = instruction_style("Find “Tidelines” under “Poetry”.", gold)
    assert two.style == "script" and "Tidelines" in two.reason and "Poetry" in two.reason
    assert instruction_style("Browse the catalogue and request a loan of the poetry book.", gold).style == "script"
    assert instruction_style("Open Tidelines.", gold).style == "script"
    # without gold names the same sentences are judged by their wording only
    assert instruction_style("Find “Tidelines” under “Poetry”.").style == "goal"
    assert instruction_style("").style == "script"


def test_quoted_handles_apostrophes_and_quote_styles() -> None:
    assert quoted("Request “The Lantern Keeper's Secret” and 'Tidelines', not the ‘other’ one.") == ["The Lantern Keeper's Secret", "Tidelines", "other"]


# --------------------------------------------------------------------------- the generation stage


@pytest.fixture(scope="module")
def example_graph(tmp_path_factory: pytest.TempPathFactory, crawl_site: Callable[..., str]) -> Iterator[tuple[KnowledgeGraph, Path, str]]:
    workspace = tmp_path_factory.mktemp("ws")
    runtime = Runtime(Settings(workspace=workspace, embedder="hashing", crawl_delay=0, record_screenshots=False))
    with serve_static() as site:
        graph_id = crawl_site(runtime, site.url)
        yield runtime.graphs.load(graph_id), workspace, site.url


def _link(kg: KnowledgeGraph, name: str) -> str:
    return next(n.id for n in kg.nodes("link") if n.attrs.get("name") == name)


def _task(kg: KnowledgeGraph, task_id: str, instruction: str, clicks: list[str]) -> Task:
    steps = [GoldStep(action="click", node_id=_link(kg, name), selector=kg.node(_link(kg, name)).attrs.get("selector")) for name in clicks]
    return Task(id=task_id, kind="web", type="find", instruction=instruction, start_url="http://127.0.0.1/index.html", gold_steps=steps, provenance=Provenance(graph_id=kg.id, generator="test"))


def test_gold_names_come_from_the_graph_nodes_the_steps_act_on(example_graph: tuple[KnowledgeGraph, Path, str]) -> None:
    kg, _, _ = example_graph
    task = _task(kg, "t", "x", ["Genres", "About & hours"])
    assert gold_names(task, kg) == ["Genres", "About & hours"]
    typed = task.model_copy(update={"gold_steps": [GoldStep(action="type", text="lantern", canonical="type(text='lantern', element='Search')")]})
    assert gold_names(typed) == []  # typed text is data, not a control's name


def test_the_style_stage_drops_scripts_with_the_rule_and_records_every_verdict(example_graph: tuple[KnowledgeGraph, Path, str]) -> None:
    kg, _, _ = example_graph
    goal = _task(kg, "goal", "When is the library open on Sundays?", ["About & hours"])
    quoting = _task(kg, "quoting", "Look at “Genres” and then at “About & hours”.", ["Genres", "About & hours"])
    script = _task(kg, "script", "On the page “Harbourside Library”, open “Genres”.", ["Genres"])
    report = GenerationReport()
    kept = filter_scripts(kg, [goal, quoting, script], report)
    assert [t.id for t in kept] == ["goal"]
    assert goal.quality["style"]["style"] == "goal" and script.quality["style"]["style"] == "script"
    reasons = {d.task_id: d.reason for d in report.dropped if d.stage == "style"}
    assert set(reasons) == {"quoting", "script"}
    assert "Genres" in reasons["quoting"] and "About & hours" in reasons["quoting"]
    assert "named page" in reasons["script"]
    assert report.stages["style"] == {"in": 3, "kept": 1}


def test_generation_rejects_the_template_click_scripts(example_graph: tuple[KnowledgeGraph, Path, str]) -> None:
    """The meta-path templates write "On the page “X”, open “Y”…": generation keeps none of them."""
    kg, workspace, _ = example_graph

    async def go() -> GenerationReport:
        async with Runtime(Settings(workspace=workspace, embedder="hashing", record_screenshots=False), screenshots=False) as rt:
            return (await rt.task_service().generate(kg.id, count=5, seed=2, generator="web-metapaths", use_llm=False)).report

    report = asyncio.run(go())
    scripted = [d for d in report.dropped if d.stage == "style"]
    assert report.candidates > 0 and len(scripted) == report.candidates, report.dropped[:3]
    assert all("a click script" in d.reason for d in scripted)
    assert report.stages["style"]["kept"] == 0 and report.kept == 0
