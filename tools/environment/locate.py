"""Finding what an action acts on, and reading the page safely: targets, snapshots, dialogs, titles, errors.

A target is a snapshot ref (``e12``, ``f1e7``) or a selector that must match exactly
one element, as Playwright MCP's ``target`` argument is. A JavaScript dialog pauses the
page's scripts, so page calls are raced against one opening (:func:`until_dialog`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout
from playwright.async_api import Locator, Page

from ..browser.dom import DESCRIBE_JS
from ..errors import InputError, TaskloomError
from .snapshot_view import View
from .tabs import Tab
from .trajectory import Target

__all__ = ["REF", "SHOWN_REF", "ActionFailed", "TimedOut", "aria", "described", "explain", "find", "forget", "shown_refs", "title_of", "until_dialog", "while_described"]

# Playwright numbers refs e1, e2… on a tab's first page and f1e1, f2e7… after it navigates: each new document of the main
# frame gets a new frame number (FrameManager.frameCommittedNewDocumentNavigation), and @playwright/mcp shows the same refs.
REF = re.compile(r"^(?:f\d+)?e\d+$")
#: A ref as a snapshot shows it.
SHOWN_REF = re.compile(r"\[ref=((?:f\d+)?e\d+)\]")
#: A snapshot line with a ref: its role, its quoted name (when it has one) and the ref.
_SHOWN_LINE = re.compile(r'^\s*- ([\w-]+)(?: "((?:[^"\\]|\\.)*)")?[^\n]*?\[ref=((?:f\d+)?e\d+)\]', re.M)
#: ``(els) => {count, info}``: how many elements a selector matched and DESCRIBE_JS of the first, in one call.
_FIND_JS = f"(els) => ({{count: els.length, info: els.length ? ({DESCRIBE_JS})(els[0]) : null}})"
#: Playwright calls that wait for a page to load (their names start its timeout messages).
_LOADING = re.compile(r"\b(?:goto|go_back|go_forward|reload|wait_for_load_state|wait_for_url|expect_navigation)\b")
#: How Playwright says a ref names nothing: no such element, or a ref from a snapshot of an earlier page.
_MISSING = re.compile(r"Failed to find element matching selector|Invalid frame in aria-ref selector")


class ActionFailed(TaskloomError):
    """An action could not be carried out; the message says why and what to try."""


class TimedOut(ActionFailed):
    """An action ran out of time: a page that did not load, or an element that did not become ready, within its limit."""


async def aria(page: Page, view: View = View(), timeout_ms: float | None = None) -> str:
    """The AI snapshot of the page, or of the part ``view`` asks for; refs stay those of the whole page.

    ``timeout_ms`` bounds each snapshot (default: the page's action timeout); a snapshot
    that takes longer raises Playwright's TimeoutError. When the whole-page snapshot
    that renews the refs after a partial one times out, the part is still returned, with
    a note that refs outside it are not renewed.
    """
    if not view.partial:
        snapshot: str = await page.locator("body").aria_snapshot(mode="ai", timeout=timeout_ms)
        return snapshot
    part: str = await (view.scope or page.locator("body")).aria_snapshot(mode="ai", depth=view.depth, boxes=view.boxes or None, timeout=timeout_ms)
    try:
        await page.locator("body").aria_snapshot(mode="ai", timeout=timeout_ms)  # a partial snapshot forgets the refs outside it: renew them
    except PlaywrightTimeout:
        return f"{part}\n(refs outside this part were not renewed: the whole page's snapshot took too long; snapshot another part to act there)"
    return part


async def until_dialog(tab: Tab, work: Awaitable[Any], keep: bool = False) -> Any:
    """``work``'s result, or None when a dialog opens first and pauses the page.

    ``work`` then goes on in the background: with ``keep`` as the tab's pending action
    (browser_handle_dialog waits for it), else forgotten.
    """
    job = asyncio.ensure_future(work)
    if tab.modal.dialog is not None:  # already paused (tab actions work regardless): nothing to race
        return await job
    opened = asyncio.ensure_future(tab.modal.appeared.wait())
    try:
        await asyncio.wait({job, opened}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        opened.cancel()
    if job.done():
        return job.result()
    if keep:
        tab.modal.pending = job
    else:
        forget(job)
    return None


def forget(job: asyncio.Future[Any]) -> None:
    """Let ``job`` finish unwatched: its outcome no longer matters, and its error is not reported as never retrieved."""
    job.add_done_callback(lambda j: j.cancelled() or j.exception())


async def find(page: Page, target: str) -> tuple[Locator, Target]:
    """The element ``target`` names and its description, found and described in one page call.

    ``target`` is a snapshot ref (``e12``) or a selector (``#search``, ``css=…``,
    ``role=button[name="Go"]``; gold-step replay uses ``css=``), which must match
    exactly one element.
    """
    if REF.match(target or ""):
        return page.locator(f"aria-ref={target}"), await described(page, target)
    if not (target or "").strip():
        raise InputError("target is empty; pass the element's ref from browser_snapshot, e.g. 'e12'")
    loc = page.locator(target)
    try:
        if target.startswith("css="):  # gold-step replay: pages that render after load need a moment; the count reports a miss
            with contextlib.suppress(PlaywrightError):
                await loc.first.wait_for(state="attached", timeout=5_000)
        found: dict[str, Any] = await loc.evaluate_all(_FIND_JS)
    except PlaywrightError as exc:
        raise ActionFailed(f"target {target!r} is neither a snapshot ref nor a valid selector ({explain(exc)}); use the [ref=eN] value from browser_snapshot, e.g. 'e12'") from None
    if found["count"] != 1:
        what = target[4:] if target.startswith("css=") else target
        raise ActionFailed(f"selector {what!r} matches {found['count']} elements, not exactly one; use the [ref=eN] value from browser_snapshot, e.g. 'e12'")
    return loc, _described(found["info"], target)


def shown_refs(snapshot: str) -> dict[str, Target]:
    r"""Each ref a snapshot shows, with the role and name it showed it under.

    >>> {ref: (t.role, t.name) for ref, t in shown_refs('- link "Fog Over Pier Seven" [ref=e7] [cursor=pointer]:\n  - /url: b.html\n- generic [ref=e8]').items()}
    {'e7': ('link', 'Fog Over Pier Seven'), 'e8': ('generic', None)}
    """
    return {ref: Target(role=role, name=_unquoted(name) or None, ref=ref) for role, name, ref in _SHOWN_LINE.findall(snapshot)}


def _unquoted(name: str) -> str:
    try:
        unquoted: str = json.loads(f'"{name}"')
    except json.JSONDecodeError:
        return name
    return unquoted


async def described(page: Page, ref: str) -> Target:
    """The element a snapshot ref names, described in one round trip that neither waits nor retries: a missing element fails at once."""
    try:
        info = await page.eval_on_selector(f"aria-ref={ref}", DESCRIBE_JS)
    except PlaywrightError as exc:
        if not _MISSING.search(str(exc)):
            raise
        raise ActionFailed(_stale(ref)) from None
    return _described(info, ref)


async def while_described(page: Page, ref: str, act: Callable[[Locator], Awaitable[Any]], on_described: Callable[[Target], None], shown: Target | None = None) -> None:
    """Run a pointer action (click, hover, check) on the element ``ref`` names, describing the element meanwhile.

    ``ref`` must be one a snapshot of this page showed, so that it was given to an element
    (and, as Playwright never gives a ref to another element, to that one only). A pointer
    action waits until its element has held still over two animation frames (at least one
    frame, 16 ms) before the page gets any input. The description is asked for right
    behind the action's first request, so it is answered within that wait (it takes about
    4 ms): it costs no time and still shows the element as it was before the action.
    Asked first, its round trips would hold the action's back, and an action that starts
    a few ms late waits a whole frame more.
    ``on_described`` gets it as soon as it arrives. A ref that names nothing raises
    :class:`ActionFailed` at once; the action sent alongside can then never find an
    element (a ref is never given to another one) and times out unseen. When the page
    cannot be described (the action navigated away first, on a loaded machine, or its
    scripts broke the describing code), ``shown`` (the element as the agent's snapshot
    showed it) stands for the description, and the action still runs and counts.
    """
    acting = asyncio.ensure_future(act(page.locator(f"aria-ref={ref}")))
    await asyncio.sleep(0)  # the action's first request goes out first: the description never holds it back
    describing = asyncio.ensure_future(described(page, ref))
    try:
        found: Target | None = await describing
    except ActionFailed:
        forget(acting)
        raise
    except PlaywrightError:
        found = shown  # the page went away before it answered, or its scripts broke the describing code
    if found is not None:
        on_described(found)
    await acting


def _described(info: dict[str, Any], ref: str) -> Target:
    return Target(role=info["role"] or info["tag"], name=info["name"] or None, text=info["text"][:200] or None, selector=info["selector"], ref=ref)


def _stale(ref: str) -> str:
    return f"Ref {ref} not found in the current page snapshot. Try capturing new snapshot."  # Playwright MCP's own words


async def title_of(page: Page) -> str:
    """The page's title; empty when it cannot be read in time (a page closing or paused)."""
    try:
        return await asyncio.wait_for(page.title(), 2.0)
    except (PlaywrightError, TimeoutError):
        return ""


def explain(exc: PlaywrightError) -> str:
    """A one-line, agent-readable reason for a Playwright failure."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "Timeout" in type(exc).__name__ or "Timeout" in text:
        if _LOADING.search(text):
            return f"timed out: {text}; the page did not load within the server's navigation_timeout_ms — try again, or take a browser_snapshot to see what did load"
        return f"timed out: {text}; the element may be hidden or disabled — take a new browser_snapshot"
    if "net::ERR_BLOCKED_BY_CLIENT" in text:
        return f"blocked: {text}; the URL is outside this episode's allowed domains"
    return text
