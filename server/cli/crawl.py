"""``taskloom crawl URL``: crawl a website in a real browser into a web knowledge graph."""

from __future__ import annotations

import typer

from .common import echo_json, progress_bar, run, settings


def crawl(
    start_url: str = typer.Argument(..., help="Where the crawl starts (http/https)."),
    max_pages: int = typer.Option(30, "--max-pages", help="Most pages to store (app states found by clicking are counted apart)."),
    max_depth: int = typer.Option(3, "--max-depth", help="Most links followed from the start page (0: the start page only)."),
    allow: list[str] = typer.Option(None, "--allow", help="Allowed domain (repeatable): 'example.org' (and subdomains) on the start URL's scheme and port, 'host:port', or 'http://host:port'; default: the start URL's origin."),
    contexts: int = typer.Option(2, "--contexts", help="Browser contexts crawling in parallel (the pages kept do not depend on it)."),
    name: str | None = typer.Option(None, "--name", help="Display name; default: the first page's title."),
) -> None:
    """Crawl a site inside its allowed domains and print the report as JSON.

    The report lists every URL not stored as a page under ``skipped`` (reason + detail) and counts them per
    reason under ``skip_counts``: out_of_domain, budget, depth, template_cap, view_variant, duplicate_content,
    timeout, http_status, redirected, error.
    """
    from ...tools.runtime import Runtime

    runtime = run(lambda: Runtime(settings()))
    service = runtime.graphs

    async def go() -> object:
        with progress_bar(f"crawl {start_url}", max_pages) as update:

            def progress(done: float, total: float, message: str) -> None:
                word = message.split(" ")[0]
                update(done, total, {"crawled": "pages crawled", "embedded": "nodes embedded"}.get(word, word))

            return await service.ingest_website(start_url, max_pages, max_depth, allow or None, contexts, name, progress)

    echo_json(run(runtime.run, go))
