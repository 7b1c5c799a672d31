"""``taskloom graph …``: list, inspect, search, sample, export and delete graphs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

from .common import echo_json, roots, run, settings

if TYPE_CHECKING:
    from ...tools.graph.service import GraphService

app = typer.Typer(help="Inspect and query knowledge graphs.", no_args_is_help=True)


def _service() -> GraphService:
    """The graph service alone: graph commands open no browser, and importing the whole Runtime cost ~0.6 s per call."""
    from ...tools.graph.service import GraphService

    return run(lambda: GraphService(settings()))


@app.command("list")
def list_graphs() -> None:
    """List graphs in the workspace."""
    echo_json(run(lambda: [m.model_dump(mode="json", exclude={"stats"}) for m in _service().list_graphs()]))


@app.command()
def stats(graph_id: str) -> None:
    """Node and edge counts by type."""
    echo_json(run(lambda: _service().stats(graph_id)))


@app.command()
def search(
    graph_id: str,
    query: str,
    k: int = typer.Option(10, "-k"),
    node_type: list[str] = typer.Option(None, "--type"),
    mode: Literal["hybrid", "vector", "lexical"] | None = typer.Option(None, "--mode", help="hybrid (default setting), vector or lexical."),
) -> None:
    """Search a graph's nodes: BM25 and embeddings fused by a weighted sum of normalised scores (or either alone)."""
    echo_json(run(lambda: _service().search(graph_id, query, k, node_type or None, mode)))


@app.command()
def node(graph_id: str, node_id: str) -> None:
    """Show one node in full."""
    echo_json(run(lambda: _service().node(graph_id, node_id)))


@app.command()
def neighbors(
    graph_id: str,
    node_id: str,
    hops: int = typer.Option(1, "--hops"),
    edge_type: list[str] = typer.Option(None, "--edge-type"),
    direction: Literal["out", "in", "both"] = typer.Option("both", "--direction"),
) -> None:
    """Nodes within some hops of a node."""
    echo_json(run(lambda: _service().neighbors(graph_id, node_id, hops, edge_type or None, direction)))


@app.command()
def path(graph_id: str, source: str, target: str, edge_type: list[str] = typer.Option(None, "--edge-type")) -> None:
    """A shortest path between two nodes."""
    echo_json(run(lambda: _service().path(graph_id, source, target, edge_type or None)))


@app.command()
def facts(
    graph_id: str,
    listing: str | None = typer.Option(None, "--listing", help="Only records of this listing (node id or URL)."),
    where: list[str] = typer.Option(None, "--where", help="FIELD=VALUE, e.g. --where Island=Dream (repeatable)."),
    query: str | None = typer.Option(None, "--query", "-q", help="Only records whose text contains this."),
    limit: int = typer.Option(50, "--limit"),
    offset: int = typer.Option(0, "--offset"),
) -> None:
    """Records of a web graph with their typed fields, and its listings with their completeness."""
    from ...tools.graph.facts import parse_where

    echo_json(run(lambda: _service().facts(graph_id, listing, parse_where(where), query, limit, offset)))


@app.command()
def sample(
    graph_id: str,
    objective: str | None = typer.Option(None, "--objective"),
    node_type: list[str] = typer.Option(None, "--type"),
    struct_type: list[str] = typer.Option(None, "--struct-type"),
    k_hops: int | None = typer.Option(None, "--hops", help="Default: 2 on web graphs, 1 on documents."),
    max_nodes: int = typer.Option(30, "--max-nodes"),
    seed: int = typer.Option(0, "--seed"),
    seed_node: list[str] = typer.Option(None, "--seed-node", help="Web mode: start from this node (repeatable)."),
) -> None:
    """Sample a subgraph (Graph2Eval Algorithm 1): by objective for documents, seed-driven k-hop for websites."""
    from ...tools.graph.sampling import SampleSpec

    service = _service()

    def go() -> dict[str, object]:
        spec = SampleSpec(
            objective=objective,
            node_types=node_type or None,
            struct_types=struct_type or None,
            tau=service.settings.similarity_threshold,
            k_hops=service.default_hops(graph_id) if k_hops is None else k_hops,
            max_nodes=max_nodes,
            seed=seed,
            seed_nodes=seed_node or None,
        )
        sub = service.sample(graph_id, spec)
        return {"nodes": [n.model_dump(mode="json") for n in sub.nodes()], "edges": [e.model_dump(mode="json") for e in sub.edges()]}

    echo_json(run(go))


@app.command()
def export(
    graph_id: str,
    fmt: Literal["json", "graphml"] = typer.Option("json", "--format", help="json or graphml"),
    output: Path | None = typer.Option(None, "--output", "-o"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the output file if it exists."),
) -> None:
    """Export a graph (to stdout, or a file with -o)."""
    from ...tools.graph.service import write_export

    target = None if output is None else run(lambda: roots(settings()).writable_file(output, "--output", overwrite))
    content = run(lambda: _service().export(graph_id, fmt))
    if target is None:
        typer.echo(content)
    else:
        run(write_export, target, content)
        typer.echo(str(target))


@app.command()
def delete(graph_id: str, yes: bool = typer.Option(False, "--yes", help="Do not ask.")) -> None:
    """Delete a graph and its embeddings."""
    if not yes:
        typer.confirm(f"Delete graph {graph_id}?", abort=True)
    run(lambda: _service().delete(graph_id))
    typer.echo(f"deleted {graph_id}")
