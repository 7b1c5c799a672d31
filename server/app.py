"""build_server: compose the capability sub-servers, resources and prompts into one FastMCP server."""

from __future__ import annotations

import os

os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import FastMCP  # noqa: E402

from .. import __version__  # noqa: E402
from ..resources import register_resources  # noqa: E402
from ..tools.graph import mcp as graph_mcp  # noqa: E402
from ..tools.graph.service import GraphService  # noqa: E402
from ..tools.settings import Settings  # noqa: E402
from .errors import TaskloomErrors, quiet_expected_errors  # noqa: E402

__all__ = ["build_server", "INSTRUCTIONS"]

INSTRUCTIONS = """Taskloom turns documents into knowledge graphs (nodes: sections, headings, paragraphs,
tables and cells, figures, captions, formulas, footnotes, references, entities, chunks; edges:
next, contains, refers_to, caption_of, cites, mentions, semantic_similar).
Start with graph_ingest_document(path) or graph_list, then graph_search / graph_node /
graph_neighbors / graph_path / graph_sample_subgraph. Resources: taskloom://graphs,
taskloom://graphs/{graph_id}, taskloom://graphs/{graph_id}/nodes/{node_id}."""


def build_server(settings: Settings | None = None) -> FastMCP:
    """The Taskloom MCP server over one workspace.

    Each capability is a sub-server mounted under its namespace (``graph_*`` tools);
    resources are added at the top level; Taskloom errors are translated in one
    middleware and everything else is masked.
    """
    settings = settings or Settings()
    quiet_expected_errors()
    graphs = GraphService(settings)
    server = FastMCP("taskloom", instructions=INSTRUCTIONS, version=__version__, mask_error_details=True)
    server.add_middleware(TaskloomErrors())
    graph_server = FastMCP("taskloom-graph", mask_error_details=True)
    graph_mcp.register(graph_server, graphs)
    server.mount(graph_server, namespace="graph")
    register_resources(server, graphs)
    return server
