"""After an action: let what it set off finish before the page is observed, then take the snapshot it is observed with.

The page is asked (one call) whether the action set off a navigation or opened a tab;
what it did is waited for, then the requests it started. When the page will be
snapshotted anyway, the snapshot is asked for in the same round trip, right behind the
question: if the action set nothing off, that snapshot already shows the page as it
landed and the observation uses it; otherwise it is dropped and a new one is taken
after landing. Every snapshot is bounded by the episode's limits: in time (a note
replaces one that takes too long) and in size (a marker ends one that is cut).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from ..browser.dom import NAVIGATION_PENDING_JS
from .limits import EpisodeLimits
from .locate import aria, explain, forget, until_dialog
from .snapshot_view import View, truncate
from .tabs import Tab, Tabs

__all__ = ["Landed", "bounded", "land"]


@dataclass
class Landed:
    """What landing found on ``tab``: its title when the action set nothing off, and a snapshot taken meanwhile."""

    tab: Tab
    title: str | None = None
    early: asyncio.Future[str] | None = None

    def snapshot(self) -> asyncio.Future[str] | None:
        """The snapshot taken while landing, when it shows the page as landed: nothing was set off and nothing has started or committed since."""
        traffic = self.tab.traffic
        if self.title is None or traffic.started or traffic.navigations != traffic.navigations_before:
            return None
        return self.early


async def land(tab: Tab, tabs: Tabs, opened: int, view: View | None = None) -> Landed:
    """Let what an action on ``tab`` set off finish; ``view``: the snapshot to take meanwhile (a whole-page one only).

    A tab the page opened (the ``opened``-th and later) is waited for until it is listed;
    a navigation the page asked for (even one Playwright does not wait for, as after
    ``select_option``) until its document is parsed; then the requests the action
    started until none has been open for a moment.
    """
    limits = tabs.limits
    asking = asyncio.ensure_future(tab.page.evaluate(NAVIGATION_PENDING_JS))
    early = None
    if view is not None and not view.partial:  # sent right behind the question, so the page answers both in one go
        early = asyncio.ensure_future(aria(tab.page, view, limits.snapshot_timeout_ms))
        forget(early)  # its failure (the page navigated under it, or took too long) only means it is not used
    try:
        asked: dict[str, Any] = await asyncio.wait_for(asking, limits.action_timeout_ms / 1000)
    except PlaywrightError:  # the document went away under the call: a navigation is under way
        asked = {"navigation": True, "popup": False}
    except TimeoutError:  # the page's scripts hold its thread: nothing can be learnt from it now; the observation says so
        asked = {"navigation": False, "popup": False}
    if asked["popup"]:
        await tabs.opened_since(opened)
    if asked["navigation"]:
        await tab.traffic.committed()
        await tab.page.wait_for_load_state("domcontentloaded", timeout=limits.navigation_timeout_ms)
    quiet = not (asked["popup"] or asked["navigation"] or tab.traffic.started)
    await tab.traffic.settle()
    return Landed(tab, asked.get("title") if quiet else None, early)



async def bounded(tab: Tab, work: Awaitable[str], view: View, limits: EpisodeLimits, acted: bool = True) -> str | None:
    """The snapshot ``work`` takes of ``tab``, cut to ``view.max_chars`` (default: the limit); None when a dialog paused the page first.

    A snapshot that takes longer than the limit, or fails, is replaced by a note saying
    so and what to do (``acted``: it follows an action, which was done regardless).
    """
    try:
        found: str | None = await until_dialog(tab, work)
    except PlaywrightTimeout as exc:
        return limits.snapshot_note(str(exc).splitlines()[0], acted)
    except PlaywrightError as exc:
        return f"(no snapshot: {explain(exc)}; the page may be changing — call browser_snapshot again)"
    return None if found is None else truncate(found, view.max_chars or limits.max_chars, asked=view.max_chars is not None)
