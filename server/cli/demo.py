"""``taskloom demo``: the main job on the bundled examples.

Today: ingest the bundled documents (PDF, HTML, Markdown) with the real embedder and
show what the graphs hold — counts, a semantic search, resolved references — then
serve the bundled web app on 127.0.0.1, crawl it into a web graph, and generate
document and web tasks (web tasks verified by replay in a real browser).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import typer
from rich.table import Table

from ... import __file__ as package_file
from ...tools.errors import NotFoundError
from ...tools.environment.site import EXAMPLE_SITE, serve_static
from ...tools.graph.service import GraphService
from ...tools.generate.service import GenerateResult
from ...tools.graph.web.pipeline import WebIngestReport
from .common import console, errors, run, settings

EXAMPLES = Path(package_file).resolve().parent / "examples" / "documents"


def demo(
    examples: Path = typer.Option(EXAMPLES, "--examples", help="Folder of documents to ingest."),
    site: Path = typer.Option(EXAMPLE_SITE, "--site", help="Folder of the static web app to serve and crawl."),
    query: str = typer.Option("how often are the sensors calibrated?", "--query", help="Semantic search to run on each graph."),
) -> None:
    """Ingest the bundled documents and show their knowledge graphs."""
    service = run(lambda: GraphService(settings()))
    documents = sorted(p for p in examples.glob("*") if p.suffix.lower() in {".pdf", ".md", ".html"}) if examples.is_dir() else []
    if not documents:
        with errors():
            raise NotFoundError(f"no documents in {examples}; pass --examples DIR")
    summary = Table(title="Knowledge graphs built from the bundled documents")
    summary.add_column("document", no_wrap=True)
    for column in ("pages", "nodes", "edges", "refers_to", "caption_of", "cites", "s"):
        summary.add_column(column, justify="right")
    for path in documents:
        console.print(f"ingesting {path.name} …")
        report = run(service.ingest_document, path)
        summary.add_row(
            path.name,
            str(report.pages),
            str(report.nodes),
            str(report.edges),
            str(report.edge_types.get("refers_to", 0)),
            str(report.edge_types.get("caption_of", 0)),
            str(report.edge_types.get("cites", 0)),
            f"{sum(report.seconds.values()):.1f}",
        )
        console.print(f"  graph id {report.graph_id}")
        hits = run(service.search, report.graph_id, query, 2, ["paragraph", "table", "list", "caption"])
        for hit in hits:
            console.print(f"  search {query!r} → [{hit.type}] {hit.text[:90]} (cos {hit.score:.2f})")
        kg = service.load(report.graph_id)
        for edge in list(kg.edges("refers_to"))[:2]:
            target = kg.node(edge.target)
            console.print(f"  refers_to: {edge.attrs.get('label')!r} → {target.id}: {target.text[:60]!r}")
    console.print(summary)
    pdf_graph = next((g.id for g in service.list_graphs() if g.stats.get("format") == "pdf"), None)
    with serve_static(site) as served:
        console.print(f"crawling the example site at {served.url} …")
        web = run(anyio.run, _crawl, service, f"{served.url}/index.html")
        console.print(
            f"  web graph {web.graph_id}: {web.pages} pages, {web.nodes} nodes, {web.edges} edges "
            f"({', '.join(f'{k} {v}' for k, v in web.edge_types.items())}); {web.blocked} off-site requests blocked"
        )
        console.print("generating tasks (templates; web tasks are replayed in a real browser and kept only if they succeed) …")
        for graph_id, count in ((pdf_graph, 8), (web.graph_id, 5)):
            if graph_id is not None:
                result = run(anyio.run, _generate, service, graph_id, count)
                stages = ", ".join(f"{name} {v['kept']}/{v['in']}" for name, v in result.report.stages.items())
                console.print(f"  {result.kind} tasks from {graph_id}: kept {len(result.task_ids)} ({stages})")
    console.print(f"workspace: {service.workspace.root}  (try: taskloom graph list, taskloom serve)")


async def _generate(service: GraphService, graph_id: str, count: int) -> GenerateResult:
    from ...tools.environment.manager import EpisodeManager
    from ...tools.generate.service import TaskService

    episodes = EpisodeManager(service.browsers, service.workspace.runs / "episodes", service.workspace.tasks, screenshots=False)
    try:
        return await TaskService(service, episodes).generate(graph_id, count=count, seed=0)
    finally:
        await service.browsers.close()


async def _crawl(service: GraphService, url: str) -> WebIngestReport:
    try:
        return await service.ingest_website(url, max_pages=25, max_depth=3, contexts=2)
    finally:
        await service.browsers.close()
