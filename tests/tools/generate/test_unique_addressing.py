"""Document tasks name what they ask about uniquely: sections, passages, and the question itself.

The material is a small reference manual typeset here (pymupdf, with an outline), built like R's
help pages: five function topics, each with a "Description" and a "Details" section, and every
paragraph opening with the same twelve words. Before unique addressing, "Summarise section
"Description"…" was asked five times with five different gold answers.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pymupdf
import pytest

from taskloom.tools.generate.document.address import unambiguous
from taskloom.tools.generate.document.generator import generate_document_tasks
from taskloom.tools.graph.ingest.pipeline import build_document_graph
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Provenance, Task

TOPICS = ("abbreviate", "agrep", "aperm", "apply", "arrays")
LEAD = "This help page is part of the reference manual and it documents"


def _prose(topic: str, part: str, k: int) -> str:
    return (
        f"{LEAD} the function {topic} in its {part.lower()} part number {k}. "
        f"The function {topic} takes {k + 2} arguments and returns a value of length {k * 3}. "
        f"Calling {topic} on an empty input gives an empty result with {k} attributes kept. "
        f"See the examples of {topic} for a run that uses {k + 4} inputs."
    )


def _manual(path: Path) -> Path:
    doc = pymupdf.open()
    toc: list[list[object]] = [[1, "2 Functions", 1]]
    for i, topic in enumerate(TOPICS):
        page = doc.new_page()
        y = 72.0
        if i == 0:
            page.insert_text((72, y), "2 Functions", fontsize=16, fontname="hebo")
            y += 30
        page.insert_text((72, y), f"2.{i + 1} {topic}", fontsize=14, fontname="hebo")
        toc.append([2, f"2.{i + 1} {topic}", doc.page_count])
        y += 24
        for j, part in enumerate(("Description", "Details")):
            page.insert_text((72, y), part, fontsize=12, fontname="hebo")
            toc.append([3, part, doc.page_count])
            y += 8
            for k in range(2):
                used = page.insert_textbox(pymupdf.Rect(72, y, 522, y + 120), _prose(topic, part, 2 * j + k + 1), fontsize=10, fontname="helv")
                y += 120 - used + 12
            y += 14
    doc.set_toc(toc)
    doc.save(path)
    return path


@pytest.fixture(scope="module")
def manual(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeGraph:
    tmp = tmp_path_factory.mktemp("manual")
    return build_document_graph(_manual(tmp / "rd-manual.pdf"), Settings(workspace=tmp / "ws", embedder="hashing"))


@pytest.fixture(scope="module")
def tasks(manual: KnowledgeGraph) -> tuple[list[Task], dict]:
    """Every candidate of every type."""
    return generate_document_tasks(manual, None, 10_000, 0, None)


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def _parent_title(kg: KnowledgeGraph, node_id: str) -> str:
    parent = next(u for u, _, k in kg.g.in_edges(node_id, keys=True) if k == "contains")
    return _norm(kg.node(parent).text) if kg.node_type(parent) == "section" else ""


_SECTION = re.compile(r'\bsection "([^"]+)"(?: \((?:under "([^"]+)")?(?:, )?(?:page (\d+))?\))?')


def _resolve(kg: KnowledgeGraph, title: str, parent: str | None, page: str | None) -> list[str]:
    """The sections a reader finds for an address: the title, then the parent's title and the page when given."""
    return [
        s.id for s in kg.nodes("section")
        if _norm(s.text) == title and (not parent or _parent_title(kg, s.id) == parent) and (not page or str(s.source.page) == page)
    ]  # fmt: skip


def test_sections_sharing_a_title_are_named_by_their_parent(manual: KnowledgeGraph, tasks: tuple[list[Task], dict]) -> None:
    assert sum(_norm(s.text) == "Description" for s in manual.nodes("section")) == len(TOPICS)
    summaries = [t for t in tasks[0] if t.provenance.template == "summarization_section" and '"Description"' in t.instruction]
    assert len(summaries) == len(TOPICS)
    for task in summaries:
        m = _SECTION.search(task.instruction)
        assert m is not None and m.group(1) == "Description" and m.group(2), task.instruction
        assert _parent_title(manual, task.evidence[0]) == m.group(2)
    assert len({t.instruction for t in summaries}) == len({t.gold_answer for t in summaries}) == len(TOPICS)


def test_every_named_section_and_quoted_opening_is_one_in_the_document(manual: KnowledgeGraph, tasks: tuple[list[Task], dict]) -> None:
    texts = {p.id: _norm(p.text) for p in manual.nodes("paragraph")}
    named = openings = 0
    for task in tasks[0]:
        for m in _SECTION.finditer(task.instruction):
            found = _resolve(manual, m.group(1), m.group(2), m.group(3))
            assert len(found) == 1 and found[0] in task.evidence, (task.instruction, found)
            named += 1
        for quoted in re.findall(r'passage beginning "([^"]+)"', task.instruction):
            hits = [pid for pid, text in texts.items() if text.startswith(quoted.removesuffix("…"))]
            assert len(hits) == 1 and hits[0] in task.evidence, (quoted, hits)
            assert len(quoted.split()) > 12  # the shared twelve-word lead names nothing: the opening goes on
            openings += 1
    assert named >= 4 * len(TOPICS) and openings >= len(TOPICS)


def test_no_two_tasks_ask_the_same_question(tasks: tuple[list[Task], dict]) -> None:
    questions = [" ".join(t.instruction.casefold().split()) for t in tasks[0]]
    assert len(questions) > 20 and len(set(questions)) == len(questions)
    assert tasks[1]["ambiguous_dropped"] == []  # the addresses leave nothing ambiguous to drop


def _task(tid: str, instruction: str, gold: str) -> Task:
    return Task(id=tid, kind="document", type="summarization", difficulty="medium", instruction=instruction, gold_answer=gold,
                evidence=["p"], provenance=Provenance(graph_id="g", template="summarization_section", generator="template"))  # fmt: skip


def test_a_question_with_two_gold_answers_is_dropped_with_its_reason() -> None:
    asked = 'Summarise section "Description" of the document in 2 sentences.'
    pools = {
        "summarization": {t.id: t for t in (_task("a", asked, "One."), _task("b", asked, "Two."), _task("c", "Other?", "Three."))},
        "fact_verification": {t.id: t for t in (_task("d", "Same?", "true"), _task("e", "same? ", "TRUE"))},
    }
    dropped = unambiguous(pools)
    assert sorted(pools["summarization"]) == ["c"] and sorted(pools["fact_verification"]) == ["d"]
    why = {d["task_id"]: d["reason"] for d in dropped}
    assert sorted(why) == ["a", "b", "e"]
    assert why["a"].startswith("ill-posed: 2 candidates") and why["e"] == "repeats the question and gold answer of d"
