"""Browser episodes: one isolated context each, every action recorded, failures told to the agent.

Actions are shaped like Playwright MCP's tools (snapshot refs ``[ref=eN]``,
``element`` + ``ref`` arguments), so agents that know Playwright MCP work unchanged.
A failed action (stale ref, element gone, timeout, blocked domain) is recorded with
its error and raised as :class:`ActionFailed`; the episode stays usable.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Locator, Page, Request
from pydantic import BaseModel, Field

from ..errors import InputError, TaskloomError
from ..tasks.model import SuccessCriterion, Task
from ..browser import GuardedContext
from .canonical import canonical
from ..browser.dom import DESCRIBE_JS, NAVIGATION_PENDING_JS, draw_marks
from .protocols import SuccessChecker
from .trajectory import Recorder, Target

__all__ = ["ActionFailed", "Observation", "BrowserEpisode"]

# Playwright numbers refs e1, e2… on a tab's first page and f1e1, f2e7… after it navigates.
_REF = re.compile(r"^(?:f\d+)?e\d+$")
#: ``(els) => {count, info}``: how many elements a selector matched and DESCRIBE_JS of the first, in one call.
_FIND_JS = f"(els) => ({{count: els.length, info: els.length ? ({DESCRIBE_JS})(els[0]) : null}})"
#: How Playwright says a ref names nothing: no such element, or a ref from a snapshot of an earlier page.
_MISSING = re.compile(r"Failed to find element matching selector|Invalid frame in aria-ref selector")
#: After an action that started requests: how long none must be open before the page is observed, and the most to wait (s).
SETTLE_QUIET, SETTLE_LIMIT = 0.05, 3.0
_INTERACTIVE = re.compile(r"^\s*- (link|button|textbox|searchbox|combobox|checkbox|radio|tab|menuitem|option|switch|slider|spinbutton)\b.*\[ref=((?:f\d+)?e\d+)\]", re.M)


class ActionFailed(TaskloomError):
    """An action could not be carried out; the message says why and what to try."""


class Observation(BaseModel):
    """What the agent sees after an action: where it is and the page's accessibility snapshot."""

    ok: bool = True
    action: str | None = Field(None, description="Canonical form of the action just done.")
    url: str
    title: str
    snapshot: str | None = Field(None, description="Accessibility snapshot; act on elements by their [ref=eN].")


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


class BrowserEpisode:
    """One agent's session in its own browser context."""

    def __init__(self, episode_id: str, guarded: GuardedContext, page: Page, recorder: Recorder, checker: SuccessChecker, screenshots: bool = False) -> None:
        self.id = episode_id
        self.guarded = guarded
        self.page = page
        self.recorder = recorder
        self.checker = checker
        self.screenshots = screenshots
        self.closed = False
        self.task: Task | None = None  # the full task, server side only: final-state checks at close
        self.watch: list[SuccessCriterion] = []  # state checks probed after every action (composite tasks' subtasks)
        self.traffic = Traffic(page)

    # -- observation ------------------------------------------------------------------

    async def snapshot(self) -> Observation:
        """The page's accessibility snapshot (refs ``[ref=eN]``); recorded as an action."""
        return await self._act("snapshot", {}, canonical("snapshot"), None, None, snapshot_after=True)

    async def observe(self) -> Observation:
        """URL, title and snapshot, without recording (for tool responses)."""
        url = self.page.url  # read first, as the agent is told where the action left it
        title, snapshot = await asyncio.gather(self.page.title(), self._aria())  # both in flight at once: one round trip
        return Observation(url=url, title=title, snapshot=snapshot)

    async def screenshot(self, marks: bool = False, full_page: bool = False) -> bytes:
        """A PNG of the viewport (or full page); with ``marks``, interactive elements boxed and labelled by ref."""
        png: bytes = await self.page.screenshot(full_page=full_page)
        if marks:
            snapshot = await self._aria()
            boxes = []
            for _, ref in _INTERACTIVE.findall(snapshot):
                box = await self.page.locator(f"aria-ref={ref}").bounding_box()
                if box:
                    boxes.append((ref, (box["x"], box["y"], box["x"] + box["width"], box["y"] + box["height"])))
            png = draw_marks(png, boxes)
        path, relative = self.recorder.screenshot_path("marks" if marks else "screen")
        path.write_bytes(png)
        self.recorder.action(
            name="take_screenshot",
            args={"marks": marks, "full_page": full_page},
            canonical=canonical("screenshot", marks="yes" if marks else None),
            url_before=self.page.url,
            url_after=self.page.url,
            t_start=time.time(),
            t_end=time.time(),
            screenshot=relative,
        )
        return png

    # -- actions ------------------------------------------------------------------------

    async def click(self, element: str, ref: str, double: bool = False, button: Literal["left", "right", "middle"] = "left") -> Observation:
        async def run(loc: Locator) -> None:
            await (loc.dblclick(button=button) if double else loc.click(button=button))

        return await self._element_action("double_click" if double else "click", {"element": element, "ref": ref, "button": button}, ref, run)

    async def type(self, element: str, ref: str, text: str, submit: bool = False) -> Observation:
        async def run(loc: Locator) -> None:
            await loc.fill(text)
            if submit:
                await loc.press("Enter")

        return await self._element_action("type", {"element": element, "ref": ref, "text": text, "submit": submit}, ref, run, typed=text)

    async def select_option(self, element: str, ref: str, values: list[str]) -> Observation:
        if not values:
            raise InputError("values is empty; pass the option label(s) or value(s) to select")

        async def run(loc: Locator) -> None:
            options: list[dict[str, str]] = await loc.evaluate("(s) => Array.from(s.options || []).map(o => ({label: o.label || o.text, value: o.value}))")
            chosen = []
            for wanted in values:
                match = next((o["value"] for o in options if wanted in (o["label"], o["value"])), None)
                if match is None:
                    raise ActionFailed(f"no option {wanted!r}; the options are {[o['label'] for o in options]}")
                chosen.append(match)
            await loc.select_option(chosen)

        return await self._element_action("select_option", {"element": element, "ref": ref, "values": values}, ref, run, option=", ".join(values))

    async def hover(self, element: str, ref: str) -> Observation:
        return await self._element_action("hover", {"element": element, "ref": ref}, ref, lambda loc: loc.hover())

    async def press_key(self, key: str) -> Observation:
        if not key.strip():
            raise InputError("key is empty; pass a key name such as 'Enter', 'ArrowDown' or 'Control+a'")
        return await self._act("press_key", {"key": key}, canonical("press", key=key), None, lambda: self.page.keyboard.press(key))

    async def navigate(self, url: str) -> Observation:
        if not url.startswith(("http://", "https://")):
            return await self._fail("navigate", {"url": url}, canonical("navigate", url=url), None, f"{url!r} is not an http(s) URL; pass a full address such as http://host/path")
        if not self.guarded.allows(url):
            return await self._fail("navigate", {"url": url}, canonical("navigate", url=url), None, f"{url} is outside this episode's allowed domains (origins {self.guarded.describe()})")
        return await self._act("navigate", {"url": url}, canonical("navigate", url=url), None, lambda: self.page.goto(url, wait_until="domcontentloaded"))

    async def navigate_back(self) -> Observation:
        return await self._act("navigate_back", {}, canonical("go_back"), None, lambda: self.page.go_back(wait_until="domcontentloaded"))

    async def wait_for(self, seconds: float | None = None, text: str | None = None, text_gone: str | None = None) -> Observation:
        if seconds is None and text is None and text_gone is None:
            raise InputError("pass seconds, text or text_gone")
        if seconds is not None and not 0 <= seconds <= 30:
            raise InputError("seconds must be between 0 and 30")

        async def run() -> None:
            if seconds:
                await self.page.wait_for_timeout(seconds * 1000)
            try:
                if text:
                    await self.page.get_by_text(text).first.wait_for(state="visible", timeout=10_000)
                if text_gone:
                    await self.page.get_by_text(text_gone).first.wait_for(state="hidden", timeout=10_000)
            except PlaywrightError:
                what = f"text {text!r} did not appear" if text else f"text {text_gone!r} did not disappear"
                raise ActionFailed(f"{what} within 10 s; take a browser_snapshot to see the page") from None

        args = {"seconds": seconds, "text": text, "text_gone": text_gone}
        return await self._act("wait_for", args, canonical("wait", text=text, text_gone=text_gone, seconds=seconds), None, run)

    async def scroll(self, direction: Literal["up", "down"] = "down", amount: int = 600) -> Observation:
        delta = amount if direction == "down" else -amount
        return await self._act("scroll", {"direction": direction, "amount": amount}, canonical("scroll", direction=direction), None, lambda: self.page.mouse.wheel(0, delta))

    # -- machinery --------------------------------------------------------------------

    async def _capture(self, path: Any) -> bool:
        """Screenshot to ``path``; a page caught mid-navigation is retried once after it loads."""
        for attempt in range(2):
            try:
                path.write_bytes(await self.page.screenshot())
                return True
            except PlaywrightError:
                if attempt == 0:
                    try:
                        await self.page.wait_for_load_state("load", timeout=5_000)
                    except PlaywrightError:
                        return False
        return False

    async def _aria(self) -> str:
        snapshot: str = await self.page.locator("body").aria_snapshot(mode="ai")
        return snapshot

    async def _find(self, ref: str) -> tuple[Locator, Target]:
        """The element ``ref`` names and its description, found and described in one page call.

        ``ref`` is a snapshot ref (``e12``) or, for gold-step replay, ``css=<selector>``, which
        must match exactly one element.
        """
        if ref.startswith("css="):  # gold-step replay acts by selector through the same recorded path
            loc = self.page.locator(ref[4:])
            with contextlib.suppress(PlaywrightError):  # pages that render after load need a moment; the count below reports a miss
                await loc.first.wait_for(state="attached", timeout=5_000)
            found: dict[str, Any] = await loc.evaluate_all(_FIND_JS)
            if found["count"] != 1:
                raise ActionFailed(f"selector {ref[4:]!r} matches {found['count']} elements, not exactly one")
            info = found["info"]
        else:
            if not _REF.match(ref or ""):
                raise InputError(f"ref {ref!r} is not a snapshot ref; use the [ref=eN] value from browser_snapshot, e.g. 'e12'")
            loc = self.page.locator(f"aria-ref={ref}")
            try:  # one round trip that neither waits nor retries: a missing element fails at once
                info = await self.page.eval_on_selector(f"aria-ref={ref}", DESCRIBE_JS)
            except PlaywrightError as exc:
                if not _MISSING.search(str(exc)):
                    raise
                raise ActionFailed(f"ref {ref} is not on the page any more (the page changed); call browser_snapshot for fresh refs") from None
        return loc, Target(role=info["role"] or info["tag"], name=info["name"] or None, text=info["text"][:200] or None, selector=info["selector"], ref=ref)

    async def _element_action(self, name: str, args: dict[str, Any], ref: str, run: Callable[[Locator], Awaitable[Any]], **canon: str) -> Observation:
        self.recorder.check_limit()
        try:
            loc, target = await self._find(ref)
        except ActionFailed as exc:
            return await self._fail(name, args, canonical(name, element=args.get("element")), Target(ref=ref), str(exc))
        except PlaywrightError as exc:
            return await self._fail(name, args, canonical(name, element=args.get("element")), Target(ref=ref), _explain(exc))
        text = target.name or target.text or args.get("element")
        if name in ("type", "select_option"):
            form = canonical("type" if name == "type" else "select", text=canon.get("typed"), option=canon.get("option"), element=text)
        else:
            form = canonical(name.replace("double_click", "dblclick"), text=text, element=target.role)
        return await self._act(name, args, form, target, lambda: run(loc))

    async def _fail(self, name: str, args: dict[str, Any], form: str, target: Target | None, error: str) -> Observation:
        now = time.time()
        holds = await self._probe()
        self.recorder.action(name=name, args=args, canonical=form, target=target, url_before=self.page.url, url_after=self.page.url, t_start=now, t_end=now, error=error, holds=holds)
        raise ActionFailed(error)

    async def _probe(self) -> list[str] | None:
        """Which watched state checks hold now (None when nothing is watched)."""
        if not self.watch:
            return None
        try:
            return await self.checker.probe(self.page, self.watch)
        except PlaywrightError:
            return []  # the page is mid-navigation; nothing is counted as holding

    async def _land(self) -> None:
        """Let what an action set off finish before the page is observed.

        A navigation the page asked for (even one Playwright does not wait for, as after
        ``select_option``) is waited for until its document is parsed; then the requests the
        action started until none has been open for a moment.
        """
        try:
            asked = bool(await self.page.evaluate(NAVIGATION_PENDING_JS))
        except PlaywrightError:  # the document went away under the call: a navigation is under way
            asked = True
        if asked:
            await self.traffic.committed()
            await self.page.wait_for_load_state("domcontentloaded", timeout=5_000)
        await self.traffic.settle()

    async def _act(
        self,
        name: str,
        args: dict[str, Any],
        form: str,
        target: Target | None,
        run: Callable[[], Awaitable[Any]] | None,
        snapshot_after: bool = True,
    ) -> Observation:
        """Run one action, record it (with its error, if any), and observe the page after it."""
        if self.closed:
            raise InputError(f"episode {self.id} is closed; call env_start for a new one")
        self.recorder.check_limit()
        url_before, t_start = self.page.url, time.time()
        error: str | None = None
        if run is not None:
            self.traffic.watch()
            try:
                await run()
                await self.page.wait_for_load_state("domcontentloaded", timeout=5_000)
                await self._land()
            except ActionFailed as exc:
                error = str(exc)
            except PlaywrightError as exc:
                error = _explain(exc)
            finally:
                self.traffic.watching = False
            if error is None:
                error = await self.guarded.refuse_outside(self.page, url_before)
            if error is None and self.page.url.startswith("chrome-error://"):
                error = "the page could not be loaded: it is outside this episode's allowed domains or unreachable; went back"
                await self.guarded.restore(self.page, url_before)
        relative = None
        if self.screenshots and error is None and name != "snapshot":
            path, relative = self.recorder.screenshot_path(name)
            relative = relative if await self._capture(path) else None
        t_end = time.time()
        holds = await self._probe()
        fields: dict[str, Any] = {
            "name": name, "args": args, "canonical": form, "target": target, "url_before": url_before, "url_after": self.page.url,
            "t_start": t_start, "t_end": t_end, "screenshot": relative, "error": error, "holds": holds,
        }  # fmt: skip
        if error is not None:
            self.recorder.action(**fields)
            raise ActionFailed(error)
        # The record is written (and fsynced) in a thread while the page is observed; both finish before the agent hears back.
        written = asyncio.ensure_future(asyncio.to_thread(self.recorder.action, **fields))
        try:
            observation = await self.observe() if snapshot_after else Observation(url=self.page.url, title=await self.page.title())
        finally:
            await written
        observation.action = form
        return observation


def _explain(exc: PlaywrightError) -> str:
    """A one-line, agent-readable reason for a Playwright failure."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "Timeout" in type(exc).__name__ or "Timeout" in text:
        return f"timed out: {text}; the element may be hidden or disabled — take a new browser_snapshot"
    if "net::ERR_BLOCKED_BY_CLIENT" in text:
        return f"blocked: {text}; the URL is outside this episode's allowed domains"
    return text

