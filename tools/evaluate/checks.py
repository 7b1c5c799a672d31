"""Machine-checked success: declarative criteria tested against a page and the recorded actions.

Rule-based, no LLM, nothing executed as code: a URL pattern, text present or
absent, an element's state, or an action the trajectory must contain (by
canonical form, by the clicked element's text, or by the typed text).

One checker serves three uses: replay verification of generated tasks
(``generate/*`` call :func:`check_criteria` and :func:`probe_state`), the live
final-state verdict of an episode (the runtime gives the environment a
:class:`Checker`, which satisfies
:class:`~taskloom.tools.environment.protocols.SuccessChecker`), and scoring
(:mod:`taskloom.tools.evaluate.progress` uses :func:`action_satisfies`).
"""

from __future__ import annotations

import re

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from ..environment.trajectory import ActionRecord, CriterionResult
from ..tasks.model import SuccessCriterion, criterion_key

__all__ = ["Checker", "CriterionResult", "check_criteria", "action_satisfies", "probe_state"]


def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).lower()


async def _element_state(page: Page, selector: str, state: str | None) -> tuple[bool, str]:
    loc = page.locator(selector)
    count = await loc.count()
    if count == 0:
        return state == "hidden", "no such element"
    first = loc.first
    wanted = state or "visible"
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


async def _state(page: Page, criterion: SuccessCriterion, body: list[str]) -> tuple[bool, str]:
    if criterion.kind == "url_matches":
        return re.search(criterion.value, page.url) is not None, page.url
    if criterion.kind in ("text_present", "text_absent"):
        if not body:
            body.append(_norm(await page.locator("body").inner_text()))
        present = _norm(criterion.value) in body[0]
        return (present if criterion.kind == "text_present" else not present), f"text {'found' if present else 'not found'}"
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
    body: list[str] = []
    for criterion in criteria:
        if criterion.on_state:
            ok, observed = await _state(page, criterion, body)
        else:
            matched = [a.index for a in actions if action_satisfies(criterion, a)]
            ok, observed = bool(matched), (f"done at action {matched[0]}" if matched else f"not among {sum(a.error is None for a in actions)} successful actions")
        results.append(CriterionResult(criterion=criterion, ok=ok, observed=observed))
    return results


async def probe_state(page: Page, criteria: list[SuccessCriterion]) -> list[str]:
    """Keys (:func:`criterion_key`) of the state criteria that hold on the page now."""
    holds: list[str] = []
    body: list[str] = []
    for criterion in criteria:
        if criterion.on_state and (await _state(page, criterion, body))[0]:
            holds.append(criterion_key(criterion))
    return holds


class Checker:
    """The success checker handed to the environment (see :class:`~taskloom.tools.environment.protocols.SuccessChecker`)."""

    async def check(self, page: Page, criteria: list[SuccessCriterion], actions: list[ActionRecord]) -> list[CriterionResult]:
        """:func:`check_criteria` with its default grace period."""
        return await check_criteria(page, criteria, actions)

    async def probe(self, page: Page, criteria: list[SuccessCriterion]) -> list[str]:
        """:func:`probe_state`."""
        return await probe_state(page, criteria)
