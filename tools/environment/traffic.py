"""Requests a page starts during an action, so the page is observed once they are done."""

from __future__ import annotations

import asyncio
import time

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page, Request

__all__ = ["SETTLE_LIMIT", "SETTLE_QUIET", "Traffic"]

#: After an action that started requests: how long none must be open before the page is observed, and the most to wait (s).
SETTLE_QUIET, SETTLE_LIMIT = 0.05, 3.0
#: Resolves once the page has run what was queued before it: a zero-delay timer, then an animation frame (or 50 ms when hidden).
PAGE_TURN_JS = "() => new Promise(r => setTimeout(() => { const t = setTimeout(r, 50); requestAnimationFrame(() => { clearTimeout(t); r(); }); }, 0))"


class Traffic:
    """The requests a page starts during an action, so the page is observed once they are done.

    Pages that fetch their data after a navigation (or on a click) render it after the
    request ends; observing at ``domcontentloaded`` would show them half drawn. An action
    that started no request (a tab switch, typing) waits for nothing.
    """

    def __init__(self, page: Page) -> None:
        self.page = page
        self.started = 0
        self.open: set[Request] = set()
        self.watching = False
        self.navigations = self.navigations_before = 0  # main-frame documents committed: in all, and before the action
        page.on("request", self._start)
        page.on("requestfinished", self._end)
        page.on("requestfailed", self._end)
        page.on("framenavigated", self._navigated)

    def _start(self, request: Request) -> None:
        if self.watching:
            self.started += 1
            self.open.add(request)

    def _end(self, request: Request) -> None:
        self.open.discard(request)

    def _navigated(self, frame: Frame) -> None:
        if frame.parent_frame is None:
            self.navigations += 1

    def watch(self) -> None:
        """Count from now: requests in flight before the action (a long poll) are not waited for."""
        self.started, self.open, self.watching = 0, set(), True
        self.navigations_before = self.navigations

    async def committed(self, limit: float = SETTLE_LIMIT) -> None:
        """Wait (at most ``limit`` s) until the main frame has committed a document since :meth:`watch`."""
        deadline = time.monotonic() + limit
        while self.navigations == self.navigations_before and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    async def settle(self, quiet: float = SETTLE_QUIET, limit: float = SETTLE_LIMIT) -> None:
        """If the action started requests: wait until none has been open for ``quiet`` seconds (at most ``limit``).

        Then the page itself is waited for: a script that handles a response runs in a
        task of the page's own, which a busy machine can hold back past ``quiet``; one
        round trip through the page's task queue lets what was queued before it run.
        """
        deadline, calm_since = time.monotonic() + limit, None
        while self.started:
            now = time.monotonic()
            if self.open:
                calm_since = None
            elif calm_since is None:
                calm_since = now
            elif now - calm_since >= quiet:
                await self._page_turn(deadline - now)
                return
            if now >= deadline:
                return
            await asyncio.sleep(0.01)

    async def _page_turn(self, limit: float) -> None:
        """Wait (at most ``limit`` s) until the page has run the tasks queued before this call (a zero-delay timer, then a frame)."""
        try:
            await asyncio.wait_for(self.page.evaluate(PAGE_TURN_JS), max(limit, 0.05))
        except (PlaywrightError, TimeoutError):
            pass  # the page navigated or its thread is held: observed as it is, which the snapshot then shows
