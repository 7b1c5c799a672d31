"""``taskloom demo``: the main job on the bundled examples, with no LLM needed.

1. Ingest the bundled documents (PDF, HTML, Markdown) with the real embedder and show
   what the graphs hold — counts, a semantic search, resolved references.
2. Serve the bundled web app on 127.0.0.1 and crawl it into a web graph.
3. Generate document tasks and web tasks (each web task verified by replay), then
   compose chained long tasks and task DAGs from the verified web tasks.
4. Run the oracle and two non-LLM explorers (plus the builtin LLM agent when an LLM is
   configured) on every task, evaluate, build a consensus graph per task, write the
   HTML report and print where it is.
5. Desktop tasks (when Xvfb, openbox, pcmanfm and mousepad are installed): generate a few
   per application (each gold replayed in a fresh session) and run the oracle on them.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from ... import __file__ as package_file
from ...harness.finish import RunReport, family_of
from ..app import build_server
from ...harness.service import Harness
from ...tools.errors import NotFoundError
from ...tools.evaluate.model import EpisodeResult
from ...tools.evaluate.summary import terminal_summary
from ...tools.environment.site import EXAMPLE_SITE, serve_static
from ...tools.runtime import Runtime
from ...tools.generate.service import GenerateResult
from ...tools.tasks.model import Task
from ...tools.graph.web.pipeline import WebIngestReport
from .common import console, errors, progress_bar, quiet_agent_errors, run, settings
from .demo_desktop import desktop_demo

EXAMPLES = Path(package_file).resolve().parent / "examples" / "documents"


def demo(
    examples: Path = typer.Option(EXAMPLES, "--examples", help="Folder of documents to ingest."),
    site: Path = typer.Option(EXAMPLE_SITE, "--site", help="Folder of the static web app to serve and crawl."),
    query: str = typer.Option("how often are the sensors calibrated?", "--query", help="Semantic search to run on each graph."),
    doc_tasks: int = typer.Option(6, "--doc-tasks", help="Document tasks to generate from the PDF."),
    web_tasks: int = typer.Option(5, "--web-tasks", help="Web tasks to run agents on (three times as many are generated to compose from)."),
    concurrency: int = typer.Option(2, "--concurrency", "-j", min=1, max=16, help="Episodes at once."),
    desktop_tasks: int = typer.Option(2, "--desktop-tasks", min=0, help="Desktop tasks per application (pcmanfm, mousepad) to generate and run the oracle on; 0: none."),
) -> None:
    """The main job on the bundled examples: graphs, tasks, composites, agents, evaluation, consensus graphs, report."""
    runtime = run(lambda: Runtime(settings()))
    service = runtime.graphs
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
        web = run(runtime.run, _crawl, runtime, f"{served.url}/index.html")
        console.print(
            f"  web graph {web.graph_id}: {web.pages} pages, {web.nodes} nodes, {web.edges} edges "
            f"({', '.join(f'{k} {v}' for k, v in web.edge_types.items())}); {web.blocked} off-site requests blocked"
        )
        console.print("generating and composing tasks (templates; every web task is replayed in a real browser and kept only if it succeeds) …")
        task_ids = run(runtime.run, _tasks, runtime, pdf_graph, web.graph_id, doc_tasks, web_tasks)
        agents = ["oracle", "explorer", "explorer:seed=1,explore=0.4,name=wanderer", "word-match"]
        if service.settings.llm_backend == "openai":
            agents.append("builtin")
        console.print(f"running {', '.join(a.split(':')[0] if ':' not in a else a.rsplit('name=', 1)[-1] for a in agents)} on {len(task_ids)} tasks …")
        outcome = _run(runtime, task_ids, agents, concurrency)
    typer.echo(terminal_summary(outcome.summary))
    typer.echo("success by task family:\n" + outcome.family_text())
    console.print(f"report: {outcome.html}")
    if desktop_tasks:
        desktop_demo(runtime, desktop_tasks)
    console.print(f"workspace: {service.workspace.root}  (try: taskloom report {outcome.run_id}, taskloom serve)")


async def _tasks(runtime: Runtime, doc_graph: str | None, web_graph: str, doc_count: int, web_count: int) -> list[str]:
    """Document and web tasks, then chained long tasks and task DAGs composed from the verified web tasks (browser closed by ``runtime.run``)."""
    tasks = runtime.task_service(runtime.episode_manager(screenshots=False))
    ids: list[str] = []
    for graph_id, count in ((doc_graph, doc_count), (web_graph, 3 * web_count)):
        if graph_id is None:
            continue
        result: GenerateResult = await tasks.generate(graph_id, count=count, seed=0)
        stages = ", ".join(f"{name} {v['kept']}/{v['in']}" for name, v in result.report.stages.items())
        console.print(f"  {result.kind} tasks from {graph_id}: kept {len(result.task_ids)} ({stages})")
        ids += result.task_ids[:web_count] if result.kind == "web" else result.task_ids  # all verified web tasks feed composition
        if result.kind == "web":
            _show_families([runtime.tasks.load(i) for i in result.task_ids])
    chains = await tasks.compose(web_graph, "chain", count=2, levels=4, seed=0)
    if not chains.task_ids:  # no value can flow on this site: say why, then chain its verified tasks along click paths
        console.print(f"  value-flow chains: none ({chains.reason or 'the composer gave no reason'}); composing click-path chains (--mode walk) instead",
                      highlight=False, markup=False)
        chains = await tasks.compose(web_graph, "walk", count=2, levels=4, seed=0)
    levels = ", ".join(f"level {row.level}: {row.tasks} task(s), {row.mean_steps:.1f} steps, {row.mean_pages:.1f} pages" for row in chains.levels)
    console.print(f"  chained tasks ({chains.mode}): {len(chains.task_ids)} ({levels})")
    for stop in chains.chains:
        console.print(f"    chain {stop.chain}: {stop.reached} level(s); stopped: {stop.stopped}", highlight=False, markup=False)
    dags = await tasks.compose(web_graph, "dag", count=2, seed=0)
    if not dags.task_ids:
        console.print(f"  value-flow task graphs: none ({dags.reason or 'the composer gave no reason'}); composing shared-page graphs (--mode pages) instead",
                      highlight=False, markup=False)
        dags = await tasks.compose(web_graph, "pages", count=2, seed=0)
    console.print(f"  task graphs ({dags.mode}): {len(dags.task_ids)} ({', '.join(f'{k} {v}' for k, v in dags.stats.items() if isinstance(v, int))})")
    return ids + chains.task_ids + dags.task_ids


def _show_families(made: list[Task]) -> None:
    """One generated task per family, verbatim with its check, so the demo shows what each family makes."""
    shown: set[str] = set()
    for task in made:
        family = family_of(task)
        if family in shown:
            continue
        shown.add(family)
        check = f"answer {task.gold_answer!r}" if task.gold_answer else "; ".join(f"{c.kind} {c.value!r}" for c in task.success[:3])
        console.print(f"    [{family}] {task.instruction}\n      check: {check}", highlight=False, markup=False)


def _run(runtime: Runtime, task_ids: list[str], agents: list[str], concurrency: int) -> RunReport:
    harness = Harness(runtime.settings, build_server, runtime=runtime)
    tasks = run(harness.select, task_ids)
    quiet_agent_errors()
    with progress_bar("episodes", len(tasks) * len(agents)) as update:

        def progress(result: EpisodeResult, done: int, total: int) -> None:
            update(done, total, f"{result.agent} on {result.task_id}: {'ok' if result.success else 'fail'}")

        return run(runtime.run, lambda: harness.run(tasks, agents, concurrency=concurrency, max_steps=25, timeout_s=120, progress=progress))


async def _crawl(runtime: Runtime, url: str) -> WebIngestReport:
    return await runtime.graphs.ingest_website(url, max_pages=25, max_depth=3, contexts=2)
