"""Crawl a site in a real browser, inside its allowed origins, several pages at a time.

Which URL comes next is the :class:`~.frontier.Frontier`'s choice (templates capped, unseen
templates first, sort/format variants as views of a listing, a listing's pages under their own
cap); each batch is loaded in parallel browser contexts and its results are integrated in the
order the batch was picked, so the page list does not depend on the number of contexts.
Pages are de-duplicated by normalised URL and by a hash of their rendered text; every context
is fenced by the browser layer's origin fence (the start URL's scheme, host and port, plus the
allowed domains on that scheme and port), so no request leaves it and blocked ones are
reported. A page whose load ends outside the fence (an HTTP, JavaScript or meta-refresh
redirect), on Chromium's error page, or with an HTTP error is never stored; a start page like
that is a :class:`SiteUnreachable` error, not an empty graph. Every URL not stored is in
:attr:`CrawlResult.skipped` with its reason. Screenshots are best-effort (viewport only, their
own timeout): a failed one is noted on the page, which is kept. Click simulation finds what
links do not show: each visible trigger (button, tab, menu button, summary) is clicked on a
fresh load of the page and the dialogs, menus, tab panels, toasts and new tabs it opens are
recorded; records (:mod:`.records`) are read on every page, app states (:mod:`.states`) on the
first page of each URL template (its other pages share its controls), within ``state_timeout``.
What it is asked for and what it returns (options, captures, the result) is in :mod:`.capture`.
With a ``login`` every context starts logged in (one login, its cookies shared; see
:mod:`taskloom.tools.browser.login`), and links and buttons that log out are neither followed nor clicked.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Response

from ...browser import BrowserPool, GuardedContext
from ...browser.dom import draw_marks
from ...browser.login import is_logout, log_in
from ...browser.settle import settle, track_requests
from ...errors import InputError
from ...settings import SiteLogin
from .capture import ClickEffect, CrawlOptions, CrawlResult, PageCapture, SiteUnreachable, normalize_url
from .extract import VISIBLE_CONTAINERS_JS, ElementInfo, classify_element, read_page
from .frontier import Frontier, Skip, SkipReason
from .records import read_records
from .states import AppState, SiteChrome, explore_states, state_url

__all__ = ["CrawlOptions", "ClickEffect", "PageCapture", "CrawlResult", "Skip", "SkipReason", "SiteUnreachable", "crawl", "normalize_url"]

ProgressFn = Callable[[float, float, str], None]
_TRIGGER_TYPES = {"button", "tab"}
#: JPEG quality of the crawl's page screenshots.
SHOT_QUALITY = 80
_MARKED_TYPES = ("link", "button", "input", "search_box", "select", "checkbox", "filter", "tab")
#: URLs picked per batch: fixed, so the pages kept do not depend on how many contexts load them.
BATCH = 8
#: Keeps the crawled page from opening tabs: ``window.open`` and links or forms aimed at another
#: window record the URL they would open (``window.__taskloomOpened``) instead, so nothing loads
#: outside the page's own fenced DevTools session (see :mod:`taskloom.tools.browser.devtools_fence`).
COUNT_OPENS_JS = """(() => {
  const opened = [];
  const href = (url) => { try { return new URL(url || 'about:blank', document.baseURI).href; } catch (e) { return null; } };
  const elsewhere = (target) => !!target && !['_self', '_parent', '_top'].includes(target.toLowerCase());
  Object.defineProperty(window, '__taskloomOpens', { get: () => opened.length });
  Object.defineProperty(window, '__taskloomOpened', { get: () => opened.slice() });
  window.open = function (url) { opened.push(href(url)); return null; };
  addEventListener('click', (event) => {
    const link = event.target instanceof Element ? event.target.closest('a[href], area[href]') : null;
    if (link && elsewhere(link.getAttribute('target'))) { event.preventDefault(); opened.push(link.href); }
  }, true);
  addEventListener('submit', (event) => {
    const form = event.target;
    if (form instanceof HTMLFormElement && elsewhere(form.getAttribute('target'))) { event.preventDefault(); opened.push(href(form.getAttribute('action') || location.href)); }
  }, true);
})()"""
OPENS_JS = "() => window.__taskloomOpens || 0"
OPENED_JS = "() => window.__taskloomOpened || []"


#: Loads of one URL a pending navigation may cut short before the crawl gives up on it.
_LOAD_TRIES = 3


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _failure(exc: BaseException) -> Skip:
    """A load or read that raised: a timeout or another error."""
    line = _first_line(exc)
    if "Download is starting" in line:
        return Skip(reason="download", detail="the URL is a file download, not a page")
    return Skip(reason="timeout" if "Timeout" in line or isinstance(exc, TimeoutError) else "error", detail=line)


def _interactive(capture: PageCapture) -> bool:
    """The page has components beyond links: a click revealed something, or it holds dialogs or tabs."""
    return any(c.opened for c in capture.clicks) or any(e.dialog or classify_element(e) == "tab" for e in capture.elements)


class _Crawl:
    def __init__(self, options: CrawlOptions, pool: BrowserPool, shots: Path | None, progress: ProgressFn | None, login: SiteLogin | None = None) -> None:
        self.options = options
        self.login = login
        self.pool = pool
        self.shots = shots
        self.progress = progress
        self.allowed = options.allowed()
        self.fence = options.fence()
        self.result = CrawlResult(start_url=normalize_url(options.start_url), allowed_domains=sorted(self.allowed), pages=[])
        self.frontier = Frontier(
            self.result.start_url, options.max_pages, options.max_depth, options.template_cap, options.listing_cap, options.view_cap
        )
        self.hashes: dict[str, str] = {}
        self.stored_states = 0
        self.effects: dict[tuple[str, str], asyncio.Future[ClickEffect]] = {}
        self.guards: dict[Page, GuardedContext] = {}  # each crawling page's context and fence
        self.clicked: dict[Page, bool] = {}  # a click changed the page since its last load
        self.state_templates: set[str] = set()
        self.explore: set[str] = set()  # URLs whose app states are explored
        self.fruitless: set[Any] = set()  # state actions that showed nothing new on an earlier page (site chrome)
        self.chrome = SiteChrome()  # what state actions changed on the pages integrated so far
        self.page_chrome: dict[str, SiteChrome] = {}  # a page's own copy, merged when it is integrated (pick order)

    async def run(self) -> CrawlResult:
        start = time.perf_counter()
        state = await log_in(self.pool, self.login, self.result.start_url, self.fence, self.options.page_timeout) if self.login else None
        contexts = [await self.pool.new_context(fence=self.fence, interception="devtools", storage_state=state) for _ in range(self.options.contexts)]
        for guarded in contexts:
            await guarded.context.add_init_script(COUNT_OPENS_JS)
        pages = [await g.new_page() for g in contexts]
        for page, guarded in zip(pages, contexts):
            self.guards[page] = guarded
            track_requests(page)
            page.set_default_timeout(self.options.action_timeout * 1000)
            page.set_default_navigation_timeout(self.options.page_timeout * 1000)
        try:
            self.frontier.add(self.result.start_url, 0)
            while batch := self.frontier.next_batch(BATCH):
                for entry in batch:  # app states are explored on the first page of each template only (in pick order)
                    if entry.template not in self.state_templates:
                        self.state_templates.add(entry.template)
                        self.explore.add(entry.url)
                got: list[PageCapture | Skip | None] = [None] * len(batch)
                queue: asyncio.Queue[int] = asyncio.Queue()
                for i in range(len(batch)):
                    queue.put_nowait(i)
                await asyncio.gather(*(self._worker(page, queue, batch, got) for page in pages))
                for entry, outcome in zip(batch, got):
                    self._integrate(entry.url, outcome)
                if self.progress:
                    self.progress(self.frontier.kept, self.options.max_pages, f"crawled {self.frontier.kept} pages")
            for url, skip in self.frontier.leftovers().items():
                self.result.skipped.setdefault(url, skip)
        finally:
            for guarded in contexts:
                self.result.blocked += guarded.blocked
                self.result.requested += guarded.requested
                await guarded.context.close()
        if not self.result.pages:
            start_url = self.result.start_url
            why = self.result.skipped.get(start_url)
            reason = why.detail if why else "it was not captured"
            raise SiteUnreachable(f"start_url {start_url} could not be crawled: {reason}; check that the site is running and the URL is right (nothing was stored)")
        self.result.seconds = time.perf_counter() - start
        return self.result

    def _integrate(self, url: str, outcome: PageCapture | Skip | None) -> None:
        """Store one loaded URL's outcome (in pick order) and hand its links to the frontier."""
        if (chrome := self.page_chrome.pop(url, None)) is not None:
            self.chrome.merge(chrome)
        if not isinstance(outcome, PageCapture):
            self.result.skipped[url] = outcome or Skip(reason="error", detail="it was not captured")
            self.frontier.done(url, kept=False)
            return
        for outside in outcome._outside:
            if outside not in self.result.skipped:
                self.result.skipped[outside] = Skip(reason="out_of_domain", detail=f"outside the allowed origins ({self.fence.describe()}); linked from {url}")
        if outcome.dom_hash in self.hashes:
            self.result.aliases[url] = self.hashes[outcome.dom_hash]
            self.result.skipped[url] = Skip(reason="duplicate_content", detail=f"shows the same content as {self.hashes[outcome.dom_hash]}")
            self.frontier.done(url, kept=False)
            return
        self._store(outcome)
        self.frontier.done(url, kept=True)
        interactive = _interactive(outcome)
        for link in outcome.links:
            self.frontier.add(link, outcome.depth + 1, parent=url, interactive=interactive)
        for state in outcome._states:
            if state.dom_hash in self.hashes or self.stored_states >= self.options.max_states:
                continue
            self.stored_states += 1
            self._store(state)
            for link in state.links:
                self.frontier.add(link, outcome.depth + 1, parent=url, interactive=True)

    def _store(self, capture: PageCapture) -> None:
        capture.order = len(self.result.pages)
        self.hashes[capture.dom_hash] = capture.url
        self.result.pages.append(capture)

    async def _worker(self, page: Page, queue: asyncio.Queue[int], batch: list[Any], out: list[PageCapture | Skip | None]) -> None:
        while not queue.empty():
            i = queue.get_nowait()
            entry = batch[i]
            try:
                out[i] = await self._capture(page, entry.url, entry.depth)
            except PlaywrightError as exc:
                out[i] = _failure(exc)
            if self.options.delay:
                await asyncio.sleep(self.options.delay)

    async def _load(self, page: Page, url: str) -> Response | None:
        """Load ``url`` and let it settle; its main response (None for same-document loads).

        A load cut short by a navigation still pending from the previous page (Chromium
        committing the error page of a blocked redirect or meta refresh) is retried, at most
        twice, once the page has gone quiet (the interrupting navigation can itself be cut
        short by the retry, which Playwright reports the same way).
        """
        for attempt in range(_LOAD_TRIES):
            try:
                response = await page.goto(url, wait_until="load")
                break
            except PlaywrightError as exc:
                if "interrupted by another navigation" not in str(exc) or attempt == _LOAD_TRIES - 1:
                    raise
                await self._quiet(page)
                await asyncio.sleep(0.05 * (attempt + 1))  # let a navigation that Chromium has queued but not started begin
        await settle(page)
        return response

    async def _capture(self, page: Page, url: str, depth: int) -> PageCapture | Skip:
        guarded = self.guards[page]
        before = len(guarded.left)
        try:
            response = await self._load(page, url)
        except PlaywrightError as exc:  # an HTTP redirect, a script or a meta refresh that tried to leave ends here too
            if "interrupted by another navigation" in str(exc):
                await self._quiet(page)  # the navigation that cut in may still be on its way to the fence
            if len(guarded.left) > before:
                return self._left(guarded)
            return self._not_a_page(page, None, guarded, before) or _failure(exc)
        data: dict[str, Any] | None = None
        if (reason := self._not_a_page(page, response, guarded, before)) is None:
            try:
                data = await self._extract(page)
            except TimeoutError:
                return Skip(reason="timeout", detail=f"reading the page's elements took over {self.options.extract_timeout:g} s (extract_timeout)")
            except PlaywrightError:
                if len(guarded.left) == before:
                    raise
            reason = self._not_a_page(page, response, guarded, before)  # a script or meta refresh may have left while the page was read
        if reason is not None or data is None:
            return reason or self._left(guarded)
        capture = await self._read(page, data, url, depth)
        self.clicked[page] = False
        if self.shots is not None and self.options.screenshots:
            await self._screenshots(page, capture)
        capture.clicks = await self._clicks(page, capture)
        for effect in capture.clicks:
            if effect.navigated_to and effect.navigated_to not in capture.links:
                if self.fence.allows(effect.navigated_to):
                    capture.links.append(effect.navigated_to)
                elif effect.navigated_to.startswith(("http://", "https://")):
                    capture._outside.append(effect.navigated_to)
        capture._states = await self._states(page, capture)
        return capture

    async def _read(self, page: Page, data: dict[str, Any] | None, url: str, depth: int) -> PageCapture:
        """The page as it is now (``data``: its extraction, read here when None), with its records."""
        if data is None:
            data = await self._extract(page)
        final = normalize_url(page.url)
        elements = [ElementInfo.model_validate(e) for e in data["elements"]]
        dom_hash = hashlib.sha1(f"{data['title']}\n{data['text']}".encode()).hexdigest()[:16]
        capture = PageCapture(
            url=url, final_url=final, title=data["title"], text=data["text"], depth=depth, order=0, dom_hash=dom_hash, elements=elements,
            elements_truncated=int(data.get("truncated", 0)),
        )
        capture.links, capture._outside = self._links(elements)
        capture.records = await read_records(page)
        return capture

    async def _extract(self, page: Page) -> dict[str, Any]:
        """The extraction (:func:`.extract.read_page`) on the page as it is now, within ``extract_timeout`` (TimeoutError past it)."""
        data: dict[str, Any] = await asyncio.wait_for(read_page(page), self.options.extract_timeout)
        return data

    async def _states(self, page: Page, capture: PageCapture) -> list[PageCapture]:
        """App states of the page (see :mod:`.states`); each is read like a page, without clicks or further states."""
        budget = self.options.max_states - self.stored_states  # states already stored by earlier batches (the same for every context)
        if budget <= 0 or capture.url not in self.explore:
            return []  # a crawl whose state budget is spent stops exploring: what it would find could not be stored
        fresh = [not self.clicked.get(page, False)]  # the page is still as loaded: the first reload can be spared

        async def reload() -> None:
            if fresh[0] and normalize_url(page.url) == capture.final_url:
                fresh[0] = False
                return
            fresh[0] = False
            await self._load(page, capture.final_url)

        kept: list[PageCapture] = []
        chrome = self.page_chrome[capture.url] = self.chrome.fork()

        async def read(state: AppState) -> PageCapture:
            got = await self._read(page, None, state_url(state), capture.depth)
            got.state, got.final_url = state, state.base_url
            kept.append(got)  # verified by a replay before it is read: kept even if the exploration times out later
            return got

        try:
            await asyncio.wait_for(explore_states(page, capture, reload, read, budget, self.fruitless, chrome), self.options.state_timeout)
        except TimeoutError:
            capture.state_error = f"exploring app states took over {self.options.state_timeout:g} s (state_timeout); the {len(kept)} found by then are kept"
        return kept

    @staticmethod
    async def _quiet(page: Page, timeout_ms: float = 3000) -> None:
        """Wait (bounded) until the page has finished loading whatever navigation is under way."""
        try:
            await page.wait_for_load_state("load", timeout=timeout_ms)
        except PlaywrightError:
            return  # still loading or gone: the caller reports what it sees now

    def _links(self, elements: list[ElementInfo]) -> tuple[list[str], list[str]]:
        """Normalised http(s) URLs the page links or submits to: (inside the fence, outside it)."""
        links: list[str] = []
        outside: list[str] = []
        for e in elements:
            target = e.href if e.tag == "a" else e.action if e.tag == "form" else None
            if not target or not target.startswith(("http://", "https://")):
                continue
            if self.login is not None and e.tag == "a" and is_logout(e.text or e.name or e.aria_label, target):
                continue  # logged in: a logout link would end the session for every context
            normal = normalize_url(target)
            bucket = links if self.fence.allows(normal) else outside
            if normal not in bucket:
                bucket.append(normal)
        return links, outside

    def _not_a_page(self, page: Page, response: Any, guarded: GuardedContext, before: int) -> Skip | None:
        """Why the loaded page is not a page of the site (outside the fence, an error page, an HTTP error), or None."""
        url = page.url
        if url.startswith("chrome-error:"):
            if len(guarded.left) > before:
                return self._left(guarded)
            return Skip(reason="error", detail="the browser showed its own error page (the page or a redirect it made could not be loaded)")
        if not self.fence.allows(url):
            guarded.blocked.append(url)
            guarded.left.append(url)
            return self._left(guarded)
        if response is not None and response.status >= 400:
            return Skip(reason="http_status", detail=f"answered HTTP {response.status}", status=response.status)
        return None

    def _left(self, guarded: GuardedContext) -> Skip:
        return Skip(reason="redirected", detail=f"redirected outside the allowed origins ({self.fence.describe()}) to {guarded.left[-1]}; not stored")

    async def _screenshots(self, page: Page, capture: PageCapture) -> None:
        """A viewport screenshot and its set-of-marks copy (JPEG: half the cost of PNG per page); a failure is noted on the page, never raised."""
        assert self.shots is not None
        name = hashlib.sha1(capture.url.encode()).hexdigest()[:12]
        try:
            self.shots.mkdir(parents=True, exist_ok=True)
            shot: bytes = await page.screenshot(full_page=False, type="jpeg", quality=SHOT_QUALITY, timeout=self.options.screenshot_timeout * 1000)
            (self.shots / f"{name}.jpg").write_bytes(shot)
            view = page.viewport_size or {"width": 1280, "height": 720}
            marks: list[tuple[str, tuple[float, float, float, float]]] = []
            for e in capture.elements:
                x0, y0, x1, y1 = e.bbox
                in_view = x1 > x0 and y1 > y0 and x0 < view["width"] and y0 < view["height"] and x1 > 0 and y1 > 0
                if e.visible and in_view and classify_element(e) in _MARKED_TYPES:
                    label = str(len(marks) + 1)
                    capture.marks[label] = e.selector
                    marks.append((label, e.bbox))
            (self.shots / f"{name}-marks.jpg").write_bytes(await asyncio.to_thread(draw_marks, shot, marks, "jpeg"))
        except (PlaywrightError, OSError) as exc:
            capture.marks.clear()
            capture.screenshot_error = _first_line(exc)
            return
        capture.screenshot, capture.marks_screenshot = f"{name}.jpg", f"{name}-marks.jpg"

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
            and not (self.login is not None and is_logout(e.text or e.name or e.aria_label))
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
        """Click one trigger (on a fresh load if an earlier click changed the page); never raises.

        A tab or popup the click opens is read for its URL and closed.
        """
        popups: list[Page] = []
        guarded = self.guards[page]

        def opened(popup: Page) -> None:
            popups.append(popup)

        try:
            if dirty:
                await self._load(page, capture.final_url)
            before = set(await page.evaluate(VISIBLE_CONTAINERS_JS))
            opens = await page.evaluate(OPENS_JS)
            self.clicked[page] = True
            blocked = len(guarded.blocked)
            page.context.on("page", opened)
            try:
                await page.locator(trigger.selector).first.click(timeout=self.options.click_timeout * 1000)
                now = normalize_url(page.url)
                if now != capture.final_url:
                    return ClickEffect(trigger=trigger.selector, navigated_to=now)
                await settle(page)
                wanted: list[str | None] = (await page.evaluate(OPENED_JS))[opens:]
            finally:
                page.context.remove_listener("page", opened)
            if wanted:  # the page tried to open a tab (kept from loading): where it would have gone
                url = next((u for u in wanted if u and u.startswith(("http://", "https://"))), None)
                if url is not None and not guarded.allows(url):
                    guarded.blocked.append(url)
                return ClickEffect(trigger=trigger.selector, navigated_to=normalize_url(url) if url else None, new_tab=True)
            if popups:  # a page opened some other way was closed unread by the fence
                return ClickEffect(trigger=trigger.selector, navigated_to=await self._popup_url(popups, guarded, blocked), new_tab=True)
            after = await page.evaluate(VISIBLE_CONTAINERS_JS)
        except PlaywrightError as exc:
            return ClickEffect(trigger=trigger.selector, error=_first_line(exc))
        return ClickEffect(trigger=trigger.selector, opened=[s for s in after if s not in before])

    async def _popup_url(self, popups: list[Page], guarded: GuardedContext, blocked: int) -> str | None:
        """The URL the first popup went to (the fence's record when it was blocked); closes them all."""
        url: str | None = None
        for popup in popups:
            try:
                await popup.wait_for_load_state("domcontentloaded", timeout=self.options.action_timeout * 1000)
            except PlaywrightError:
                pass  # a blocked or slow popup: its URL may still be known below
            if url is None and popup.url.startswith(("http://", "https://")):
                url = normalize_url(popup.url)
            await popup.close()
        if url is None and len(guarded.blocked) > blocked:
            url = normalize_url(guarded.blocked[-1])
        return url


async def crawl(
    options: CrawlOptions, pool: BrowserPool, screenshots: Path | None = None, progress: ProgressFn | None = None, login: SiteLogin | None = None
) -> CrawlResult:
    """Crawl ``options.start_url`` (see the module docstring), logged in first when ``login`` is given."""
    if not options.start_url.startswith(("http://", "https://")):
        raise InputError(f"start_url {options.start_url!r} must start with http:// or https://")
    return await _Crawl(options, pool, screenshots, progress, login).run()
