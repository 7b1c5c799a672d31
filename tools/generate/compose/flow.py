"""Value flow over a site's records: the plans behind chained tasks and task graphs (information asymmetry).

A plan is a sequence of *steps* over one listing the crawl saw completely, each consuming
what an earlier one produced:

* **pick** — the record of a set with the highest or lowest value of a measure (a clear
  lead of 0.5 % over the runner-up); it produces that record, and the value of one of its
  category fields (the *flowing* field);
* **count** — the records sharing the flowing value of the last pick, narrowed by one more
  condition the picked record does not meet (so "the same island as X" never counts X);
  it produces that set and its size.

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

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ...graph.model import Node
from ..web.compare import Cond, ListingGroups, holds
from ..web.lookup import unique_key
from ..web.phrasing import field_noun, plural

__all__ = ["Pick", "Count", "Plan", "chain_plan", "two_branch_plan", "record_phrase", "set_phrase", "key_of", "MIN_SET", "MAX_SET", "LEAD"]

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
    """The records whose ``shared`` field equals the last pick's, and which meet ``extra``."""

    shared: str
    extra: Cond
    members: list[Node]


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


def _count(rng: np.random.Generator, groups: ListingGroups, pick: Pick, used: set[str], stated: set[str], hidden: set[str]) -> Count | None:
    """A set sharing a flowing category value with the picked record, narrowed by a condition the record fails.

    The flowing value is never one the instruction states (``stated``: the conditions so
    far), and the new condition never states a value the agent must discover (``hidden``:
    the values that flowed so far, and this one).
    """
    records = groups.data.records
    for index in rng.permutation(len(groups.categories)):
        shared = groups.categories[int(index)]
        value = _raw(pick.record, shared)
        if shared in used or not value or value in stated:
            continue
        same = [r for r in records if _raw(r, shared) == value]
        extras = [
            (label, "eq", raw)
            for label in groups.categories
            if label not in used and label != shared
            for raw in sorted(groups.data.stats[label].values)
            if raw != _raw(pick.record, label) and raw not in hidden | {value}
        ]
        for j in rng.permutation(len(extras)):
            extra: Cond = extras[int(j)]
            members = [r for r in same if holds(r, extra)]
            if MIN_SET <= len(members) <= MAX_SET and len(members) < len(same):
                pick.flows = shared
                return Count(shared, extra, members)
    return None


def chain_plan(groups: ListingGroups, rng: np.random.Generator, length: int) -> Plan:
    """Up to ``length`` steps pick, count, pick, …; ``plan.stopped`` names why a shorter plan stopped."""
    plan = Plan(groups)
    if not groups.measures or not groups.categories:
        plan.stopped = "the listing has no measure to pick by or no category whose value could flow on"
        return plan
    labels = groups.categories
    start_label = labels[int(rng.integers(len(labels)))]
    values = sorted(groups.data.stats[start_label].values)
    conds: list[Cond] = [(start_label, "eq", values[int(rng.integers(len(values)))])]
    first = _pick(rng, groups, groups.matching(conds), conds, set())
    if first is None:
        plan.stopped = "no measure has a clear highest or lowest record in the starting group"
        return plan
    plan.steps.append(first)
    shared: set[str] = set()  # a value never flows twice through one field (the set would repeat itself)
    avoid = {start_label}  # fields the picked record's group already fixes
    stated: set[str] = {str(conds[0][2])}
    hidden: set[str] = set()
    while len(plan.steps) < length:
        last = plan.steps[-1]
        if isinstance(last, Pick):
            follow = _count(rng, groups, last, shared | avoid, stated, hidden)
            if follow is None:
                plan.stopped = f"no follow-up consumes the value: no set of {MIN_SET} to {MAX_SET} records shares a category value with the picked record"
                break
            shared.add(follow.shared)
            avoid = {follow.shared, follow.extra[0]}
            stated.add(str(follow.extra[2]))
            hidden.add(_raw(last.record, follow.shared))
            plan.steps.append(follow)
        else:
            pick = _pick(rng, groups, last.members, [], set())
            if pick is None:
                plan.stopped = "no follow-up consumes the set: no measure has a clear highest or lowest record in it"
                break
            plan.steps.append(pick)
    return plan


def two_branch_plan(groups: ListingGroups, rng: np.random.Generator, min_gap: int = 3) -> tuple[Pick, Pick, Count, Count] | None:
    """Two picks from different starting groups whose flowing values differ, each followed by a count with one shared extra condition.

    The two counts must differ by ``min_gap`` or more, so "which has more" has one answer.
    """
    if not groups.measures or len(groups.categories) < 2:
        return None
    for index in rng.permutation(len(groups.categories)):
        start = groups.categories[int(index)]
        values = sorted(groups.data.stats[start].values)
        if len(values) < 2:
            continue
        pair = [values[int(i)] for i in rng.permutation(len(values))[:2]]
        a, b = (_pick(rng, groups, groups.matching([(start, "eq", v)]), [(start, "eq", v)], set()) for v in pair)
        if a is None or b is None:
            continue
        for shared in groups.categories:
            flowing = {_raw(a.record, shared), _raw(b.record, shared)}
            if shared == start or "" in flowing or len(flowing) == 1 or flowing & set(pair):
                continue  # the two values differ, and neither is stated as a starting group
            for label in groups.categories:
                if label in (start, shared):
                    continue
                for raw in sorted(groups.data.stats[label].values):
                    extra: Cond = (label, "eq", raw)
                    if holds(a.record, extra) or holds(b.record, extra) or raw in (_raw(a.record, shared), _raw(b.record, shared)):
                        continue
                    sets = [[r for r in groups.data.records if _raw(r, shared) == _raw(p.record, shared) and holds(r, extra)] for p in (a, b)]
                    if MIN_SET <= min(len(s) for s in sets) and max(len(s) for s in sets) <= MAX_SET and abs(len(sets[0]) - len(sets[1])) >= min_gap:
                        a.flows = b.flows = shared
                        return a, b, Count(shared, extra, sets[0]), Count(shared, extra, sets[1])
    return None


# ----------------------------------------------------------------------------- phrases


def set_phrase(groups: ListingGroups, conds: list[Cond], shared: str | None = None, source: str | None = None) -> str:
    """"female penguins" + " that have the same island as {source}" when a value flows in; "penguins" with no condition."""
    base = groups.group(conds) if conds else plural(groups.data.noun)
    return base if shared is None else f"{base} that have the same {field_noun(shared)} as {source}"


def record_phrase(groups: ListingGroups, pick: Pick, among: str | None) -> str:
    """"the penguin with the highest body mass among the Chinstrap penguins"."""
    word = "highest" if pick.op == "max" else "lowest"
    head = f"the {groups.data.noun} with the {word} {field_noun(pick.measure)}"
    return head if among is None else f"{head} among the {among}"


def key_of(groups: ListingGroups, record: Node) -> str | None:
    """What shows the record is on a page: a one-word value only it has in the listing (:func:`~..web.lookup.unique_key`)."""
    return unique_key(groups.data, record)
