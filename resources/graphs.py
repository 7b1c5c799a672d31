"""Graph resources: ``taskloom://graphs``, ``…/graphs/{graph_id}``, ``…/graphs/{graph_id}/nodes/{node_id}``."""

from __future__ import annotations

import json

from fastmcp import FastMCP

from ..tools.graph.service import GraphService

__all__ = ["register"]


def register(mcp: FastMCP, service: GraphService) -> None:
    """Add the graph resources to ``mcp``."""

    @mcp.resource("taskloom://graphs", mime_type="application/json")
    def graphs() -> str:
        """All graphs in the workspace: id, name, kind, sources, created_at."""
        return json.dumps([m.model_dump(mode="json", exclude={"stats"}) for m in service.list_graphs()])

    @mcp.resource("taskloom://graphs/{graph_id}", mime_type="application/json")
    def graph(graph_id: str) -> str:
        """One graph's metadata and statistics."""
        return json.dumps(service.stats(graph_id))

    @mcp.resource("taskloom://graphs/{graph_id}/nodes/{node_id*}", mime_type="application/json")
    def node(graph_id: str, node_id: str) -> str:
        """One node of a graph in full (ids may contain '/', e.g. table:3/r1c2)."""
        return service.node(graph_id, node_id).model_dump_json()
