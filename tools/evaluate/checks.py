"""Machine-checked success: declarative criteria tested against a page and the recorded actions.

Rule-based, no LLM, nothing executed as code: a URL pattern, the same page or
query after normalising URLs, text present or absent (on the page or in its main
content, optionally as whole words), an element's state (by selector, or by role
and exact accessible name), the items a page's main list shows with their checkbox
states, a text the origin's web storage holds, or an action the trajectory must contain (by canonical form, by the
clicked element's text, or by the typed text).

One checker serves three uses: replay verification of generated tasks
(``generate/*`` call :func:`check_criteria` and :func:`probe_state`), the live
final-state verdict of an episode (the runtime gives the environment a
:class:`Checker`, which satisfies
:class:`~taskloom.tools.environment.protocols.SuccessChecker`), and scoring
(:mod:`taskloom.tools.evaluate.progress` uses :func:`action_satisfies`).
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, unquote, urlparse

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page

from ..environment.trajectory import ActionRecord, CriterionResult
from ..errors import InputError
from ..graph.web.capture import normalize_url
from ..tasks.model import SuccessCriterion, criterion_key
from .appstate import record_state
from .model import CriterionVerdict

__all__ = ["Checker", "CriterionResult", "check_criteria", "describe", "verdicts", "action_satisfies", "probe_state", "page_matches", "query_matches", "answer_visible", "answer_shown"]


def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).lower()


#: Every string in the origin's localStorage and sessionStorage (JSON values walked leaf by leaf).
_STORED_JS = """() => {
  const out = [];
  const walk = (v) => { if (typeof v === 'string') out.push(v); else if (v && typeof v === 'object') Object.values(v).forEach(walk); };
  for (const store of [window.localStorage, window.sessionStorage]) {
    for (let i = 0; i < store.length; i++) {
      const raw = store.getItem(store.key(i));
      try { walk(JSON.parse(raw)); } catch (e) { out.push(raw); }
    }
  }
  return out;
}"""
_ROLE_NAME = re.compile(r"^role=(?P<role>[\w-]+)(?:\s+name=(?P<name>.*))?$", re.S)

# The page's main content: the main landmark, else the body without its header, nav, footer and aside.
_MAIN_TEXT_JS = """
() => {
  const visible = (e) => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  const main = [...document.querySelectorAll('main, [role=main]')].find(visible);
  if (main) return main.innerText;
  const skip = 'header, nav, footer, aside, [role=banner], [role=navigation], [role=contentinfo], [role=complementary]';
  const parts = [];
  const walk = (node) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) { parts.push(child.textContent); continue; }
      if (child.nodeType !== Node.ELEMENT_NODE || child.matches(skip)) continue;
      if (['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE'].includes(child.tagName)) continue;
      if (child.querySelector(skip)) walk(child); else if (visible(child)) parts.push(child.innerText);
    }
  };
  if (document.body) walk(document.body);
  return parts.join(' ');
}
"""

# Visible items of each list in the main content (lists in nav, header, footer, aside and menus excluded):
# per list, [[names, "checked"|"unchecked"|"shown"], ...]; an item's names are its whole text, its first
# line, and the text of its first label, heading or link (a rich item is named by its title).
_LISTS_JS = """
() => {
  const visible = (e) => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  const outside = 'nav, header, footer, aside, menu, [role=navigation], [role=banner], [role=contentinfo], [role=complementary], [role=menu], [role=menubar], [role=tablist]';
  const main = [...document.querySelectorAll('main, [role=main]')].find(visible);
  const root = main || document.body;
  if (!root) return [];
  const inMain = (l) => { const o = l.closest(outside); return !o || (main && !main.contains(o) && o.contains(main)); };
  const lists = [...root.querySelectorAll('ul, ol, [role=list]')].filter(inMain);
  return lists.map((list) => [...list.children]
    .filter((li) => li.matches('li, [role=listitem]') && visible(li))
    .map((li) => {
      const box = li.querySelector('input[type=checkbox], [role=checkbox]');
      const state = !box ? 'shown' : (box.type === 'checkbox' ? box.checked : box.getAttribute('aria-checked') === 'true') ? 'checked' : 'unchecked';
      const text = li.innerText || '';
      const title = li.querySelector('label, h1, h2, h3, h4, h5, h6, [role=heading], a');
      return [[text, text.split('\\n')[0], title ? title.innerText : ''], state];
    }));
}
"""


def _locator(page: Page, target: str) -> Locator:
    """A selector, or ``role=<role> name=<accessible name>`` (exact name) through ``get_by_role``."""
    match = _ROLE_NAME.match(target.strip())
    if match is None:
        return page.locator(target)
    role: Any = match.group("role")  # one of Playwright's ARIA roles; an unknown one fails at count()
    name = match.group("name")
    if name is None:
        return page.get_by_role(role)
    return page.get_by_role(role, name=name.strip().strip("\"'“”"), exact=True)


async def _element_state(page: Page, selector: str, state: str | None) -> tuple[bool, str]:
    loc = _locator(page, selector)
    try:
        count = await loc.count()
    except PlaywrightError as exc:
        return False, f"bad selector {selector!r}: {str(exc).splitlines()[0]}"
    if count == 0:
        return state == "hidden", "no such element"
    first = loc.first
    wanted = state or "visible"
    if wanted in ("visible", "hidden") and count > 1:
        shown = [await loc.nth(i).is_visible() for i in range(min(count, 20))]
        ok = any(shown) == (wanted == "visible")
        return ok, f"{selector} is {'' if ok else 'not '}{wanted}"
    if wanted == "visible":
        ok = await first.is_visible()
    elif wanted == "hidden":
        ok = not await first.is_visible()
    elif wanted in ("checked", "unchecked"):
        ok = await first.is_checked() == (wanted == "checked")
    elif wanted in ("disabled", "enabled"):
        ok = await first.is_disabled() == (wanted == "disabled")
    elif wanted.startswith("value="):
        ok = await first.input_value() == wanted[len("value="):]
    elif wanted.startswith("label="):
        label = await first.evaluate("e => e.selectedOptions && e.selectedOptions.length ? e.selectedOptions[0].label : ''")
        ok = label == wanted[len("label="):]
    else:
        return False, f"unknown state {wanted!r}"
    return ok, f"{selector} is {'' if ok else 'not '}{wanted}"


def _url_key(url: str, fragment: bool) -> tuple[str, str]:
    """(scheme://host[:port]/path without a trailing slash, sorted query) — plus the fragment when it counts."""
    parts = urlparse(normalize_url(url))
    path = unquote(parts.path).rstrip("/") or "/"
    base = f"{parts.scheme}://{parts.netloc}{path}"
    frag = urlparse(url).fragment if fragment else ""
    return base + (f"#{frag}" if frag else ""), parts.query


def page_matches(actual: str, expected: str) -> bool:
    """Same page after normalising (see :class:`~taskloom.tools.tasks.model.SuccessCriterion`).

    >>> page_matches("HTTP://a.org:80/docs/index.html?b=2&a=1#intro", "http://a.org/docs?a=1&b=2")
    True
    >>> page_matches("http://a.org/#/active", "http://a.org/#/completed")
    False
    """
    has_fragment = bool(urlparse(expected).fragment)
    return _url_key(actual, has_fragment) == _url_key(expected, has_fragment)


def query_matches(actual: str, expected: str) -> bool:
    """Same path (and origin), and every query parameter of ``expected`` present in ``actual`` with that value.

    >>> query_matches("http://a.org/s?genre=poetry&page=2&q=", "http://a.org/s/?genre=poetry")
    True
    >>> query_matches("http://a.org/s?genre=nature", "http://a.org/s?genre=poetry")
    False

    An exact-match lookup (``state__exact=AK``, as Django and Datasette write an equality filter) is the plain parameter:

    >>> query_matches("http://a.org/db/t?state__exact=AK", "http://a.org/db/t?state=AK")
    True
    """
    if _url_key(actual, False)[0] != _url_key(expected, False)[0]:
        return False
    have = [_plain(p) for p in parse_qsl(urlparse(actual).query, keep_blank_values=True)]
    for pair in (_plain(p) for p in parse_qsl(urlparse(expected).query, keep_blank_values=True)):
        if pair not in have:
            return False
        have.remove(pair)
    return True


def _plain(pair: tuple[str, str]) -> tuple[str, str]:
    """A query pair with an ``__exact`` lookup suffix dropped from its key."""
    key, value = pair
    return (key[: -len("__exact")] if key.endswith("__exact") and len(key) > 7 else key), value


def _expected_items(value: str) -> dict[str, str]:
    try:
        raw = json.loads(value)
    except json.JSONDecodeError as exc:
        raise InputError(f"an items criterion needs a JSON object of item text → checked/unchecked/shown, not {value[:80]!r} ({exc})") from exc
    if not isinstance(raw, dict) or not all(isinstance(v, str) and v in ("checked", "unchecked", "shown") for v in raw.values()):
        raise InputError(f"an items criterion maps item texts to 'checked', 'unchecked' or 'shown'; got {value[:80]!r}")
    return {_norm(k): v for k, v in raw.items()}


def _items_match(lists: list[list[tuple[list[str], str]]], expected: dict[str, str]) -> tuple[bool, str]:
    """Some main list shows exactly the expected items (order ignored), each in its state ('shown': any state)."""
    seen: list[str] = []
    for items in lists:
        wanted = dict(expected)
        for names, state in items:
            key = next((k for k in (_norm(n) for n in names) if k in wanted), None)
            if key is None or wanted[key] not in ("shown", state):
                break
            del wanted[key]
        else:
            if not wanted:
                return True, f"a list shows exactly {sorted(expected)}"
        if items:
            seen.append("[" + ", ".join(f"{_norm(names[0])[:40]}:{state}" for names, state in items[:8]) + "]")
    return False, "lists show " + ("; ".join(seen[:4]) if seen else "no items")


def _words(text: str, whole_words: bool) -> re.Pattern[str]:
    body = re.escape(_norm(text))
    return re.compile(rf"(?<!\w){body}(?!\w)" if whole_words else body)


async def _text(page: Page, scope: str, cache: dict[str, str]) -> str:
    if scope not in cache:
        raw = await page.evaluate(_MAIN_TEXT_JS) if scope == "main" else await page.locator("body").inner_text()
        cache[scope] = _norm(str(raw))
    return cache[scope]


def action_satisfies(criterion: SuccessCriterion, action: ActionRecord) -> bool:
    """Whether one successful action meets an action criterion (``action_performed``, ``clicked``, ``typed``)."""
    if action.error is not None:
        return False
    if criterion.kind == "action_performed":
        return action.canonical == criterion.value
    if criterion.kind == "clicked":
        if action.name not in ("click", "double_click"):
            return False
        wanted = _norm(criterion.value)
        names = [_norm(action.target.name), _norm(action.target.text)] if action.target else []
        return bool(wanted) and any(name == wanted or (wanted in name and len(wanted) >= 3) for name in names if name)
    if criterion.kind == "typed":
        return action.name == "type" and _norm(str(action.args.get("text", ""))) == _norm(criterion.value)
    return False


async def _state(page: Page, criterion: SuccessCriterion, cache: dict[str, str]) -> tuple[bool, str]:
    kind = criterion.kind
    if kind == "url_matches":
        return re.search(criterion.value, page.url) is not None, page.url
    if kind == "page_is":
        return page_matches(page.url, criterion.value), page.url
    if kind == "query_has":
        return query_matches(page.url, criterion.value), page.url
    if kind in ("text_present", "text_absent"):
        present = _words(criterion.value, criterion.whole_words).search(await _text(page, criterion.scope, cache)) is not None
        where = "in the main content" if criterion.scope == "main" else "on the page"
        return (present if kind == "text_present" else not present), f"text {'found' if present else 'not found'} {where}"
    if kind == "items":
        return _items_match(await page.evaluate(_LISTS_JS), _expected_items(criterion.value))
    if kind == "record":
        return await record_state(page, criterion.value)
    if kind == "stored":
        leaves = await page.evaluate(_STORED_JS)
        ok = _norm(criterion.value) in {_norm(v) for v in leaves}
        return ok, f"{'stored' if ok else 'not stored'} ({len(leaves)} stored strings)"
    return await _element_state(page, criterion.value, criterion.state)


async def check_criteria(page: Page, criteria: list[SuccessCriterion], actions: list[ActionRecord], grace_s: float = 1.0) -> list[CriterionResult]:
    """Check every criterion against the page's current state and the recorded actions.

    A script may navigate a moment after the last action (a filter that calls
    ``location.assign`` on change): when a state criterion fails, a navigation starting
    within ``grace_s`` is waited for and the criteria are checked once more.
    """
    results = await _check_once(page, criteria, actions)
    if grace_s > 0 and any(r.criterion.on_state and not r.ok for r in results) and await _navigated(page, grace_s):
        results = await _check_once(page, criteria, actions)
    return results


async def _navigated(page: Page, grace_s: float) -> bool:
    """True when the main frame navigates within ``grace_s`` (then after it has loaded)."""
    try:
        await page.wait_for_event("framenavigated", predicate=lambda frame: frame == page.main_frame, timeout=grace_s * 1000)
        await page.wait_for_load_state("load", timeout=5_000)
    except PlaywrightError:
        return False
    return True


async def _check_once(page: Page, criteria: list[SuccessCriterion], actions: list[ActionRecord]) -> list[CriterionResult]:
    results: list[CriterionResult] = []
    cache: dict[str, str] = {}
    for criterion in criteria:
        if criterion.on_state:
            ok, observed = await _state(page, criterion, cache)
        else:
            matched = [a.index for a in actions if action_satisfies(criterion, a)]
            ok, observed = bool(matched), (f"done at action {matched[0]}" if matched else f"not among {sum(a.error is None for a in actions)} successful actions")
        results.append(CriterionResult(criterion=criterion, ok=ok, observed=observed))
    return results


async def probe_state(page: Page, criteria: list[SuccessCriterion]) -> list[str]:
    """Keys (:func:`criterion_key`) of the state criteria that hold on the page now."""
    holds: list[str] = []
    cache: dict[str, str] = {}
    for criterion in criteria:
        if criterion.on_state and (await _state(page, criterion, cache))[0]:
            holds.append(criterion_key(criterion))
    return holds


_NUMBER = re.compile(r"(?<![\w.])[-−]?\d{1,3}(?:[,\u00a0\u202f]\d{3})+(?:\.\d+)?(?!\d)|(?<![\w.])[-−]?\d+(?:\.\d+)?(?!\d)")
_NUMERIC_ANSWER = re.compile(r"\s*([-−]?\d[\d,\u00a0\u202f]*(?:\.\d+)?)\s*[^\d\s]{0,12}\s*")


def _number(token: str) -> float | None:
    try:
        return float(re.sub(r"[,\u00a0\u202f]", "", token).replace("−", "-"))
    except ValueError:
        return None


def answer_shown(text: str, answer: str, kind: str = "text") -> bool:
    """Whether a page's visible ``text`` shows ``answer``: as a number (any thousands separator or decimals) or as whole words.

    A ``list`` answer is shown when each of its ``;``- or ``,``-separated parts is.

    >>> answer_shown("Body Mass (g)  5,100  Sex MALE", "5100", "number")
    True
    >>> answer_shown("Body Mass (g) 51000", "5100", "number")
    False
    >>> answer_shown("Island: Dream", "dream")
    True
    """
    parts = [p for p in re.split(r"[;,]", answer) if p.strip()] if kind == "list" else [answer]
    flat = _norm(text)
    numbers: list[float] | None = None
    for part in parts:
        if re.search(rf"(?<!\w){re.escape(_norm(part))}(?!\w)", flat):
            continue
        match = _NUMERIC_ANSWER.fullmatch(part)
        wanted = _number(match.group(1)) if match else None
        if wanted is None:
            return False
        if numbers is None:
            numbers = [n for n in (_number(t) for t in _NUMBER.findall(text)) if n is not None]
        if not any(abs(n - wanted) <= 1e-9 * max(1.0, abs(wanted)) for n in numbers):
            return False
    return bool(parts)


async def answer_visible(page: Page, answer: str, kind: str = "text", grace_s: float = 1.0) -> tuple[bool, str]:
    """:func:`answer_shown` on the page's visible text, with what was looked for.

    As in :func:`check_criteria`, a navigation starting within ``grace_s`` (the last
    click's page still loading) is waited for and the page read once more.
    """
    ok = answer_shown(str(await page.locator("body").inner_text()), answer, kind)
    if not ok and grace_s > 0 and await _navigated(page, grace_s):
        ok = answer_shown(str(await page.locator("body").inner_text()), answer, kind)
    return ok, f"answer {answer!r} {'is' if ok else 'is not'} shown on {page.url}"


_EXPECTED = {
    "url_matches": "URL matches /{value}/",
    "page_is": "on page {value}",
    "query_has": "URL has the path and query of {value}",
    "text_present": "text {quoted} {where}",
    "text_absent": "no text {quoted} {where}",
    "items": "a list in the main content shows exactly {value}",
    "stored": "web storage holds {quoted}",
    "record": "the application's export holds the record {value}",
    "action_performed": "the action {value} was performed",
    "clicked": "a click on {quoted}",
    "typed": "{quoted} was typed",
    "file_content": "the file holds {value}",
    "path_state": "the path is {value}",
    "sheet_cells": "the workbook holds {value}",
    "app_setting": "the application's saved setting is {value}",
}


def describe(criterion: SuccessCriterion) -> str:
    """What a criterion expects, in words.

    >>> describe(SuccessCriterion(kind="text_present", value="Dream", scope="main"))
    "text 'Dream' in the main content"
    >>> describe(SuccessCriterion(kind="element_state", value="#agree", state="checked"))
    '#agree is checked'
    """
    if criterion.kind == "element_state":
        return f"{criterion.value} is {criterion.state or 'visible'}"
    where = "in the main content" if criterion.scope == "main" else "on the page"
    words = " (whole words)" if criterion.whole_words and criterion.kind.startswith("text_") else ""
    return _EXPECTED[criterion.kind].format(value=criterion.value, quoted=repr(criterion.value), where=where) + words


def verdicts(checks: list[CriterionResult]) -> list[CriterionVerdict]:
    """Criterion results as expected-vs-observed verdicts (what a result and the report keep)."""
    return [CriterionVerdict(kind=c.criterion.kind, expected=describe(c.criterion), observed=c.observed, ok=c.ok) for c in checks]


class Checker:
    """The success checker handed to the environment (see :class:`~taskloom.tools.environment.protocols.SuccessChecker`)."""

    async def check(self, page: Page, criteria: list[SuccessCriterion], actions: list[ActionRecord]) -> list[CriterionResult]:
        """:func:`check_criteria` with its default grace period."""
        return await check_criteria(page, criteria, actions)

    async def probe(self, page: Page, criteria: list[SuccessCriterion]) -> list[str]:
        """:func:`probe_state`."""
        return await probe_state(page, criteria)
