"""The graph capability as MCP tools: a thin layer over :class:`GraphService`.

Tools are registered without prefix on a sub-server that the server mounts under
the ``graph`` namespace, so ``ingest_document`` is seen as ``graph_ingest_document``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any, Literal

import anyio
import anyio.from_thread
from fastmcp import Context, FastMCP
from fastmcp.tools import ToolResult
from mcp.types import TextContent
from pydantic import BaseModel, Field, TypeAdapter

from ..security.mcp import within_roots
from ..security.roots import Roots, check_path_text
from .facts import FactsResult
from .ingest.fetch import is_url
from .ingest.pipeline import IngestReport
from .model import Edge, Node
from .sampling import SampleSpec
from .service import GraphService, NeighborHit, SearchHit, SearchMode, write_export
from .web.pipeline import WebIngestReport

__all__ = ["register", "GraphSummary", "Subgraph"]

# A search text is refused past this length at the schema: embedding a 1 MB query alone took seconds of CPU.
MAX_QUERY_CHARS = 10_000
GraphId = Annotated[str, Field(description="Id of a graph, as graph_list returns it.")]
NodeId = Annotated[str, Field(description="Id of a node, e.g. 'paragraph:12' or 'table:3/r1c2'.")]
NodeTypes = Annotated[list[str] | None, Field(description="Only nodes of these types, e.g. ['paragraph', 'table'].")]
EdgeTypes = Annotated[list[str] | None, Field(description="Only edges of these types, e.g. ['refers_to', 'next'].")]

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


class GraphSummary(BaseModel):
    """A stored graph, as listed."""

    graph_id: str
    name: str
    kind: str
    sources: list[str]
    created_at: str
    embedder: str | None
    nodes: int | None = None


class Subgraph(BaseModel):
    """A sampled subgraph: its nodes (text shortened) and induced edges."""

    nodes: list[Node]
    edges: list[Edge]
    stats: dict[str, Any] = Field(default_factory=dict)


class PathResult(BaseModel):
    """The edges of a shortest path, in order from source to target."""

    length: int
    edges: list[Edge]


class ExportResult(BaseModel):
    """An exported graph: written to ``path``, or inline in ``content``."""

    format: str
    path: str | None = None
    content: str | None = None
    chars: int


def _wrapped_list_schema(item: type[BaseModel]) -> dict[str, Any]:
    """The output schema fastmcp gives a tool returning ``list[item]``: ``{"result": [...]}``, definitions at the root."""
    schema = TypeAdapter(list[item]).json_schema()  # type: ignore[valid-type]
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {"type": "object", "properties": {"result": schema}, "required": ["result"], "x-fastmcp-wrap-result": True}
    return {**wrapped, "$defs": defs} if defs else wrapped


_LIST_SCHEMA = _wrapped_list_schema(GraphSummary)


def register(mcp: FastMCP, service: GraphService, roots: Roots) -> None:
    """Add the graph tools to ``mcp``; paths are confined to ``roots`` (plus the client's advertised roots)."""

    @mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True})  # path or http(s) URL
    async def ingest_document(
        path: Annotated[str, Field(description="Path of a PDF, HTML, Markdown or text file on the server's machine, or its http(s) URL.")],
        ctx: Context,
        name: Annotated[str | None, Field(description="Display name; defaults to the document's title.")] = None,
    ) -> IngestReport:
        """Build a knowledge graph from one document and embed its nodes.

        Reports progress per page, then per embedding batch. Ingesting the same file
        again replaces its graph (the id comes from the name and the file's hash).
        """

        def progress(done: float, total: float, message: str) -> None:
            anyio.from_thread.run(ctx.report_progress, done, total, message)

        source = path if is_url(check_path_text(path, "path")) else str(await within_roots(ctx, roots, lambda r: r.readable_file(path, "path")))
        return await anyio.to_thread.run_sync(lambda: service.ingest_document(source, name, progress))

    @mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True})
    async def ingest_website(
        start_url: Annotated[str, Field(description="Where the crawl starts (http/https).")],
        ctx: Context,
        max_pages: Annotated[int, Field(ge=1, le=2000, description="Most pages to store (app states found by clicking are counted apart).")] = 30,
        max_depth: Annotated[int, Field(ge=0, le=20, description="Most links followed from the start page (0: the start page only).")] = 3,
        allowed_domains: Annotated[list[str] | None, Field(description="Hosts the crawl may request: 'example.org' (and subdomains) on the start URL's scheme and port, 'host:port' for another port, or an exact origin 'http://host:port'; default: the start URL's origin.")] = None,
        contexts: Annotated[int, Field(ge=1, le=16, description="Browser contexts crawling in parallel (the pages kept do not depend on it).")] = 2,
        name: Annotated[str | None, Field(description="Display name; default: the first page's title.")] = None,
    ) -> WebIngestReport:
        """Crawl a website breadth-first in a real browser into a web knowledge graph.

        Stays inside the allowed domains (requests elsewhere are aborted), de-duplicates
        pages by URL and content, clicks buttons, tabs and menus to find dialogs and
        panels, and saves a screenshot and a set-of-marks screenshot per page. Reports
        progress per page.
        """

        async def report(done: float, total: float, message: str) -> None:
            await ctx.report_progress(done, total, message)

        pending: list[asyncio.Task[None]] = []

        def on_progress(done: float, total: float, message: str) -> None:
            pending.append(asyncio.get_running_loop().create_task(report(done, total, message)))

        result = await service.ingest_website(start_url, max_pages, max_depth, allowed_domains, contexts, name, on_progress)
        await asyncio.gather(*pending)
        return result

    @mcp.tool(name="list", annotations=READ_ONLY, output_schema=_LIST_SCHEMA)
    def list_graphs() -> ToolResult:
        """List the graphs in the workspace, oldest first."""
        graphs = [
            GraphSummary(
                graph_id=m.id,
                name=m.name,
                kind=m.kind,
                sources=m.sources,
                created_at=m.created_at,
                embedder=m.embedder,
                nodes=m.stats.get("nodes"),
            )
            for m in service.list_graphs()
        ]
        data = [g.model_dump(mode="json") for g in graphs]
        # an empty list would otherwise come back as no content at all: a text-only client must still read an answer
        text = json.dumps(data, ensure_ascii=False) if data else "[] (no graphs yet: ingest a document with graph_ingest_document or a website with graph_ingest_website)"
        return ToolResult(content=[TextContent(type="text", text=text)], structured_content={"result": data})

    @mcp.tool(annotations=READ_ONLY)
    def stats(graph_id: GraphId) -> dict[str, Any]:
        """Counts of a graph's nodes and edges by type, its pages and sources."""
        return service.stats(graph_id)

    @mcp.tool(annotations=READ_ONLY)
    async def search(
        graph_id: GraphId,
        query: Annotated[str, Field(max_length=MAX_QUERY_CHARS, description="Words to search for: by meaning and by exact terms.")],
        k: Annotated[int, Field(ge=1, le=100, description="How many hits.")] = 10,
        node_types: NodeTypes = None,
        mode: Annotated[
            SearchMode | None, Field(description="hybrid (BM25 fused with embeddings), vector (meaning only) or lexical (exact terms only); default: the server's setting.")
        ] = None,
    ) -> list[SearchHit]:
        """Search a graph's nodes: embeddings and BM25 fused by a weighted sum of normalised scores (or either alone)."""
        return await anyio.to_thread.run_sync(lambda: service.search(graph_id, query, k, node_types, mode))

    @mcp.tool(annotations=READ_ONLY)
    def node(graph_id: GraphId, node_id: NodeId) -> Node:
        """One node in full: type, text, attributes and source (file, page, bbox)."""
        return service.node(graph_id, node_id)

    @mcp.tool(annotations=READ_ONLY)
    def neighbors(
        graph_id: GraphId,
        node_id: NodeId,
        hops: Annotated[int, Field(ge=1, le=5, description="How many edges away a neighbour may be.")] = 1,
        edge_types: EdgeTypes = None,
        direction: Annotated[Literal["out", "in", "both"], Field(description="Follow edges leaving the node (out), reaching it (in), or both.")] = "both",
        limit: Annotated[int, Field(ge=1, le=500, description="Most neighbours returned, nearest first.")] = 50,
    ) -> list[NeighborHit]:
        """Nodes within ``hops`` of a node, nearest first, optionally along some edge types only."""
        return service.neighbors(graph_id, node_id, hops, edge_types, direction, limit)

    @mcp.tool(annotations=READ_ONLY)
    def path(
        graph_id: GraphId,
        source: NodeId,
        target: NodeId,
        edge_types: EdgeTypes = None,
        directed: Annotated[bool, Field(description="Follow edges only in their direction.")] = False,
    ) -> PathResult:
        """A shortest path between two nodes, as its edges."""
        edges = service.path(graph_id, source, target, edge_types, directed)
        return PathResult(length=len(edges), edges=edges)

    @mcp.tool(annotations=READ_ONLY)
    def facts(
        graph_id: GraphId,
        listing: Annotated[str | None, Field(description="Only records of this listing (its node id or URL, as returned under listings).")] = None,
        where: Annotated[dict[str, str] | None, Field(description="Field label → value, e.g. {'Island': 'Dream'}; labels ignore case and unit brackets, numbers compare by value.")] = None,
        query: Annotated[str | None, Field(description="Only records whose text contains this (case-insensitive).")] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="Most records returned.")] = 50,
        offset: Annotated[int, Field(ge=0, description="Records to skip first (for paging through them).")] = 0,
    ) -> FactsResult:
        """Records a crawled website shows (table rows, detail pages, cards) with typed fields, and its listings with their completeness.

        A listing is complete when every page of it was crawled (or its stated total
        equals the records seen); only then do counts over it hold for the whole site.
        A document graph has no records: the answer is empty, with a note.
        """
        return service.facts(graph_id, listing, where, query, limit, offset)

    @mcp.tool(annotations=READ_ONLY)
    async def sample_subgraph(
        graph_id: GraphId,
        objective: Annotated[str | None, Field(max_length=MAX_QUERY_CHARS, description="Task objective g; nodes with cosine > tau to it are taken.")] = None,
        node_types: NodeTypes = None,
        struct_types: Annotated[list[str] | None, Field(description="StructMatch: node types that match the objective structurally.")] = None,
        required_edge_types: EdgeTypes = None,
        tau: Annotated[float | None, Field(ge=-1, le=1, description="Cosine threshold; default from settings.")] = None,
        k_hops: Annotated[int | None, Field(ge=0, le=5, description="Hops of context; default 2 on web graphs, 1 on documents.")] = None,
        max_nodes: Annotated[int, Field(ge=1, le=500, description="Most nodes in the subgraph.")] = 30,
        seed: Annotated[int, Field(ge=0, description="Random seed: the same seed gives the same subgraph.")] = 0,
        seed_nodes: Annotated[list[str] | None, Field(description="Web mode: start from these nodes and take their k-hop neighbourhood. On a web graph without objective or seeds, a seed is drawn with `seed`.")] = None,
    ) -> Subgraph:
        """Sample a subgraph (Graph2Eval Algorithm 1): by objective and structure for documents, seed-driven k-hop for websites."""
        spec = SampleSpec(
            objective=objective,
            node_types=node_types,
            struct_types=struct_types,
            required_edge_types=required_edge_types,
            tau=service.settings.similarity_threshold if tau is None else tau,
            k_hops=service.default_hops(graph_id) if k_hops is None else k_hops,
            max_nodes=max_nodes,
            seed=seed,
            seed_nodes=seed_nodes,
        )
        sub = await anyio.to_thread.run_sync(lambda: service.sample(graph_id, spec))
        nodes = [n.model_copy(update={"text": n.text[:500]}) for n in sub.nodes()]
        return Subgraph(nodes=nodes, edges=list(sub.edges()), stats=sub.meta.stats)

    @mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False})
    async def export(
        graph_id: GraphId,
        ctx: Context,
        format: Annotated[Literal["json", "graphml"], Field(description="json: networkx node-link JSON; graphml: GraphML XML.")] = "json",
        path: Annotated[str | None, Field(description="Write to this file (inside the allowed roots) instead of returning the content.")] = None,
        overwrite: Annotated[bool, Field(description="Replace the file at path if it exists.")] = False,
    ) -> ExportResult:
        """Export a graph as node-link JSON or GraphML, inline or to a file."""
        target = None if path is None else await within_roots(ctx, roots, lambda r: r.writable_file(path, "path", overwrite))
        content = service.export(graph_id, format)
        if target is None:
            return ExportResult(format=format, content=content, chars=len(content))
        write_export(target, content)
        return ExportResult(format=format, path=str(target), chars=len(content))

    @mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False})
    async def delete(graph_id: GraphId) -> dict[str, str]:
        """Delete a graph and its embeddings. This cannot be undone."""
        await anyio.to_thread.run_sync(lambda: service.delete(graph_id))
        return {"deleted": graph_id}
