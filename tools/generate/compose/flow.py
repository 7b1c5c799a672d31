"""Value flow over a site's records: the plans behind chained tasks and task graphs (information asymmetry).

A plan is a sequence of *steps* over one listing the crawl saw completely, each consuming
what an earlier one produced:

* **pick** — the record of a set with the highest or lowest value of a measure (a clear
  lead of 0.5 % over the runner-up, or any gap between whole numbers); it produces that
  record, and the value of one of its fields (the *flowing* field);
* **count** — the records sharing the flowing value of the last pick (a category), or with
  a measure above or below the pick's, narrowed by one more condition the picked record
  does not meet (a category value, or a measure above or below a threshold; so "the same
  island as X" never counts X); it produces that set and its size.

Chains alternate pick → count → pick → …: "the penguin with the lowest flipper length
among the female penguins with the same island as the penguin with the highest body mass
among the Chinstrap penguins". Each step is easy for the generator, which knows every
intermediate value; the agent is told only the final description, so it must discover
them (AgentSynth's information asymmetry). Every phrase is built from the listing's own
field labels and values (:class:`~..web.compare.ListingGroups`), never from a site's words.

Graphs (OmniBench) join two independent picks through counts into one comparison; their
edges are the values that flow (:func:`two_branch_plan`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ...graph.model import Node
from ..web.compare import Cond, ListingGroups, holds
from ..web.lookup import unique_key
from ..web.phrasing import field_noun, plural

__all__ = ["Pick", "Count", "Plan", "chain_plan", "two_branch_plan", "pair_key", "extras", "record_phrase", "relation_phrase", "set_phrase", "key_of", "MIN_SET", "MAX_SET", "LEAD"]

#: A count step's set has at least this many records (else the follow-up is trivial).
MIN_SET = 3
#: ... and at most this many (counting them stays a task, not a chore).
MAX_SET = 40
#: A pick's record leads the runner-up by this fraction of its value.
LEAD = 0.005


@dataclass
class Pick:
    """The record of ``members`` with the ``op`` value of ``measure``; ``flows``: the category whose value the next step consumes."""

    members: list[Node]
    conds: list[Cond]  # the starting conditions (first pick only; later picks range over the previous count's set)
    measure: str
    op: Literal["max", "min"]
    record: Node
    flows: str | None = None


@dataclass
class Count:
    """The records whose ``shared`` field relates to the last pick's (``relation``: equal, or above or below a number), and which meet ``extra``."""

    shared: str
    extra: Cond
    members: list[Node]
    relation: Literal["eq", "gt", "lt"] = "eq"


Step = Pick | Count


@dataclass
class Plan:
    """Steps over one listing, in order; ``stopped`` says why the plan ended before the length asked for."""

    groups: ListingGroups
    steps: list[Step] = field(default_factory=list)
    stopped: str = ""


def _value(record: Node, label: str) -> Any:
    return record.attrs.get("fields", {}).get(label, {}).get("value")


def _raw(record: Node, label: str) -> str:
    return str(record.attrs.get("fields", {}).get(label, {}).get("raw") or "")


def _numbers(members: list[Node], measure: str) -> list[Node]:
    return [r for r in members if isinstance(_value(r, measure), (int, float)) and not isinstance(_value(r, measure), bool)]


def _extreme(members: list[Node], measure: str, op: str) -> Node | None:
    """The record with a clear lead on ``measure`` (None on a tie or near-tie, or with fewer than 3 values)."""
    ranked = sorted(_numbers(members, measure), key=lambda r: (float(_value(r, measure)), r.id), reverse=op == "max")
    if len(ranked) < 3:
        return None
    top, second = float(_value(ranked[0], measure)), float(_value(ranked[1], measure))
    if top.is_integer() and second.is_integer():
        return ranked[0] if top != second else None  # whole numbers (a year, a count) are shown exactly: any gap is a lead
    return ranked[0] if abs(top - second) >= LEAD * max(abs(top), 1e-9) else None


def _pick(rng: np.random.Generator, groups: ListingGroups, members: list[Node], conds: list[Cond], avoid: set[str]) -> Pick | None:
    """A pick over ``members`` by a seeded measure and direction whose record leads clearly."""
    for index in rng.permutation(len(groups.measures)):
        measure = groups.measures[int(index)]
        if measure in avoid:
            continue
        op: Literal["max", "min"] = "max" if rng.random() < 0.5 else "min"
        for direction in (op, "min" if op == "max" else "max"):
            record = _extreme(members, measure, direction)
            if record is not None:
                return Pick(members, conds, measure, direction, record)  # type: ignore[arg-type]
    return None


def _thresholds(members: list[Node], measure: str) -> list[tuple[float, float]]:
    """Conditions on a number at a quarter, half and three quarters of its distinct values in ``members``.

    Each is ``(above, below)``: the roundest number that splits the values there as "above" and
    as "below" says it (the same records meet "above 4,000" and "above 4,012.5" when no value
    lies between them).

    >>> from taskloom.tools.graph.model import Node
    >>> rows = [Node(id=str(v), type="record", attrs={"fields": {"m": {"value": v}}}) for v in (-26.69543, -25.83352, -25.49523, -24.1, -23.9)]
    >>> _thresholds(rows, "m")
    [(-25.8, -26.0), (-25.0, -25.5), (-24.0, -25.0)]
    """
    values = sorted({float(_value(r, measure)) for r in _numbers(members, measure)})
    if len(values) < 4:
        return []
    out = []
    for i in sorted({len(values) * q // 4 for q in (1, 2, 3)}):
        out.append((_round_between(values[i], values[i + 1] if i + 1 < len(values) else None, up=True), _round_between(values[i], values[i - 1], up=False)))
    return out


def _round_between(value: float, other: float | None, up: bool) -> float:
    """The roundest number from ``value`` towards ``other`` (not reaching it): "above" it keeps the records above ``value``, "below" those below."""
    for digits in range(0, 7):
        scale = 10.0**digits
        rounded = (math.ceil(value * scale) if up else math.floor(value * scale)) / scale
        if other is None or (rounded < other if up else rounded > other):
            return round(rounded, digits)
    return value


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def extras(groups: ListingGroups, records: list[Node], used: set[str], hidden: set[str]) -> list[Cond]:
    """Conditions none of ``records`` meets: a category = one of its values, or a measure above or below a threshold.

    Never on a field in ``used``, never stating a value in ``hidden`` (what the agent must discover).
    """
    out: list[Cond] = [
        (label, "eq", raw)
        for label in groups.categories
        if label not in used
        for raw in sorted(groups.data.stats[label].values)
        if raw not in hidden and not any(holds(r, (label, "eq", raw)) for r in records)
    ]
    own = {_raw(r, label) for r in records for label in groups.measures}  # "above 2010" would state the picked book's own year
    for label in groups.measures:
        if label in used:
            continue
        for above, below in _thresholds(groups.data.records, label):
            for op, threshold in (("gt", above), ("lt", below)):
                cond: Cond = (label, op, _number(threshold))
                if str(_number(threshold)) not in hidden | own and not any(holds(r, cond) for r in records):
                    out.append(cond)
    return out


def _related(records: list[Node], record: Node, label: str, relation: str) -> list[Node]:
    """The records whose ``label`` equals ``record``'s (eq), or lies above (gt) or below (lt) it."""
    if relation == "eq":
        value = _raw(record, label)
        return [r for r in records if _raw(r, label) == value]
    mine = _value(record, label)
    return [r for r in _numbers(records, label) if (float(_value(r, label)) > mine if relation == "gt" else float(_value(r, label)) < mine)]


def _count(rng: np.random.Generator, groups: ListingGroups, pick: Pick, used: set[str], stated: set[str], hidden: set[str]) -> Count | None:
    """A set related to the picked record by one field, narrowed by a condition the record fails.

    The relation is "the same category value" (the flowing value is never one the instruction
    states: ``stated``, the conditions so far) or "a measure above or below the record's"; the
    new condition never states a value the agent must discover (``hidden``: the values that
    flowed so far, and this one).
    """
    records = groups.data.records
    ways: list[tuple[str, Literal["eq", "gt", "lt"]]] = [(lb, "eq") for lb in groups.categories]
    ways += [(lb, op) for lb in groups.measures if isinstance(_value(pick.record, lb), (int, float)) for op in ("gt", "lt")]  # type: ignore[misc]
    for index in rng.permutation(len(ways)):
        shared, relation = ways[int(index)]
        value = _raw(pick.record, shared)
        if shared in used or not value or value in stated:
            continue
        same = _related(records, pick.record, shared, relation)
        options = extras(groups, [pick.record], used | {shared}, hidden | {value})
        for j in rng.permutation(len(options)):
            extra: Cond = options[int(j)]
            members = [r for r in same if holds(r, extra)]
            meeting = sum(1 for r in records if holds(r, extra))
            if MIN_SET <= len(members) <= MAX_SET and len(members) < min(len(same), meeting):  # both the relation and the condition narrow the set
                pick.flows = shared
                return Count(shared, extra, members, relation)
    return None


#: Starting groups a chain tries before it settles for the longest plan it found.
STARTS = 12


def chain_plan(groups: ListingGroups, rng: np.random.Generator, length: int, avoid: set[str] | None = None) -> Plan:
    """Up to ``length`` steps pick, count, pick, …; ``plan.stopped`` names why a shorter plan stopped.

    Starting groups (a category's value) are tried in a seeded order, up to :data:`STARTS` of
    them, until one gives ``length`` steps; else the longest plan found is kept (the first of
    equals). ``avoid``: first picks already used by other chains (record ids), not started from again.
    """
    if not groups.measures or not groups.categories:
        return Plan(groups, stopped="the listing has no measure to pick by or no category whose value could flow on")
    starts = [(label, value) for label in groups.categories for value in sorted(groups.data.stats[label].values)]
    best: Plan | None = None
    for index in rng.permutation(len(starts))[:STARTS]:
        plan = _plan_from(groups, rng, length, *starts[int(index)])
        if plan.steps and avoid and plan.steps[0].record.id in avoid:  # type: ignore[union-attr]
            continue
        if best is None or len(plan.steps) > len(best.steps):
            best = plan
        if len(best.steps) >= length:
            break
    return best or Plan(groups, stopped="every starting group's first record was used by another chain")


def _plan_from(groups: ListingGroups, rng: np.random.Generator, length: int, start_label: str, start_value: str) -> Plan:
    plan = Plan(groups)
    conds: list[Cond] = [(start_label, "eq", start_value)]
    first = _pick(rng, groups, groups.matching(conds), conds, set())
    if first is None:
        plan.stopped = "no measure has a clear highest or lowest record in the starting group"
        return plan
    plan.steps.append(first)
    shared: set[str] = set()  # a value never flows twice through one field (the set would repeat itself)
    avoid = {start_label}  # fields the picked record's group already fixes
    stated: set[str] = {str(conds[0][2])}
    hidden: set[str] = {_raw(first.record, m) for m in groups.measures}  # a picked record's numbers may name it: no condition states them
    while len(plan.steps) < length:
        last = plan.steps[-1]
        if isinstance(last, Pick):
            follow = _count(rng, groups, last, shared | avoid, stated, hidden)
            if follow is None:
                plan.stopped = f"no follow-up consumes the value: no set of {MIN_SET} to {MAX_SET} records shares a category value with the picked record or lies above or below one of its numbers"
                break
            if follow.relation == "eq":
                shared.add(follow.shared)  # a number may flow again, compared with another record's
            avoid = {follow.shared}  # the next count relates the next pick by another field (its condition's field may come back with another value)
            stated.add(str(follow.extra[2]))
            hidden.add(_raw(last.record, follow.shared))
            plan.steps.append(follow)
        else:
            pick = _pick(rng, groups, last.members, [], set())
            if pick is None:
                plan.stopped = "no follow-up consumes the set: no measure has a clear highest or lowest record in it"
                break
            plan.steps.append(pick)
            hidden |= {_raw(pick.record, m) for m in groups.measures}
    return plan


def two_branch_plan(groups: ListingGroups, rng: np.random.Generator, min_gap: int = 3, avoid: set[str] | None = None) -> tuple[Pick, Pick, Count, Count] | None:
    """Two picks from different starting groups whose flowing values differ, each followed by a count with one shared extra condition.

    The two counts must differ by ``min_gap`` or more, so "which has more" has one answer; the
    flowing field has three values or more (with two, counting both answers without the picks).
    Pairs of starting values are tried in a seeded order (up to :data:`STARTS` per category);
    ``avoid``: pairs of picked records (:func:`pair_key`) other graphs already use.
    """
    if not groups.measures or len(groups.categories) < 2:
        return None
    for index in rng.permutation(len(groups.categories)):
        start = groups.categories[int(index)]
        values = sorted(groups.data.stats[start].values)
        if len(values) < 2:
            continue
        pairs = [(values[i], values[j]) for i in range(len(values)) for j in range(i + 1, len(values))]
        for p in rng.permutation(len(pairs))[:STARTS]:
            found = _branches(rng, groups, start, list(pairs[int(p)]), min_gap, avoid or set())
            if found is not None:
                return found
    return None


def pair_key(a: Pick, b: Pick) -> str:
    """Two picks' records, in either order."""
    return "|".join(sorted((a.record.id, b.record.id)))


def _branches(rng: np.random.Generator, groups: ListingGroups, start: str, pair: list[str], min_gap: int, avoid: set[str]) -> tuple[Pick, Pick, Count, Count] | None:
    a, b = (_pick(rng, groups, groups.matching([(start, "eq", v)]), [(start, "eq", v)], set()) for v in pair)
    if a is None or b is None or pair_key(a, b) in avoid:
        return None
    for shared in groups.categories:
        flowing = {_raw(a.record, shared), _raw(b.record, shared)}
        if shared == start or "" in flowing or len(flowing) == 1 or flowing & set(pair):
            continue  # the two values differ, and neither is stated as a starting group
        if groups.data.stats[shared].distinct < 3:
            continue  # with two values, "which has more" is answered by counting both, without the picks
        for extra in extras(groups, [a.record, b.record], {start, shared}, flowing):
            sets = [[r for r in groups.data.records if _raw(r, shared) == _raw(p.record, shared) and holds(r, extra)] for p in (a, b)]
            if MIN_SET <= min(len(s) for s in sets) and max(len(s) for s in sets) <= MAX_SET and abs(len(sets[0]) - len(sets[1])) >= min_gap:
                a.flows = b.flows = shared
                return a, b, Count(shared, extra, sets[0]), Count(shared, extra, sets[1])
    return None


# ----------------------------------------------------------------------------- phrases


def relation_phrase(shared: str, relation: str, source: str | None) -> str:
    """"have the same island as {source}", or "have a body mass above that of {source}"."""
    if relation == "eq":
        return f"have the same {field_noun(shared)} as {source}"
    return f"have a {field_noun(shared)} {'above' if relation == 'gt' else 'below'} that of {source}"


def set_phrase(groups: ListingGroups, conds: list[Cond], shared: str | None = None, source: str | None = None, relation: str = "eq") -> str:
    """"female penguins" + " that have the same island as {source}" when a value flows in; "penguins" with no condition."""
    base = groups.group(conds) if conds else plural(groups.data.noun)
    return base if shared is None else f"{base} that {relation_phrase(shared, relation, source)}"


def record_phrase(groups: ListingGroups, pick: Pick, among: str | None) -> str:
    """"the penguin with the highest body mass among the Chinstrap penguins"."""
    word = "highest" if pick.op == "max" else "lowest"
    head = f"the {groups.data.noun} with the {word} {field_noun(pick.measure)}"
    return head if among is None else f"{head} among the {among}"


def key_of(groups: ListingGroups, record: Node) -> str | None:
    """What shows the record is on a page: a one-word value only it has in the listing (:func:`~..web.lookup.unique_key`)."""
    return unique_key(groups.data, record)
