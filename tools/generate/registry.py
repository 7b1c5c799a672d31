"""The task generator registry: one decorated async function per task family.

A generator turns a :class:`GenerationRequest` (the graph, how many tasks, types,
difficulty, seed, the LLM when one is on, the embedder) into :class:`Candidates`:
candidate tasks and, per template or pattern id, the hop budget the reachability
filter allows. The shared stages (reachability, replay, LLM score, de-duplication,
coverage) run after it in :meth:`~taskloom.tools.generate.service.TaskService.generate`.

``@generator("name", graph="document", llm=False, default=True)``: ``graph`` is the
graph kind it works on, ``llm`` whether it needs an LLM (True), must run without
one (False) or either (None), and ``default`` makes it the family used for that
graph kind when none is named. Taskloom's own live in ``document/``, ``web/`` and ``desktop/``;
another package adds one through the ``taskloom.generators`` entry point group.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple, TypeVar

from ..errors import InputError
from ..graph.model import KnowledgeGraph
from ..llm.client import LLM
from ..llm.embedders import Embedder
from ..registry import Registry
from ..settings import Settings
from ..tasks.model import Task
from .filter.stages import GenerationReport

__all__ = ["GenerationRequest", "Candidates", "Generator", "generators", "generator", "pick_generator"]


@dataclass(frozen=True)
class GenerationRequest:
    """What a generator gets: the graph and the caller's choices."""

    kg: KnowledgeGraph
    count: int
    types: list[str] | None
    difficulty: str | None
    seed: int
    llm: LLM | None  # None when no LLM is on for this generation
    embedder: Embedder
    settings: Settings
    report: GenerationReport  # the generator fills report.generator with its own details


class Candidates(NamedTuple):
    """Candidate tasks, and the hop budget per template or pattern id for the reachability filter."""

    tasks: list[Task]
    hops: dict[str, int]


Generator = Callable[[GenerationRequest], Awaitable[Candidates]]
F = TypeVar("F", bound=Generator)

#: Task generators by name.
generators: Registry[Awaitable[Candidates]] = Registry(
    "generator", modules=("taskloom.tools.generate.document", "taskloom.tools.generate.web", "taskloom.tools.generate.desktop"), label="task generator"
)


def generator(name: str, *, graph: Literal["document", "web", "desktop"] | None = None, llm: bool | None = None, default: bool = False) -> Callable[[F], F]:
    """Register a generator ``async (request) -> Candidates`` under ``name`` (see the module notes)."""
    return generators.register(name, graph=graph, llm=llm, default=default)


def pick_generator(graph_kind: str, llm_on: bool, name: str | None = None) -> str:
    """The generator to use: ``name`` when given (checked against the graph kind), else the default for the graph kind."""
    if name is not None:
        made_for = generators.get(name).meta.get("graph")
        if made_for is not None and made_for != graph_kind:
            raise InputError(f"task generator {name!r} makes {made_for} tasks, and this is a {graph_kind} graph; pick one of {', '.join(generators.names())}")
        return name
    for entry in generators.entries():
        meta = entry.meta
        if meta.get("default") and meta.get("graph") == graph_kind and meta.get("llm") in (None, llm_on):
            return entry.name
    raise InputError(f"no default task generator for {graph_kind} graphs; name one of {', '.join(generators.names())}")
