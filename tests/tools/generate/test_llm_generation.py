"""LLM-written document tasks (against the local OpenAI-compatible test double) through TaskService."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
import openai_double  # noqa: E402  (test double: a local OpenAI-compatible server on 127.0.0.1)

from taskloom.tools.generate.service import TaskService  # noqa: E402
from taskloom.tools.generate.web.rewrite import check_rewrite, goal_of, llm_instructions  # noqa: E402
from taskloom.tools.graph.service import GraphService  # noqa: E402
from taskloom.tools.llm.client import OpenAILLM  # noqa: E402
from taskloom.tools.settings import Settings  # noqa: E402
from taskloom.tools.tasks.model import GoldStep, Provenance, SuccessCriterion, Task  # noqa: E402

pytestmark = pytest.mark.slow  # the slow tier: `make test` runs it, `make test-fast` leaves it out

GUIDE = Path(__file__).resolve().parents[3] / "examples" / "documents" / "field-guide.md"


def author(body: dict) -> str:
    """The double's 'model': writes a task from the first text node it is given, or scores a task."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    if system.startswith("You rate generated agent tasks"):
        return json.dumps({"clarity": 4, "difficulty_fit": 4, "correctness": 5, "overall": 4, "reason": "grounded"})
    subgraph = json.loads(user.split("Subgraph (JSON):\n", 1)[1])
    node = next(n for n in subgraph["nodes"] if len(n["text"].split()) >= 6)
    answer = " ".join(node["text"].split()[:6])
    return json.dumps({"question": f"Which words open the passage about {subgraph['task_type']} ({node['id']})?", "answer": answer, "evidence": [node["id"]]})


@pytest.fixture
def double() -> Iterator[openai_double.OpenAIDouble]:
    with openai_double.OpenAIDouble() as d:
        d.handler = author
        yield d


def test_llm_writes_grounded_tasks_citing_node_ids(double: openai_double.OpenAIDouble, tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path, embedder="hashing")
    graphs = GraphService(settings)
    graph_id = graphs.ingest_document(GUIDE).graph_id
    llm = OpenAILLM(double.base_url, "double-model", cache_dir=tmp_path / "cache")
    service = TaskService(graphs, llm=llm)  # document tasks: no episode manager needed
    result = asyncio.run(service.generate(graph_id, count=4, seed=1))
    tasks = service.list()
    kg = graphs.load(graph_id)
    assert result.llm == "double-model" and tasks
    for task in tasks:
        assert task.provenance.generator == "llm" and task.provenance.model == "double-model"
        assert task.gold_answer and task.gold_answer.lower() in " ".join(kg.node(n).text for n in task.evidence).lower()
        assert task.quality["llm_score"]["overall"] == 4
    usage = llm.usage_report()["total"]
    assert usage["calls"] / len(tasks) <= 2.5
    assert {"llm_generate", "llm_score"} <= set(result.report.stages)


# --------------------------------------------------------------------------- web instructions written from the goal

SYSTEM_WEB = "Rewrite browser task instructions as a natural request from a user, written from the task's structured goal"


def _goal(body: dict) -> dict:
    """The structured goal in a web-instruction request (the JSON after 'Goal (JSON):')."""
    user = body["messages"][-1]["content"]
    return dict(json.loads(user.split("Goal (JSON):\n", 1)[1].rsplit("\n\nWrite the instruction", 1)[0]))


def _web_requests(double: openai_double.OpenAIDouble) -> list[dict]:
    return [b for b in double.chat_requests() if b["messages"][0]["content"].startswith(SYSTEM_WEB)]


def _lookup_task(ident: str, answer: str = "5,100 g") -> Task:
    """A lookup task as web-lookup records it: structured goal in quality, gold answer, gold step and criteria apart."""
    gold_url = f"http://127.0.0.1:9/content/penguins/{ident}?page=3"
    return Task(
        id=f"web-lookup-{ident}", kind="web", type="lookup", answer_kind="number", gold_answer=answer,
        instruction=f"What body mass was recorded for the Gentoo penguin with individual ID {ident} and study name PAL0809?",
        start_url="http://127.0.0.1:9/start-here/",
        gold_steps=[GoldStep(action="navigate", text=gold_url, canonical=f"navigate(url={gold_url!r})")],
        success=[SuccessCriterion(kind="text_present", value="crit-sentinel-17", scope="main")],
        provenance=Provenance(graph_id="g", template="web-lookup", generator="web-lookup"),
        quality={"answer_visible": True, "lookup": {
            "listing": "listing-1", "record": "rec-42", "field": "Body Mass (g)", "value": 5100, "raw": "5100", "unit": "g", "answer_page": gold_url,
            "identify": {"Species": "Gentoo penguin (Pygoscelis papua)", "Individual ID": ident, "studyName": "PAL0809"},
        }},
    )  # fmt: skip


# what the double's "model" writes for each record (by its individual ID, read from the goal it was sent)
REPLIES = {
    "N12A1": "I'd like to know how heavy the Gentoo penguin N12A1 from study PAL0809 was: what body mass was recorded?",  # accepted
    "N13A2": "What body mass was recorded for the Gentoo penguin N13A2?",  # drops PAL0809
    "N14A1": "On the page “Penguins”, click “N14A1”, then read the body mass of the Gentoo penguin in PAL0809.",  # a click script
    "N15A1": "Confirm that the Gentoo penguin N15A1 of study PAL0809 weighed 5,100 g.",  # gives the answer away
}


def _from_goal(body: dict) -> str:
    return json.dumps({"instruction": REPLIES[_goal(body)["record"]["individual ID"]]})


def test_llm_writes_web_instructions_from_the_goal_and_the_checker_decides(double: openai_double.OpenAIDouble) -> None:
    double.handler = _from_goal
    tasks = [_lookup_task(i) for i in REPLIES]
    templates = {t.id: t.instruction for t in tasks}
    llm = OpenAILLM(double.base_url, "double-model")
    asyncio.run(llm_instructions(tasks, llm))
    ok, missing, script, leak = tasks
    assert ok.instruction == REPLIES["N12A1"] and ok.quality["template_instruction"] == templates[ok.id]
    assert ok.provenance.generator.endswith("+llm") and ok.provenance.model == "double-model"
    assert ok.quality["llm_instruction"]["accepted"] is True
    for task, why in ((missing, "drops required values: “PAL0809”"), (script, "a click script"), (leak, "gives away the answer")):
        assert task.instruction == templates[task.id] and task.provenance.generator == "web-lookup" and "template_instruction" not in task.quality
        verdict = task.quality["llm_instruction"]
        assert verdict["accepted"] is False and verdict["reason"].startswith(why), verdict
        assert verdict["proposed"] == REPLIES[task.quality["lookup"]["identify"]["Individual ID"]]


def test_the_llm_is_sent_the_goal_and_never_the_gold(double: openai_double.OpenAIDouble) -> None:
    double.handler = _from_goal
    task = _lookup_task("N12A1")
    asyncio.run(llm_instructions([task], OpenAILLM(double.base_url, "double-model")))
    [body] = _web_requests(double)
    goal = _goal(body)
    assert goal["family"] == "lookup" and goal["ask"] == "body mass" and goal["answer_kind"] == "number"
    assert goal["record"] == {"species": "Gentoo penguin", "individual ID": "N12A1", "study name": "PAL0809"}  # as the template shows them
    assert goal["must_mention"] == ["Gentoo penguin", "N12A1", "PAL0809"]
    sent = json.dumps(body, ensure_ascii=False)
    for secret in ("5,100", "5100", "start-here", "/content/penguins", "page=3", "navigate", "crit-sentinel-17", "rec-42", "listing-1", "answer_page"):
        assert secret not in sent, secret


def test_a_task_without_family_data_sends_its_statement(double: openai_double.OpenAIDouble) -> None:
    double.replies.extend([json.dumps({"instruction": "Find the books about the “sea” that fall under “Nature”."}), json.dumps({"instruction": "Find books about the ocean, or about research vessels."})])
    keep = Task(id="web-a", kind="web", type="search", instruction="Find the books about “sea” in the genre “Nature”.", provenance=Provenance(graph_id="g", generator="template"))
    drop = Task(id="web-b", kind="web", type="search", instruction="Find the books about “sea”.", provenance=Provenance(graph_id="g", generator="template"))
    asyncio.run(llm_instructions([keep, drop], OpenAILLM(double.base_url, "double-model")))
    first, second = (_goal(b) for b in _web_requests(double))
    assert first == {"family": "other", "objective": "do what the statement asks", "statement": keep.quality["template_instruction"], "must_mention": ["sea", "Nature"]}
    assert keep.instruction == "Find the books about the “sea” that fall under “Nature”." and keep.provenance.generator.endswith("+llm")
    assert second["must_mention"] == ["sea"] and drop.instruction == "Find the books about “sea”." and drop.provenance.generator == "template"


def test_goal_of_each_family_holds_no_gold() -> None:
    view = Task(id="v", kind="web", type="view", instruction="List the penguins from highest to lowest body mass.", provenance=Provenance(graph_id="g", generator="template"),
                success=[SuccessCriterion(kind="text_present", value="6,300")], quality={"target": {"kind": "sort", "field": "Body Mass (g)", "direction": "desc", "first": "6,300"}})
    compare = Task(id="c", kind="web", type="compare", answer_kind="text", gold_answer="Dream", provenance=Provenance(graph_id="g", generator="web-compare"),
                   instruction="Were more Adelie Penguins recorded with island Dream or with island Torgersen?",
                   quality={"compare": {"op": "which", "field": "Island", "options": ["Dream", "Torgersen"], "counts": [56, 52], "answer": "Dream", "listing": "l1",
                                        "conditions": [["Species", "eq", "Adelie Penguin (Pygoscelis adeliae)"]]}})
    todo = Task(id="t", kind="web", type="change", provenance=Provenance(graph_id="g", generator="template"),
                instruction="Add “Buy milk” and “Call Anna”, mark “Buy milk” done, and leave only the unfinished items on screen.",
                quality={"change": {"kind": "list", "items": ["Buy milk", "Call Anna"], "done": ["Buy milk"], "view": "open"}})
    sort, which, items = (goal_of(t).model_dump(exclude_defaults=True) for t in (view, compare, todo))
    assert sort == {"family": "view", "objective": "show the list of records ordered by body mass, descending", "order_by": "body mass", "direction": "descending"}
    assert which["options"] == ["Dream", "Torgersen"] and which["conditions"] == [{"field": "species", "relation": "is", "value": "Adelie Penguin"}]
    assert which["must_mention"] == ["Adelie Penguin", "Dream", "Torgersen"] and "56" not in json.dumps(which)
    assert items["must_mention"] == ["Buy milk", "Call Anna"] and items["done"] == ["Buy milk"] and "unfinished" in items["view"]
    # the which-of-two answer is one of the options: naming both is fine, answering is not
    assert check_rewrite(compare, "On Dream or on Torgersen: where were more Adelie Penguin birds sampled?", goal_of(compare)) is None
    assert check_rewrite(compare, "Adelie Penguin counts: Dream beats Torgersen — confirm that Dream has more.", goal_of(compare)) == "gives away the answer ('Dream')"


# --------------------------------------------------------------------------- end to end: the example site, a real browser


def _write(goal: dict) -> str:
    """The double's 'model' for web instructions: one sentence from the goal's fields (it is never sent the answer)."""
    family, record = goal["family"], goal.get("record", {})
    named = " and ".join(f"{field} {value}" for field, value in record.items())
    things = goal.get("things") or "records"
    if family == "lookup":
        return f"I'm after one detail: for the {things[:-1] if things.endswith('s') else things} with {named}, what {goal['ask']} does the site give?"
    if family == "find":
        return f"Bring up the page about the one with {named}." if record else f"I need the page that says: “{goal['sentence']}”"
    if family == "view" and goal.get("order_by"):
        return f"I'd like the {things} arranged by {goal['order_by']}, {goal['direction']}."
    if family == "view":
        cond = goal["conditions"][0]
        return f"I only want to see {things} whose {cond['field']} is {cond['value']}."
    if family == "compare":
        values = ", ".join(goal.get("must_mention", [])) or "all of them"
        return f"Open the {things} table and click the header to sort it ({values}), then read off the answer."  # a script: must be refused
    return str(goal.get("statement") or goal["objective"])


def _author_web(body: dict) -> str:
    system = body["messages"][0]["content"]
    if system.startswith("You rate generated agent tasks"):
        return json.dumps({"clarity": 4, "difficulty_fit": 4, "correctness": 5, "overall": 4, "reason": "grounded"})
    return json.dumps({"instruction": _write(_goal(body))})


@pytest.mark.integration
def test_task_service_on_the_example_site_writes_goal_instructions_with_the_llm(double: openai_double.OpenAIDouble, tmp_path: Path) -> None:
    from taskloom.tools.environment.site import serve_static
    from taskloom.tools.generate.web.style import instruction_style
    from taskloom.tools.runtime import Runtime

    double.handler = _author_web
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing", crawl_delay=0, record_screenshots=False,
                        llm_backend="openai", llm_base_url=double.base_url, llm_model="double-model")  # fmt: skip

    async def go(url: str) -> tuple[list[Task], dict[str, Task]]:
        async with Runtime(settings) as runtime:
            graph_id = (await runtime.graphs.ingest_website(url + "/index.html", max_pages=30, max_depth=3, max_states=0, click_budget=0)).graph_id
            service = runtime.task_service()
            result = await service.generate(graph_id, count=8, seed=0, types=["lookup", "find", "view", "compare"])
            assert result.llm == "double-model"
            return [service.get(i) for i in result.task_ids], {t.id: t for t in service.list()}

    with serve_static() as site:
        kept, _ = asyncio.run(go(site.url))
    assert kept
    requests = _web_requests(double)
    assert len(requests) >= len(kept)
    sent = "\n".join(json.dumps(b, ensure_ascii=False) for b in requests)
    for task in kept:
        verdict = task.quality["llm_instruction"]
        if verdict["family"] == "compare":  # the double answered with a click script: refused, the template stays
            assert verdict["accepted"] is False and verdict["reason"].startswith("a click script") and not task.provenance.generator.endswith("+llm")
        else:
            assert verdict["accepted"] is True, (task.instruction, verdict)
            assert task.instruction == verdict["proposed"] and task.provenance.generator.endswith("+llm") and task.provenance.model == "double-model"
            assert task.quality["template_instruction"] != task.instruction
        assert instruction_style(task.instruction).style == "goal"
        # the model never saw where the task starts, the gold route or the criteria, nor a shown answer
        assert task.start_url not in sent
        for step in task.gold_steps:
            assert not step.text or step.text not in sent, step.text
        for criterion in task.success:
            assert criterion.value not in sent, criterion.value
        if task.gold_answer and len(task.gold_answer) > 3:
            assert f'"{task.gold_answer}"' not in sent and f"{task.gold_answer}?" not in sent
    assert {"lookup", "find", "view"} <= {t.type for t in kept if t.provenance.generator.endswith("+llm")}, [(t.type, t.instruction) for t in kept]
