"""Breadth-first crawl of a site in a real browser, inside its allowed origins.

Pages are de-duplicated by normalised URL and by a hash of their rendered text;
every context is fenced by the browser layer's origin fence (the start URL's
scheme, host and port, plus the allowed domains on that scheme and port), so no
request leaves it and blocked ones are reported. A page whose load ends outside
the fence (an HTTP, JavaScript or meta-refresh redirect), on Chromium's error page,
or with an HTTP error is never stored; a start page like that is a
:class:`SiteUnreachable` error, not an empty graph. Click simulation finds what links
do not show: each visible trigger (button, tab, menu button, summary) is clicked on
a fresh load of the page and the dialogs, menus, tab panels and toasts it reveals
are recorded.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlparse, urlunparse

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Response
from pydantic import BaseModel, Field

from ...browser import BrowserPool, GuardedContext, host_of
from ...browser.dom import draw_marks
from ...errors import InputError, TaskloomError
from ...security.origin import OriginFence
from .extract import EXTRACT_JS, VISIBLE_CONTAINERS_JS, ElementInfo, classify_element

__all__ = ["CrawlOptions", "ClickEffect", "PageCapture", "CrawlResult", "SiteUnreachable", "crawl", "normalize_url"]

ProgressFn = Callable[[float, float, str], None]
_TRIGGER_TYPES = {"button", "tab"}


class SiteUnreachable(TaskloomError):
    """The crawl's start page could not be loaded as a page of the site (refused, unresolvable, HTTP error, redirected away)."""


class CrawlOptions(BaseModel):
    """What to crawl and how politely."""

    start_url: str
    max_pages: int = Field(30, ge=1, le=2000)
    max_depth: int = Field(3, ge=0, le=20)
    allowed_domains: list[str] | None = Field(
        None,
        description="Hosts (and their subdomains) the crawl may request, on the start URL's scheme and port unless written as host:port "
        "or as an origin (http://host:port); the start URL's origin is always allowed.",
    )
    delay: float = Field(0.2, ge=0.0, le=30.0, description="Seconds between page loads of one context.")
    page_timeout: float = Field(15.0, ge=1.0, le=300.0)
    contexts: int = Field(1, ge=1, le=16, description="Browser contexts crawling in parallel.")
    click_budget: int = Field(12, ge=0, le=100, description="Triggers clicked per page.")
    screenshots: bool = True

    def allowed(self) -> set[str]:
        """The allowed domains as given (default: the start URL's host); they name the graph."""
        return {d.lower() for d in self.allowed_domains} if self.allowed_domains else {host_of(self.start_url)}

    def fence(self) -> OriginFence:
        """The origins the crawl may reach: the start URL's, plus the allowed domains on its scheme and port."""
        return OriginFence.for_site(self.start_url, self.allowed_domains)


class ClickEffect(BaseModel):
    """What clicking one trigger did."""

    trigger: str = Field(description="Selector of the clicked element.")
    opened: list[str] = Field(default_factory=list, description="Selectors of dialogs/menus/panels/toasts it revealed.")
    navigated_to: str | None = None
    error: str | None = Field(None, description="Why the click failed (hidden, covered, timed out).")


class PageCapture(BaseModel):
    """One crawled page."""

    url: str = Field(description="Normalised URL.")
    final_url: str
    title: str
    text: str
    depth: int
    order: int = Field(description="Discovery order; the graph is built in this order.")
    dom_hash: str
    elements: list[ElementInfo]
    clicks: list[ClickEffect] = Field(default_factory=list)
    links: list[str] = Field(default_factory=list, description="Normalised in-domain URLs linked or submitted to.")
    screenshot: str | None = None
    marks_screenshot: str | None = None
    marks: dict[str, str] = Field(default_factory=dict, description="Set-of-marks label → element selector.")


class CrawlResult(BaseModel):
    """A whole crawl."""

    start_url: str
    allowed_domains: list[str]
    pages: list[PageCapture]
    aliases: dict[str, str] = Field(default_factory=dict, description="URL → URL of the page with identical content.")
    skipped: dict[str, str] = Field(default_factory=dict, description="URL → why it was not crawled.")
    blocked: list[str] = Field(default_factory=list, description="Requests the origin fence aborted, and pages whose load ended outside it.")
    requested: list[str] = Field(default_factory=list, description="Every request that went out.")
    seconds: float = 0.0


def normalize_url(url: str) -> str:
    """Canonical form of a URL for de-duplication.

    Lower-case scheme and host, no default port, no fragment, query parameters
    sorted with empty values dropped, ``/index.html`` folded into ``/``.

    Examples
    --------
    >>> normalize_url("HTTP://Example.org:80/a/index.html?b=2&a=1&c=#top")
    'http://example.org/a/?a=1&b=2'
    """
    parts = urlparse(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port
    netloc = host if port is None or (scheme, port) in (("http", 80), ("https", 443)) else f"{host}:{port}"
    path = parts.path or "/"
    if path.endswith("/index.html"):
        path = path[: -len("index.html")]
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if v != ""))
    return urlunparse((scheme, netloc, path, "", query, ""))


class _Crawl:
    def __init__(self, options: CrawlOptions, pool: BrowserPool, shots: Path | None, progress: ProgressFn | None) -> None:
        self.options = options
        self.pool = pool
        self.shots = shots
        self.progress = progress
        self.allowed = options.allowed()
        self.fence = options.fence()
        self.result = CrawlResult(start_url=normalize_url(options.start_url), allowed_domains=sorted(self.allowed), pages=[])
        self.hashes: dict[str, str] = {}
        self.seen: set[str] = set()
        self.effects: dict[tuple[str, str], asyncio.Future[ClickEffect]] = {}
        self.guards: dict[Page, GuardedContext] = {}  # each crawling page's context and fence

    async def run(self) -> CrawlResult:
        start = time.perf_counter()
        contexts = [await self.pool.new_context(fence=self.fence) for _ in range(self.options.contexts)]
        pages = [await g.context.new_page() for g in contexts]
        for page, guarded in zip(pages, contexts):
            self.guards[page] = guarded
            _track_requests(page)
            page.set_default_timeout(3_000)
            page.set_default_navigation_timeout(self.options.page_timeout * 1000)
        try:
            frontier = [(self.result.start_url, 0)]
            self.seen.add(self.result.start_url)
            order = 0
            while frontier and len(self.result.pages) < self.options.max_pages:
                budget = self.options.max_pages - len(self.result.pages)
                level, frontier = frontier[:budget], frontier[budget:]
                queue: asyncio.Queue[tuple[int, str, int]] = asyncio.Queue()
                for url, depth in level:
                    queue.put_nowait((order, url, depth))
                    order += 1
                captured: list[PageCapture | None] = []
                await asyncio.gather(*(self._worker(page, queue, captured) for page in pages))
                for capture in sorted((c for c in captured if c), key=lambda c: c.order):
                    if capture.dom_hash in self.hashes:
                        self.result.aliases[capture.url] = self.hashes[capture.dom_hash]
                        continue
                    self.hashes[capture.dom_hash] = capture.url
                    self.result.pages.append(capture)
                    if capture.depth < self.options.max_depth:
                        for link in capture.links:
                            if link not in self.seen:
                                self.seen.add(link)
                                frontier.append((link, capture.depth + 1))
                if self.progress:
                    self.progress(len(self.result.pages), self.options.max_pages, f"crawled {len(self.result.pages)} pages")
            for url, _ in frontier:
                self.result.skipped.setdefault(url, "max_pages reached")
        finally:
            for guarded in contexts:
                self.result.blocked += guarded.blocked
                self.result.requested += guarded.requested
                await guarded.context.close()
        if not self.result.pages:
            start_url = self.result.start_url
            reason = self.result.skipped.get(start_url, "it was not captured")
            raise SiteUnreachable(f"start_url {start_url} could not be crawled: {reason}; check that the site is running and the URL is right (nothing was stored)")
        self.result.seconds = time.perf_counter() - start
        return self.result

    async def _worker(self, page: Page, queue: asyncio.Queue[tuple[int, str, int]], out: list[PageCapture | None]) -> None:
        while not queue.empty():
            order, url, depth = queue.get_nowait()
            try:
                out.append(await self._capture(page, url, depth, order))
            except PlaywrightError as exc:
                self.result.skipped[url] = str(exc).splitlines()[0]
            if self.options.delay:
                await asyncio.sleep(self.options.delay)

    async def _load(self, page: Page, url: str) -> Response | None:
        """Load ``url`` and let it settle; its main response (None for same-document loads).

        A load cut short by a navigation still pending from the previous page (Chromium
        committing the error page of a blocked redirect) is retried once.
        """
        try:
            response = await page.goto(url, wait_until="load")
        except PlaywrightError as exc:
            if "interrupted by another navigation" not in str(exc):
                raise
            await page.wait_for_load_state("load")
            response = await page.goto(url, wait_until="load")
        await _settle(page)
        return response

    async def _capture(self, page: Page, url: str, depth: int, order: int) -> PageCapture | None:
        guarded = self.guards[page]
        before = len(guarded.left)
        try:
            response = await self._load(page, url)
        except PlaywrightError as exc:  # an HTTP redirect, a script or a meta refresh that tried to leave ends here too
            if "interrupted by another navigation" in str(exc):
                await self._quiet(page)  # the navigation that cut in may still be on its way to the fence
            reason = self._not_a_page(page, None, guarded, before) if len(guarded.left) == before else None
            self.result.skipped[url] = self._left(guarded) if len(guarded.left) > before else reason or str(exc).splitlines()[0]
            return None
        data: dict[str, Any] | None = None
        if (reason := self._not_a_page(page, response, guarded, before)) is None:
            try:
                data = await page.evaluate(EXTRACT_JS)
            except PlaywrightError:
                if len(guarded.left) == before:
                    raise
            reason = self._not_a_page(page, response, guarded, before)  # a script or meta refresh may have left while the page was read
        if reason is not None or data is None:
            self.result.skipped[url] = reason or self._left(guarded)
            return None
        final = normalize_url(page.url)
        elements = [ElementInfo.model_validate(e) for e in data["elements"]]
        dom_hash = hashlib.sha1(f"{data['title']}\n{data['text']}".encode()).hexdigest()[:16]
        capture = PageCapture(url=url, final_url=final, title=data["title"], text=data["text"], depth=depth, order=order, dom_hash=dom_hash, elements=elements)
        capture.links = self._links(elements)
        if self.shots is not None and self.options.screenshots:
            await self._screenshots(page, capture)
        capture.clicks = await self._clicks(page, capture)
        for effect in capture.clicks:
            if effect.navigated_to and effect.navigated_to not in capture.links and self.fence.allows(effect.navigated_to):
                capture.links.append(effect.navigated_to)
        return capture

    @staticmethod
    async def _quiet(page: Page, timeout_ms: float = 3000) -> None:
        """Wait (bounded) until the page has finished loading whatever navigation is under way."""
        try:
            await page.wait_for_load_state("load", timeout=timeout_ms)
        except PlaywrightError:
            return  # still loading or gone: the caller reports what it sees now

    def _links(self, elements: list[ElementInfo]) -> list[str]:
        links: list[str] = []
        for e in elements:
            target = e.href if e.tag == "a" else e.action if e.tag == "form" else None
            if not target or not target.startswith(("http://", "https://")):
                continue
            normal = normalize_url(target)
            if self.fence.allows(normal) and normal not in links:
                links.append(normal)
        return links

    def _not_a_page(self, page: Page, response: Any, guarded: GuardedContext, before: int) -> str | None:
        """Why the loaded page is not a page of the site (outside the fence, an error page, an HTTP error), or None."""
        url = page.url
        if url.startswith("chrome-error:"):
            return self._left(guarded) if len(guarded.left) > before else "the browser showed its own error page (the page or a redirect it made could not be loaded)"
        if not self.fence.allows(url):
            guarded.blocked.append(url)
            guarded.left.append(url)
            return self._left(guarded)
        if response is not None and response.status >= 400:
            return f"answered HTTP {response.status}"
        return None

    def _left(self, guarded: GuardedContext) -> str:
        return f"redirected outside the allowed origins ({self.fence.describe()}) to {guarded.left[-1]}; not stored"

    async def _screenshots(self, page: Page, capture: PageCapture) -> None:
        assert self.shots is not None
        self.shots.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha1(capture.url.encode()).hexdigest()[:12]
        png: bytes = await page.screenshot(full_page=True)
        (self.shots / f"{name}.png").write_bytes(png)
        marks: list[tuple[str, tuple[float, float, float, float]]] = []
        for e in capture.elements:
            if e.visible and classify_element(e) in ("link", "button", "input", "search_box", "select", "checkbox", "filter", "tab"):
                label = str(len(marks) + 1)
                capture.marks[label] = e.selector
                marks.append((label, e.bbox))
        (self.shots / f"{name}-marks.png").write_bytes(await asyncio.to_thread(draw_marks, png, marks))
        capture.screenshot, capture.marks_screenshot = f"{name}.png", f"{name}-marks.png"

    async def _clicks(self, page: Page, capture: PageCapture) -> list[ClickEffect]:
        """Click each visible non-submitting trigger on a fresh load and record what it revealed.

        A trigger seen before on another page (same selector and name: a site-wide
        menu button, the tabs of every detail page) is not clicked again; its recorded
        effect is reused — or awaited, when another context is clicking it right now.
        """
        triggers = [
            e
            for e in capture.elements
            if e.visible
            and classify_element(e) in _TRIGGER_TYPES
            and e.input_type not in ("submit", "reset")
            and not (e.tag == "button" and e.form and e.input_type in (None, "submit"))
            and not e.dialog
        ][: self.options.click_budget]
        effects: list[ClickEffect] = []
        dirty = False
        for trigger in triggers:
            key = (trigger.selector, trigger.name)
            if key in self.effects:
                effects.append(await self.effects[key])
                continue
            pending: asyncio.Future[ClickEffect] = asyncio.get_running_loop().create_future()
            self.effects[key] = pending
            effect = await self._click(page, capture, trigger, dirty)
            pending.set_result(effect)
            effects.append(effect)
            dirty = True
        return effects

    async def _click(self, page: Page, capture: PageCapture, trigger: ElementInfo, dirty: bool) -> ClickEffect:
        """Click one trigger (on a fresh load if an earlier click changed the page); never raises."""
        try:
            if dirty:
                await self._load(page, capture.final_url)
            before = set(await page.evaluate(VISIBLE_CONTAINERS_JS))
            await page.locator(trigger.selector).first.click(timeout=2_000)
            now = normalize_url(page.url)
            if now != capture.final_url:
                return ClickEffect(trigger=trigger.selector, navigated_to=now)
            await _settle(page)
            after = await page.evaluate(VISIBLE_CONTAINERS_JS)
        except PlaywrightError as exc:
            return ClickEffect(trigger=trigger.selector, error=str(exc).splitlines()[0])
        return ClickEffect(trigger=trigger.selector, opened=[s for s in after if s not in before])


def _track_requests(page: Any) -> None:
    """Count the page's requests in flight (for :func:`_settle`)."""
    page.inflight = 0

    def started(_: Any) -> None:
        page.inflight += 1

    def ended(_: Any) -> None:
        page.inflight = max(0, page.inflight - 1)

    page.on("request", started)
    page.on("requestfinished", ended)
    page.on("requestfailed", ended)


async def _settle(page: Any, quiet: float = 0.1, limit: float = 3.0) -> None:
    """Wait until no request has been in flight for ``quiet`` seconds (at most ``limit``).

    Cheaper than Playwright's ``networkidle``, which always waits 500 ms: pages that
    fetch their data after the load event are rendered by the time this returns.
    """
    waited = calm = 0.0
    step = 0.05
    while waited < limit and calm < quiet:
        await asyncio.sleep(step)
        waited += step
        calm = calm + step if getattr(page, "inflight", 0) == 0 else 0.0


async def crawl(options: CrawlOptions, pool: BrowserPool, screenshots: Path | None = None, progress: ProgressFn | None = None) -> CrawlResult:
    """Crawl ``options.start_url`` breadth-first; see the module docstring."""
    if not options.start_url.startswith(("http://", "https://")):
        raise InputError(f"start_url {options.start_url!r} must start with http:// or https://")
    return await _Crawl(options, pool, screenshots, progress).run()
