"""Chained tasks and task graphs from value-flow plans (:mod:`.flow`), verified by replay in a fresh browser.

**Chains** (AgentSynth). A plan of length n gives one task per level k = 1..n: the final
deliverable of its first k steps, stated through nested descriptions only —
"Open the page of the penguin with the lowest flipper length among the female penguins
with the same island as the penguin with the highest body mass among the Chinstrap
penguins." A pick that ends a level asks to open the record's page (``page_is``), or,
when the record has no crawled page of its own, for one of its identifying values; a
count that ends a level asks how many (answer, numeric). No intermediate value (a flowing
field value, a count, a record's key values, its page's title or URL) may appear in the
instruction: :func:`leaks` checks it, and a level that leaks is dropped. Checks are on the
outcome only, so any shorter correct route passes.

**Gold steps.** A pick opens the listing sorted by its measure in its direction (a sort
view the crawl verified; else the listing), then the record's page (else a page showing
it); a count opens a page showing one of its members. A URL already on the gold path is
not opened again (no padding with round trips), except the deliverable's page at the end.

**Graphs** (OmniBench). Two picks from different starting groups, each feeding a count of
the records that share its flowing value, feeding one comparison: three subtasks
(which of the two values has more) or five (how many more). The edges are the values
that flow, so the two branches are independent (two or more valid orders). The
instruction states the deliverable as its goal, then the subtasks in the explicit style
of :func:`~.consistency.synthesize`, which the consistency check reads back.

Every subtask carries a state check for the graph evaluator (the record it picks, or a
member of the set it counts, shown in the main content), and resources whose names are
the values that flow, so :func:`~.dag.resource_edges` rebuilds the edges.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from ...graph.model import KnowledgeGraph, Node
from ...tasks.model import Difficulty, GoldStep, Provenance, Resource, SuccessCriterion, Subtask, Task
from ..web.compare import ListingGroups
from ..web.lookup import identify
from ..web.phrasing import answer_metrics, field_noun, plural
from ..web.style import instruction_style
from .flow import Count, Pick, Plan, Step, key_of, record_phrase, relation_phrase, set_phrase

__all__ = ["FlowTexts", "describe", "level_task", "graph_task", "leaks", "nouns", "hidden_values"]


@dataclass
class FlowTexts:
    """What a prefix of a plan says: the phrase of its last record and of its last set (None before the first of each)."""

    record: str | None = None
    members: str | None = None


def describe(groups: ListingGroups, steps: list[Step]) -> list[FlowTexts]:
    """The phrases after each step: picks range over the starting group, then over the last count's set."""
    out: list[FlowTexts] = []
    now = FlowTexts()
    for step in steps:
        if isinstance(step, Pick):
            among = set_phrase(groups, step.conds) if step.conds else now.members
            now = FlowTexts(record_phrase(groups, step, among), now.members)
        else:
            now = FlowTexts(now.record, set_phrase(groups, [step.extra], step.shared, now.record, step.relation))
        out.append(now)
    return out


def _pages(kg: KnowledgeGraph) -> dict[str, Node]:
    return {str(p.attrs.get("url")): p for p in kg.nodes("page") if not p.attrs.get("state")}


def _detail(kg: KnowledgeGraph, record: Node) -> str | None:
    url = record.attrs.get("detail_url")
    return str(url) if url and str(url) in _pages(kg) and url not in (record.attrs.get("listings") or []) else None


def _showing(kg: KnowledgeGraph, record: Node) -> str | None:
    """The record's own page, else the first crawled page that shows it."""
    pages = _pages(kg)
    return _detail(kg, record) or next((u for u in record.attrs.get("pages") or [] if u in pages), None)


def _evidence(kg: KnowledgeGraph, members: list[Node]) -> Node | None:
    """The member of a set whose page shows that the set was looked at: the first by id with a crawled page showing it."""
    return next((r for r in sorted(members, key=lambda r: r.id) if _showing(kg, r)), None)


def _sorted_view(groups: ListingGroups, pick: Pick) -> str | None:
    direction = "desc" if pick.op == "max" else "asc"
    sort = next((s for s in groups.data.node.attrs.get("sorts") or [] if s.get("field") == pick.measure and s.get("direction") == direction), None)
    return str(sort["url"]) if sort and sort.get("url") else None


def _gold(kg: KnowledgeGraph, groups: ListingGroups, steps: list[Step], start_url: str) -> list[GoldStep] | None:
    """Navigations that show each step's evidence, never a URL twice but the last (None when a step has no crawled page to show it)."""
    pages = _pages(kg)
    seen = {start_url}
    out: list[GoldStep] = []

    def go(url: str | None, last: bool = False) -> None:
        here = out[-1].text if out else start_url
        if url and (url not in seen or (last and url != here)):  # the deliverable's page ends the path, even when seen before
            seen.add(url)
            node = pages.get(url)
            out.append(GoldStep(action="navigate", text=url, node_id=node.id if node else None, canonical=f"navigate(url={url!r})"))

    for index, step in enumerate(steps):
        if isinstance(step, Pick):
            view = _sorted_view(groups, step)
            go(view if view in pages else str(groups.data.node.attrs.get("url")))
            target = _showing(kg, step.record)
        else:
            member = _evidence(kg, step.members)
            target = _showing(kg, member) if member else None
        if target is None:
            return None
        go(target, last=index == len(steps) - 1 and isinstance(step, Pick))  # a picked record's page shows the deliverable; a count's does not
    return out


def _check(groups: ListingGroups, record: Node) -> list[SuccessCriterion]:
    key = key_of(groups, record)
    return [SuccessCriterion(kind="text_present", value=key, scope="main", whole_words=True)] if key else []


def flow_subtasks(kg: KnowledgeGraph, groups: ListingGroups, steps: list[Step], texts: list[FlowTexts], ids: list[str]) -> list[Subtask]:
    """One subtask per step, its resources named by the values that flow (so the edges can be rebuilt from them)."""
    out: list[Subtask] = []
    previous: dict[str, Resource] = {}
    for sid, step, text in zip(ids, steps, texts):
        inputs = [previous[k] for k in ("set", "value") if k in previous]
        if isinstance(step, Pick):
            outputs = [Resource(kind="record", name=f"{sid}:{step.record.id}")]
            if step.flows:  # named by its producer: two picks may read the same value (two penguins of one island), and each is its own resource
                outputs.append(Resource(kind="field_value", name=f"{sid}:{step.flows}={step.record.attrs['fields'][step.flows]['raw']}"))
            instruction = f"Find {text.record}" + (f" and note its {field_noun(step.flows)}" if step.flows else "")
            checks = _check(groups, step.record)
            previous = {"value": outputs[-1]} if step.flows else {}
            if step.conds:
                inputs = []  # a pick over a stated group consumes nothing
        else:
            outputs = [Resource(kind="record_set", name=f"{sid}:" + "|".join(sorted(r.id for r in step.members)))]
            instruction = f"Count the {text.members}"
            member = _evidence(kg, step.members)
            checks = _check(groups, member) if member else []
            previous = {"set": outputs[0]}
        category = urlparse(str(groups.data.node.attrs.get("url"))).path or "/"
        out.append(Subtask(id=sid, instruction=instruction, category=category, inputs=inputs, outputs=outputs, checks=checks))
    return out


def hidden_values(kg: KnowledgeGraph, groups: ListingGroups, steps: list[Step]) -> list[str]:
    """What the generator knows and the agent must discover: flowing values, counts, the picked records' keys, pages and titles."""
    values: list[str] = []
    for step in steps:
        if isinstance(step, Pick):
            record = step.record
            if step.flows:
                raw = str(record.attrs["fields"][step.flows]["raw"])
                values += [raw, groups.data.short(step.flows, raw)]
            values += [v for v in (key_of(groups, record), _detail(kg, record)) if v]
            page = _pages(kg).get(_detail(kg, record) or "")
            title = str(page.attrs.get("title") or "") if page is not None else ""
            if title and sum(str(p.attrs.get("title") or "") == title for p in _pages(kg).values()) == 1:
                values.append(title)  # a title only the record's page has names the record
        else:
            values.append(str(len(step.members)))
    return [v for v in dict.fromkeys(values) if v.strip()]


def leaks(instruction: str, hidden: list[str], nouns: tuple[str, ...] = ()) -> list[str]:
    """The hidden values the instruction states (whole words, case-insensitive; step numbers such as "Step 3" do not count).

    A value that is also the records' noun ("Book", a format, among books) is looked for as written:
    "the book with …" does not state it, “Book” does.

    >>> leaks("Step 4, once step 2 is done: count the penguins from Dream island", ["4", "2", "dream", "Biscoe", "Dreams"])
    ['dream']
    >>> leaks("How many books with format “E-book” are there?", ["Book"], nouns=("book",)), leaks("with format “Book”", ["Book"], nouns=("book",))
    ([], ['Book'])
    >>> leaks("on the page “Python 3.11.2 documentation” (2 tables)", ["2", "11"])  # a version number states no count
    ['2']
    """
    text = re.sub(r"\bsteps?\s+\d+\b", " ", instruction, flags=re.I)
    found = []
    for value in hidden:
        own = value.casefold() in {n.casefold() for n in nouns}
        if value.isdigit():
            pattern = r"(?<![\w.])" + value + r"(?!\w|\.\d)"
        else:
            pattern = r"(?<![\w-])" + re.escape(value) + r"(?![\w-])" if own else r"(?<!\w)" + re.escape(value) + r"(?!\w)"
        if re.search(pattern, text, 0 if own else re.I):
            found.append(value)
    return found


def nouns(groups: ListingGroups) -> tuple[str, ...]:
    """The words the instructions call the records by ("book", "books")."""
    return (groups.data.noun, plural(groups.data.noun))


def _difficulty(level: int) -> Difficulty:
    return "easy" if level <= 1 else "medium" if level <= 3 else "hard" if level <= 5 else "expert"


def _ending(kg: KnowledgeGraph, groups: ListingGroups, step: Step, text: FlowTexts) -> tuple[str, dict[str, Any]] | None:
    """The level's deliverable: (instruction, the outcome fields of the task)."""
    if isinstance(step, Count):
        subject = groups.group([step.extra])
        return f"How many {subject} {relation_phrase(step.shared, step.relation, text.record)}?", {
            "gold_answer": str(len(step.members)), "answer_kind": "number", "metrics": answer_metrics("number"), "quality": {"answer_visible": False},
        }
    detail = _detail(kg, step.record)
    if detail:
        return f"Open the page of {text.record}.", {"success": [SuccessCriterion(kind="page_is", value=detail)]}
    labels = identify(groups.data, step.record, "")
    if not labels:
        return None
    raw = str(step.record.attrs["fields"][labels[0]]["raw"])
    return f"What is the {field_noun(labels[0])} of {text.record}?", {
        "gold_answer": groups.data.short(labels[0], raw), "answer_kind": "text", "metrics": answer_metrics("text"), "quality": {"answer_visible": True},
    }


def _base(kg: KnowledgeGraph, start: Node) -> dict[str, Any]:
    start_url = str(start.attrs["url"])
    return {"start_url": start_url, "allowed_domains": list(kg.meta.stats.get("allowed_domains") or [urlparse(start_url).hostname or ""])}


def level_task(kg: KnowledgeGraph, plan: Plan, level: int, start: Node, seed: int, chain_id: str) -> tuple[Task | None, str]:
    """The level-``level`` task of a plan, or None with the reason it cannot be made."""
    groups, steps = plan.groups, plan.steps[:level]
    texts = describe(groups, steps)
    ending = _ending(kg, groups, steps[-1], texts[-1])
    if ending is None:
        return None, "the last record has no page of its own and no identifying value to ask for"
    instruction, outcome = ending
    gold = _gold(kg, groups, steps, str(start.attrs["url"]))
    if gold is None:
        return None, "a step's evidence is on no crawled page"
    hidden = hidden_values(kg, groups, steps[:-1]) + ([str(len(steps[-1].members))] if isinstance(steps[-1], Count) else [])
    hidden += [str(g.text) for g in gold if g.text]  # no URL of the gold path either
    if leaked := leaks(instruction, hidden, nouns(groups)):
        return None, f"the instruction states intermediate values {leaked}"
    if (style := instruction_style(instruction)).style != "goal":
        return None, f"the instruction reads as a script ({style.reason})"
    ids = [f"s{i}" for i in range(1, level + 1)]
    subtasks = flow_subtasks(kg, groups, steps, texts, ids)
    quality = {"flow": {"chain": chain_id, "listing": groups.data.node.id, "hidden": hidden, "steps": [_step_record(s) for s in steps]}}
    quality.update(outcome.pop("quality", {}))
    return Task(
        id=f"chain-{chain_id}-l{level}",
        kind="composite",
        type="chained",
        difficulty=_difficulty(level),
        instruction=instruction,
        gold_steps=gold,
        subtasks=subtasks,
        dag=[(ids[i], ids[i + 1]) for i in range(level - 1)],
        level=level,
        evidence=[groups.data.node.id] + [s.record.id for s in steps if isinstance(s, Pick)],
        provenance=Provenance(graph_id=kg.id, template=groups.data.node.id, generator="compose-chain", model="none", seed=seed),
        quality=quality,
        **_base(kg, start),
        **outcome,
    ), ""


def _step_record(step: Step) -> dict[str, Any]:
    if isinstance(step, Pick):
        return {"pick": step.measure, "op": step.op, "record": step.record.id, "conditions": [list(c) for c in step.conds], "flows": step.flows}
    return {"count": len(step.members), "shared": step.shared, "relation": step.relation, "extra": list(step.extra)}


def graph_task(kg: KnowledgeGraph, groups: ListingGroups, branches: tuple[Pick, Pick, Count, Count], five: bool, start: Node, seed: int) -> Task | None:
    """A task graph joining two picks through their counts: which value has more (3 subtasks) or how many more (5)."""
    a, b, count_a, count_b = branches
    if len(count_b.members) > len(count_a.members):
        a, b, count_a, count_b = b, a, count_b, count_a
    ta, tb = describe(groups, [a])[0], describe(groups, [b])[0]
    field = field_noun(count_a.shared)
    subject = groups.group([count_a.extra])
    if five:
        steps: list[Step] = [a, b, count_a, count_b]
        texts = [ta, tb, *[FlowTexts(t.record, set_phrase(groups, [c.extra], c.shared, t.record)) for t, c in ((ta, count_a), (tb, count_b))]]
        goal = f"find how many more {subject} have the same {field} as {ta.record} than have the same {field} as {tb.record}"
        answer, kind = str(len(count_a.members) - len(count_b.members)), "number"
        last = "Subtract the second count from the first"
    else:
        steps, texts = [a, b], [ta, tb]
        goal = f"find which has more {subject}: the {field} of {ta.record}, or the {field} of {tb.record}; give that {field}"
        answer, kind = groups.data.short(count_a.shared, str(a.record.attrs["fields"][count_a.shared]["raw"])), "text"
        last = f"Compare how many {subject} each of the two {plural(field)} has, and give the {field} with more"
    ids = [f"s{i}" for i in range(1, len(steps) + 2)]
    subtasks = flow_subtasks(kg, groups, steps, texts, ids[:-1])
    if five:  # each count consumes its own branch's value
        subtasks[2].inputs, subtasks[3].inputs = [subtasks[0].outputs[-1]], [subtasks[1].outputs[-1]]
        feeds = [subtasks[2].outputs[0], subtasks[3].outputs[0]]
    else:
        feeds = [subtasks[0].outputs[-1], subtasks[1].outputs[-1]]
    category = subtasks[0].category
    member = _evidence(kg, count_a.members)
    if member is None:
        return None
    subtasks.append(Subtask(id=ids[-1], instruction=last, category=category, inputs=feeds, outputs=[Resource(kind="field_value", name=f"answer={answer}")],
                            checks=_check(groups, member)))
    gold = _gold(kg, groups, [a, count_a, b, count_b] if five else [a, b, count_a, count_b], str(start.attrs["url"]))
    if gold is None:
        return None
    digest = hashlib.sha1(repr((kg.id, groups.data.node.id, [_step_record(s) for s in (a, b, count_a, count_b)], five)).encode()).hexdigest()[:12]
    hidden = hidden_values(kg, groups, [a, b]) + [str(len(count_a.members)), str(len(count_b.members))]
    hidden = [h for h in hidden if h != answer and h not in groups.data.short(count_a.shared, answer)]
    return Task(
        id=f"dag-{digest}",
        kind="composite",
        type="task_graph",
        difficulty="hard" if five else "medium",
        instruction="",
        gold_steps=gold,
        gold_answer=answer,
        answer_kind=kind,  # type: ignore[arg-type]
        metrics=answer_metrics(kind),
        subtasks=subtasks,
        evidence=[groups.data.node.id, a.record.id, b.record.id],
        provenance=Provenance(graph_id=kg.id, template=groups.data.node.id, generator="compose-dag", model="none", seed=seed),
        quality={"intent": goal, "answer_visible": False, "flow": {"listing": groups.data.node.id, "hidden": hidden, "steps": [_step_record(s) for s in (a, b, count_a, count_b)]}},
        **_base(kg, start),
    )
