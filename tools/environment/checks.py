"""Machine-checked success: task criteria tested against the final page and the trajectory.

Rule-based, no LLM: a URL pattern, text present or absent, an element's state, or
an action the trajectory must contain (by canonical form).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from ..tasks.model import SuccessCriterion
from .trajectory import ActionRecord

__all__ = ["CriterionResult", "check_criteria"]


class CriterionResult(BaseModel):
    """One criterion's verdict, with what was observed."""

    criterion: SuccessCriterion
    ok: bool
    observed: str


async def _element_state(page: Any, selector: str, state: str | None) -> tuple[bool, str]:
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


async def check_criteria(page: Any, criteria: list[SuccessCriterion], actions: list[ActionRecord]) -> list[CriterionResult]:
    """Check every criterion against the page's current state and the recorded actions."""
    results: list[CriterionResult] = []
    body = None
    for criterion in criteria:
        if criterion.kind == "url_matches":
            ok, observed = re.search(criterion.value, page.url) is not None, page.url
        elif criterion.kind in ("text_present", "text_absent"):
            body = body if body is not None else await page.locator("body").inner_text()
            present = " ".join(criterion.value.split()).lower() in " ".join(body.split()).lower()
            ok = present if criterion.kind == "text_present" else not present
            observed = f"text {'found' if present else 'not found'}"
        elif criterion.kind == "element_state":
            ok, observed = await _element_state(page, criterion.value, criterion.state)
        else:
            done = [a.canonical for a in actions if a.error is None]
            ok = criterion.value in done
            observed = f"{len(done)} successful actions"
        results.append(CriterionResult(criterion=criterion, ok=ok, observed=observed))
    return results
