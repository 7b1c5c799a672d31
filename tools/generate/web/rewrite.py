"""LLM-written instructions for goal tasks: the model sees the structured goal, never the gold.

:func:`goal_of` reads what a goal family recorded in ``task.quality`` (``lookup``,
``compare``, ``change``, ``target``) and keeps only what the goal *is*: the family, what is
asked or to be achieved, the values that name the subject, and ``must_mention`` (values any
instruction must repeat verbatim). Gold answers, gold steps, gold URLs and success criteria
are left out. A task without recognisable family data falls back to its template instruction
as ``statement``.

:func:`llm_instructions` sends that goal (as JSON) to the LLM and keeps the reply only when
every ``must_mention`` value appears, :func:`~.style.instruction_style` judges it a goal, and it
does not give away the gold answer; otherwise the template instruction stays and the reason is
recorded under ``quality["llm_instruction"]``.

>>> from taskloom.tools.tasks.model import Provenance
>>> t = Task(id="t", kind="web", type="lookup", instruction="What is the mass of the owl “Hoot”?",
...          provenance=Provenance(graph_id="g", generator="template"))
>>> goal_of(t).model_dump(exclude_defaults=True)
{'family': 'other', 'objective': 'do what the statement asks', 'statement': 'What is the mass of the owl “Hoot”?', 'must_mention': ['Hoot']}
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from ...errors import TaskloomError
from ...graph.model import KnowledgeGraph
from ...llm.client import LLM
from ...llm.templates import render_prompt
from ...tasks.model import Task
from .find import subject_noun
from .lookup import listing_data
from .phrasing import field_phrase, number_text, plural, singular
from .style import gold_names, instruction_style, quoted

__all__ = ["WebGoal", "Condition", "goal_of", "llm_instructions", "check_rewrite"]

_PAREN = re.compile(r"\s*[(\[][^()\[\]]*[)\]]\s*$")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_URL = re.compile(r"https?://|www\.", re.I)
_MAX_CHARS = 400
_TRUE = frozenset({"1", "true", "yes", "on", "y"})
_RELATION = {"eq": "is", "gt": "above", "lt": "below"}
_VIEWS = {"open": "the list ends up showing only the unfinished items", "done": "the list ends up showing only the completed items"}


class Condition(BaseModel):
    """One condition on records: ``field`` ``relation`` ``value`` (e.g. island is Dream; body mass above 4,000 g)."""

    field: str
    relation: Literal["is", "above", "below"]
    value: str


class WebGoal(BaseModel):
    """What a web task asks for or wants achieved, without its solution. Sent to the LLM as JSON."""

    family: Literal["lookup", "compare", "find", "view", "change", "other"]
    objective: str = Field(description="What the agent must find out or bring about, in words.")
    things: str | None = Field(None, description="What the site's records are (a plural noun), when known.")
    record: dict[str, str] = Field(default_factory=dict, description="Field → value pairs that identify exactly one record.")
    ask: str | None = Field(None, description="The field whose value is asked for.")
    measure: str | None = Field(None, description="The number field a maximum, minimum or range is taken over.")
    conditions: list[Condition] = Field(default_factory=list, description="Conditions the considered records meet.")
    compare_field: str | None = Field(None, description="The field whose values are compared or counted (which-of-two, count difference).")
    options: list[str] = Field(default_factory=list, description="The values being compared.")
    sentence: str | None = Field(None, description="A sentence the target page states.")
    order_by: str | None = None
    direction: Literal["ascending", "descending"] | None = None
    items: list[str] = Field(default_factory=list, description="List items that must exist at the end.")
    done: list[str] = Field(default_factory=list, description="The items among them marked done; the others stay unfinished.")
    view: str | None = Field(None, description="What the list must show at the end.")
    action: str | None = Field(None, description="What submitting the site's form does.")
    subject: str | None = Field(None, description="What the form is submitted for.")
    values: dict[str, str] = Field(default_factory=dict, description="Form field → value to give.")
    statement: str | None = Field(None, description="The goal as the template stated it (only when no structured goal is known).")
    answer_kind: str | None = Field(None, description="For a question: the kind of answer (number, text).")
    must_mention: list[str] = Field(default_factory=list, description="Values the instruction must contain verbatim.")


# --------------------------------------------------------------------------- goals


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def _shown(value: Any, template: str) -> str | None:
    """The form of ``value`` the template instruction shows (as is, without a trailing parenthetical, or as a plain number)."""
    raw = " ".join(str(value).split())
    forms = [raw, _PAREN.sub("", raw).strip()]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        forms.insert(0, number_text(value, None))
    flat = " ".join(template.split())
    for form in forms:
        if not form:
            continue
        at = flat.lower().find(form.lower())
        if at >= 0:
            return flat[at : at + len(form)]
    return None


class _Goal:
    """Accumulates a goal's fields and the values it must mention, reading shown forms off the template."""

    def __init__(self, task: Task) -> None:
        self.template = str(task.quality.get("template_instruction") or task.instruction)
        self.mention: list[str] = []

    def value(self, raw: Any) -> str:
        """The value as the template shows it; a shown value becomes a must-mention."""
        shown = _shown(raw, self.template)
        if shown is not None and _key(shown) not in {_key(m) for m in self.mention}:
            self.mention.append(shown)
        return shown if shown is not None else " ".join(str(raw).split())

    def conditions(self, conds: Any, units: Mapping[str, str | None]) -> list[Condition]:
        out: list[Condition] = []
        for cond in conds or []:
            label, op, raw = cond
            value = self.value(raw)
            if op in ("gt", "lt") and units.get(str(label)):
                value = number_text(raw, units[str(label)]) if isinstance(raw, (int, float)) else value
            out.append(Condition(field=field_phrase(str(label)), relation=_RELATION.get(str(op), "is"), value=value))  # type: ignore[arg-type]
        return out


def _units(kg: KnowledgeGraph | None, listing: str | None) -> dict[str, str | None]:
    """Each number field's unit in a listing's records (read from the graph)."""
    units: dict[str, str | None] = {}
    if kg is None or not listing:
        return units
    for record in kg.nodes("record"):
        if listing in (record.attrs.get("listings") or []):
            for label, field in (record.attrs.get("fields") or {}).items():
                if field.get("unit") and label not in units:
                    units[label] = str(field["unit"])
    return units


def _nouns(kg: KnowledgeGraph | None) -> dict[str, str]:
    return {d.node.id: d.noun for d in listing_data(kg)} if kg is not None else {}


def _things(noun: str | None) -> str | None:
    return plural(noun) if noun and noun != "record" else None


def _lookup(task: Task, data: Mapping[str, Any], nouns: Mapping[str, str]) -> WebGoal:
    g = _Goal(task)
    noun = nouns.get(str(data.get("listing")))
    record = {field_phrase(str(k)): g.value(v) for k, v in (data.get("identify") or {}).items()}
    ask = field_phrase(str(data["field"]))
    return WebGoal(
        family="lookup",
        objective=f"answer a question: the {ask} of the one {noun or 'record'} identified by `record`",
        things=_things(noun), record=record, ask=ask, answer_kind=task.answer_kind, must_mention=g.mention,
    )  # fmt: skip


def _compare(task: Task, data: Mapping[str, Any], kg: KnowledgeGraph | None, nouns: Mapping[str, str]) -> WebGoal:
    g = _Goal(task)
    op = str(data.get("op"))
    noun = nouns.get(str(data.get("listing")))
    things = _things(noun) or "records"
    conds = g.conditions(data.get("conditions"), _units(kg, str(data.get("listing") or "")))
    among = f"among the {things} meeting `conditions`" if conds else f"among all the {things}"
    goal = WebGoal(family="compare", objective="", things=_things(noun), conditions=conds, answer_kind=task.answer_kind)
    if op in ("which", "count_difference"):
        goal.compare_field = field_phrase(str(data.get("field")))
        goal.options = [g.value(o) for o in data.get("options") or []]
        goal.objective = (
            f"answer which of the `options` of {goal.compare_field} occurs more often {among}"
            if op == "which"
            else f"answer by how many the {things} with {goal.compare_field} equal to the first of `options` outnumber those with the second, {among}"
        )
    elif op == "count":
        goal.objective = f"answer how many {things} meet all of `conditions`"
    elif op in ("max", "min"):
        goal.measure, goal.ask = field_phrase(str(data.get("measure"))), field_phrase(str(data.get("field")))
        goal.objective = f"answer the {goal.ask} of the one with the {'highest' if op == 'max' else 'lowest'} {goal.measure}, {among}"
    elif op == "range":
        goal.measure = field_phrase(str(data.get("measure")))
        goal.objective = f"answer the difference between the highest and the lowest {goal.measure} {among}"
    else:
        raise KeyError(op)
    goal.must_mention = g.mention
    return goal


def _find(task: Task, target: Mapping[str, Any], kg: KnowledgeGraph | None) -> WebGoal | None:
    g = _Goal(task)
    if target.get("kind") == "content" and target.get("sentence"):
        sentence = str(target["sentence"])
        g.value(sentence)  # a must only when the template quotes it
        return WebGoal(family="find", objective="open the page whose text states `sentence`", sentence=sentence, must_mention=g.mention)
    if target.get("kind") != "record" or kg is None or not task.evidence or task.evidence[0] not in kg:
        return None
    node = kg.node(task.evidence[0])
    fields = node.attrs.get("fields") or {}
    record = {field_phrase(str(label)): g.value(fields[label].get("raw")) for label in target.get("fields") or [] if label in fields}
    listing = node.attrs.get("listing")
    noun = subject_noun(kg, str(kg.node(str(listing)).attrs.get("url"))) if listing and str(listing) in kg else None
    one = singular(noun) if noun else "record"
    return WebGoal(family="find", objective=f"open the page of the one {one} identified by `record`", things=noun, record=record, must_mention=g.mention)


def _view(task: Task, target: Mapping[str, Any], kg: KnowledgeGraph | None) -> WebGoal | None:
    g = _Goal(task)
    target_id = task.gold_steps[0].node_id if task.gold_steps else None  # only to name what the listing lists
    page = kg.node(target_id) if kg is not None and target_id and target_id in kg else None
    things = subject_noun(kg, str(page.attrs.get("url"))) if kg is not None and page is not None else None  # only the noun is sent
    shown = things or "records"
    if target.get("kind") == "sort":
        field = field_phrase(str(target.get("field")))
        direction = "descending" if target.get("direction") == "desc" else "ascending"
        return WebGoal(family="view", objective=f"show the list of {shown} ordered by {field}, {direction}", things=things, order_by=field, direction=direction)
    if target.get("kind") != "filter":
        return None
    param, raw = str(target.get("param")), str(target.get("value"))
    label = raw
    if kg is not None and page is not None:
        for edge in kg.edges("filters"):
            attrs = edge.attrs or {}
            if edge.target == page.id and str(attrs.get("param")) == param and str(attrs.get("value")) == raw:
                label = str(attrs.get("label") or kg.node(edge.source).attrs.get("name") or raw).strip()
                break
    if _shown(label, g.template) is None:
        return None  # the template words the value differently (a yes/no flag): keep its statement
    if raw.lower() in _TRUE and _key(label) != _key(raw):  # a yes/no facet ("Available now"): the label is the condition
        cond = Condition(field=g.value(label), relation="is", value="yes")
    else:
        cond = Condition(field=field_phrase(param), relation="is", value=g.value(label))
    return WebGoal(family="view", objective=f"show the list of {shown} restricted to those meeting `conditions`", things=things, conditions=[cond], must_mention=g.mention)


def _change(task: Task, data: Mapping[str, Any], kg: KnowledgeGraph | None) -> WebGoal | None:
    g = _Goal(task)
    if data.get("kind") == "list":
        items = [g.value(t) for t in data.get("items") or []]
        done = [g.value(t) for t in data.get("done") or []]
        view = _VIEWS.get(str(data.get("view"))) if data.get("view") else None
        return WebGoal(
            family="change", objective="bring the list into the end state: `items` present, `done` marked done, the rest unfinished",
            items=items, done=done, view=view, must_mention=g.mention,
        )  # fmt: skip
    if data.get("kind") != "form" or kg is None:
        return None
    labels: dict[str, str] = {}
    for step in task.gold_steps:  # only to name each value's field; no step is sent
        if step.selector and step.node_id and step.node_id in kg:
            labels[step.selector] = re.sub(r"^your ", "", field_phrase(str(kg.node(step.node_id).attrs.get("name") or "")))
    values = data.get("values") or {}
    if not values or any(not labels.get(sel) for sel in values):
        return None
    subject = g.value(data.get("subject"))
    named = {labels[sel]: g.value(v) for sel, v in values.items()}
    action = str(data.get("action") or "").strip()
    return WebGoal(
        family="change", objective="have the site's form submitted, for `subject`, with `values`; any other choice is free",
        action=action or None, subject=subject, values=named, must_mention=g.mention,
    )  # fmt: skip


def _fallback(task: Task) -> WebGoal:
    template = str(task.quality.get("template_instruction") or task.instruction)
    return WebGoal(family="other", objective="do what the statement asks", statement=template, must_mention=list(dict.fromkeys(quoted(template))))


def goal_of(task: Task, kg: KnowledgeGraph | None = None, nouns: Mapping[str, str] | None = None) -> WebGoal:
    """The structured goal of a goal-family task (see the module notes); ``kg`` adds nouns, units and record values.

    ``nouns`` (listing id → noun) saves recomputing them per task; by default they come from ``kg``.
    """
    quality = task.quality
    nouns = _nouns(kg) if nouns is None else nouns
    goal: WebGoal | None = None
    try:
        if isinstance(quality.get("lookup"), dict):
            goal = _lookup(task, quality["lookup"], nouns)
        elif isinstance(quality.get("compare"), dict):
            goal = _compare(task, quality["compare"], kg, nouns)
        elif isinstance(quality.get("change"), dict):
            goal = _change(task, quality["change"], kg)
        elif isinstance(quality.get("target"), dict) and quality["target"].get("kind") in ("record", "content"):
            goal = _find(task, quality["target"], kg)
        elif isinstance(quality.get("target"), dict):
            goal = _view(task, quality["target"], kg)
    except (KeyError, TypeError, ValueError):
        goal = None  # a family's record in a shape this reader does not know: state the template instead
    return goal if goal is not None else _fallback(task)


# --------------------------------------------------------------------------- checking and rewriting


def _answer_forms(task: Task) -> list[str]:
    answer = (task.gold_answer or "").strip()
    if not answer:
        return []
    forms = [answer]
    if task.answer_kind == "number":
        for number in _NUMBER.findall(answer):
            bare = number.replace(",", "")
            forms += [number, bare]
            try:
                value = float(bare)
                forms.append(f"{int(value):,}" if value.is_integer() else f"{value:,}")
            except ValueError:
                continue
    return list(dict.fromkeys(f for f in forms if f))


def _count(text: str, form: str) -> int:
    return len(re.findall(r"(?<![\w.,])" + re.escape(form) + r"(?![\w]|[.,]\d)", text, re.I))


def _mentions(text: str, value: str) -> bool:
    """``value`` in ``text`` as whole words (case and spacing aside; a plural ending allowed)."""
    pattern = r"(?<!\w)" + r"\s+".join(re.escape(w) for w in value.split()) + r"(?:e?s)?(?!\w)"
    return re.search(pattern, text, re.I) is not None


def check_rewrite(task: Task, text: str, goal: WebGoal, kg: KnowledgeGraph | None = None) -> str | None:
    """Why an LLM-written instruction cannot replace the template one, or None when it can."""
    text = text.strip()
    if not text:
        return "empty instruction"
    if len(text) > _MAX_CHARS:
        return f"longer than {_MAX_CHARS} characters"
    if _URL.search(text):
        return "contains a URL"
    missing = [v for v in goal.must_mention if not _mentions(text, v)]
    if missing:
        return "drops required values: " + ", ".join(f"“{v}”" for v in missing)
    verdict = instruction_style(text, gold_names(task, kg))
    if verdict.style != "goal":
        return f"a click script, not a goal: {verdict.reason}"
    template = str(task.quality.get("template_instruction") or task.instruction)
    for form in _answer_forms(task):
        if _count(text, form) > _count(template, form):
            return f"gives away the answer ({form!r})"
    return None


class _Instruction(BaseModel):
    instruction: str


def _messages(goal: WebGoal) -> list[dict[str, Any]]:
    payload = json.dumps(goal.model_dump(exclude_defaults=True), ensure_ascii=False, indent=1)
    return [
        {"role": "system", "content": render_prompt("web_instruction_system.j2")},
        {"role": "user", "content": render_prompt("web_instruction_user.j2", goal_json=payload)},
    ]


async def llm_instructions(tasks: list[Task], llm: LLM, kg: KnowledgeGraph | None = None) -> None:
    """Let the LLM write each web task's instruction from its structured goal; keep it only when :func:`check_rewrite` passes.

    The verdict goes to ``quality["llm_instruction"]`` (``accepted``, ``reason``, the
    ``proposed`` text); on acceptance the template instruction is kept under
    ``quality["template_instruction"]`` and the provenance's generator gains ``+llm`` (``web-lookup+llm``).
    """
    nouns = _nouns(kg)
    for task in tasks:
        if task.kind != "web":
            continue
        goal = goal_of(task, kg, nouns)
        try:
            completion = await llm.complete(_messages(goal), schema=_Instruction, tag=task.id)
        except TaskloomError as exc:
            task.quality["llm_instruction"] = {"accepted": False, "reason": f"the LLM call failed: {exc}", "family": goal.family}
            continue
        proposed = " ".join(completion.parsed.instruction.split())
        reason = check_rewrite(task, proposed, goal, kg)
        task.quality["llm_instruction"] = {"accepted": reason is None, "reason": reason or "states the goal with every required value", "proposed": proposed, "family": goal.family}
        if reason is None:
            task.quality["template_instruction"] = task.instruction
            task.instruction = proposed
            task.provenance = task.provenance.model_copy(update={"generator": f"{task.provenance.generator}+llm", "model": llm.name})

