"""Compare / aggregate (issue 15, family 2): counts, which-of-two, max/min and differences over a whole listing.

Only listings the crawl saw completely (``complete`` on the listing node) are used; every
other listing is skipped with the reason under ``report.generator["skipped"]``. Answers
are computed from the listing's records: categories are short text fields with a few
values, measures are number fields. Ties and near-ties are skipped (two counts must
differ by at least :data:`MIN_GAP` and 5 %; a maximum or minimum must lead the next
value by 0.5 %). The structured goal is kept under ``task.quality["compare"]``; the gold
steps open the listing's first page.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

import numpy as np

from ...evaluate.metrics import answer_tokens, boolean_value
from ...graph.model import KnowledgeGraph, Node
from ...tasks.model import GoldStep, Provenance, Task
from ..registry import Candidates, GenerationRequest, generator
from .lookup import ListingData, listing_data, start_page
from .phrasing import ID_LABEL, answer_metrics, field_phrase, number_text, plural, quoted, singular

__all__ = ["web_compare", "COMPARE_TEMPLATE", "MIN_GAP"]

COMPARE_TEMPLATE = "web-compare"
HOPS = 8
#: Two counts closer than this are a near-tie.
MIN_GAP = 3
_MIN_RECORDS = 6
Cond = tuple[str, str, Any]  # (label, "eq" | "gt" | "lt", raw text or number)


def _fields(record: Node) -> dict[str, dict[str, Any]]:
    fields: dict[str, dict[str, Any]] = record.attrs.get("fields", {})
    return fields


def _holds(record: Node, cond: Cond) -> bool:
    label, op, value = cond
    field = _fields(record).get(label, {})
    if field.get("type") == "missing" or field.get("value") is None:
        return False
    if op == "eq":
        return bool(field.get("raw") == value)
    number = field.get("value")
    if not isinstance(number, (int, float)):
        return False
    return number > value if op == "gt" else number < value


class _Listing:
    """A complete listing's categories, measures and phrasing."""

    def __init__(self, data: ListingData) -> None:
        self.data = data
        size = len(data.records)
        self.categories = [
            lb
            for lb, st in sorted(data.stats.items())
            if st.main_type == "text" and 2 <= st.distinct <= min(12, size // 2) and st.longest <= 40 and not ID_LABEL.match(lb) and min(st.values.values()) >= 2
        ]
        self.measures = [lb for lb, st in sorted(data.stats.items()) if st.main_type == "number" and st.types["number"] >= 5 and st.distinct >= 3 and not ID_LABEL.match(lb)]
        self.ids = [lb for lb, st in sorted(data.stats.items()) if st.main_type == "text" and st.distinct >= 0.3 * size and st.longest <= 40 and not ID_LABEL.match(lb)]

    def matching(self, conds: list[Cond]) -> list[Node]:
        return [r for r in self.data.records if all(_holds(r, c) for c in conds)]

    def value(self, label: str, raw: str) -> str:
        return quoted(self.data.short(label, raw))

    def group(self, conds: list[Cond]) -> str:
        """The records meeting ``conds`` as a noun phrase: "Adelie Penguins whose island is Dream"."""
        noun = plural(self.data.noun)
        clauses: list[str] = []
        for label, op, value in conds:
            if op == "eq":
                short = self.data.short(label, str(value))
                words = short.split()
                if noun == plural(self.data.noun) and len(words) > 1 and singular(words[-1].lower()) == self.data.noun:
                    noun = " ".join(words[:-1] + [plural(words[-1])])
                    continue
                clauses.append(f"whose {field_phrase(label)} is {quoted(short)}")
            else:
                unit = self.data.stats[label].values and _unit(self.data, label)
                clauses.append(f"with a {field_phrase(label)} {'above' if op == 'gt' else 'below'} {number_text(value, unit or None)}")
        return noun + ("" if not clauses else " " + " and ".join(clauses))


def _unit(data: ListingData, label: str) -> str | None:
    return next((_fields(r)[label].get("unit") for r in data.records if _fields(r).get(label, {}).get("unit")), None)


def _decimals(values: list[float]) -> int:
    return max((len(repr(float(v)).split(".")[1].rstrip("0")) for v in values), default=0)


def _pick(rng: np.random.Generator, items: list[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


def _condition(rng: np.random.Generator, lst: _Listing, avoid: set[str]) -> list[Cond]:
    """No condition (a third of the time) or one category = one of its values."""
    labels = [lb for lb in lst.categories if lb not in avoid]
    if not labels or rng.random() < 0.34:
        return []
    label = _pick(rng, labels)
    return [(label, "eq", _pick(rng, sorted(lst.data.stats[label].values)))]


def _answerable(lst: _Listing, label: str, raw: str) -> bool:
    """A value that can be an answer: at most three words, and not a yes/no word (it would read as a reply)."""
    tokens = answer_tokens(lst.data.short(label, raw))
    return 0 < len(tokens) <= 3 and boolean_value(" ".join(tokens)) is None


def _which(rng: np.random.Generator, lst: _Listing) -> dict[str, Any] | None:
    labels = [lb for lb in lst.categories if sum(_answerable(lst, lb, v) for v in lst.data.stats[lb].values) >= 2]
    if not labels:
        return None
    label = _pick(rng, labels)
    options = sorted(v for v in lst.data.stats[label].values if _answerable(lst, label, v))
    a, b = (options[int(i)] for i in rng.choice(len(options), 2, replace=False))
    conds = _condition(rng, lst, {label})
    group = lst.matching(conds)
    na, nb = (sum(1 for r in group if _holds(r, (label, "eq", v))) for v in (a, b))
    if abs(na - nb) < max(MIN_GAP, 0.05 * max(na, nb)):
        return None
    winner = a if na > nb else b
    field, subject = field_phrase(label), lst.group(conds)
    templates = [
        f"Were more {subject} recorded with {field} {lst.value(label, a)} or with {field} {lst.value(label, b)}?",
        f"Among the {subject}, which is more common: {field} {lst.value(label, a)} or {field} {lst.value(label, b)}?",
        f"Which {field} occurs more often among the {subject}, {lst.value(label, a)} or {lst.value(label, b)}?",
    ]
    return {"op": "which", "conditions": conds, "field": label, "options": [a, b], "counts": [na, nb], "answer": lst.data.short(label, winner), "kind": "text", "visible": True, "instruction": _pick(rng, templates)}


def _count(rng: np.random.Generator, lst: _Listing) -> dict[str, Any] | None:
    conds = _condition(rng, lst, set())
    if lst.measures and (not conds or rng.random() < 0.5):
        label = _pick(rng, lst.measures)
        values = sorted(float(_fields(r)[label]["value"]) for r in lst.matching(conds) if _fields(r).get(label, {}).get("type") == "number")
        if len(values) < 4:
            return None
        middle = values[int(rng.integers(len(values) // 4, 3 * len(values) // 4))]
        rounded = float(f"{middle:.2g}")
        threshold: float | int = int(rounded) if rounded.is_integer() else rounded
        if threshold in values:
            return None  # "above" would be unclear for records at the threshold
        conds = conds + [(label, _pick(rng, ["gt", "lt"]), threshold)]
    if not conds:
        return None
    n = len(lst.matching(conds))
    if n == 0 or n == len(lst.data.records):
        return None
    subject = lst.group(conds)
    templates = [f"How many {subject} are there?", f"How many {subject} does the site list?", f"Count the {subject}: how many are there?"]
    return {"op": "count", "conditions": conds, "answer": str(n), "value": n, "kind": "number", "visible": False, "instruction": _pick(rng, templates)}


def _extreme(rng: np.random.Generator, lst: _Listing) -> dict[str, Any] | None:
    if not lst.measures:
        return None
    measure = _pick(rng, lst.measures)
    conds = _condition(rng, lst, set())
    group = [r for r in lst.matching(conds) if _fields(r).get(measure, {}).get("type") == "number"]
    if len(group) < 3:
        return None
    op = _pick(rng, ["max", "min"])
    ranked = sorted(group, key=lambda r: float(_fields(r)[measure]["value"]), reverse=op == "max")
    top, second = (float(_fields(r)[measure]["value"]) for r in ranked[:2])
    if abs(top - second) < 0.005 * max(abs(top), 1e-9):
        return None  # a tie or near-tie
    best = ranked[0]
    answers = [lb for lb in lst.ids + lst.categories if lb not in {c[0] for c in conds} and _fields(best).get(lb, {}).get("type") == "text"]
    answers = [lb for lb in answers if lb in lst.categories or sum(1 for r in group if _fields(r).get(lb, {}).get("raw") == _fields(best)[lb]["raw"]) == 1]
    answers = [lb for lb in answers if _answerable(lst, lb, str(_fields(best)[lb]["raw"]))]
    if not answers:
        return None
    label = _pick(rng, answers)
    word = "highest" if op == "max" else "lowest"
    subject, field, asked = lst.group(conds), field_phrase(measure), field_phrase(label)
    if conds:
        templates = [
            f"Among the {subject}, what is the {asked} of the one with the {word} {field}?",
            f"Of the {subject}, find the one with the {word} {field} and give its {asked}.",
        ]
    else:
        templates = [
            f"What is the {asked} of the {lst.data.noun} with the {word} {field}?",
            f"Find the {lst.data.noun} with the {word} {field}: what is its {asked}?",
        ]
    return {"op": op, "conditions": conds, "measure": measure, "field": label, "answer": lst.data.short(label, str(_fields(best)[label]["raw"])), "record": best.id, "kind": "text", "visible": True, "instruction": _pick(rng, templates)}


def _difference(rng: np.random.Generator, lst: _Listing) -> dict[str, Any] | None:
    conds = _condition(rng, lst, set())
    if lst.measures and rng.random() < 0.5:
        measure = _pick(rng, lst.measures)
        values = [float(_fields(r)[measure]["value"]) for r in lst.matching(conds) if _fields(r).get(measure, {}).get("type") == "number"]
        if len(values) < 3 or max(values) == min(values):
            return None
        diff = round(max(values) - min(values), _decimals(values))
        value: float | int = int(diff) if float(diff).is_integer() else diff
        subject, field = lst.group(conds), field_phrase(measure)
        templates = [
            f"What is the difference between the highest and the lowest {field} among the {subject}?",
            f"By how much does the largest {field} exceed the smallest among the {subject}?",
        ]
        return {"op": "range", "conditions": conds, "measure": measure, "answer": number_text(value, _unit(lst.data, measure)), "value": value, "kind": "number", "visible": False, "instruction": _pick(rng, templates)}
    if not lst.categories:
        return None
    label = _pick(rng, [lb for lb in lst.categories if lb not in {c[0] for c in conds}] or [None])
    if label is None:
        return None
    a, b = (sorted(lst.data.stats[label].values)[int(i)] for i in rng.choice(lst.data.stats[label].distinct, 2, replace=False))
    group = lst.matching(conds)
    na, nb = (sum(1 for r in group if _holds(r, (label, "eq", v))) for v in (a, b))
    if na == nb:
        return None
    if na < nb:
        a, b, na, nb = b, a, nb, na
    subject, field = lst.group(conds), field_phrase(label)
    templates = [
        f"How many more {subject} have {field} {lst.value(label, a)} than {field} {lst.value(label, b)}?",
        f"Among the {subject}, by how many do those with {field} {lst.value(label, a)} outnumber those with {lst.value(label, b)}?",
    ]
    return {"op": "count_difference", "conditions": conds, "field": label, "options": [a, b], "counts": [na, nb], "answer": str(na - nb), "value": na - nb, "kind": "number", "visible": False, "instruction": _pick(rng, templates)}


_MAKERS: list[Callable[[np.random.Generator, _Listing], dict[str, Any] | None]] = [_which, _count, _extreme, _difference]


def _task(kg: KnowledgeGraph, lst: _Listing, goal: dict[str, Any], start_url: str, seed: int) -> Task:
    listing = lst.data.node
    url = str(listing.attrs.get("url"))
    page = next((p for p in kg.nodes("page") if p.attrs.get("url") == url), None)
    structured = {k: v for k, v in goal.items() if k not in ("instruction", "kind", "visible")}
    structured["conditions"] = [list(c) for c in goal["conditions"]]
    structured["listing"] = listing.id
    key = f"{kg.id}|{COMPARE_TEMPLATE}|{listing.id}|{sorted((k, repr(v)) for k, v in structured.items() if k != 'answer')}"
    instruction = goal["instruction"][0].upper() + goal["instruction"][1:]
    return Task(
        id=f"web-compare-{hashlib.sha1(key.encode()).hexdigest()[:12]}",
        kind="web",
        type="compare",
        difficulty="hard",
        instruction=instruction,
        gold_answer=goal["answer"],
        answer_kind=goal["kind"],
        metrics=answer_metrics(goal["kind"]),
        evidence=[listing.id] + ([goal["record"]] if goal.get("record") else []),
        start_url=start_url,
        allowed_domains=list(kg.meta.stats.get("allowed_domains") or [urlparse(start_url).hostname or ""]),
        gold_steps=[GoldStep(action="navigate", text=url, node_id=page.id if page else None, canonical=f"navigate(url={url!r})")],
        reasoning_path=[(listing.id, "contains", r) for r in ([goal["record"]] if goal.get("record") else [])],
        provenance=Provenance(graph_id=kg.id, template=COMPARE_TEMPLATE, generator=COMPARE_TEMPLATE, model="none", seed=seed),
        quality={"answer_visible": goal["visible"], "compare": structured},
    )


def incomplete_reason(node: Node) -> str:
    """Why a listing cannot be aggregated over: how much of it the crawl saw."""
    a = node.attrs
    pages = f"{a.get('pages_seen')} of {a.get('pages_total') or 'an unknown number of'} pages"
    stated = f", {a.get('records')} records seen of {a.get('total_stated')} stated" if a.get("total_stated") else f", {a.get('records')} records seen"
    return f"listing not seen completely ({pages} visited{stated}); counts and extremes over it would be guesses"


@generator(COMPARE_TEMPLATE, graph="web")
async def web_compare(request: GenerationRequest) -> Candidates:
    """Counts, which-of-two, max/min and differences over listings the crawl saw completely."""
    kg, seed = request.kg, request.seed
    pool = max(request.count * 2, 8)
    start = start_page(kg)
    skipped: list[dict[str, str]] = []
    tasks: list[Task] = []
    usable: list[_Listing] = []
    for data in listing_data(kg):
        if not data.node.attrs.get("complete"):
            skipped.append({"listing": data.node.id, "url": str(data.node.attrs.get("url")), "reason": incomplete_reason(data.node)})
        elif len(data.records) < _MIN_RECORDS:
            skipped.append({"listing": data.node.id, "url": str(data.node.attrs.get("url")), "reason": f"only {len(data.records)} records; too few to compare"})
        else:
            usable.append(_Listing(data))
    if start is not None and usable:
        per_listing = max(1, -(-pool // len(usable)))
        for lst in usable:
            rng = np.random.default_rng([seed, int(hashlib.sha1(f"{kg.id}|{lst.data.node.id}".encode()).hexdigest()[:8], 16)])
            seen: set[str] = set()
            made = 0
            for attempt in range(per_listing * 12):
                if made >= per_listing:
                    break
                goal = _MAKERS[attempt % len(_MAKERS)](rng, lst)
                if goal is None:
                    continue
                task = _task(kg, lst, goal, str(start.attrs.get("url")), seed)
                if task.id in seen or task.instruction in {t.instruction for t in tasks}:
                    continue
                seen.add(task.id)
                tasks.append(task)
                made += 1
    request.report.generator = {"listings_used": [lst.data.node.id for lst in usable], "skipped": skipped, "tasks": len(tasks)}
    return Candidates(tasks, {COMPARE_TEMPLATE: HOPS})
