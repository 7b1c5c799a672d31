"""The one Playwright layer: Debian's chromium, one process, isolated contexts, an origin fence.

Browser downloads are impossible here, so Chromium is always launched from a
system binary (``executable_path``). Every context can be fenced to a set of
origins (scheme, host, port; see :mod:`taskloom.tools.security.origin`): requests
elsewhere, WebSockets included (:mod:`.socket_fence`), are aborted before they
leave the browser and logged on the context; WebRTC is taken away from fenced pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urljoin, urlparse

from playwright.async_api import Browser, BrowserContext, Page, Playwright, Route, StorageState
from playwright.async_api import Error as PlaywrightError

from ..errors import TaskloomError
from ..looplock import LoopLock
from ..security.origin import OriginFence
from .devtools_fence import close_stray_pages, fence_page
from .socket_fence import NO_WEBRTC_SCRIPT, REPORT_URL, fence_policy, guard_socket, list_policy_refusals, meta_policy_script, record_report, with_policy

Interception = Literal["route", "devtools"]

__all__ = ["Interception", "CHROMIUM_ARGS", "EnvironmentUnavailable", "BrowserPool", "GuardedContext", "OriginFence", "find_chromium", "host_of"]

#: Flags that keep Chromium quiet on a machine with no network beyond loopback; the last two keep WebRTC off UDP
#: (STUN/TURN packets to any host and port, unseen by the origin fence; see :mod:`.socket_fence`): ``chromium``
#: reads the first, ``chromium-headless-shell`` only the second (``test_fences`` probes both binaries).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
]


class EnvironmentUnavailable(TaskloomError):
    """A browser or display the environment needs is not installed or cannot start."""


def find_chromium(explicit: str | None = None, headless: bool = True) -> str:
    """Path of the Chromium binary: ``explicit``, ``$TASKLOOM_CHROMIUM``, else Debian's on PATH.

    Headless, Debian's ``chromium-headless-shell`` comes first when installed: the same engine without
    the browser's window layer (Playwright's own choice for headless runs), which spends about a third
    less CPU on a crawl than ``chromium --headless``. A headed browser (on a display) is ``chromium``.
    """
    shell = shutil.which("chromium-headless-shell") if headless else None
    for candidate in (explicit, os.environ.get("TASKLOOM_CHROMIUM"), shell, shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.path.exists(candidate):
            return candidate
    raise EnvironmentUnavailable("no Chromium found; install Debian's package (`apt-get install chromium`, which `make setup` does) or set TASKLOOM_CHROMIUM")


def host_of(url: str) -> str:
    return (urlparse(url).hostname or "").lower()


@dataclass
class GuardedContext:
    """A browser context plus its origin fence and what the fence blocked.

    Every request is checked against the fence before it leaves the browser. A
    navigation request is fetched without following redirects, so a redirect that
    would leave the fence is refused at that hop (Playwright does not route the
    hops Chromium follows itself). A later hop of a redirect chain is caught after
    the load by :meth:`refuse_outside`.
    """

    context: BrowserContext
    fence: OriginFence | None
    blocked: list[str] = field(default_factory=list)  # every URL refused: requests, navigations, WebSockets
    requested: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # blocked navigations (a page or frame that tried to go outside)
    interception: Interception = "route"
    fenced: set[int] = field(default_factory=set)  # devtools interception: pages with a fence session (by id)
    pending: set[asyncio.Future[None]] = field(default_factory=set)  # devtools interception: checks under way
    strays: int = 0  # devtools interception: pages opened by a page (popups), closed unread
    opening: int = 0  # devtools interception: new_page calls under way (their pages are ours, not strays)
    policy: str | None = None  # route interception: the Content-Security-Policy added to documents and scripts (see .socket_fence)

    async def new_page(self) -> Page:
        """A new page of this context, fenced before it loads anything."""
        self.opening += 1
        try:
            page = await self.context.new_page()
        finally:
            self.opening -= 1
        if self.interception == "devtools" and self.fence is not None:
            await fence_page(self, page)
            await list_policy_refusals(self, page)  # what its <meta> policy refuses, a worker's sockets among them
        return page

    def allows(self, url: str) -> bool:
        """True when ``url`` is inside the fence (or there is no fence)."""
        return self.fence is None or self.fence.allows(url)

    def describe(self) -> str:
        """The fence in words, for messages."""
        return self.fence.describe() if self.fence is not None else "anywhere"

    async def refuse_outside(self, page: Page, back_to: str | None = None) -> str | None:
        """If ``page`` ended outside the fence, record it as blocked, leave it, and say so; else None.

        The page is put back where it was (see :meth:`restore`), so nothing from the
        other origin stays on screen.
        """
        url = page.url
        if self.allows(url) or url.startswith("chrome-error:"):
            return None
        self.blocked.append(url)
        self.left.append(url)
        await self.restore(page, back_to)
        return f"the page was redirected to {url}, which is outside this episode's allowed domains (origins {self.describe()}); it was not shown and the page went back"

    async def restore(self, page: Page, back_to: str | None = None) -> None:
        """Put ``page`` back at ``back_to`` (where it was before an action), else one step back, else on ``about:blank``."""

        def placed() -> bool:
            return self.allows(page.url) and not page.url.startswith("chrome-error:")

        with contextlib.suppress(PlaywrightError):  # a page that cannot be restored ends on about:blank below
            if back_to and back_to.startswith(("http://", "https://")) and self.allows(back_to):
                await page.goto(back_to, wait_until="domcontentloaded", timeout=10_000)
            else:
                await page.go_back(wait_until="domcontentloaded", timeout=5_000)
        for _ in range(3):  # a script of the page gone back to may leave again: settle on about:blank
            if placed():
                return
            with contextlib.suppress(PlaywrightError):  # interrupted by the page's own pending navigation: try again
                await page.goto("about:blank", timeout=5_000)


#: How long the fence waits for one navigation hop; the page's own navigation timeout is usually shorter.
_FETCH_TIMEOUT_MS = 300_000
#: Every WebSocket URL (the fence decides in :func:`.socket_fence.guard_socket`).
_ANY = re.compile(r".*")


async def _guard(guarded: GuardedContext, route: Route) -> None:
    """The route handler of a fenced context: abort outside, fetch navigations and scripts hop by hop.

    Documents and scripts (a worker's script among them) are answered with the fence's
    connection policy added (:mod:`.socket_fence`); the policy's reports are listed here.
    """
    request = route.request
    url = request.url
    navigation = request.is_navigation_request()
    try:
        if url == REPORT_URL:
            record_report(guarded, request.post_data)
            await route.fulfill(status=204)
            return
        if not guarded.allows(url):
            guarded.blocked.append(url)
            if navigation:
                guarded.left.append(url)
            await route.abort("blockedbyclient")
            return
        guarded.requested.append(url)
        if not navigation and (guarded.policy is None or request.resource_type != "script"):
            await route.continue_()
            return
        try:
            response = await route.fetch(max_redirects=0, timeout=_FETCH_TIMEOUT_MS)
        except PlaywrightError as exc:
            await route.abort(_net_error(str(exc)))  # the page shows Chromium's error page, as for any unreachable server
            return
        location = response.headers.get("location")
        if 300 <= response.status < 400 and location:
            target = urljoin(url, location)
            if not guarded.allows(target):
                guarded.blocked.append(target)
                if navigation:
                    guarded.left.append(target)
                await route.abort("blockedbyclient")
                return
        await route.fulfill(response=response, headers=None if guarded.policy is None else with_policy(response.headers, guarded.policy))
    except PlaywrightError:
        return  # the page or request went away (closed context, navigation timed out) while this hop was checked


def _net_error(message: str) -> str:
    """The Chromium error code closest to a failed fetch's message (what ``page.goto`` then reports)."""
    for needle, code in (("ECONNREFUSED", "connectionrefused"), ("ENOTFOUND", "namenotresolved"), ("EAI_AGAIN", "namenotresolved"),
                         ("ECONNRESET", "connectionreset"), ("imeout", "timedout")):
        if needle in message:
            return code
    return "failed"


class BrowserPool:
    """One Chromium process shared by many isolated contexts; started on first use."""

    def __init__(self, executable: str | None = None, headless: bool = True) -> None:
        self.executable = executable
        self.headless = headless
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._lock = LoopLock()  # the pool outlives an event loop (a build runs each unit in its own)

    async def browser(self) -> Browser:
        """The running browser, launched on first call."""
        async with self._lock:
            if self._browser is None or not self._browser.is_connected():
                from playwright.async_api import async_playwright

                path = find_chromium(self.executable, self.headless)
                self._playwright = self._playwright or await async_playwright().start()
                try:
                    self._browser = await self._playwright.chromium.launch(executable_path=path, headless=self.headless, args=CHROMIUM_ARGS)
                except PlaywrightError as exc:
                    raise EnvironmentUnavailable(f"Chromium at {path} did not start: {exc}") from exc
            return self._browser

    async def new_context(
        self, fence: OriginFence | None = None, viewport: tuple[int, int] = (1280, 800), interception: Interception = "route",
        record_har: Path | None = None, storage_state: StorageState | None = None,
    ) -> GuardedContext:
        """A fresh, isolated context; with a ``fence``, requests outside its origins are aborted.

        With ``record_har`` the context's network traffic is written there as a HAR file when the context closes;
        ``storage_state`` (cookies and local storage, e.g. of a login: :mod:`.login`) is what the context starts with.

        ``interception="route"`` (the default) fences every page through Playwright's routing;
        ``"devtools"`` fences pages made with :meth:`GuardedContext.new_page` through their own
        DevTools session, keeps the HTTP cache on and closes pages the site opens itself
        (see :mod:`.devtools_fence`: for crawling, not for agents).
        """
        browser = await self.browser()
        context = await browser.new_context(
            viewport={"width": viewport[0], "height": viewport[1]}, service_workers="block",
            record_har_path=record_har, record_har_content="embed" if record_har is not None else None, storage_state=storage_state,
        )
        policy = fence_policy(fence) if interception == "route" else None
        guarded = GuardedContext(context=context, fence=fence, interception=interception, policy=policy)
        if fence is not None:
            await context.add_init_script(NO_WEBRTC_SCRIPT)  # ICE goes to any port, unseen by routing, DevTools and CSP
            await context.route_web_socket(_ANY, lambda ws: guard_socket(guarded, ws))
        if fence is not None and interception == "route":
            await context.route("**/*", lambda route: _guard(guarded, route))
        elif fence is not None:
            close_stray_pages(guarded)
            script = meta_policy_script(fence)
            if script is not None:
                await context.add_init_script(script)
        return guarded

    async def close(self) -> None:
        """Close the browser and Playwright (safe to call twice)."""
        async with self._lock:
            if self._browser is not None:
                await self._browser.close()
                self._browser = None
            if self._playwright is not None:
                await self._playwright.stop()
                self._playwright = None
