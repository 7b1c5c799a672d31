"""Waiting until a page has stopped fetching: a count of its requests in flight, polled.

Cheaper than Playwright's ``networkidle``, which always waits 500 ms: a page whose
requests all finished is ready after ``quiet`` seconds (0.1 by default), and pages that
fetch their data after the load event are rendered by the time :func:`settle` returns.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["track_requests", "settle"]


def track_requests(page: Any) -> None:
    """Count the page's requests in flight (read by :func:`settle`); call once per page, before it loads."""
    page.inflight = 0

    def started(_: Any) -> None:
        page.inflight += 1

    def ended(_: Any) -> None:
        page.inflight = max(0, page.inflight - 1)

    page.on("request", started)
    page.on("requestfinished", ended)
    page.on("requestfailed", ended)


async def settle(page: Any, quiet: float = 0.1, limit: float = 3.0) -> None:
    """Wait until no request has been in flight for ``quiet`` seconds (at most ``limit``; never raises)."""
    waited = calm = 0.0
    step = 0.05
    while waited < limit and calm < quiet:
        await asyncio.sleep(step)
        waited += step
        calm = calm + step if getattr(page, "inflight", 0) == 0 else 0.0
