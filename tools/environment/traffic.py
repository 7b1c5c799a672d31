"""Requests a page starts during an action, so the page is observed once they are done."""

from __future__ import annotations

import asyncio
import time

from playwright.async_api import Frame, Page, Request

__all__ = ["SETTLE_LIMIT", "SETTLE_QUIET", "Traffic"]

#: After an action that started requests: how long none must be open before the page is observed, and the most to wait (s).
SETTLE_QUIET, SETTLE_LIMIT = 0.05, 3.0


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
        """If the action started requests: wait until none has been open for ``quiet`` seconds (at most ``limit``)."""
        deadline, calm_since = time.monotonic() + limit, None
        while self.started:
            now = time.monotonic()
            if self.open:
                calm_since = None
            elif calm_since is None:
                calm_since = now
            elif now - calm_since >= quiet:
                return
            if now >= deadline:
                return
            await asyncio.sleep(0.01)
