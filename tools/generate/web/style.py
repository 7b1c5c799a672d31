"""Is a web task's instruction a goal or a click script?

A *goal* asks a question or states an outcome ("What body mass was recorded for …?",
"Show the records heaviest first.", "Add a todo … and mark it done."); the agent finds
the route. A *script* dictates controls ("On the page “X”, open “Y”, then open “Z”.",
"Click …", "press Enter", "select … from the dropdown") or quotes the link and control
texts of the gold path, which a word-matching agent can follow without understanding.

The rules are general English patterns plus the gold path's element names; nothing
here knows a site.

Examples
--------
>>> instruction_style("On the page “Home”, open “Genres”, then open “Poetry”.").style
'script'
>>> instruction_style("Which island did the heaviest Chinstrap penguin come from?").style
'goal'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from ...graph.model import KnowledgeGraph
from ...tasks.model import Task
from ..filter.stages import Dropped, GenerationReport

__all__ = ["StyleVerdict", "instruction_style", "quoted", "gold_names", "filter_scripts"]

_QUOTES = re.compile(r"“([^”]+)”|\"([^\"]+)\"|«([^»]+)»|(?<!\w)‘([^’]+)’(?!\w)|(?<!\w)'([^']+)'(?!\w)")
_OPEN_QUOTE = r"[“\"«‘']"
_NAV_VERBS = r"(?:open|click(?:\s+on)?|tap(?:\s+on)?|go\s+to|visit|follow|navigate\s+to|choose|select|press|hit|activate|expand)"
_CONTROL_NOUNS = r"(?:button|link|tab|menu|menu\s+item|drop-?down|check\s?box|radio(?:\s+button)?|field|text\s?box|search\s+box|input|icon|toggle|option|breadcrumb)"
_KEYS = r"(?:enter|return|tab|escape|esc|space(?:bar)?|backspace|delete|arrow\s+\w+|the\s+\w+\s+key|[“\"'‘])"
_CONTROL_VERBS = r"(?:open|click|select|choose|go|press|tap|follow|navigate|type|enter|switch|scroll|hit|visit)"

# (pattern, reason): any match makes the instruction a script
_SCRIPT_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(?:on|from)\s+the\s+(?:page|screen|tab|view)\s*" + _OPEN_QUOTE, re.I), "starts from a named page (“On the page …”)"),
    (re.compile(r"\b(?:on|from)\s+the\s+" + _OPEN_QUOTE + r"[^”\"»’']+[”\"»’']\s+(?:page|screen|tab|view)\b", re.I), "starts from a named page (“On the … page”)"),
    (re.compile(r"\b(?:double-|right-)?click(?:ing)?\b", re.I), "dictates a click"),
    (re.compile(r"\btap\s+(?:on\b|the\b|[“\"‘])", re.I), "dictates a tap"),
    (re.compile(r"\bpress(?:ing)?\s+(?:the\s+)?" + _KEYS, re.I), "dictates a key or button press"),
    (re.compile(r"\bhit\s+(?:the\s+)?" + _KEYS, re.I), "dictates a key press"),
    (re.compile(r"\bscroll(?:ing)?\s+(?:down|up|to|through)\b", re.I), "dictates scrolling"),
    (re.compile(r"\bfrom\s+the\s+(?:[\w-]+\s+){0,3}(?:drop-?down|menu|select(?:\s+box)?|list\s?box|combo\s?box)\b", re.I), "dictates a choice from a dropdown or menu"),
    (re.compile(r"\bthen\s+" + _CONTROL_VERBS + r"\b", re.I), "dictates steps in order (“then open …”)"),
    (re.compile(r"(?:^|[.;:]\s*)(?:first|next|after that|finally)\s*,?\s+" + _CONTROL_VERBS + r"\b", re.I), "dictates steps in order"),
    (re.compile(r"\b" + _NAV_VERBS + r"\s+(?:the\s+)?" + _OPEN_QUOTE, re.I), "names the control to open or select (verb + quoted name)"),
    (re.compile(r"\b(?:use|tick|check|uncheck|toggle|hit|press|select|choose|open)\s+the\s+(?:[\w-]+\s+){0,3}(?:button|link|drop-?down|check\s?box|radio\s+button|text\s?box|search\s+box|menu\s+item|tab)\b", re.I), "dictates a control by its kind"),
    (re.compile(r"\b(?:type|enter)\s+.{1,80}?\s+(?:into|in)\s+the\s+(?:[\w-]+\s+){0,3}(?:box|field|input|search\s?bar|text\s?area)\b", re.I), "dictates typing into a field"),
]

_GOAL_HINTS = re.compile(
    r"\?\s*$|^\s*(?:what|which|who|whom|whose|when|where|how|why|is|are|was|were|does|do|did|can|name|find|show|list|add|create|remove|delete|"
    r"mark|request|reserve|book|open|locate|look up|get|report|give|tell|change|edit|rename|complete|leave|sort|order|filter|display|submit|sign up|register)\b",
    re.I,
)


class StyleVerdict(BaseModel):
    """Goal or script, and why."""

    style: Literal["goal", "script"]
    reason: str = Field(description="The rule that decided, in words.")


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s'’&-]", " ", text.lower()).split())


def quoted(text: str) -> list[str]:
    """The strings an instruction quotes (curly, straight or guillemet quotes), in order.

    >>> quoted('Add “Buy milk” and "Call Anna".')
    ['Buy milk', 'Call Anna']
    """
    return [next(g for g in m.groups() if g is not None).strip() for m in _QUOTES.finditer(text)]


def _gold_hits(text: str, gold_names: Iterable[str]) -> list[str]:
    """Gold-path element names the instruction repeats: quoted, or (two words or more) verbatim."""
    quotes = {_norm(q) for q in quoted(text)}
    flat = f" {_norm(text)} "
    hits: list[str] = []
    for name in dict.fromkeys(n.strip() for n in gold_names if n and n.strip()):
        key = _norm(name)
        if not key:
            continue
        if key in quotes or (len(key.split()) >= 2 and f" {key} " in flat):
            hits.append(name)
    return hits


def _opened_by_name(text: str, names: list[str]) -> str | None:
    """A gold name that is the bare object of a navigation verb ("Open the Genres." / "go to About & hours")."""
    for name in names:
        pattern = r"\b" + _NAV_VERBS + r"\s+(?:the\s+)?[“\"«‘']?" + re.escape(name) + r"[”\"»’']?(?:\s+" + _CONTROL_NOUNS + r"|\s+page)?\s*(?:[.,;!?]|$|\s+and\b|\s+then\b)"
        if re.search(pattern, text, re.I):
            return name
    return None


def instruction_style(text: str, gold_names: Iterable[str] = ()) -> StyleVerdict:
    """Judge an instruction: ``script`` when it dictates controls or quotes the gold path's names, else ``goal``.

    ``gold_names`` are the link and control texts the reference solution acts on.
    One of them may appear (the subject the goal itself names, e.g. a book to request);
    two or more, or one given as the bare thing to open or click, make a script.
    """
    if not text.strip():
        return StyleVerdict(style="script", reason="empty instruction")
    for pattern, reason in _SCRIPT_RULES:
        match = pattern.search(text)
        if match:
            return StyleVerdict(style="script", reason=f"{reason}: {match.group(0).strip()!r}")
    for match in _QUOTES.finditer(text):
        after = re.match(r"\s+(" + _CONTROL_NOUNS + r")\b", text[match.end():], re.I)
        if after:
            return StyleVerdict(style="script", reason=f"quotes the name of a control: {match.group(0)} {after.group(1)}")
    hits = _gold_hits(text, gold_names)
    if len(hits) >= 2:
        return StyleVerdict(style="script", reason="repeats the gold path's control texts " + ", ".join(f"“{h}”" for h in hits))
    opened = _opened_by_name(text, [n for n in dict.fromkeys(gold_names) if n and n.strip()])
    if opened is not None:
        return StyleVerdict(style="script", reason=f"asks to open the gold path's control “{opened}” by its text")
    if _GOAL_HINTS.search(text):
        return StyleVerdict(style="goal", reason="asks a question or states an outcome")
    return StyleVerdict(style="goal", reason="dictates no controls")


_CANONICAL_TEXT = re.compile(r"\btext='((?:[^'\\]|\\.)*)'")


def gold_names(task: Task, kg: KnowledgeGraph | None = None) -> list[str]:
    """Names of the elements a task's gold steps act on (links, buttons, fields): not typed text or chosen options."""
    names: list[str] = []
    for step in task.gold_steps:
        name = ""
        if step.node_id and kg is not None and step.node_id in kg:
            node = kg.node(step.node_id)
            name = str(node.attrs.get("name") or node.text or "")
        elif step.action in ("click", "hover") and step.canonical:
            match = _CANONICAL_TEXT.search(step.canonical)
            name = match.group(1).replace("\\'", "'") if match else ""
        if name.strip() and name not in names:
            names.append(name.strip())
    return names


def filter_scripts(kg: KnowledgeGraph | None, tasks: list[Task], report: GenerationReport) -> list[Task]:
    """Generation stage ``style``: drop web tasks whose instruction is a script; record every verdict in ``quality["style"]``."""
    kept: list[Task] = []
    for task in tasks:
        if task.kind != "web":
            kept.append(task)
            continue
        verdict = instruction_style(task.instruction, gold_names(task, kg))
        task.quality["style"] = verdict.model_dump()
        if verdict.style == "script":
            report.dropped.append(Dropped(task_id=task.id, stage="style", reason=f"a click script, not a goal: {verdict.reason}"))
        else:
            kept.append(task)
    report.stage("style", len(tasks), len(kept))
    return kept
