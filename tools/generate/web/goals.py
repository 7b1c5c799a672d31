"""The default web generator: every goal family on one graph, interleaved so no family crowds out the others.

The families (lookup, compare, find, change, view) are registered generators of their
own; this one asks each for candidates with the same request, keeps a family that fails
or finds nothing out of the way (its reason goes to the report), and deals the tasks out
round-robin in a fixed family order, so the first N kept tasks span the families.
"""

from __future__ import annotations

from dataclasses import replace

from ...tasks.model import Task
from ..filter.stages import GenerationReport
from ..registry import Candidates, GenerationRequest, generator, generators

__all__ = ["GOAL_FAMILIES", "web_goals", "why_empty"]

#: The goal families, in the order their tasks are dealt out.
GOAL_FAMILIES = ("web-lookup", "web-find", "web-change", "web-view", "web-compare")


@generator("web-goals", graph="web", default=True)
async def web_goals(request: GenerationRequest) -> Candidates:
    """Candidates from every goal family (see the module docstring); ``types`` picks families by task type."""
    per_family: dict[str, list[Task]] = {}
    hops: dict[str, int] = {}
    details: dict[str, object] = {}
    for name in GOAL_FAMILIES:
        if name not in generators.names():
            continue
        own = GenerationReport()
        found = await generators.get(name).factory(replace(request, report=own))
        wanted = [t for t in found.tasks if not request.types or t.type in request.types]
        per_family[name] = wanted
        hops.update(found.hops)
        entry: dict[str, object] = {"candidates": len(wanted), **({"details": own.generator} if own.generator else {})}
        if not wanted:
            entry["why"] = why_empty(own.generator)
        details[name] = entry
    tasks: list[Task] = []
    for round_ in range(max((len(v) for v in per_family.values()), default=0)):
        for name in GOAL_FAMILIES:
            family = per_family.get(name, [])
            if round_ < len(family):
                tasks.append(family[round_])
    request.report.generator = {"families": details}
    return Candidates(tasks, hops)


def why_empty(details: dict[str, object]) -> str:
    """One line saying why a family made no candidates, from what it reported (its skips, most common first).

    >>> why_empty({"skipped": [{"reason": "only 4 records; too few to compare"}, {"reason": "only 4 records; too few to compare"}]})
    'only 4 records; too few to compare (2)'
    >>> why_empty({"skipped": {"no identifying fields": 8, "no distinctive sentence": 13}})
    'no distinctive sentence (13); no identifying fields (8)'
    >>> why_empty({})
    'nothing in the graph this family works on'
    """
    counts: dict[str, int] = {}
    skipped = details.get("skipped")
    if isinstance(skipped, dict):
        counts = {str(k): int(v) for k, v in skipped.items() if isinstance(v, int) and v}
    elif isinstance(skipped, list):
        for item in skipped:
            reason = str(item.get("reason", "")) if isinstance(item, dict) else str(item)
            counts[reason] = counts.get(reason, 0) + 1
    if not counts:
        return "nothing in the graph this family works on" + (f" ({', '.join(f'{k}: {v}' for k, v in details.items() if isinstance(v, int))})" if details else "")
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return "; ".join(f"{reason} ({n})" for reason, n in ranked[:3]) + (f"; {len(ranked) - 3} more reasons" if len(ranked) > 3 else "")
