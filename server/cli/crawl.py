"""``taskloom crawl URL [URL …]``: crawl websites in a real browser into web knowledge graphs."""

from __future__ import annotations

from typing import Any

import typer

from .common import echo_json, progress_bar, run, settings


def crawl(
    start_urls: list[str] = typer.Argument(..., help="Where each crawl starts (http/https); several URLs: one graph each."),
    max_pages: int = typer.Option(30, "--max-pages", help="Most pages to store (app states found by clicking are counted apart)."),
    max_depth: int = typer.Option(3, "--max-depth", help="Most links followed from the start page (0: the start page only)."),
    allow: list[str] = typer.Option(None, "--allow", help="Allowed domain (repeatable): 'example.org' (and subdomains) on the start URL's scheme and port, 'host:port', or 'http://host:port'; default: the start URL's origin."),
    contexts: int = typer.Option(2, "--contexts", help="Browser contexts crawling in parallel (the pages kept do not depend on it)."),
    name: str | None = typer.Option(None, "--name", help="Display name (one site only); default: the first page's title."),
    executor: str = typer.Option("local", "--executor", help="Several sites: crawled one after another here (local) or at once on a Ray cluster (ray: see README, Running on Ray)."),
    address: str | None = typer.Option(None, "--address", help="--executor ray: the cluster, auto, ray://host:port or host:port (default: a new local Ray)."),
) -> None:
    """Crawl sites inside their allowed domains and print the report as JSON.

    One site (run here): its report. Several sites, or ``--executor ray``: ``sites``, one entry per
    URL with its ``report`` or its ``error``, and where it was crawled. The report lists every URL not
    stored as a page under ``skipped`` (reason + detail) and counts them per reason under ``skip_counts``:
    out_of_domain, budget, depth, template_cap, view_variant, duplicate_content, timeout, http_status,
    redirected, error.
    """
    from ...tools.runtime import Runtime

    crawl_all = _crawler(executor, address, len(start_urls), name)
    runtime = run(lambda: Runtime(settings()))
    service = runtime.graphs
    if crawl_all is None:

        async def one() -> object:
            with progress_bar(f"crawl {start_urls[0]}", max_pages) as update:

                def progress(done: float, total: float, message: str) -> None:
                    word = message.split(" ")[0]
                    update(done, total, {"crawled": "pages crawled", "embedded": "nodes embedded"}.get(word, word))

                return await service.ingest_website(start_urls[0], max_pages, max_depth, allow or None, contexts, name, progress)

        echo_json(run(runtime.run, one))
        return
    sites = [run(service.crawl_options, url, max_pages, max_depth, allow or None, contexts) for url in start_urls]

    async def several() -> Any:
        with progress_bar(f"crawl {len(sites)} sites ({executor})", len(sites)) as update:
            return await service.ingest_websites(sites, crawl_all, lambda done, total, message: update(done, total, message))

    done = run(runtime.run, several)
    echo_json({"sites": [site.model_dump(mode="json") for site in done], "executor": executor})
    if any(site.error for site in done):
        raise typer.Exit(1)


def _crawler(executor: str, address: str | None, sites: int, name: str | None) -> Any:
    """None (one site, crawled here as always); else the function that crawls a list of jobs (Ray imported only for ``ray``); bad usage refused."""
    from rich.markup import escape

    from ...tools.errors import InputError
    from .common import console

    try:
        if executor not in ("local", "ray"):
            raise InputError(f"unknown executor {executor!r}; choose local or ray")
        if name is not None and sites > 1:
            raise InputError("--name names one site; leave it out when crawling several")
        if executor == "local":
            if address is not None:
                raise InputError("--address only applies to --executor ray")
            if sites == 1:
                return None
            from ...harness.ray_executor import map_on_executor
            from ...tools.graph.web.pipeline import crawl_job

            return lambda jobs: map_on_executor(crawl_job, jobs, "local")
        from ...harness.ray_executor import check_reachable, import_ray
        from ...harness.ray_generation import crawl_sites

        import_ray()  # refused now, with how to install it
        if address is not None:
            check_reachable(address)
        return lambda jobs: crawl_sites(jobs, address)
    except InputError as exc:  # printed verbatim: the install command's "[ray]" is no markup
        console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
