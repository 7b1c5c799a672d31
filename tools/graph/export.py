"""Export a :class:`~taskloom.tools.graph.model.KnowledgeGraph` as JSON or GraphML text."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import networkx as nx

from taskloom.tools.errors import InputError
from taskloom.tools.graph.model import KnowledgeGraph

__all__ = ["FORMATS", "export_graph"]

FORMATS: tuple[str, ...] = ("json", "graphml")
"""The formats :func:`export_graph` writes."""

Scalar = str | int | float | bool

# Characters XML 1.0 forbids (PDF text can carry form feeds and other controls).
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def export_graph(kg: KnowledgeGraph, fmt: Literal["json", "graphml"]) -> str:
    """Serialise a graph as node-link JSON or as GraphML.

    ``json`` is :meth:`KnowledgeGraph.to_dict` dumped (UTF-8 text, indent 2); it loads
    back losslessly with ``KnowledgeGraph.from_dict(json.loads(text))``.

    ``graphml`` is written by :func:`networkx.generate_graphml` (directed, multigraph)
    after making every attribute a GraphML scalar:

    * ``str``, ``int``, ``float`` and ``bool`` values stay as they are;
    * ``None``, dicts, lists and tuples become JSON strings — so node ``attrs`` and
      ``source`` (its ``bbox`` tuple included) are JSON strings, e.g.
      ``{"file": "a.pdf", "page": 1, "bbox": [0.0, 0.0, 10.0, 5.0], ...}``;
    * when one attribute name has values of different kinds across the nodes (or the
      edges), the integers become floats if all are numbers, else every value of it
      becomes a string (non-strings as JSON), so each GraphML key has one type;
    * characters XML 1.0 forbids in text are replaced with U+FFFD.

    Each edge's id is its multigraph key (the edge type), so
    ``networkx.read_graphml(..., force_multigraph=True)`` restores the keys. The graph
    metadata (:class:`GraphMeta`) becomes graph-level data with the same rules; its
    ``id`` is both the ``<graph id=...>`` attribute and a ``graph_id`` data value.

    Parameters
    ----------
    kg : KnowledgeGraph
    fmt : {"json", "graphml"}

    Returns
    -------
    str

    Raises
    ------
    InputError
        An unknown format.

    Examples
    --------
    >>> import io, json
    >>> import networkx as nx
    >>> from taskloom.tools.graph.model import Edge, GraphMeta, Node, Source
    >>> kg = KnowledgeGraph(GraphMeta(id="g"))
    >>> kg.add_node(Node(id="a", type="paragraph", source=Source(page=1, bbox=(0, 0, 1, 1))))
    >>> kg.add_node(Node(id="b", type="table"))
    >>> kg.add_edge(Edge(source="a", target="b", type="refers_to"))
    >>> json.loads(export_graph(kg, "json"))["graph"]["id"]
    'g'
    >>> text = export_graph(kg, "graphml")
    >>> g = nx.read_graphml(io.BytesIO(text.encode()), force_multigraph=True)
    >>> list(g.edges(keys=True)), json.loads(g.nodes["a"]["source"])["bbox"]
    ([('a', 'b', 'refers_to')], [0.0, 0.0, 1.0, 1.0])
    """
    if fmt == "json":
        return json.dumps(kg.to_dict(), ensure_ascii=False, indent=2)
    if fmt == "graphml":
        return _graphml(kg)
    raise InputError(f"unknown export format {fmt!r}; use one of: {', '.join(FORMATS)}")


def _graphml(kg: KnowledgeGraph) -> str:
    out = nx.MultiDiGraph()
    meta = _scalars(kg.meta.model_dump(mode="json"))
    # networkx writes graph["id"] as the <graph id=...> attribute, which its reader
    # drops; ``graph_id`` keeps the id readable as data.
    out.graph.update({"graph_id": meta["id"], **meta})
    node_ids = [_text(str(n)) for n in kg.g]
    node_data = _harmonise(_scalars(d) for _, d in kg.g.nodes(data=True))
    for nid, data in zip(node_ids, node_data):
        out.add_node(nid, **data)
    edges = list(kg.g.edges(keys=True, data=True))
    edge_data = _harmonise(_scalars(d) for _, _, _, d in edges)
    for (u, v, key, _), data in zip(edges, edge_data):
        out.add_edge(_text(str(u)), _text(str(v)), key=_text(str(key)), **data)
    return "\n".join(nx.generate_graphml(out, encoding="utf-8", prettyprint=True)) + "\n"


def _text(value: str) -> str:
    return _XML_INVALID.sub("\ufffd", value)


def _scalar(value: Any) -> Scalar:
    """One GraphML-safe value: scalars as they are, everything else as JSON text."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (dict, list, tuple)) or value is None:
        return _text(json.dumps(value, ensure_ascii=False, default=str))
    return _text(str(value))


def _scalars(data: Mapping[str, Any]) -> dict[str, Scalar]:
    return {_text(str(k)): _scalar(v) for k, v in data.items()}


def _kind(value: Scalar) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "str"


def _harmonise(records: Iterable[dict[str, Scalar]]) -> list[dict[str, Scalar]]:
    """Give every attribute name a single GraphML type across the records."""
    rows = list(records)
    kinds: dict[str, set[str]] = {}
    floats: set[str] = set()
    for row in rows:
        for name, value in row.items():
            kinds.setdefault(name, set()).add(_kind(value))
            if isinstance(value, float):
                floats.add(name)
    for row in rows:
        for name, value in row.items():
            if len(kinds[name]) > 1:
                row[name] = value if isinstance(value, str) else json.dumps(value)
            elif name in floats and isinstance(value, int) and not isinstance(value, bool):
                row[name] = float(value)
    return rows
