"""The tabs of a browser episode: every page of its context, one of them current.

Pages the site opens itself (``target=_blank`` links, ``window.open``) join the list
as they appear, so they are listed in observations and can be selected with
``browser_tabs``; they stay inside the episode's context, so its origin fence covers
them too. Each tab has its own request watcher, console and network log, and modal
state (a held dialog or file chooser).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from pydantic import BaseModel, Field

from ..browser import GuardedContext
from ..errors import InputError
from .limits import EpisodeLimits
from .modal import Modal
from .page_log import PageLog
from .traffic import Traffic
from .trajectory import Target

__all__ = ["Tab", "TabInfo", "Tabs"]


class TabInfo(BaseModel):
    """One open tab."""

    index: int = Field(description="Position in the tab list; pass it to browser_tabs select or close.")
    title: str
    url: str
    current: bool = Field(description="Whether browser_* actions act in this tab.")


@dataclass(eq=False)
class Tab:
    """One page of the episode and what is watched on it."""

    page: Page
    traffic: Traffic = field(init=False)
    log: PageLog = field(init=False)
    modal: Modal = field(init=False)
    shown: dict[str, Target] = field(init=False, default_factory=dict)  # every ref a snapshot of this tab has shown the agent, as it showed it

    def __post_init__(self) -> None:
        self.traffic = Traffic(self.page)
        self.log = PageLog(self.page)
        self.modal = Modal(self.page)


class Tabs:
    """The open tabs of one episode and which one is current."""

    def __init__(self, guarded: GuardedContext, first: Page, limits: EpisodeLimits = EpisodeLimits()) -> None:
        self.guarded = guarded
        self.limits = limits
        self.tabs: list[Tab] = []
        self.fresh: list[Tab] = []  # tabs opened since the last observation: their first page is waited for
        self.opened = 0  # tabs opened in all (by the site or browser_tabs new)
        self.limit(first)
        self._current = self._add(first)
        guarded.context.on("page", self._opened)

    def limit(self, page: Page) -> None:
        """Give ``page`` the episode's action and navigation timeouts."""
        page.set_default_timeout(self.limits.action_timeout_ms)
        page.set_default_navigation_timeout(self.limits.navigation_timeout_ms)

    @property
    def current(self) -> Tab:
        """The tab actions act in (the last one standing if every tab has closed)."""
        return self._current

    def index(self, tab: Tab) -> int:
        return self.tabs.index(tab)

    def _add(self, page: Page) -> Tab:
        for tab in self.tabs:
            if tab.page is page:
                return tab
        tab = Tab(page)
        self.tabs.append(tab)
        page.on("close", lambda _: self._closed(tab))
        return tab

    def _opened(self, page: Page) -> None:
        """A page the site (or browser_tabs new) opened: it joins the list, not yet current."""
        self.limit(page)
        tab = self._add(page)
        if tab not in self.fresh:
            self.fresh.append(tab)
            self.opened += 1

    async def opened_since(self, count: int, limit: float = 3.0) -> None:
        """Wait (at most ``limit`` s) until more than ``count`` tabs have been opened: the page asked for one."""
        deadline = time.monotonic() + limit
        while self.opened <= count and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    async def settle_new(self) -> None:
        """Wait (at most the action timeout each) until tabs opened since the last call have parsed their first document."""
        fresh, self.fresh = self.fresh, []
        for tab in fresh:
            try:
                await tab.page.wait_for_load_state("domcontentloaded", timeout=self.limits.action_timeout_ms)
            except PlaywrightError:
                continue  # closed or still loading: it is listed as it is

    def _closed(self, tab: Tab) -> None:
        if tab not in self.tabs or len(self.tabs) == 1:
            return  # the last tab stays listed (closed) so the episode still has a page to report on
        position = self.tabs.index(tab)
        self.tabs.remove(tab)
        if tab is self._current:
            self._current = self.tabs[min(position, len(self.tabs) - 1)]

    def _at(self, index: int) -> Tab:
        if not 0 <= index < len(self.tabs):
            raise InputError(f"no tab {index}: the open tabs are 0–{len(self.tabs) - 1}; call browser_tabs with action 'list' to see them")
        return self.tabs[index]

    def select(self, index: int) -> Tab:
        """Make tab ``index`` current and bring it to the front."""
        self._current = self._at(index)
        return self._current

    async def front(self) -> None:
        """Bring the current tab to the front (focus, visibility), as a person switching tabs would."""
        try:
            await self._current.page.bring_to_front()
        except PlaywrightError:
            return  # a tab that closed meanwhile: the next action reports it

    async def new(self) -> Tab:
        """Open a blank tab in the episode's context and make it current."""
        page = await self.guarded.new_page()
        self._opened(page)
        self._current = self._add(page)
        return self._current

    async def close(self, index: int | None = None) -> Tab:
        """Close tab ``index`` (default: the current one); returns the tab that is current afterwards."""
        tab = self._current if index is None else self._at(index)
        if len(self.tabs) == 1:
            raise InputError("this is the episode's only tab; it cannot be closed (call env_close to end the episode)")
        await tab.page.close()
        self._closed(tab)  # the close event may come later; the list is right now
        return self._current

    async def infos(self) -> list[TabInfo]:
        """Every open tab with its title and URL."""

        async def title(tab: Tab) -> str:
            try:
                return await asyncio.wait_for(tab.page.title(), 2.0)
            except (PlaywrightError, TimeoutError):
                return ""

        titles = await asyncio.gather(*(title(t) for t in self.tabs))
        return [TabInfo(index=i, title=titles[i], url=t.page.url, current=t is self._current) for i, t in enumerate(self.tabs)]

    def describe(self, infos: list[TabInfo]) -> str:
        """The ``### Open tabs`` header observations show when more than one tab is open."""
        lines = [f"{t.index}:{' (current)' if t.current else ''} {t.title or '(no title)'} — {t.url}" for t in infos]
        return "### Open tabs (switch with browser_tabs)\n" + "\n".join(lines)

    async def dismiss_all(self) -> None:
        """Dismiss every held dialog and file chooser (the episode is closing)."""
        for tab in list(self.tabs):
            await tab.modal.dismiss_all()
