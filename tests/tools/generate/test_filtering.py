"""Filtering stages and coverage selection on small hand-built graphs and tasks."""

from __future__ import annotations

import asyncio
import random

from taskloom.tools.generate.filter.lazy import select_verified
from taskloom.tools.generate.filter.stages import GenerationReport, deduplicate, filter_reachable, mmr_select, reachable
from taskloom.tools.graph.model import Edge, GraphMeta, KnowledgeGraph, Node
from taskloom.tools.llm.embedders import HashingEmbedder
from taskloom.tools.tasks.model import Provenance, Task


def _graph() -> KnowledgeGraph:
    kg = KnowledgeGraph(GraphMeta(id="g"))
    for i in range(6):
        kg.add_node(Node(id=f"p{i}", type="paragraph", text=f"paragraph {i}"))
    kg.add_node(Node(id="t", type="table", text="table"))
    for a, b in [("p0", "p1"), ("p1", "p2"), ("p2", "p3"), ("p3", "p4")]:
        kg.add_edge(Edge(source=a, target=b, type="next"))
    kg.add_edge(Edge(source="t", target="p0", type="refers_to"))
    return kg


def _task(
    task_id: str, evidence: list[str], instruction: str = "Q?", template: str = "tpl", difficulty: str = "easy", generator: str = "template",
    type: str = "comprehension",
) -> Task:
    return Task(
        id=task_id, kind="document", type=type, difficulty=difficulty, instruction=instruction, gold_answer="A",
        evidence=evidence, provenance=Provenance(graph_id="g", template=template, generator=generator),
    )


def test_reachable_counts_hops_in_both_directions() -> None:
    kg = _graph()
    assert reachable(kg, "p2", ["p0", "p4", "t"], 2) == ["t"]
    assert reachable(kg, "p2", ["t"], 3) == []
    assert reachable(kg, "p5", ["p0"], 5) == ["p0"]


def test_unreachable_evidence_is_dropped_with_its_reason() -> None:
    kg = _graph()
    report = GenerationReport()
    kept = filter_reachable(kg, [_task("near", ["p0", "p2"]), _task("far", ["p0", "p4"]), _task("island", ["p0", "p5"])], {"tpl": 2}, report)
    assert [t.id for t in kept] == ["near"]
    reasons = {d.task_id: d.reason for d in report.dropped}
    assert set(reasons) == {"far", "island"} and "beyond 2 hops" in reasons["far"]
    assert report.stages["reachability"] == {"in": 3, "kept": 1}


def test_near_duplicates_collapse_to_one() -> None:
    report = GenerationReport()
    tasks = [
        _task("a", ["p0"], "What is the rainfall at station S01 in March?"),
        _task("b", ["p0"], "What is the rainfall at station S01 in March?"),
        _task("c", ["p0"], "Which sensor is checked every twelve months?"),
    ]
    kept = deduplicate(tasks, HashingEmbedder(), 0.95, report)
    assert [t.id for t in kept] == ["a", "c"]
    assert report.dropped[0].task_id == "b" and "near-duplicate of a" in report.dropped[0].reason


def test_mmr_prefers_coverage_and_is_deterministic() -> None:
    kg = _graph()
    tasks = [_task("a", ["p0"], template="t1"), _task("b", ["p1"], template="t1"), _task("c", ["t"], template="t2", difficulty="hard")]
    picked = mmr_select(kg, tasks, 2)
    assert [t.id for t in picked] == ["a", "c"]
    assert [t.id for t in mmr_select(kg, tasks, 2)] == ["a", "c"]


def test_selection_takes_families_in_turn() -> None:
    """Five near-identical lookups cannot crowd out the two finds and the one view: families are picked in turn."""
    kg = _graph()
    lookups = [_task(f"l{i}", [f"p{i}"], generator="web-lookup") for i in range(5)]
    finds = [_task(f"f{i}", ["p0"], generator="web-find+llm") for i in range(2)]
    view = [_task("v", ["p0"], generator="web-view")]
    picked = mmr_select(kg, lookups + finds + view, 5)
    generators = [t.provenance.generator.removesuffix("+llm") for t in picked]
    assert generators.count("web-find") == 2 and generators.count("web-view") == 1 and generators.count("web-lookup") == 2
    # A family that runs out leaves its turns to the others.
    assert len(mmr_select(kg, lookups + view, 4)) == 4


def test_document_types_take_turns_cloze_is_capped_and_tables_get_more() -> None:
    kg = _graph()
    cloze = [_task(f"x{i}", [f"p{i % 6}"], type="extraction", template="extraction_cloze") for i in range(20)]
    tables = [_task(f"t{i}", ["t"], type="table_qa", template="table_qa_cell") for i in range(20)]
    prose = [_task(f"c{i}", [f"p{i % 6}"], type="comprehension") for i in range(20)]
    picked = mmr_select(kg, cloze + tables + prose, 20)
    types = [t.type for t in picked]
    assert types.count("extraction") == 2  # at most a tenth of the 20 asked for
    assert types.count("table_qa") > types.count("comprehension")  # one and a half turns per round
    assert len(picked) == 20
    with_one_other = mmr_select(kg, cloze[:5] + prose[:1], 10)
    assert len(with_one_other) == 2  # a capped family cannot fill a mix: fewer tasks, never more cloze
    assert len(mmr_select(kg, cloze[:5], 3)) == 3  # cloze tasks asked for alone are not capped


def test_selection_that_verifies_as_it_goes_keeps_what_verifying_everything_keeps() -> None:
    """Over mixed pools with failing candidates and near-duplicates, verifying only what the picks reach chooses the same tasks as verifying all, de-duplicating, then selecting."""
    kg = _graph()
    rng = random.Random(7)
    families = ["web-lookup", "web-find", "web-view", "web-compare"]
    saved = overlapped = 0
    for round_ in range(60):
        tasks = [
            _task(
                f"r{round_}-{i}", [f"p{rng.randrange(6)}"], instruction=f"Question {rng.randrange(12)} about station {rng.randrange(3)}?",
                template=f"t{rng.randrange(3)}", difficulty=rng.choice(["easy", "hard"]), generator=rng.choice(families),
            )
            for i in range(rng.randrange(1, 25))
        ]
        failing = {t.id for t in tasks if rng.random() < 0.3}
        count = rng.randrange(1, 12)
        eager = mmr_select(kg, deduplicate([t for t in tasks if t.id not in failing], HashingEmbedder(), 0.95, GenerationReport()), count)
        asked: list[str] = []

        async def verify(task: Task, asked: list[str] = asked, failing: set[str] = failing) -> tuple[bool, GenerationReport]:
            asked.append(task.id)
            part = GenerationReport()
            part.stage("replay", 1, int(task.id not in failing))
            return task.id not in failing, part

        report = GenerationReport()
        lazy = asyncio.run(select_verified(kg, tasks, count, verify, HashingEmbedder(), 0.95, report))
        assert [t.id for t in lazy] == [t.id for t in eager], (round_, count)
        assert len(asked) == len(set(asked)) and report.unverified == len(tasks) - len(asked)  # each candidate verified at most once
        assert report.stages["replay"]["in"] == len(asked)
        saved += report.unverified
        # verifying the next guesses beside the one needed: the same tasks and the same report, the unneeded guesses discarded
        guessed: list[str] = []
        in_flight = [0, 0]

        async def slow_verify(task: Task, guessed: list[str] = guessed, failing: set[str] = failing, in_flight: list[int] = in_flight) -> tuple[bool, GenerationReport]:
            guessed.append(task.id)
            in_flight[0] += 1
            in_flight[1] = max(in_flight)
            await asyncio.sleep(0.001)
            in_flight[0] -= 1
            part = GenerationReport()
            part.stage("replay", 1, int(task.id not in failing))
            return task.id not in failing, part

        ahead_report = GenerationReport()
        ahead = asyncio.run(select_verified(kg, tasks, count, slow_verify, HashingEmbedder(), 0.95, ahead_report, ahead=1))
        assert [t.id for t in ahead] == [t.id for t in eager], (round_, count)
        assert ahead_report.model_dump() == report.model_dump()  # stages, drops and unverified: as verifying one at a time
        assert len(guessed) == len(set(guessed)) and set(asked) <= set(guessed)
        overlapped += in_flight[1] > 1
    assert saved > 0  # some rounds filled their selection before verifying every candidate
    assert overlapped > 0  # verifications ran two at a time
