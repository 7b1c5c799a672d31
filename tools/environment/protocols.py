"""What the environment is given rather than imports: a document source and a success checker.

The environment sits below graph-reading and evaluation: document episodes read a
task's graph through a :class:`DocumentSource`, and browser episodes check their
final state (and probe watched states) through a :class:`SuccessChecker`. The
runtime (:mod:`taskloom.tools.runtime`) passes implementations in: a graph-service
adapter and :class:`taskloom.tools.evaluate.checks.Checker`.
"""

from __future__ import annotations

from typing import Protocol

from playwright.async_api import Page
from pydantic import BaseModel, Field

from ..tasks.model import SuccessCriterion
from .trajectory import ActionRecord, CriterionResult

__all__ = ["DocHit", "DocNode", "DocumentSource", "SuccessChecker"]


class DocHit(BaseModel):
    """One search hit: a node id to read and a preview of its text."""

    node_id: str
    type: str
    score: float
    preview: str


class DocNode(BaseModel):
    """One node's text and where it sits in the document."""

    node_id: str
    type: str
    text: str
    section: str | None = Field(None, description="Id of the enclosing section or table, if any.")
    previous: str | None = Field(None, description="Previous node in reading order.")
    next: str | None = Field(None, description="Next node in reading order.")
    children: list[str] = Field(default_factory=list, description="Nodes this one contains (first 30).")


class DocumentSource(Protocol):
    """Search and read the nodes of one stored document graph (no gold is ever reachable through it)."""

    def ensure(self, graph_id: str) -> None:
        """Raise :class:`~taskloom.tools.errors.NotFoundError` when the graph is gone."""
        ...

    def search(self, graph_id: str, query: str, k: int) -> list[DocHit]:
        """The ``k`` nodes closest in meaning to ``query``; raises InputError on a bad query."""
        ...

    def read(self, graph_id: str, node_id: str) -> DocNode | None:
        """One node's text and its neighbours in reading order; None when the graph has no such node."""
        ...


class SuccessChecker(Protocol):
    """Machine checks of success criteria against a live page and the recorded actions."""

    async def check(self, page: Page, criteria: list[SuccessCriterion], actions: list[ActionRecord]) -> list[CriterionResult]:
        """Every criterion, checked on the page's current state and the actions."""
        ...

    async def probe(self, page: Page, criteria: list[SuccessCriterion]) -> list[str]:
        """Keys of the state criteria that hold on the page now."""
        ...

