"""The prompt templates (``prompts/templates/*.j2``) render exactly the strings the modules built inline before.

The LLM cache is keyed by the prompt text, so a template that changed one character would miss
every cached reply. Each ``old_*`` function below is the inline code it replaced, copied verbatim. The web
instruction prompts are the exception: issue 15 rewrote them to write instructions from a task's structured goal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jinja2
import pytest

from taskloom.tools.errors import InputError
from taskloom.tools.llm.templates import prompt_template, render_prompt, template_names

# Values that try to break a template: newlines, quotes, braces, Jinja syntax, unicode, trailing blanks.
TEXTS = ["Open “Dune”", "type 'x' into {{ search }}", "line one\nline two\n", "  {% raw %} ü ✓ ", ""]

# --- the strings as the modules built them -------------------------------------------------------------

OLD_CONSISTENCY_SYSTEM = (
    "You read a task instruction and decide, from its wording alone, which subtasks must be finished before which. "
    "Ordering words (first, then, after that, once ... is done) create dependencies; parallel words (in any order, both, "
    "meanwhile, independently) mean no dependency. Answer with JSON {\"edges\": [{\"before\": id, \"after\": id}, ...]} "
    "listing only direct dependencies, using the subtask ids given."
)
OLD_CANONICALIZE_SYSTEM = (
    "You convert one natural-language description of a web action into a standardized function call. "
    "Functions: click(text, element?), type(text, element?), select(option, element?), hover(text, element?), "
    "scroll(direction: up|down), navigate(url), press(key), wait(seconds), go_back(), refresh(). "
    "Give the function name, its named parameters, your confidence in [0,1] (below 0.5 when nothing fits) "
    "and whether the action is necessary for the task (null when you cannot tell)."
)
OLD_DOCUMENT_SYSTEM = (
    "You write evaluation tasks for document-reading agents. Use only the given nodes. "
    "Copy or compute the answer from their text, and cite the ids of every node the answer rests on."
)
OLD_SUMMARY_SYSTEM = (
    "You merge the consecutive subtasks of a browsing session into ONE natural, high-level task instruction for a user. "
    "Keep the order, and keep every quoted value exactly, in “double quotes”. Do not add steps."
)
OLD_CHAIN_SYSTEM = (
    "You propose the next small subtask of a browsing session. It must build on the current page state, act on ONE element "
    "of the snapshot named by its [ref=…], not repeat a done subtask, and be simpler than the failed ones. No logins, no personal data."
)
OLD_QUALITY_SYSTEM = (
    "You rate generated agent tasks. Score 1-5: clarity of the instruction, fit to the stated difficulty, correctness of the gold answer given the evidence, and overall."
)


@dataclass
class _Item:
    id: str
    instruction: str
    reason: str = ""


def old_consistency_user(instruction: str, subtasks: list[_Item]) -> str:
    listing = "\n".join(f"- {s.id}: {s.instruction}" for s in subtasks)
    return f"Instruction:\n{instruction}\n\nSubtasks:\n{listing}"


def old_canonicalize_user(description: str, task: str | None) -> str:
    return f"Description: {description!r}" + (f"\nTask: {task}" if task else "")


def old_document_user(instructions: str, payload: dict[str, Any]) -> str:
    return f"{instructions}\n\nSubgraph (JSON):\n{json.dumps(payload, ensure_ascii=False)}"


def old_summary_user(instructions: list[str]) -> str:
    numbered = "\n".join(f"{i}. {text}" for i, text in enumerate(instructions, 1))
    return f"Subtasks, in order:\n{numbered}"


def old_chain_user(done: list[str], failed_items: list[_Item], url: str | None, title: str | None, snapshot: str) -> str:
    history = "\n".join(f"{i}. {text}" for i, text in enumerate(done, 1))
    failed = "\n".join(f"- {f.instruction} ({f.reason})" for f in failed_items) or "none"
    return f"Done so far:\n{history}\n\nFailed proposals:\n{failed}\n\nCurrent page: {url} “{title}”\nSnapshot:\n{snapshot}"


def old_quality_user(difficulty: str, type_: str, instruction: str, answer: str, nodes: list[tuple[str, str]]) -> str:
    evidence = "\n".join(f"[{nid}] {text[:600]}" for nid, text in nodes)
    return f"Difficulty: {difficulty}\nType: {type_}\nInstruction: {instruction}\nGold answer or steps: {answer}\nEvidence:\n{evidence or '(web task: the steps above)'}"


# --- the comparisons -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "old"),
    [
        ("consistency_system.j2", OLD_CONSISTENCY_SYSTEM),
        ("canonicalize_system.j2", OLD_CANONICALIZE_SYSTEM),
        ("document_task_system.j2", OLD_DOCUMENT_SYSTEM),
        ("summary_system.j2", OLD_SUMMARY_SYSTEM),
        ("chain_propose_system.j2", OLD_CHAIN_SYSTEM),
        ("quality_system.j2", OLD_QUALITY_SYSTEM),
    ],
)
def test_system_prompts_are_unchanged(name: str, old: str) -> None:
    assert render_prompt(name) == old


def _lists() -> list[list[str]]:
    return [[], [TEXTS[0]], TEXTS, ["a", "b\n", "c"]]


@pytest.mark.parametrize("texts", _lists())
def test_consistency_user(texts: list[str]) -> None:
    items = [_Item(f"s{i}", t) for i, t in enumerate(texts)]
    for instruction in TEXTS:
        assert render_prompt("consistency_user.j2", instruction=instruction, subtasks=items) == old_consistency_user(instruction, items)


def test_canonicalize_user() -> None:
    for description in TEXTS + ["it's \"quoted\"", "back\\slash"]:
        for task in (None, "", "Find the cheapest flight", "two\nlines"):
            assert render_prompt("canonicalize_user.j2", description=description, task=task) == old_canonicalize_user(description, task)


def test_document_user() -> None:
    payload = {"template": "t1", "task_type": "table_qa", "nodes": [{"id": "n1", "text": "Größe {{x}}\n"}], "edges": [["n1", "n2", "next"]]}
    for instructions in TEXTS:
        new = render_prompt("document_task_user.j2", instructions=instructions, subgraph_json=json.dumps(payload, ensure_ascii=False))
        assert new == old_document_user(instructions, payload)


@pytest.mark.parametrize("texts", _lists())
def test_summary_user(texts: list[str]) -> None:
    assert render_prompt("summary_user.j2", instructions=texts) == old_summary_user(texts)


@pytest.mark.parametrize("done", _lists())
@pytest.mark.parametrize("failed", _lists())
def test_chain_propose_user(done: list[str], failed: list[str]) -> None:
    items = [_Item("", t, reason=f"reason {i}\n") for i, t in enumerate(failed)]
    for url, title, snapshot in (("http://127.0.0.1:8000/", "Shop", "- link [ref=e1]\n"), (None, None, ""), ("x", "“T”", TEXTS[3])):
        new = render_prompt("chain_propose_user.j2", done=done, failed=items, url=url, title=title, snapshot=snapshot)
        assert new == old_chain_user(done, items, url, title, snapshot)


@pytest.mark.parametrize("texts", _lists())
def test_quality_user(texts: list[str]) -> None:
    nodes = [(f"n{i}", t * 200) for i, t in enumerate(texts)]  # long texts: the module cuts them at 600 characters
    evidence = [{"id": nid, "text": text[:600]} for nid, text in nodes]
    for answer in TEXTS[:3]:
        new = render_prompt("quality_user.j2", difficulty="hard", type="table_qa", instruction=TEXTS[2], answer=answer, evidence=evidence)
        assert new == old_quality_user("hard", "table_qa", TEXTS[2], answer, nodes)


def test_the_modules_render_the_templates() -> None:
    from taskloom.tools.generate.document.llm import _messages

    @dataclass
    class Draft:
        template_id: str = "t1"
        task_type: str = "table_qa"
        nodes: tuple[dict[str, str], ...] = ({"id": "n1", "text": "ü"},)
        edges: tuple[Any, ...] = ()
        instructions: str = "Write one question."

    draft = Draft()
    payload = {"template": "t1", "task_type": "table_qa", "nodes": draft.nodes, "edges": draft.edges}
    assert _messages(draft) == [{"role": "system", "content": OLD_DOCUMENT_SYSTEM}, {"role": "user", "content": old_document_user(draft.instructions, payload)}]


def test_web_instruction_prompts_ask_for_a_goal_from_the_goal_json() -> None:
    """Issue 15: the instruction is written from the structured goal; the prompt forbids controls and answers."""
    system = render_prompt("web_instruction_system.j2")
    assert system.startswith("Rewrite browser task instructions as a n")  # the doctest in taskloom.tools.llm.templates
    for rule in ("structured goal", "never how to get there", "do not give or guess any answer", "must_mention", '{"instruction": "..."}'):
        assert rule in system, rule
    payload = {"family": "lookup", "record": {"title": "{{ x }} “Dune”\n"}, "must_mention": ["{{ x }} “Dune”"]}
    for text in [json.dumps(payload, ensure_ascii=False, indent=1), *TEXTS]:
        assert render_prompt("web_instruction_user.j2", goal_json=text) == f"Goal (JSON):\n{text}\n\nWrite the instruction for this goal."
    with pytest.raises(jinja2.UndefinedError):
        render_prompt("web_instruction_user.j2")


def test_every_template_is_used_and_unknown_names_are_refused() -> None:
    assert set(template_names()) == {
        "canonicalize_system.j2", "canonicalize_user.j2", "chain_propose_system.j2", "chain_propose_user.j2", "consistency_system.j2",
        "consistency_user.j2", "document_task_system.j2", "document_task_user.j2", "judge_answer.j2", "judge_trajectory.j2",
        "quality_system.j2", "quality_user.j2", "summary_system.j2", "summary_user.j2", "web_instruction_system.j2",
        "web_instruction_user.j2",
    }  # fmt: skip
    with pytest.raises(InputError, match="No prompt template 'nope.j2'; the templates are canonicalize_system.j2"):
        prompt_template("nope.j2")
    with pytest.raises(jinja2.UndefinedError):
        render_prompt("summary_user.j2")
