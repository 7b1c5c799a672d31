"""Ingest one website: crawl it in a real browser, build its graph, embed, store.

The crawl (the browser's part) and the rest can run apart: :func:`crawl_job` crawls one site
from a :class:`CrawlJob` in a browser of its own (on any machine that sees the workspace),
and :func:`store_crawl` turns its :class:`CrawlResult` into the stored graph.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from ...browser import BrowserPool
from ...errors import TaskloomError
from ...llm.embedders import Embedder
from ...settings import Settings, SiteLogin
from ..embedding import prepare_vectors, store_vectors, type_counts
from ..model import GraphMeta, NodeType
from ..store import GraphStore, make_graph_id
from ..vectors import VectorStore
from .build import build_web_graph
from .crawl import CrawlOptions, CrawlResult, Skip, crawl, normalize_url

__all__ = ["CrawlJob", "Crawled", "WebIngestReport", "crawl_job", "ingest_website", "store_crawl", "WEB_EMBEDDED_TYPES", "website_graph_id"]

ProgressFn = Callable[[float, float, str], None]

#: At most this many blocked URLs are listed in a report (all are counted).
BLOCKED_LISTED = 200

#: Web node types whose text is embedded (pages and every element with a name or text).
WEB_EMBEDDED_TYPES = (
    NodeType.PAGE, NodeType.LINK, NodeType.BUTTON, NodeType.INPUT, NodeType.SEARCH_BOX, NodeType.SELECT,
    NodeType.CHECKBOX, NodeType.FORM, NodeType.MODAL, NodeType.TOAST, NodeType.TAB, NodeType.MENU,
    NodeType.PAGINATION, NodeType.FILTER, NodeType.BUSINESS_DATA, NodeType.REGION,
)


class WebIngestReport(BaseModel):
    """What a website ingestion produced."""

    graph_id: str
    start_url: str
    allowed_domains: list[str]
    pages: int
    nodes: int
    edges: int
    embedded: int
    node_types: dict[str, int] = Field(default_factory=dict)
    edge_types: dict[str, int] = Field(default_factory=dict)
    skipped: dict[str, Skip] = Field(default_factory=dict, description="URL → why it was not stored as a page (reason kind + detail).")
    skip_counts: dict[str, int] = Field(default_factory=dict, description="How many URLs were skipped per reason.")
    states: int = Field(0, description="App states stored as pages besides the plain loads.")
    screenshot_errors: int = Field(0, description="Pages kept without a screenshot (their screenshot failed).")
    blocked: int = Field(0, description="Requests outside the allowed origins that the browser aborted, and pages whose load ended outside them.")
    blocked_urls: list[str] = Field(default_factory=list, description=f"The first {BLOCKED_LISTED} distinct blocked URLs, in the order they were blocked.")
    seconds: dict[str, float] = Field(default_factory=dict)


def website_graph_id(options: CrawlOptions, name: str | None = None) -> str:
    """Stable id for a site: its name (default: host) + a hash of start URL and allowed domains."""
    key = normalize_url(options.start_url) + "|" + ",".join(sorted(options.allowed()))
    return make_graph_id(name or sorted(options.allowed())[0], hashlib.sha256(key.encode()).hexdigest())


class CrawlJob(BaseModel):
    """One site to crawl apart from storing it: its options, where its screenshots go, the browser."""

    options: CrawlOptions
    screenshots: Path
    chromium: str | None = None
    login: SiteLogin | None = Field(None, description="Log in before crawling (the workspace settings' site_login).")


class Crawled(BaseModel):
    """What :func:`crawl_job` did: the crawl, or why it failed; where and how long it ran."""

    start_url: str
    result: CrawlResult | None = None
    error: str | None = None
    host: str
    pid: int
    node: str | None = Field(None, description="The Ray node it ran on, when it ran on a cluster.")
    seconds: float


def crawl_job(job: CrawlJob) -> Crawled:
    """Crawl one site in a browser launched for it (and closed after); a crawl that fails says why instead of raising."""

    async def go() -> CrawlResult:
        pool = BrowserPool(job.chromium)
        try:
            return await crawl(job.options, pool, job.screenshots, login=job.login)
        finally:
            await pool.close()

    clock = time.perf_counter()
    result, error = None, None
    try:
        result = asyncio.run(go())
    except TaskloomError as exc:
        error = str(exc)
    return Crawled(start_url=job.options.start_url, result=result, error=error, host=socket.gethostname(), pid=os.getpid(), seconds=round(time.perf_counter() - clock, 3))


async def ingest_website(
    options: CrawlOptions,
    settings: Settings,
    store: GraphStore,
    vectors: VectorStore,
    embedder: Embedder,
    pool: BrowserPool,
    name: str | None = None,
    progress: ProgressFn | None = None,
) -> WebIngestReport:
    """Crawl a site, build its web graph, embed element and page text, and store both.

    Screenshots go to ``graphs/{graph_id}.assets/pages/``. Re-crawling the same start
    URL with the same allowed domains replaces the graph (same id, same node ids).
    """
    graph_id = website_graph_id(options, name)
    clock = time.perf_counter()
    result = await crawl(options, pool, store.assets_dir(graph_id) / "pages", progress, settings.site_login)
    return store_crawl(result, graph_id, settings, store, vectors, embedder, name, progress, time.perf_counter() - clock)


def store_crawl(
    result: CrawlResult,
    graph_id: str,
    settings: Settings,
    store: GraphStore,
    vectors: VectorStore,
    embedder: Embedder,
    name: str | None = None,
    progress: ProgressFn | None = None,
    crawled: float = 0.0,
) -> WebIngestReport:
    """Build the web graph of a finished crawl (screenshots in ``graphs/{graph_id}.assets/pages/``), embed it, store both."""
    shots = store.assets_dir(graph_id) / "pages"
    clock = time.perf_counter()
    meta = GraphMeta(id=graph_id, name=name or (result.pages[0].title if result.pages else graph_id), kind="web", sources=[result.start_url])
    kg = build_web_graph(result, meta)
    kg.meta.stats.update(allowed_domains=result.allowed_domains, screenshots=str(shots))
    built = time.perf_counter() - clock
    clock = time.perf_counter()
    prepared = prepare_vectors(kg, settings, embedder, WEB_EMBEDDED_TYPES, (), progress)
    embedded = len(prepared.nodes)
    kg.meta.stats.update(embedded=embedded, nodes=len(kg), edges=kg.g.number_of_edges())
    store.save(kg, before_replace=lambda: store_vectors(kg, prepared, vectors, embedder))  # vectors last: see store_document
    nodes, edges = type_counts(kg)
    return WebIngestReport(
        graph_id=graph_id,
        start_url=result.start_url,
        allowed_domains=result.allowed_domains,
        pages=len(result.pages),
        nodes=len(kg),
        edges=kg.g.number_of_edges(),
        embedded=embedded,
        node_types=nodes,
        edge_types=edges,
        skipped=result.skipped,
        skip_counts=result.skip_counts(),
        states=sum(1 for p in result.pages if p.state is not None),
        screenshot_errors=sum(1 for p in result.pages if p.screenshot_error),
        blocked=len(result.blocked),
        blocked_urls=list(dict.fromkeys(result.blocked))[:BLOCKED_LISTED],
        seconds={"crawl": round(crawled, 3), "build": round(built, 3), "embed": round(time.perf_counter() - clock, 3)},
    )
