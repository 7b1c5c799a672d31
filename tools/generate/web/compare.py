"""Compare / aggregate (issue 15, family 2): counts, which-of-two, max/min and differences over a whole listing.

Only listings the crawl saw completely (``complete`` on the listing node) are used, and never
one whose records are all in a wider complete listing (a filter of it: "how many … does the site
list" would count only the filtered part) or whose URL filters on one of its own fields
(``?status=!closed``, :func:`.lookup.filtered_on`), unless its one filter is proven to mean
"field = value" (:mod:`.scope`: Trac's per-milestone queries), when every question names that
scope; every other listing is skipped with the reason under
``report.generator["skipped"]``. Answers
are computed from the listing's records: categories are short text fields with a few
values (or number fields with at most 8 whole values, each on two records or more), measures are number fields. Ties and near-ties are skipped (two counts must
differ by at least :data:`MIN_GAP` and 5 %; a maximum or minimum must lead the next
value by 0.5 %). The structured goal is kept under ``task.quality["compare"]``; the gold
steps open the listing's first page.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

import numpy as np

from ...evaluate.metrics import answer_tokens, boolean_value
from ...graph.model import KnowledgeGraph, Node
from ...tasks.model import GoldStep, Provenance, Task
from ..registry import Candidates, GenerationRequest, generator
from .lookup import ListingData, filtered_on, interleave, is_meta_listing, listing_data, listing_quotas, start_page, wider_listing
from .scope import Scope, listing_scope, scoped_noun
from .phrasing import ID_LABEL, answer_metrics, field_noun, number_text, plural, quoted, singular

__all__ = ["web_compare", "COMPARE_TEMPLATE", "MIN_GAP", "ListingGroups", "Cond", "holds"]

COMPARE_TEMPLATE = "web-compare"
HOPS = 8
#: Two counts closer than this are a near-tie.
MIN_GAP = 3
_MIN_RECORDS = 6
Cond = tuple[str, str, Any]  # (label, "eq" | "gt" | "lt", raw text or number)


def _fields(record: Node) -> dict[str, dict[str, Any]]:
    fields: dict[str, dict[str, Any]] = record.attrs.get("fields", {})
    return fields


def holds(record: Node, cond: Cond) -> bool:
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


class ListingGroups:
    """A complete listing's categories, measures and phrasing."""

    def __init__(self, data: ListingData, scope: Scope | None = None) -> None:
        self.data = data
        self.scope = scope  # every record has this field's value: each question names it
        self.noun = scoped_noun(data) if scope is not None else data.noun  # the scope tells it apart from a wider listing of the same records
        size = len(data.records)
        # Only fields every record shows: a count or an extreme over a field some records were never read for is a guess.
        self.categories = [
            lb
            for lb, st in sorted(data.stats.items())
            if st.covers_all
            and (st.main_type == "text" or _few_whole_numbers(data, lb))
            and 2 <= st.distinct <= min(12, size // 2) and st.longest_short <= 40 and not ID_LABEL.match(lb) and min(st.values.values()) >= 2
        ]
        self.measures = [
            lb for lb, st in sorted(data.stats.items())
            if st.covers_all and st.numbers_only and st.types["number"] >= 5 and st.distinct >= 3 and not ID_LABEL.match(lb) and not _sequence(data, lb) and not VERSION_LABEL.search(lb)
        ]
        self.ids = [lb for lb, st in sorted(data.stats.items()) if st.covers_all and st.main_type == "text" and st.distinct >= 0.3 * size and st.longest <= 40 and not ID_LABEL.match(lb)]

    def matching(self, conds: list[Cond]) -> list[Node]:
        return [r for r in self.data.records if all(holds(r, c) for c in conds)]

    def value(self, label: str, raw: str) -> str:
        return quoted(self.data.short(label, raw))

    def names_kind(self, label: str) -> bool:
        """Whether the field's values name the kind of record ("Gentoo penguin"): good in a condition, a poor answer ("Gentoo"? "Gentoo penguins"?)."""
        return any(self.modifier(label, v)[0] == "head" for v in self.data.stats[label].values)

    def modifier(self, label: str, raw: str) -> tuple[str, str]:
        """How "records with ``label`` = ``raw``" reads: ("head", "Adelie penguins"), ("pre", "female") or ("post", "from Dream island")."""
        short = self.data.short(label, raw)
        words = short.split()
        if len(words) > 1 and singular(words[-1].lower()) == self.noun:
            return "head", " ".join(words[:-1] + [plural(self.noun)])  # the value names the kind of record
        field = field_noun(label)
        if _adjective(short) and not _PERSON_LABEL.search(label) and not any(raw in st.values for lb, st in self.data.stats.items() if lb != label):
            return "pre", short.lower()  # "MALE" → "male penguins"; no other field has the value, so it is not ambiguous
        if len(words) <= 3 and short[:1].isupper() and not short.isupper() and boolean_value(short) is None and re.fullmatch(r"[A-Za-z][\w' .-]*", short):
            if field.lower() in _NAME_THEN_PLACE:
                return "post", f"from {short} {field.lower()}"  # "from Dream island"
            if field.lower() in _PLACES:
                return "post", f"from {short}"  # "from France"
        if boolean_value(short) is not None:
            return "post", f"whose {field} is {quoted(short)}"
        return "post", f"with {field} {quoted(short)}"

    def group(self, conds: list[Cond]) -> str:
        """The records meeting ``conds`` as a noun phrase: "female Adelie penguins from Dream island with a body mass above 4,000 g"."""
        head, posts = self.group_parts(conds)
        return head + ("" if not posts else " " + " and ".join(posts))

    def group_parts(self, conds: list[Cond]) -> tuple[str, list[str]]:
        """The noun with the modifiers before it, and the phrases after it."""
        head, pres, posts = plural(self.noun), [], []
        for label, op, value in conds:
            if op == "eq":
                kind, text = self.modifier(label, str(value))
                if kind == "head" and head == plural(self.noun):
                    head = text
                elif kind == "pre":
                    pres.append(text)
                else:
                    posts.append(text if kind == "post" else f"with {field_noun(label)} {quoted(self.data.short(label, str(value)))}")
            else:
                shown = number_text(value, _unit(self.data, label))
                if not any("," in raw for raw in self.data.stats[label].values):
                    shown = shown.replace(",", "")  # the site writes this field's numbers without separators (years, codes)
                posts.append(f"with a {field_noun(label)} {'above' if op == 'gt' else 'below'} {shown}")
        if self.scope is not None:
            posts.append(f"with {field_noun(self.scope.label)} {quoted(self.scope.value)}")
        place = f" {self.data.where}" if self.data.where else ""  # right after the noun: "records in the table “Format Characters” with …"
        return " ".join(pres + [head]) + place, posts


#: Fields naming a person ("bruno" is an owner, not a kind of ticket): their values never stand before the noun.
_PERSON_LABEL = re.compile(r"owner|reporter|author|assign|creator|user|editor|\bby\b|\bcc\b", re.I)
#: Place nouns that follow a name ("Dream island", "Kent county"); other place nouns read "from France".
_NAME_THEN_PLACE = frozenset("island county valley river lake street road avenue bay park beach mountain district".split())
_PLACES = frozenset("country city town region state province location site place continent village area port".split())


#: A field naming a version or release ("Mandatory in", "Added in", "Version"): "3.10" is later than "3.9", and 3.7 − 2.2 means nothing.
VERSION_LABEL = re.compile(r"\b(?:version|release|since)\b|^\w+ in$", re.IGNORECASE)


def _sequence(data: ListingData, label: str) -> bool:
    """Whether a number field counts records (whole numbers running from 1 with few gaps, like a sample number): not a measure."""
    values = {_fields(r)[label].get("value") for r in data.records if _fields(r).get(label, {}).get("type") == "number"}
    if not values or not all(isinstance(v, int) or (isinstance(v, float) and v.is_integer()) for v in values):
        return False
    top = max(float(v) for v in values if v is not None)
    return min(float(v) for v in values if v is not None) <= 1 and len(values) >= 0.9 * top


#: A number field with at most this many distinct whole values is also a category ("cylinders 4, 6 or 8").
MAX_NUMBER_CATEGORY = 8


def _few_whole_numbers(data: ListingData, label: str) -> bool:
    """Whether a number field takes a few whole values, each on several records: it groups records as a category does."""
    stats = data.stats[label]
    if not stats.numbers_only or stats.distinct > MAX_NUMBER_CATEGORY or _sequence(data, label):
        return False
    values = [_fields(r)[label].get("value") for r in data.records if _fields(r).get(label, {}).get("type") == "number"]
    return all(isinstance(v, int) or (isinstance(v, float) and v.is_integer()) for v in values)


def _adjective(value: str) -> bool:
    """A single plain word, all lower or all upper case ("female", "MALE"): it can stand before the noun."""
    return bool(re.fullmatch(r"[a-z]{3,}|[A-Z]{3,}", value)) and boolean_value(value) is None


def _unit(data: ListingData, label: str) -> str | None:
    return next((_fields(r)[label].get("unit") for r in data.records if _fields(r).get(label, {}).get("unit")), None)


def _decimals(values: list[float]) -> int:
    return max((len(repr(float(v)).split(".")[1].rstrip("0")) for v in values), default=0)


def _pick(rng: np.random.Generator, items: list[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


def _condition(rng: np.random.Generator, lst: ListingGroups, avoid: set[str]) -> list[Cond]:
    """No condition (a third of the time) or one category = one of its values."""
    labels = [lb for lb in lst.categories if lb not in avoid]
    if not labels or rng.random() < 0.34:
        return []
    label = _pick(rng, labels)
    return [(label, "eq", _pick(rng, sorted(lst.data.stats[label].values)))]


def _answerable(lst: ListingGroups, label: str, raw: str) -> bool:
    """A value that can be an answer: at most three words, and not a yes/no word (it would read as a reply)."""
    tokens = answer_tokens(lst.data.short(label, raw))
    return 0 < len(tokens) <= 3 and boolean_value(" ".join(tokens)) is None


def _which(rng: np.random.Generator, lst: ListingGroups) -> dict[str, Any] | None:
    labels = [lb for lb in lst.categories if sum(_answerable(lst, lb, v) for v in lst.data.stats[lb].values) >= 2 and not lst.names_kind(lb)]
    if not labels:
        return None
    label = _pick(rng, labels)
    options = sorted(v for v in lst.data.stats[label].values if _answerable(lst, label, v))
    a, b = (options[int(i)] for i in rng.choice(len(options), 2, replace=False))
    conds = _condition(rng, lst, {label})
    group = lst.matching(conds)
    na, nb = (sum(1 for r in group if holds(r, (label, "eq", v))) for v in (a, b))
    if abs(na - nb) < max(MIN_GAP, 0.05 * max(na, nb)) or min(na, nb) == 0:
        return None  # a near-tie, or an option that does not occur in the group (a trick question)
    winner = a if na > nb else b
    if any(lst.data.short(label, v).strip() in (str(na), str(nb)) for v in (a, b)):
        return None  # the answer "2" could be read as a count: "more with readonly 0 or with readonly 2?"
    holder = next(r for r in group if holds(r, (label, "eq", winner)))  # a record showing the answer, for the gold steps
    kind, (ma, mb), subject = _contrast(lst, conds, label, a, b)
    if kind == "pre":
        templates = [f"Does the site list more {ma} or more {mb} {subject}?", f"Which are there more of: {ma} or {mb} {subject}?"]
    elif kind == "post" and not lst.group_parts(conds)[1]:
        templates = [f"Were more {subject} recorded {ma} or {mb}?", f"Among the {subject}, are there more {ma} or more {mb}?"]
    elif kind == "post":
        templates = [f"Among the {subject}, are there more {ma} or more {mb}?", f"Among the {subject}, which are more numerous: those {ma} or those {mb}?"]
    else:
        templates = [f"Are there more {ma} or more {mb}?", f"Which does the site list more of: {ma} or {mb}?"]
    return {
        "op": "which",
        "conditions": conds,
        "field": label,
        "options": [a, b],
        "counts": [na, nb],
        "answer": lst.data.short(label, winner),
        "shown_by": holder.id,
        "kind": "text",
        "visible": True,
        "instruction": _pick(rng, templates),
    }


def _contrast(lst: ListingGroups, conds: list[Cond], label: str, a: str, b: str) -> tuple[str, tuple[str, str], str]:
    """How to set "``label`` = ``a``" against "= ``b``" within the records meeting ``conds``.

    ("pre", ("male", "female"), "Adelie penguins"): the values stand before the shared group;
    ("post", ("from Dream island", "from Torgersen island"), "Adelie penguins"): after it;
    ("whole", (group with a, group with b), ""): each side is a whole noun phrase.
    """
    (kind_a, text_a), (kind_b, text_b) = lst.modifier(label, a), lst.modifier(label, b)
    if kind_a == kind_b == "pre":
        return "pre", (text_a, text_b), lst.group(conds)
    if kind_a == kind_b == "post":
        return "post", (text_a, text_b), lst.group(conds)
    return "whole", (lst.group(conds + [(label, "eq", a)]), lst.group(conds + [(label, "eq", b)])), ""


def _count(rng: np.random.Generator, lst: ListingGroups) -> dict[str, Any] | None:
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


def _extreme(rng: np.random.Generator, lst: ListingGroups) -> dict[str, Any] | None:
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
    answers = [lb for lb in answers if _answerable(lst, lb, str(_fields(best)[lb]["raw"])) and not lst.names_kind(lb)]
    if not answers:
        return None
    label = _pick(rng, answers)
    word = "highest" if op == "max" else "lowest"
    subject, field, asked = lst.group(conds), field_noun(measure), field_noun(label)
    where = f" {lst.data.where}" if lst.data.where else ""
    if conds:
        templates = [
            f"Among the {subject}, what is the {asked} of the one with the {word} {field}?",
            f"Of the {subject}, find the one with the {word} {field} and give its {asked}.",
        ]
    else:
        templates = [
            f"What is the {asked} of the {lst.noun}{where} with the {word} {field}?",
            f"Find the {lst.noun}{where} with the {word} {field}: what is its {asked}?",
        ]
    return {"op": op, "conditions": conds, "measure": measure, "field": label, "answer": lst.data.short(label, str(_fields(best)[label]["raw"])), "record": best.id, "kind": "text", "visible": True, "instruction": _pick(rng, templates)}


def _difference(rng: np.random.Generator, lst: ListingGroups) -> dict[str, Any] | None:
    conds = _condition(rng, lst, set())
    if lst.measures and rng.random() < 0.5:
        measure = _pick(rng, lst.measures)
        values = [float(_fields(r)[measure]["value"]) for r in lst.matching(conds) if _fields(r).get(measure, {}).get("type") == "number"]
        if len(values) < 3 or max(values) == min(values):
            return None
        diff = round(max(values) - min(values), _decimals(values))
        value: float | int = int(diff) if float(diff).is_integer() else diff
        subject, field = lst.group(conds), field_noun(measure)
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
    na, nb = (sum(1 for r in group if holds(r, (label, "eq", v))) for v in (a, b))
    if na == nb:
        return None
    if na < nb:
        a, b, na, nb = b, a, nb, na
    kind, (ma, mb), subject = _contrast(lst, conds, label, a, b)
    if kind == "pre":
        templates = [f"How many more {ma} than {mb} {subject} does the site list?", f"By how many do the {ma} {subject} outnumber the {mb} ones?"]
    elif kind == "post" and not lst.group_parts(conds)[1]:
        templates = [f"How many more {subject} {ma} than those {mb} are there?", f"By how many do the {subject} {ma} outnumber those {mb}?"]
    elif kind == "post":
        templates = [f"Among the {subject}, how many more are there {ma} than {mb}?", f"Among the {subject}, by how many do those {ma} outnumber those {mb}?"]
    else:
        templates = [f"How many more {ma} than {mb} are there?", f"By how many do the {ma} outnumber the {mb}?"]
    return {"op": "count_difference", "conditions": conds, "field": label, "options": [a, b], "counts": [na, nb], "answer": str(na - nb), "value": na - nb, "kind": "number", "visible": False, "instruction": _pick(rng, templates)}


_MAKERS: list[Callable[[np.random.Generator, ListingGroups], dict[str, Any] | None]] = [_which, _count, _extreme, _difference]


def _shown_on(kg: KnowledgeGraph, record_id: str, start_url: str) -> str | None:
    """A crawled page (not an app state) other than the start page that shows the record: a listing page first, else its detail page."""
    record = kg.node(record_id)
    urls = {str(p.attrs.get("url")) for p in kg.nodes("page") if not p.attrs.get("state")}
    pages = [u for u in record.attrs.get("pages") or [] if u in urls and u != start_url]
    detail = record.attrs.get("detail_url")
    return pages[0] if pages else (str(detail) if detail in urls and detail != start_url else None)


def _task(kg: KnowledgeGraph, lst: ListingGroups, goal: dict[str, Any], start_url: str, seed: int) -> Task | None:
    """The task for ``goal``; its gold steps open the listing, or a page showing the answer record (None when none was crawled)."""
    listing = lst.data.node
    url = str(listing.attrs.get("url"))
    if goal.get("record") or goal.get("shown_by"):  # a text answer: open a page that shows it
        shown = _shown_on(kg, goal.get("record") or goal["shown_by"], start_url)
        if shown is None:
            return None
        url = shown
    page = next((p for p in kg.nodes("page") if p.attrs.get("url") == url), None)
    structured = {k: v for k, v in goal.items() if k not in ("instruction", "kind", "visible")}
    structured["conditions"] = [list(c) for c in goal["conditions"]]
    structured["listing"] = listing.id
    if lst.scope is not None:
        structured["scope"] = {"field": lst.scope.label, "value": lst.scope.value, "shared": lst.scope.shared}
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


def partial_fields_reason(data: ListingData) -> str:
    """Why a complete listing gives nothing to count: its fields are shown for some records only, or none groups them."""
    partial = sorted((st for st in data.stats.values() if not st.covers_all), key=lambda st: (-sum(st.types.values()), st.label))
    if not partial:
        return "no field groups the records (a category with a few values) or measures them (a number)"
    shown = ", ".join(f"{st.label!r} on {sum(st.types.values())}" for st in partial[:4])
    return f"no category or measure is shown for all {len(data.records)} records ({shown}; the rest were never read, e.g. detail pages not crawled)"


def _unusable(data: ListingData, listings: list[ListingData]) -> str | Scope | None:
    """Why the listing cannot be counted over; else its proven scope (a filtered listing) or None (the whole listing)."""
    if not data.node.attrs.get("complete"):
        return incomplete_reason(data.node)
    if (wider := wider_listing(data, listings)) is not None:
        return f"a part of the complete listing {wider} (every record of it is there, with others): counts over it are not what the site lists"
    scope = None
    if (field := filtered_on(data)) is not None and isinstance(scope := listing_scope(data, listings), str):
        return f"its URL filters on {field!r}: it holds only some of the records, and counts over it are not what the site lists ({scope})"
    if len(data.records) < _MIN_RECORDS:
        return f"only {len(data.records)} records; too few to compare"
    return scope


@generator(COMPARE_TEMPLATE, graph="web")
async def web_compare(request: GenerationRequest) -> Candidates:
    """Counts, which-of-two, max/min and differences over listings the crawl saw completely."""
    kg, seed = request.kg, request.seed
    pool = max(request.count, 8)  # every candidate costs a browser replay; the goal families share the count
    start = start_page(kg)
    skipped: list[dict[str, str]] = []
    tasks: list[Task] = []
    usable: list[ListingGroups] = []
    listings = listing_data(kg)
    for data in listings:
        why = _unusable(data, listings)
        if isinstance(why, str):
            skipped.append({"listing": data.node.id, "url": str(data.node.attrs.get("url")), "reason": why})
        elif not (found := ListingGroups(data, why)).categories and not found.measures:
            skipped.append({"listing": data.node.id, "url": str(data.node.attrs.get("url")), "reason": partial_fields_reason(data)})
        else:
            usable.append(found)
    groups: list[list[Task]] = []
    if start is not None and usable:
        usable.sort(key=lambda lst: (is_meta_listing(lst.data), -len(lst.data.records), lst.data.node.id))
        quotas = listing_quotas([lst.data for lst in usable], pool)
        for lst in usable:
            rng = np.random.default_rng([seed, int(hashlib.sha1(f"{kg.id}|{lst.data.node.id}".encode()).hexdigest()[:8], 16)])
            made: list[Task] = []
            quota = quotas[lst.data.node.id]
            for attempt in range(quota * 12):
                if len(made) >= quota:
                    break
                goal = _MAKERS[attempt % len(_MAKERS)](rng, lst)
                task = None if goal is None else _task(kg, lst, goal, str(start.attrs.get("url")), seed)
                if task is None or task.id in {t.id for t in made} or task.instruction in {t.instruction for t in made}:
                    continue
                made.append(task)
            groups.append(made)
    content = [g for g, lst in zip(groups, usable) if not is_meta_listing(lst.data)]
    tasks = interleave(content) + interleave([g for g, lst in zip(groups, usable) if is_meta_listing(lst.data)])
    request.report.generator = {
        "listings_used": [lst.data.node.id for lst in usable],
        "structure_listings": [lst.data.node.id for lst in usable if is_meta_listing(lst.data)],
        "skipped": skipped,
        "tasks": len(tasks),
    }
    return Candidates(tasks, {COMPARE_TEMPLATE: HOPS})
