"""Floats in the section that first mentions them: a figure or table typeset pages later stays with its text.

A typesetter places figures and tables where they fit (the top of the next page, the end of a
chapter), so in reading order a float often lands under a later section than the one it
belongs to. A float that the text mentions ("Figure 11", resolved to it by
:func:`.links.link_references`) is moved, with its caption, under the section holding the
first mention in reading order, when that mention is at most :data:`DRIFT` pages away (a
float is placed near its first mention; a mention far away, say in an appendix, is a later
look back); a float no text mentions stays where it was read.
"""

from __future__ import annotations

from ..model import Edge, EdgeType, KnowledgeGraph, NodeType

__all__ = ["place_floats"]

_FLOATS = (NodeType.FIGURE, NodeType.TABLE)
#: How many pages a typesetter moves a float from its first mention, at most.
DRIFT = 3
_CONTAINERS = {NodeType.SECTION.value, NodeType.DOCUMENT.value}


def _reading_order(kg: KnowledgeGraph) -> dict[str, tuple[int, int]]:
    """Every block's (page, position along its ``next`` chain): the chain may be cut where blocks were merged."""
    after = {u: v for u, v, k in kg.g.edges(keys=True) if k == EdgeType.NEXT.value}
    starts = set(after) - set(after.values())
    order: dict[str, tuple[int, int]] = {}
    for node in sorted(starts):
        step = 0
        while node is not None and node not in order:
            source = kg.node(node).source
            order[node] = ((source.page or 0) if source else 0, step)
            node, step = after.get(node), step + 1
    return order


def _container(kg: KnowledgeGraph, node_id: str) -> str | None:
    return next((u for u, _, k in kg.g.in_edges(node_id, keys=True) if k == EdgeType.CONTAINS.value and kg.node_type(u) in _CONTAINERS), None)


def place_floats(kg: KnowledgeGraph) -> list[tuple[str, str, str]]:
    """Move mentioned floats (and their captions) under the section of their first mention; the moves as (float, from, to)."""
    order = _reading_order(kg)
    moves: list[tuple[str, str, str]] = []
    for node in list(kg.nodes(*_FLOATS)):
        mentions = [u for u, _, k in kg.g.in_edges(node.id, keys=True) if k == EdgeType.REFERS_TO.value and u in order]
        if not mentions:
            continue
        first = min(mentions, key=order.__getitem__)
        home, here = _container(kg, first), _container(kg, node.id)
        if home is None or here is None or home == here or abs(order[first][0] - (node.source.page or 0 if node.source else 0)) > DRIFT:
            continue
        captions = [u for u, _, k in kg.g.in_edges(node.id, keys=True) if k == EdgeType.CAPTION_OF.value and _container(kg, u) == here]
        for moved in (node.id, *captions):
            kg.g.remove_edge(here, moved, key=EdgeType.CONTAINS.value)
            kg.add_edge(Edge(source=home, target=moved, type=EdgeType.CONTAINS))
        moves.append((node.id, here, home))
    return moves
