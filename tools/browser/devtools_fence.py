"""The origin fence enforced through Chromium's DevTools ``Fetch`` domain, one session per page.

Playwright's routing (``context.route``) is the safe default: it covers every page of a context
from its first request, popups included. It also turns Chromium's HTTP cache off and sends
every request through the driver, which costs a crawl about a third of its speed (a site's
stylesheets and scripts are fetched and compiled again for every page; ``bench/crawl.py``).

Here each page gets its own DevTools session with ``Fetch.enable``: Chromium pauses each request
the network would see (document loads, every redirect hop, subresources, frames) and the
handler lets it go on or fails it as ``BlockedByClient``; responses the page's memory cache
serves never reach the network and need no check (they were fetched through the fence). The
cache stays on.

The limit: a page opened by the page itself (a popup) starts loading before its session exists.
Contexts fenced this way are for code that opens no popups: the crawler turns would-be popups
into recorded URLs (:data:`taskloom.tools.graph.web.crawl.COUNT_OPENS_JS`) and closes any page
that appears anyway. Agent episodes keep Playwright's routing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

if TYPE_CHECKING:
    from .pool import GuardedContext

__all__ = ["fence_page", "close_stray_pages"]

#: Request every network request at the request stage (before it leaves the browser).
_PATTERNS = {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}


async def _decide(guarded: GuardedContext, session: CDPSession, event: dict[str, Any]) -> None:
    """Let one paused request go on, or fail it when it leaves the fence (recorded on ``guarded``)."""
    url = str(event.get("request", {}).get("url", ""))
    request_id = event["requestId"]
    try:
        if guarded.allows(url):
            guarded.requested.append(url)
            await session.send("Fetch.continueRequest", {"requestId": request_id})
            return
        guarded.blocked.append(url)
        if event.get("resourceType") == "Document":
            guarded.left.append(url)
        await session.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})
    except PlaywrightError:
        return  # the page, its session or the request went away while it was checked


def _spawn(guarded: GuardedContext, work: Coroutine[Any, Any, None]) -> None:
    task = asyncio.ensure_future(work)
    guarded.pending.add(task)
    task.add_done_callback(guarded.pending.discard)


async def fence_page(guarded: GuardedContext, page: Page) -> None:
    """Fence ``page`` through its own DevTools session (idempotent); call it before the page loads anything."""
    if id(page) in guarded.fenced:
        return
    guarded.fenced.add(id(page))
    session = await guarded.context.new_cdp_session(page)
    session.on("Fetch.requestPaused", lambda event: _spawn(guarded, _decide(guarded, session, event)))
    await session.send("Fetch.enable", _PATTERNS)


def close_stray_pages(guarded: GuardedContext) -> None:
    """Close, as soon as it appears, any page of the context not fenced by :func:`fence_page` (a popup)."""

    async def close(page: Page) -> None:
        guarded.strays += 1
        try:
            await page.close()
        except PlaywrightError:
            return  # already gone

    def appeared(page: Page) -> None:
        if not guarded.opening:  # pages made by GuardedContext.new_page are fenced there
            _spawn(guarded, close(page))

    guarded.context.on("page", appeared)
