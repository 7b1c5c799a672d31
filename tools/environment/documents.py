"""Document episodes: an agent reads a document task's source through search and read actions, all recorded.

No browser is involved. ``doc_search`` runs a semantic search over the task's own
graph and ``doc_read`` returns one node's text with the ids of the nodes around it
(parent section, previous/next in reading order, children), so an agent can browse
as a reader would. Only the task's graph is reachable; gold answers and evidence ids
are never revealed.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, Field

from ..errors import InputError, NotFoundError
from ..graph.service import GraphService
from .canonical import canonical
from .trajectory import Recorder

__all__ = ["DocHit", "DocNode", "DocumentEpisode"]

_MAX_TEXT = 4000


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


class DocumentEpisode:
    """One agent's session on a document task: recorded searches and reads of one graph."""

    def __init__(self, episode_id: str, graph_id: str, graphs: GraphService, recorder: Recorder) -> None:
        self.id = episode_id
        self.graph_id = graph_id
        self.graphs = graphs
        self.recorder = recorder
        self.closed = False
        self.task: Any = None  # set by the manager; document tasks have no final-state checks

    def _record(self, name: str, args: dict[str, Any], form: str, t_start: float, error: str | None = None) -> None:
        self.recorder.action(name=name, args=args, canonical=form, t_start=t_start, t_end=time.time(), error=error)

    def search(self, query: str, k: int = 5) -> list[DocHit]:
        """The ``k`` nodes of the task's document closest in meaning to ``query``."""
        self.recorder.check_limit()
        t = time.time()
        form = canonical("search", text=query)
        try:
            hits = self.graphs.search(self.graph_id, query, k=k)
        except InputError as exc:
            self._record("search", {"query": query, "k": k}, form, t, str(exc))
            raise
        self._record("search", {"query": query, "k": k}, form, t)
        return [DocHit(node_id=h.node_id, type=h.type, score=round(h.score, 4), preview=" ".join(h.text.split())[:240]) for h in hits]

    def read(self, node_id: str) -> DocNode:
        """One node's full text (up to 4,000 characters) and its neighbours in the document."""
        self.recorder.check_limit()
        t = time.time()
        kg = self.graphs.load(self.graph_id)
        if node_id not in kg.g:
            self._record("read", {"node_id": node_id}, canonical("read", node=node_id), t, "no such node")
            raise NotFoundError(f"no node {node_id!r} in this document; use an id from doc_search or from a doc_read result")
        node = kg.node(node_id)
        out = [(v, key) for _, v, key in kg.g.out_edges(node_id, keys=True)]
        into = [(u, key) for u, _, key in kg.g.in_edges(node_id, keys=True)]
        self._record("read", {"node_id": node_id}, canonical("read", node=node_id, element=node.type.value), t)
        return DocNode(
            node_id=node_id,
            type=node.type.value,
            text=node.text[:_MAX_TEXT],
            section=next((u for u, key in sorted(into) if key == "contains"), None),
            previous=next((u for u, key in sorted(into) if key == "next"), None),
            next=next((v for v, key in sorted(out) if key == "next"), None),
            children=[v for v, key in sorted(out) if key == "contains"][:30],
        )
