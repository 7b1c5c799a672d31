"""Document episodes: an agent reads a document task's source through search and read actions, all recorded.

No browser is involved. ``doc_search`` runs a semantic search over the task's own
graph and ``doc_read`` returns one node's text (both through the
:class:`~taskloom.tools.environment.protocols.DocumentSource` the runtime gives) with the ids of the nodes around it
(parent section, previous/next in reading order, children), so an agent can browse
as a reader would. Only the task's graph is reachable; gold answers and evidence ids
are never revealed.
"""

from __future__ import annotations

import time
from typing import Any

from ..errors import InputError, NotFoundError
from ..tasks.model import Task
from .canonical import canonical
from .protocols import DocHit, DocNode, DocumentSource
from .trajectory import Recorder

__all__ = ["DocHit", "DocNode", "DocumentEpisode"]


class DocumentEpisode:
    """One agent's session on a document task: recorded searches and reads of one graph."""

    def __init__(self, episode_id: str, graph_id: str, source: DocumentSource, recorder: Recorder) -> None:
        self.id = episode_id
        self.graph_id = graph_id
        self.source = source
        self.recorder = recorder
        self.closed = False
        self.task: Task | None = None  # set by the manager; document tasks have no final-state checks

    def _record(self, name: str, args: dict[str, Any], form: str, t_start: float, error: str | None = None) -> None:
        self.recorder.action(name=name, args=args, canonical=form, t_start=t_start, t_end=time.time(), error=error)

    def search(self, query: str, k: int = 5) -> list[DocHit]:
        """The ``k`` nodes of the task's document closest in meaning to ``query``."""
        self.recorder.check_limit()
        t = time.time()
        form = canonical("search", text=query)
        try:
            hits = self.source.search(self.graph_id, query, k)
        except InputError as exc:
            self._record("search", {"query": query, "k": k}, form, t, str(exc))
            raise
        self._record("search", {"query": query, "k": k}, form, t)
        return hits

    def read(self, node_id: str) -> DocNode:
        """One node's full text (up to 4,000 characters) and its neighbours in the document."""
        self.recorder.check_limit()
        t = time.time()
        node = self.source.read(self.graph_id, node_id)
        if node is None:
            self._record("read", {"node_id": node_id}, canonical("read", node=node_id), t, "no such node")
            raise NotFoundError(f"no node {node_id!r} in this document; use an id from doc_search or from a doc_read result")
        self._record("read", {"node_id": node_id}, canonical("read", node=node_id, element=node.type), t)
        return node
