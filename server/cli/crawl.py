"""``taskloom crawl URL``: crawl a website in a real browser into a web knowledge graph."""

from __future__ import annotations

import anyio
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .common import console, echo_json, run, settings


def crawl(
    start_url: str = typer.Argument(..., help="Where the crawl starts (http/https)."),
    max_pages: int = typer.Option(30, "--max-pages"),
    max_depth: int = typer.Option(3, "--max-depth"),
    allow: list[str] = typer.Option(None, "--allow", help="Allowed domain (repeatable): 'example.org' (and subdomains) on the start URL's scheme and port, 'host:port', or 'http://host:port'; default: the start URL's origin."),
    contexts: int = typer.Option(1, "--contexts", help="Browser contexts crawling in parallel."),
    name: str | None = typer.Option(None, "--name"),
) -> None:
    """Crawl a site breadth-first inside its allowed domains and print the report as JSON."""
    from ...tools.graph.service import GraphService

    service = run(lambda: GraphService(settings()))

    async def go() -> object:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True) as bar:
            task = bar.add_task("crawling", total=max_pages)

            def progress(done: float, total: float, message: str) -> None:
                bar.update(task, completed=done, total=total, description=message.split(" ")[0])

            try:
                return await service.ingest_website(start_url, max_pages, max_depth, allow or None, contexts, name, progress)
            finally:
                await service.browsers.close()

    echo_json(run(anyio.run, go))
