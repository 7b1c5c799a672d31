"""What a crawl is asked for and what it brings back: options, page captures, click effects, the result.

Kept apart from the crawler (:mod:`.crawl`) so that the graph builders, listings and checks
can read captures without loading the browser code; :func:`normalize_url` is the one URL
form every part of the web graph compares.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlparse, urlunparse

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ...browser import host_of
from ...errors import TaskloomError
from ...security.origin import OriginFence
from .extract import ElementInfo
from .frontier import Skip
from .records import RecordBlock
from .states import AppState

__all__ = ["CrawlOptions", "ClickEffect", "PageCapture", "CrawlResult", "SiteUnreachable", "normalize_url"]


class SiteUnreachable(TaskloomError):
    """The crawl's start page could not be loaded as a page of the site (refused, unresolvable, HTTP error, redirected away)."""


class CrawlOptions(BaseModel):
    """What to crawl and how politely."""

    model_config = ConfigDict(extra="forbid")

    start_url: str
    max_pages: int = Field(30, ge=1, le=2000)
    max_depth: int = Field(3, ge=0, le=20)
    allowed_domains: list[str] | None = Field(
        None,
        description="Hosts (and their subdomains) the crawl may request, on the start URL's scheme and port unless written as host:port "
        "or as an origin (http://host:port); the start URL's origin is always allowed.",
    )
    delay: float = Field(0.2, ge=0.0, le=30.0, description="Seconds between page loads of one context.")
    page_timeout: float = Field(15.0, ge=1.0, le=300.0, description="Seconds a page load may take before the URL is skipped as a timeout.")
    action_timeout: float = Field(5.0, ge=0.5, le=120.0, description="Default seconds for other browser steps (waits for selectors, popups).")
    click_timeout: float = Field(2.0, ge=0.2, le=60.0, description="Seconds a trigger may take to become clickable.")
    extract_timeout: float = Field(60.0, ge=1.0, le=600.0, description="Seconds reading one page's elements may take before the URL is skipped as a timeout.")
    screenshot_timeout: float = Field(5.0, ge=0.5, le=120.0, description="Seconds a viewport screenshot may take; past it the page is kept without one.")
    contexts: int = Field(2, ge=1, le=16, description="Browser contexts crawling in parallel.")
    click_budget: int = Field(12, ge=0, le=100, description="Triggers clicked per page.")
    screenshots: bool = True
    max_states: int = Field(20, ge=0, le=500, description="App states (same-URL content changes) stored besides max_pages.")
    state_timeout: float = Field(
        300.0, ge=1.0, le=3600.0,
        description="A safety net on exploring one page's app states (the budget is max_states); past it the states found so far are kept, "
        "and the crawl may then depend on the machine's speed.",
    )
    template_cap: int = Field(5, ge=1, le=2000, description="Pages crawled per URL template (path shape + query keys).")
    listing_cap: int = Field(10, ge=1, le=2000, description="Pages crawled per listing (its page/offset/cursor variants).")
    view_cap: int = Field(2, ge=0, le=100, description="Sort or format views crawled per listing while other pages wait (the others are recorded as views); budget left over goes to more sort views.")

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
    new_tab: bool = Field(False, description="navigated_to was opened in a new tab or popup (closed after reading its URL).")
    error: str | None = Field(None, description="Why the click failed (hidden, covered, timed out).")


class PageCapture(BaseModel):
    """One crawled page."""

    url: str = Field(description="Normalised URL.")
    final_url: str
    title: str
    text: str
    depth: int
    order: int = Field(description="Position in the crawl's page list; the graph is built in this order.")
    dom_hash: str
    elements: list[ElementInfo]
    clicks: list[ClickEffect] = Field(default_factory=list)
    links: list[str] = Field(default_factory=list, description="Normalised in-domain URLs linked or submitted to.")
    screenshot: str | None = None
    screenshot_error: str | None = Field(None, description="Why no screenshot was taken (the page is kept).")
    elements_truncated: int = Field(0, description="Elements past the extraction's cap (not in ``elements``).")
    marks_screenshot: str | None = None
    marks: dict[str, str] = Field(default_factory=dict, description="Set-of-marks label → element selector.")
    records: list[RecordBlock] = Field(default_factory=list, description="Records the page shows (tables, key-value tables, cards).")
    state: AppState | None = Field(None, description="Set when this capture is an app state of final_url rather than a plain load.")
    state_error: str | None = Field(None, description="Why the page's app states were not explored to the end.")
    _states: list[PageCapture] = PrivateAttr(default_factory=list)
    _outside: list[str] = PrivateAttr(default_factory=list)


class CrawlResult(BaseModel):
    """A whole crawl."""

    start_url: str
    allowed_domains: list[str]
    pages: list[PageCapture]
    aliases: dict[str, str] = Field(default_factory=dict, description="URL → URL of the page with identical content.")
    skipped: dict[str, Skip] = Field(default_factory=dict, description="URL → why it was not stored as a page.")
    blocked: list[str] = Field(default_factory=list, description="Requests the origin fence aborted, and pages whose load ended outside it.")
    requested: list[str] = Field(default_factory=list, description="Every request that went out.")
    seconds: float = 0.0

    def skip_counts(self) -> dict[str, int]:
        """How many URLs were skipped per reason."""
        counts: dict[str, int] = {}
        for skip in self.skipped.values():
            counts[skip.reason] = counts.get(skip.reason, 0) + 1
        return dict(sorted(counts.items()))


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
