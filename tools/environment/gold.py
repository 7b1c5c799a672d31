"""Run a task's gold steps in a browser episode, through the same recorded actions an agent uses."""

from __future__ import annotations

from collections.abc import Sequence

from ..tasks.model import GoldStep, Task, criterion_key
from .episodes import BrowserEpisode

__all__ = ["run_gold_step", "run_gold_steps", "subtask_ends"]


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


def subtask_ends(task: Task | None, steps: Sequence[GoldStep]) -> dict[int, set[str]]:
    """For a composite's gold steps: the index of the step that ends each subtask (its own gold steps, run as one piece
    within ``steps``) and the keys of that subtask's state checks, which must hold once that step has landed."""
    ends: dict[int, set[str]] = {}
    if task is None:
        return ends
    steps = list(steps)
    for sub in task.subtasks:
        own, keys = list(sub.gold_steps), {criterion_key(c) for c in sub.checks if c.on_state}
        if not own or not keys:
            continue
        for start in range(len(steps) - len(own) + 1):
            if steps[start : start + len(own)] == own:
                ends.setdefault(start + len(own) - 1, set()).update(keys)
                break
    return ends


async def run_gold_steps(episode: BrowserEpisode, steps: Sequence[GoldStep]) -> None:
    """Carry out every gold step in order; the first failure raises ActionFailed.

    In a watched episode (a composite's replay), the step that ends a subtask is probed until that
    subtask's checks hold (for a few seconds at most), so a page that renders late is not taken for a
    subtask never done.
    """
    ends = subtask_ends(episode.task, steps) if episode.watch else {}
    try:
        for i, step in enumerate(steps):
            episode.expect = ends.get(i, set())
            await run_gold_step(episode, step)
    finally:
        episode.expect = set()
