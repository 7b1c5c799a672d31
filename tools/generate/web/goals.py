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

__all__ = ["GOAL_FAMILIES", "web_goals"]

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
        details[name] = {"candidates": len(wanted), **({"details": own.generator} if own.generator else {})}
    tasks: list[Task] = []
    for round_ in range(max((len(v) for v in per_family.values()), default=0)):
        for name in GOAL_FAMILIES:
            family = per_family.get(name, [])
            if round_ < len(family):
                tasks.append(family[round_])
    request.report.generator = {"families": details}
    return Candidates(tasks, hops)
