"""Instruction synthesis for task DAGs and the consistency validator (rules, and an LLM over the local test double)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
import openai_double  # noqa: E402  (test double: a local OpenAI-compatible server on 127.0.0.1)

from taskloom.tools.environment.canonical import canonical  # noqa: E402
from taskloom.tools.generate.compose.consistency import (  # noqa: E402
    check_consistency,
    closure,
    infer_dag,
    infer_dag_llm,
    mention_order,
    reduction,
    synthesize,
    validate,
)
from taskloom.tools.generate.compose.dag import compose_dags  # noqa: E402
from taskloom.tools.llm.client import OpenAILLM  # noqa: E402
from taskloom.tools.tasks.dag import Dag  # noqa: E402
from taskloom.tools.tasks.model import GoldStep, Provenance, Subtask, SuccessCriterion, Task  # noqa: E402

TEXTS = {
    "s1": "On the page “Home”, open “Mystery”.",
    "s2": "On the page “Mystery”, open “The Lantern Keeper's Secret”.",
    "s3": "On the page “Lantern”, switch to the “Reviews” tab.",
    "s4": "On the page “Lantern”, open “Request a loan”; then close it.",
    "s5": "Search for “sea”. Then open “Seabirds: a guide”.",
}
SHAPES = {
    "chain": [("s1", "s2"), ("s2", "s3"), ("s3", "s4"), ("s4", "s5")],
    "fan_out": [("s1", "s2"), ("s2", "s3"), ("s2", "s4"), ("s2", "s5")],
    "fan_in": [("s1", "s4"), ("s2", "s4"), ("s3", "s4"), ("s4", "s5")],
    "n_shape": [("s1", "s3"), ("s2", "s3"), ("s2", "s4"), ("s4", "s5")],
    "diamond": [("s1", "s2"), ("s1", "s3"), ("s2", "s4"), ("s3", "s4"), ("s1", "s5")],
    "antichain": [],
    "redundant": [("s1", "s2"), ("s2", "s3"), ("s1", "s3"), ("s3", "s4"), ("s3", "s5")],
}


def _task(edges: list[tuple[str, str]], instruction: str = "", ids: list[str] | None = None) -> Task:
    names = ids or list(TEXTS)
    subtasks = [Subtask(id=i, instruction=TEXTS[i]) for i in names]
    orders, count = Dag(names, edges).orders(limit=50)
    return Task(id="dag-x", kind="composite", type="task_graph", instruction=instruction, subtasks=subtasks, dag=edges, orders=orders,
                order_count=count, provenance=Provenance(graph_id="g", generator="compose-dag"))


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("style", ["natural", "explicit"])
def test_synthesized_instructions_validate_and_keep_every_value(shape: str, style: str) -> None:
    task = _task(SHAPES[shape])
    task.instruction = synthesize(task.subtasks, task.dag, task.orders, style=style, intent="borrow “The Lantern Keeper's Secret”")
    ok, inferred, reason = check_consistency(task)
    assert ok, (task.instruction, inferred, reason)
    assert closure(list(TEXTS), inferred) == closure(list(TEXTS), task.dag)
    for text in TEXTS.values():
        assert all(f"“{v}”" in task.instruction for v in re.findall(r"“([^”]+)”", text))
    if style == "explicit":
        assert task.instruction.count("Step ") == 5


def test_the_natural_style_uses_ordering_and_parallel_words() -> None:
    task = _task(SHAPES["fan_out"])
    text = synthesize(task.subtasks, task.dag, task.orders)
    assert text == (
        "First, on the page “Home”, open “Mystery”. Then, on the page “Mystery”, open “The Lantern Keeper's Secret”. "
        "After that, do all of these in any order: on the page “Lantern”, switch to the “Reviews” tab; "
        "on the page “Lantern”, open “Request a loan”, then close it; and search for “sea”, then open “Seabirds: a guide”."
    )
    n_shape = _task(SHAPES["n_shape"])
    assert "Meanwhile, once “The Lantern Keeper's Secret” is done" in synthesize(n_shape.subtasks, n_shape.dag, n_shape.orders)


def test_a_flattened_parallel_branch_is_rejected() -> None:
    task = _task([("s1", "s2"), ("s1", "s3")], ids=["s1", "s2", "s3"])
    task.instruction = (
        "First, on the page “Home”, open “Mystery”. Then, on the page “Mystery”, open “The Lantern Keeper's Secret”. "
        "Then, on the page “Lantern”, switch to the “Reviews” tab."
    )
    ok, inferred, reason = check_consistency(task)
    assert not ok and inferred == [("s1", "s2"), ("s2", "s3")]
    assert reason == "the instruction orders [('s2', 's3')] that the DAG leaves independent"
    task.instruction = synthesize(task.subtasks, task.dag, task.orders)
    assert check_consistency(task)[0]


def test_a_lost_ordering_and_a_wrong_clause_count_are_rejected() -> None:
    chain = _task([("s1", "s2")], ids=["s1", "s2"])
    chain.instruction = "First, do these independently, in any order: on the page “Home”, open “Mystery”; and on the page “Mystery”, open “x”."
    ok, inferred, reason = check_consistency(chain)
    assert not ok and inferred == [] and reason is not None and "loses the orderings [('s1', 's2')]" in reason
    chain.instruction = "First, open “Mystery”."
    ok, inferred, reason = check_consistency(chain)
    assert (ok, inferred) == (False, []) and reason is not None and "1 subtask clauses" in reason


def test_free_text_ordering_words_are_parsed() -> None:
    text = "Goal: tidy up. Open “A” first. Meanwhile open “B”. When “A” and “B” are done, open “C”. Then open “D”. After that, open “E”; also “F”."
    assert infer_dag(text, ["a", "b", "c", "d", "e"]) == [("a", "c"), ("b", "c"), ("c", "d"), ("d", "e")]
    both = "First, do both of these in any order: open “A”; and open “B”. Then, open “C”."
    assert infer_dag(both, ["a", "b", "c"]) == [("a", "c"), ("b", "c")]
    steps = "Step 1, first: open “A”. Step 2, also first: open “B”. Step 3, once step 2 is done: open “C”."
    assert infer_dag(steps, ["a", "b", "c"]) == [("b", "c")]


def test_graph_helpers() -> None:
    nodes = ["a", "b", "c"]
    assert closure(nodes, [("a", "b"), ("b", "c")]) == {("a", "b"), ("b", "c"), ("a", "c")}
    assert reduction(nodes, [("a", "b"), ("b", "c"), ("a", "c")]) == [("a", "b"), ("b", "c")]
    assert mention_order(["x", "a", "b"], [("a", "b")], [["a", "x", "b"]]) == ["a", "x", "b"]
    assert mention_order(["x", "a", "b"], [("a", "b")], [["x", "a", "b"]]) == ["x", "a", "b"]


# -- an LLM over the local OpenAI-compatible test double ---------------------------------------


@pytest.fixture
def double() -> Iterator[openai_double.OpenAIDouble]:
    with openai_double.OpenAIDouble() as d:
        yield d


def _llm(double: openai_double.OpenAIDouble, tmp_path: Path) -> OpenAILLM:
    return OpenAILLM(double.base_url, "double-model", max_retries=1, cache_dir=tmp_path / "cache", backoff_base=0.01)


def _edges(*pairs: tuple[str, str]) -> str:
    return json.dumps({"edges": [{"before": a, "after": b} for a, b in pairs]})


@pytest.mark.anyio
async def test_the_llm_infers_edges_from_the_instruction_alone(double: openai_double.OpenAIDouble, tmp_path: Path) -> None:
    task = _task([("s1", "s2"), ("s1", "s3")], ids=["s1", "s2", "s3"])
    task.instruction = synthesize(task.subtasks, task.dag, task.orders)
    double.replies.extend([_edges(("s1", "s2"), ("s1", "s3")), _edges(("s1", "s2"), ("s2", "s3")), _edges(("s1", "s9"))])
    llm = _llm(double, tmp_path)
    assert await infer_dag_llm(task.instruction, task.subtasks, llm) == [("s1", "s2"), ("s1", "s3")]
    user = double.chat_requests()[0]["messages"][-1]["content"]
    assert user == f"Instruction:\n{task.instruction}\n\nSubtasks:\n" + "\n".join(f"- s{i}: {TEXTS[f's{i}']}" for i in (1, 2, 3))
    task.instruction += " "  # a new prompt, not a cache hit
    ok, inferred, reason = await validate(task, llm)
    assert not ok and inferred == [("s1", "s2"), ("s2", "s3")] and reason is not None and "leaves independent" in reason
    task.instruction += " "
    ok, _, reason = await validate(task, llm)
    assert not ok and reason is not None and "do not exist" in reason


def _web(task_id: str, start: str, selector: str, text: str, success: SuccessCriterion) -> Task:
    return Task(id=task_id, kind="web", type="t", instruction=f"On the page “{start}”, open “{text}”.", start_url="http://shop.test" + start,
                gold_steps=[GoldStep(action="click", selector=selector, canonical=canonical("click", text=text, element="link"))],
                success=[success], provenance=Provenance(graph_id="g", generator="template"))


POOL = [
    _web("a", "/", "#m", "Mystery", SuccessCriterion(kind="url_matches", value=r"/search\.html\?genre=mystery$")),
    _web("b", "/search.html?genre=mystery", "#r1", "Lantern", SuccessCriterion(kind="url_matches", value=r"/book\.html\?id=b01$")),
    _web("c", "/book.html?id=b01", "#tab", "Reviews", SuccessCriterion(kind="element_state", value="#panel-reviews", state="visible")),
    _web("d", "/book.html?id=b01", "#loan", "Request a loan", SuccessCriterion(kind="element_state", value="#loan-dialog", state="visible")),
]


def test_an_llm_mismatch_triggers_one_explicit_resynthesis_then_a_drop(double: openai_double.OpenAIDouble, tmp_path: Path) -> None:
    double.handler = lambda body: _edges(("s1", "s2"), ("s2", "s3"), ("s2", "s4")) if "Step 1," in body["messages"][-1]["content"] else _edges()
    kept = asyncio.run(compose_dags(POOL, count=1, seed=0, llm=_llm(double, tmp_path / "a")))
    assert [t.dag for t in kept.tasks] == [[("s1", "s2"), ("s2", "s3"), ("s2", "s4")]] and kept.stats["resynthesized"] == 1
    task = kept.tasks[0]
    assert task.quality["consistency"]["style"] == "explicit" and task.instruction.count("Step ") == 4 and task.provenance.model == "double-model"
    assert len(double.chat_requests()) == 2
    double.handler = lambda body: _edges()
    dropped = asyncio.run(compose_dags(POOL, count=1, seed=0, llm=_llm(double, tmp_path / "b")))
    assert dropped.tasks == [] and dropped.stats["inconsistent"] >= 1
    assert all(reason.startswith("consistency: ") and "loses the orderings" in reason for _, reason in dropped.dropped)
    assert len(double.chat_requests()) == 2 + 2 * len(dropped.dropped)
