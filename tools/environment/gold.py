"""Run a task's gold steps in a browser episode, through the same recorded actions an agent uses."""

from __future__ import annotations

from collections.abc import Sequence

from ..tasks.model import GoldStep
from .episodes import BrowserEpisode

__all__ = ["run_gold_step", "run_gold_steps"]


async def run_gold_step(episode: BrowserEpisode, step: GoldStep) -> None:
    """Carry out one gold step (elements by CSS selector); raises ActionFailed when it cannot be done."""
    ref = f"css={step.selector}"
    name = step.canonical or step.action
    if step.action == "navigate":
        await episode.navigate(step.text or "")
    elif step.action == "click":
        await episode.click(name, ref)
    elif step.action == "type":
        await episode.type(name, ref, step.text or "", step.submit)
    elif step.action == "select_option":
        await episode.select_option(name, ref, [step.text or ""])
    elif step.action == "hover":
        await episode.hover(name, ref)
    elif step.action == "press_key":
        await episode.press_key(step.text or "Enter")
    elif step.action == "scroll":
        await episode.scroll("up" if step.text == "up" else "down")
    elif step.action == "wait_for":
        await episode.wait_for(text=step.text) if step.text else await episode.wait_for(seconds=1.0)


async def run_gold_steps(episode: BrowserEpisode, steps: Sequence[GoldStep]) -> None:
    """Carry out every gold step in order; the first failure raises ActionFailed."""
    for step in steps:
        await run_gold_step(episode, step)
