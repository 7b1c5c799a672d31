"""What a page said and fetched while the episode ran: console messages and network requests, bounded.

Each tab of an episode keeps its own log from the moment it joined the episode, so
nothing from another episode (another browser context) or from before the episode
can show up. Entries carry the number of the document they belong to (main-frame
navigations of the tab), so a tool can return only what the current page did.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Literal

from playwright.async_api import ConsoleMessage, Error as PlaywrightError, Page, Request, Response
from pydantic import BaseModel, Field

from ..errors import InputError

__all__ = [
    "ConsoleEntry",
    "ConsoleLevel",
    "ConsoleMessages",
    "NetworkRequests",
    "PageLog",
    "RequestDetail",
    "RequestEntry",
]

#: Most console messages and requests kept per tab (the oldest are dropped first).
MAX_ENTRIES = 500
ConsoleLevel = Literal["error", "warning", "info", "debug"]
_RANK = {"error": 0, "warning": 1, "info": 2, "debug": 3}
#: Playwright's console message types mapped onto the four levels agents filter by.
_LEVEL = {"error": "error", "assert": "error", "warning": "warning", "debug": "debug", "trace": "debug", "verbose": "debug"}
_STATIC = {"image", "stylesheet", "script", "font", "media", "manifest", "texttrack", "other"}
#: Longest response body browser_network_request returns (in characters).
MAX_BODY = 4_000
_TEXT_TYPES = ("text/", "json", "javascript", "xml", "x-www-form-urlencoded")


class ConsoleEntry(BaseModel):
    """One console message (or uncaught page error)."""

    level: ConsoleLevel
    text: str
    url: str | None = Field(None, description="Script location that logged it, when known.")
    document: int = Field(description="Which document of the tab logged it (1 = the first page loaded in the tab).")


class RequestEntry(BaseModel):
    """One network request of the tab and how it ended."""

    index: int = Field(description="1-based position among the tab's requests.")
    method: str
    url: str
    resource_type: str = Field(description="Playwright's resource type: document, fetch, xhr, script, image, …")
    status: int | None = Field(None, description="HTTP status; None while pending or when the request failed.")
    failure: str | None = Field(None, description="Why the request failed (e.g. blocked: outside the allowed domains).")
    document: int = Field(description="Which document of the tab made it.")


class ConsoleMessages(BaseModel):
    """What browser_console_messages returns."""

    total: int = Field(description="Messages of the current page (or of the whole tab with all=true), any level.")
    errors: int
    warnings: int
    messages: list[ConsoleEntry] = Field(description="The messages at the level asked for or more severe, oldest first.")
    saved: str | None = Field(None, description="Where the result was saved, when a filename was given (relative to the episode folder).")


class NetworkRequests(BaseModel):
    """What browser_network_requests returns."""

    requests: list[RequestEntry] = Field(description="Requests of the current page, oldest first.")
    omitted_static: int = Field(0, description="Successful static resources (images, scripts, styles, fonts) left out; pass static=true to see them.")
    saved: str | None = Field(None, description="Where the result was saved, when a filename was given (relative to the episode folder).")


class RequestDetail(BaseModel):
    """What browser_network_request returns: one request of the current tab in full."""

    request: RequestEntry
    request_headers: dict[str, str] | None = Field(None, description="None when another part was asked for.")
    request_body: str | None = Field(None, description=f"The request's body (a POST's form or JSON), cut to {MAX_BODY} characters; None when it has none.")
    response_headers: dict[str, str] | None = Field(None, description="None while pending or when the request failed.")
    body: str | None = Field(None, description=f"The response body when it is text, cut to {MAX_BODY} characters; None otherwise.")
    body_note: str | None = Field(None, description="Why the body is left out or cut, when it is.")
    saved: str | None = Field(None, description="Where the result was saved, when a filename was given (relative to the episode folder).")


class PageLog:
    """Console messages and requests of one tab, from the moment it joined the episode."""

    def __init__(self, page: Page) -> None:
        self.console: deque[ConsoleEntry] = deque(maxlen=MAX_ENTRIES)
        self.requests: deque[RequestEntry] = deque(maxlen=MAX_ENTRIES)
        self._by_request: dict[Request, RequestEntry] = {}
        self._by_index: dict[int, Request] = {}
        self.document = 1
        self._count = 0
        page.on("console", self._console)
        page.on("pageerror", self._page_error)
        page.on("request", self._request)
        page.on("response", self._response)
        page.on("requestfailed", self._failed)
        page.on("framenavigated", lambda frame: self._navigated(frame.parent_frame is None))

    def _navigated(self, main: bool) -> None:
        if main:
            self.document += 1

    def _console(self, message: ConsoleMessage) -> None:
        location = message.location or {}
        level = _LEVEL.get(message.type, "info")
        self.console.append(ConsoleEntry(level=level, text=message.text[:2000], url=location.get("url") or None, document=self.document))  # type: ignore[arg-type]

    def _page_error(self, error: PlaywrightError) -> None:
        self.console.append(ConsoleEntry(level="error", text=f"uncaught: {str(error)[:2000]}", document=self.document))

    def _request(self, request: Request) -> None:
        self._count += 1
        document = self.document + 1 if _opens_document(request) else self.document  # committed once it loads
        entry = RequestEntry(index=self._count, method=request.method, url=request.url, resource_type=request.resource_type, document=document)
        if len(self.requests) == self.requests.maxlen:
            self._by_request = {r: e for r, e in self._by_request.items() if e is not self.requests[0]}
            self._by_index.pop(self.requests[0].index, None)
        self.requests.append(entry)
        self._by_request[request] = entry
        self._by_index[entry.index] = request

    def _response(self, response: Response) -> None:
        entry = self._by_request.pop(response.request, None)
        if entry is not None:
            entry.status = response.status

    def _failed(self, request: Request) -> None:
        entry = self._by_request.pop(request, None)
        if entry is not None:
            failure = request.failure or "failed"
            entry.failure = "blocked: outside this episode's allowed domains" if "ERR_BLOCKED_BY_CLIENT" in failure else failure

    def console_messages(self, level: ConsoleLevel = "info", all: bool = False) -> ConsoleMessages:  # noqa: A002 - Playwright MCP's name
        """Messages of the current document (or all of the tab's), at ``level`` or more severe."""
        pool = [m for m in self.console if all or m.document == self.document]
        return ConsoleMessages(
            total=len(pool),
            errors=sum(m.level == "error" for m in pool),
            warnings=sum(m.level == "warning" for m in pool),
            messages=[m for m in pool if _RANK[m.level] <= _RANK[level]],
        )

    def network_requests(self, static: bool = False, filter: str | None = None) -> NetworkRequests:  # noqa: A002 - Playwright MCP's name
        """Requests since the current document started loading (its own request included)."""
        pattern = None
        if filter:
            try:
                pattern = re.compile(filter)
            except re.error as exc:
                raise InputError(f"filter {filter!r} is not a regular expression ({exc}); pass e.g. '/api/'") from None
        pool = [r for r in self.requests if r.document == self.document]
        kept, omitted = [], 0
        for entry in pool:
            if pattern is not None and not pattern.search(entry.url):
                continue
            if not static and entry.resource_type in _STATIC and entry.failure is None and entry.status is not None and entry.status < 400:
                omitted += 1
                continue
            kept.append(entry)
        return NetworkRequests(requests=kept, omitted_static=omitted)

    async def request_detail(self, index: int) -> RequestDetail:
        """Request ``index`` (as browser_network_requests lists it) with its headers and, when small text, its response body."""
        request = self._by_index.get(index)
        entry = next((e for e in self.requests if e.index == index), None)
        if request is None or entry is None:
            known = f"{self.requests[0].index}..{self.requests[-1].index}" if self.requests else "none yet"
            raise InputError(f"no request #{index} in this tab (kept: {known}); pass an index that browser_network_requests lists")
        detail = RequestDetail(request=entry, request_headers=await request.all_headers())
        try:
            posted = request.post_data
        except UnicodeDecodeError:
            posted = "(binary body)"
        detail.request_body = posted[:MAX_BODY] if posted else None
        response = await request.response() if entry.failure is None else None
        if response is None:
            detail.body_note = "no response" if entry.failure is None else f"request failed: {entry.failure}"
            return detail
        detail.response_headers = await response.all_headers()
        kind = detail.response_headers.get("content-type", "")
        if not any(t in kind for t in _TEXT_TYPES):
            detail.body_note = f"body left out: not text ({kind or 'no content-type'})"
            return detail
        try:
            text = (await response.body()).decode("utf-8", errors="replace")
        except PlaywrightError:  # a redirect, or a body the browser no longer holds
            detail.body_note = "body not available (a redirect, or the browser no longer holds it)"
            return detail
        detail.body = text[:MAX_BODY]
        if len(text) > MAX_BODY:
            detail.body_note = f"body cut to {MAX_BODY} of {len(text)} characters"
        return detail


def _opens_document(request: Request) -> bool:
    """Whether ``request`` loads a new document into the tab's main frame."""
    try:
        return request.is_navigation_request() and request.frame.parent_frame is None
    except PlaywrightError:  # a request without a frame (a service worker's)
        return False
