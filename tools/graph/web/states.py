"""App states: what a single-page app shows at one URL after routes and actions (TodoMVC's all/active/completed).

CONTRACT:
- ``explore_states(page, capture, reload, read, budget) -> list[PageCapture]``: from a captured page,
  follow hash routes, same-URL links and buttons that change the main content, and standalone text
  inputs (fill a sample value + Enter); each distinct shown content becomes a capture whose
  ``state`` says how it is reached from a fresh load of ``capture.final_url``.

How
---
A state is keyed by what it shows: a hash of the visible text outside dialogs, menus,
listboxes and live regions (click simulation records those) plus the role and name of
every visible control. Exploration is breadth-first from the fresh load, in document
order of each state's candidate actions (routes first; one control per kind and name, so
a repeated "…" per row is tried once; an action at most once per path; at most
:data:`MAX_ACTIONS` per state and ``ACTIONS_PER_STATE * budget + MAX_ACTIONS`` in all),
up to ``budget`` states:

- **route**: a link whose target is this page with a client-side route (``#/active``),
  reached by setting ``location.hash``;
- **click**: a same-URL link (``href="#"``, ``javascript:``, a fragment naming no element on the page),
  a non-submitting button outside forms that post, or a checkbox; never a control named or
  classed like delete/remove/log out, a disclosure (``aria-expanded``/``haspopup``/
  ``controls``), a tab, a ``target=_blank`` link or anything in a dialog;
- **fill_enter**: a standalone text input (outside a form that posts or has an action):
  a neutral sample value, then Enter.

An action that leaves the page (its URL without fragment changes) is not a state. A
fresh load clears the origin's local and session storage first (a new user's load), so
a state's ``via`` replays from scratch; every state is replayed once and kept only when
the replay shows the same key. The ``read`` callback captures the replayed page.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlparse, urlunparse

from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, Field

from ...browser.dom import DESCRIBE_JS
from .urls import route_of

__all__ = ["StateAction", "AppState", "SiteChrome", "explore_states", "state_url", "SAMPLE_TEXT", "DESTRUCTIVE", "MAX_ACTIONS", "ACTIONS_PER_STATE"]

#: The value typed into standalone text inputs.
SAMPLE_TEXT = "Sample item"
#: Names (or class/id words) of controls never clicked while exploring states.
DESTRUCTIVE = re.compile(
    r"\b(delete|remove|destroy|erase|trash|discard|purge|drop|clear|reset|log ?out|sign ?out|logoff|unsubscribe|deactivate|close account|empty)\b", re.I
)


#: Candidate actions tried per state, and in all (per ``budget`` state) in one exploration.
MAX_ACTIONS, ACTIONS_PER_STATE = 16, 2


class StateAction(BaseModel):
    """One step from a fresh load towards a state."""

    kind: Literal["click", "fill_enter", "route"]
    selector: str = ""
    name: str = Field("", description="Accessible name of the control (or the route).")
    value: str | None = Field(None, description="Text typed (fill_enter) or route (route).")


class AppState(BaseModel):
    """How a state is reached, and what identifies it."""

    key: str = Field(description="Hash of what the state shows.")
    base_url: str = Field(description="Normalised URL of the page the state belongs to.")
    route: str | None = None
    via: list[StateAction] = Field(default_factory=list)


def state_url(state: AppState) -> str:
    """The URL a state capture is stored under (its page node id hashes it): the route, or the content key, as fragment."""
    return f"{state.base_url}#{state.route}" if state.route else f"{state.base_url}#state-{state.key[:12]}"


#: What the page shows, outside overlays: visible text and visible controls (role + name), cheap enough to poll.
SHOWN_JS = r"""() => {
  const overlay = '[role=dialog], dialog, [role=alertdialog], [role=menu], [role=listbox], [role=tooltip], [role=status], [role=alert], [aria-live]';
  const shown = (e) => e.checkVisibility ? e.checkVisibility({checkVisibilityCSS: true}) : !!(e.offsetParent || e.getClientRects().length);
  const parts = [];
  const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    const el = t.parentElement; const text = (t.nodeValue || '').replace(/\s+/g, ' ').trim();
    if (!text || !el || ['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE'].includes(el.tagName) || el.closest(overlay) || !shown(el)) continue;
    parts.push(text);
  }
  const controls = [];
  document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, [role=button], [role=link], [role=tab], [role=checkbox]').forEach(e => {
    if (e.closest(overlay) || !shown(e)) return;
    const name = e.getAttribute('aria-label') || e.getAttribute('placeholder') || e.getAttribute('title') || (e.innerText || '').replace(/\s+/g, ' ').trim().slice(0, 80);
    controls.push((e.getAttribute('role') || e.tagName.toLowerCase() + (e.type ? '/' + e.type : '')) + ':' + name);
  });
  return parts.join('\n') + '\n--\n' + controls.join('\n');
}"""

#: Candidate actions on the page as it is now, in document order.
CANDIDATES_JS = (
    "(sample) => { const describe = "
    + DESCRIBE_JS.strip()
    + r""";
  const shown = (e) => e.checkVisibility ? e.checkVisibility({checkVisibilityCSS: true}) : !!(e.offsetParent || e.getClientRects().length);
  const here = location.href.split('#')[0];
  const out = [];
  const posts = (f) => !!f && ((f.getAttribute('method') || 'get').toLowerCase() === 'post' || f.hasAttribute('action'));
  const norm = (t) => (t || '').replace(/[\s\u00b6#]+$/u, '').replace(/\s+/g, ' ').trim().toLowerCase();
  const heads = [document.title, ...Array.from(document.querySelectorAll('h1'), h => h.innerText)].map(norm);
  // a "#" link named as the page itself (its title or heading) is a self-reference in a table of contents, not an app control
  const selfNamed = (e) => { const n = norm(e.innerText); return n.length > 0 && heads.some(h => h === n || h.startsWith(n + ' ')); };
  document.querySelectorAll('a, button, input, [role=button], [role=link], [role=checkbox]').forEach(e => {
    if (e.closest('[role=dialog], dialog, [role=menu], [role=listbox]') || e.disabled) return;
    const tag = e.tagName.toLowerCase(); const type = (e.getAttribute('type') || '').toLowerCase();
    let described = null;
    const base = {visible: shown(e)};
    const d = () => { if (!described) {  // describing (a unique selector) is costly: only for candidates
      described = describe(e);
      Object.assign(base, {selector: described.selector, name: described.name,
        words: [described.name, e.id, e.getAttribute('class') || '', e.getAttribute('title') || '', e.getAttribute('aria-label') || ''].join(' ')});
    } return base; };
    if (tag === 'a' && e.hasAttribute('href')) {
      const raw = e.getAttribute('href').trim();
      if ((e.getAttribute('target') || '_self').toLowerCase() !== '_self' || e.hasAttribute('download')) return;
      if (raw === '#' && selfNamed(e)) return;
      if (raw.toLowerCase().startsWith('javascript:') || raw === '#') { out.push(Object.assign(d(), {kind: 'click'})); return; }
      if (e.href.split('#')[0] !== here) return;  // another page: the crawl follows it
      const fragment = decodeURIComponent(e.href.includes('#') ? e.href.slice(e.href.indexOf('#') + 1) : '');
      if (fragment && (document.getElementById(fragment) || document.getElementsByName(fragment).length)) return;  // an anchor: it scrolls
      if (fragment) out.push(Object.assign(d(), {kind: 'link', href: e.href}));  // a route or an app link; the page itself (no fragment) just reloads

      return;
    }
    if (e.getAttribute('aria-expanded') !== null || e.getAttribute('aria-haspopup') || e.getAttribute('aria-controls') || e.getAttribute('role') === 'tab' || tag === 'summary') return;
    if (tag === 'input' && ['text', 'search', ''].includes(type) && !e.readOnly) {
      if (!posts(e.form) && base.visible) out.push(Object.assign(d(), {kind: 'fill_enter'}));
      return;
    }
    if ((tag === 'input' && type === 'checkbox') || e.getAttribute('role') === 'checkbox') {
      if (!posts(e.form) && base.visible) out.push(Object.assign(d(), {kind: 'click', checkbox: true}));
      return;
    }
    const submits = (tag === 'button' && e.form && ['', 'submit'].includes(type)) || (tag === 'input' && ['submit', 'image', 'reset'].includes(type));
    if (tag === 'input' && type !== 'button') return;
    if (submits || posts(e.form) || !base.visible) return;
    out.push(Object.assign(d(), {kind: 'click'}));
  });
  return out;
}"""
)


Ident = tuple[str, str | None, str | None, str | None]


def _ident(action: StateAction) -> Ident:
    return (action.kind, action.selector, action.name, action.value)


@dataclass
class SiteChrome:
    """What first actions (from a fresh load) changed on the pages of one crawl: site chrome changes the same lines on every page.

    ``changes`` maps an action to its change and the page it was first seen on, ``chrome`` holds
    the actions seen making the same change on two pages. A page explores with a copy of what the
    pages before it found (:meth:`fork`); the crawl merges the copies in pick order
    (:meth:`merge`), so what is stored never depends on which browser context finished first.
    """

    changes: dict[Ident, tuple[str, str]] = field(default_factory=dict)
    chrome: set[Ident] = field(default_factory=set)
    found: dict[Ident, tuple[str, str]] = field(default_factory=dict)

    def repeats(self, ident: Ident, change: str, page: str) -> bool:
        """Record ``ident``'s change on ``page``; whether an earlier page saw the same change from it."""
        self.found.setdefault(ident, (change, page))
        first = self.changes.get(ident)
        return first is not None and first[1] != page and first[0] == change

    def fork(self) -> SiteChrome:
        return SiteChrome(dict(self.changes), set(self.chrome))

    def merge(self, other: SiteChrome) -> None:
        for ident, (change, page) in other.found.items():
            first = self.changes.setdefault(ident, (change, page))
            if first[1] != page and first[0] == change:
                self.chrome.add(ident)


def _change(before: str, after: str) -> str:
    """What an action changed: a hash of the lines shown before or after it, not both (the page's own text cancels out)."""
    return hashlib.sha1("\n".join(sorted(set(before.split("\n")) ^ set(after.split("\n")))).encode()).hexdigest()[:16]


def _page_url(url: str) -> str:
    """``url`` without its fragment."""
    return urlunparse(urlparse(url)._replace(fragment=""))


class _Explorer:
    def __init__(self, page: Any, base: str, reload: Callable[[], Awaitable[None]]) -> None:
        self.page = page
        self.base = base
        self.reload = reload
        self.here = ""  # the page's URL without fragment after a fresh load
        self.shown = ""  # what the page showed at the last key()

    async def fresh(self) -> None:
        """A new user's load of the page: the origin's web storage cleared, then ``reload()``."""
        try:
            await self.page.evaluate("() => { try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} }")
        except PlaywrightError:
            pass  # the page is mid-navigation or not a document: reload() replaces it anyway
        await self.reload()
        self.here = _page_url(self.page.url)

    async def key(self) -> str:
        """The hash of what is shown, once it has stopped changing (bounded wait)."""
        last = await self.page.evaluate(SHOWN_JS)
        for _ in range(15):
            await asyncio.sleep(0.1)
            shown = await self.page.evaluate(SHOWN_JS)
            if shown == last:
                break
            last = shown
        self.shown = last
        return hashlib.sha1(last.encode()).hexdigest()[:16]

    async def act(self, action: StateAction) -> bool:
        """Perform one action; False when it failed or left the page."""
        try:
            if action.kind == "route":
                await self.page.evaluate("(r) => { location.hash = r; }", action.value or "")
            elif action.kind == "fill_enter":
                field = self.page.locator(action.selector).first
                await field.fill(action.value or "", timeout=2_000)
                await field.press("Enter", timeout=2_000)
            else:
                await self.page.locator(action.selector).first.click(timeout=2_000)
        except PlaywrightError:
            return False
        await asyncio.sleep(0.05)
        return _page_url(self.page.url) == self.here

    async def replay(self, via: list[StateAction]) -> bool:
        await self.fresh()
        for action in via:
            if not await self.act(action):
                return False
        return True

    async def candidates(self) -> list[StateAction]:
        """The actions worth trying on the page as it is now (see the module docstring), deduplicated, in document order."""
        found: list[StateAction] = []
        seen: set[tuple[str, str | None]] = set()
        for item in await self.page.evaluate(CANDIDATES_JS, SAMPLE_TEXT):
            if DESTRUCTIVE.search(item["words"]) or (not item["visible"] and item["kind"] != "link"):
                continue
            if item["kind"] == "link":
                href = str(item["href"])
                route = route_of(href)
                if _page_url(href) != self.here:
                    continue  # another page (the crawl follows it) or another origin
                action = StateAction(kind="route", name=item["name"], value=route) if route else StateAction(kind="click", selector=item["selector"], name=item["name"])
            elif item["kind"] == "fill_enter":
                action = StateAction(kind="fill_enter", selector=item["selector"], name=item["name"], value=SAMPLE_TEXT)
            else:
                if not item["name"] and not item.get("checkbox"):
                    continue  # an unnamed control may do anything: not clicked blind
                action = StateAction(kind="click", selector=item["selector"], name=item["name"])
            ident = (action.kind, action.value if action.kind == "route" else action.name)  # repeated same-named controls (a "…" per row): the first
            if ident not in seen:
                seen.add(ident)
                found.append(action)
        routes = [a for a in found if a.kind == "route"]
        return (routes + [a for a in found if a.kind != "route"])[:MAX_ACTIONS]


async def explore_states(
    page: Any,
    capture: Any,
    reload: Callable[[], Awaitable[None]],
    read: Callable[[AppState], Awaitable[Any]],
    budget: int,
    fruitless: set[tuple[str, str | None, str | None, str | None]] | None = None,
    chrome: SiteChrome | None = None,
) -> list[Any]:
    """App states reachable from ``capture`` (see the module docstring); ``read(state)`` captures the page as it is now.

    ``reload()`` must load ``capture.final_url`` afresh in ``page``; states are returned
    in discovery order (breadth-first), each verified by a replay of its ``via``.
    ``fruitless`` (shared by one crawl's pages) holds the first actions that showed nothing
    new on an earlier page — site-wide chrome such as a theme switch or a sidebar toggle —
    which are not tried again; it is updated with this page's. ``effects`` (shared likewise) holds
    what each first action changed on the page it was first tried on (and that page): an action that changes
    the same lines here (a sidebar filter, a theme switch: site chrome) gives the state stored
    there, so it is not stored again and joins ``fruitless``.
    """
    if budget < 1:
        return []
    fruitless = set() if fruitless is None else fruitless
    chrome = SiteChrome() if chrome is None else chrome
    repeated: set[Ident] = set()  # this page's actions that change what they changed on an earlier page: not combined either
    base = str(capture.final_url)
    explorer = _Explorer(page, base, reload)
    explorer.here = _page_url(page.url)
    if not [a for a in await explorer.candidates() if _ident(a) not in fruitless and _ident(a) not in chrome.chrome]:
        return []  # nothing on the page could change what it shows (or it did nothing elsewhere): no reload spent
    await explorer.fresh()
    seen = {await explorer.key()}
    queue: deque[list[StateAction]] = deque([[]])
    found: list[Any] = []
    tries = ACTIONS_PER_STATE * budget + MAX_ACTIONS
    while queue and len(found) < budget and tries > 0:
        via = queue.popleft()
        if via and not await explorer.replay(via):
            continue
        current, at = await explorer.key(), page.url
        before = explorer.shown
        dirty = False  # the page has left the state being explored: replayed before the next action, never after the last
        for action in await explorer.candidates():
            if len(found) >= budget:
                break
            if (not via and _ident(action) in fruitless) or _ident(action) in chrome.chrome or _ident(action) in repeated:
                continue
            if any((a.kind, a.name, a.value) == (action.kind, action.name, action.value) for a in via):
                continue  # each action once per path: a second toggle undoes the first, a second entry adds nothing new
            if tries <= 0:
                break
            if dirty and not await explorer.replay(via):
                break
            tries -= 1
            moved = await explorer.act(action)
            key = await explorer.key() if moved else ""
            if not via and (key in seen or not moved):
                fruitless.add(_ident(action))  # from a fresh load it showed nothing new
            dirty = True
            if moved and key == current and route_of(page.url) == route_of(at):
                dirty = False
                continue  # nothing shown changed and no route taken (a scroll to the top): still in the state being explored
            if not via and moved and key not in seen and chrome.repeats(_ident(action), _change(before, explorer.shown), base):
                repeated.add(_ident(action))  # site chrome: its states were stored with the page it was first tried on
                continue
            if moved and key not in seen:
                seen.add(key)
                path = [*via, action]
                if await explorer.replay(path) and await explorer.key() == key:
                    route = route_of(page.url) if all(a.kind == "route" for a in path) else None  # a URL alone reaches it
                    state = AppState(key=key, base_url=base, route=route, via=path)
                    found.append(await read(state))
                    queue.append(path)
    return found
