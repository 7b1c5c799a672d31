"""The one Playwright layer: Debian's chromium, one process, isolated contexts, a domain guard.

Browser downloads are impossible here, so Chromium is always launched from a
system binary (``executable_path``). Every context can be fenced to a set of
allowed hosts: requests elsewhere are aborted before they leave the browser and
logged on the context.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from ..errors import TaskloomError

__all__ = ["CHROMIUM_ARGS", "EnvironmentUnavailable", "BrowserPool", "GuardedContext", "find_chromium", "host_of", "host_allowed"]

#: Flags that keep Chromium quiet on a machine with no network beyond loopback.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


class EnvironmentUnavailable(TaskloomError):
    """A browser or display the environment needs is not installed or cannot start."""


def find_chromium(explicit: str | None = None) -> str:
    """Path of the Chromium binary: ``explicit``, ``$TASKLOOM_CHROMIUM``, or ``chromium`` on PATH."""
    for candidate in (explicit, os.environ.get("TASKLOOM_CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.path.exists(candidate):
            return candidate
    raise EnvironmentUnavailable("no Chromium found; install Debian's package (`apt-get install chromium`, which `make setup` does) or set TASKLOOM_CHROMIUM")


def host_of(url: str) -> str:
    return (urlparse(url).hostname or "").lower()


def host_allowed(url: str, allowed: set[str]) -> bool:
    """True for data:/about:/blob: URLs and for hosts equal to, or under, an allowed domain.

    Examples
    --------
    >>> host_allowed("http://127.0.0.1:8000/a", {"127.0.0.1"})
    True
    >>> host_allowed("https://docs.example.org/x", {"example.org"})
    True
    >>> host_allowed("http://localhost:9/x", {"127.0.0.1"})
    False
    """
    scheme = urlparse(url).scheme
    if scheme in ("data", "about", "blob", "chrome-error"):
        return True
    host = host_of(url)
    return any(host == d or host.endswith("." + d) for d in allowed)


@dataclass
class GuardedContext:
    """A browser context plus what its domain guard blocked."""

    context: Any
    allowed: set[str] | None
    blocked: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)


class BrowserPool:
    """One Chromium process shared by many isolated contexts; started on first use."""

    def __init__(self, executable: str | None = None, headless: bool = True) -> None:
        self.executable = executable
        self.headless = headless
        self._playwright: Any = None
        self._browser: Any = None
        self._lock = asyncio.Lock()

    async def browser(self) -> Any:
        """The running browser, launched on first call."""
        async with self._lock:
            if self._browser is None or not self._browser.is_connected():
                from playwright.async_api import Error as PlaywrightError
                from playwright.async_api import async_playwright

                path = find_chromium(self.executable)
                self._playwright = self._playwright or await async_playwright().start()
                try:
                    self._browser = await self._playwright.chromium.launch(executable_path=path, headless=self.headless, args=CHROMIUM_ARGS)
                except PlaywrightError as exc:
                    raise EnvironmentUnavailable(f"Chromium at {path} did not start: {exc}") from exc
            return self._browser

    async def new_context(self, allowed_hosts: set[str] | None = None, viewport: tuple[int, int] = (1280, 800)) -> GuardedContext:
        """A fresh, isolated context; with ``allowed_hosts``, requests to other hosts are aborted."""
        browser = await self.browser()
        context = await browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, service_workers="block")
        guarded = GuardedContext(context=context, allowed={h.lower() for h in allowed_hosts} if allowed_hosts else None)
        if guarded.allowed is not None:

            async def guard(route: Any) -> None:
                url = route.request.url
                if host_allowed(url, guarded.allowed or set()):
                    guarded.requested.append(url)
                    await route.continue_()
                else:
                    guarded.blocked.append(url)
                    await route.abort("blockedbyclient")

            await context.route("**/*", guard)
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
