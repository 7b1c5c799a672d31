"""``word-match``: the lower-bound baseline that follows words of the instruction.

Each step it clicks the one control (link, button, tab, menu item, …) whose accessible
name shares most content words with the instruction (stop words removed), never the
same control twice; ties go to the first in snapshot order. It stops when no control
shares a word. Asked a question, it answers with the name of the last control it
clicked. A task family this baseline solves often is one where matching words to link
texts is enough: too easy.
"""

from __future__ import annotations

from typing import Any

from fastmcp import Client

from .base import InProcessAgent, Job
from .calls import structured
from .explorer import goal_mode, parse_snapshot, words
from .registry import agent

__all__ = ["WordMatchAgent", "pick_control"]

CONTROLS = frozenset({"link", "button", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "checkbox", "radio", "switch", "option", "treeitem"})


def pick_control(snapshot: str, wanted: set[str], clicked: set[tuple[str, str]]) -> tuple[str, str, str] | None:
    """``(role, name, ref)`` of the unclicked control sharing most words with ``wanted`` (first on ties); None if none shares one."""
    best: tuple[str, str, str] | None = None
    best_score = 0
    for element in parse_snapshot(snapshot):
        if element.role not in CONTROLS or not element.name or (element.role, element.name) in clicked:
            continue
        score = len(words(element.name) & wanted)
        if score > best_score:
            best, best_score = (element.role, element.name, element.ref), score
    return best


class WordMatchAgent(InProcessAgent):
    """Clicks whatever control shares most words with the instruction (see the module notes)."""

    async def attempt(self, job: Job, client: Client[Any] | None) -> None:
        assert client is not None
        started = structured(await client.call_tool("env_start", {}))
        instruction = str(started.get("instruction") or "")
        if started.get("episode_id", "").startswith("doc-"):
            await client.call_tool("env_answer", {"answer": "unknown"})  # no controls to follow in a document
            await client.call_tool("env_close", {})
            return
        wanted = words(instruction)
        snapshot = str(started.get("snapshot") or "")
        clicked: set[tuple[str, str]] = set()
        last = ""
        for _ in range(max(job.max_steps - 1, 0)):
            choice = pick_control(snapshot, wanted, clicked)
            if choice is None:
                break
            role, name, ref = choice
            clicked.add((role, name))
            result = await client.call_tool("browser_click", {"element": name, "target": ref}, raise_on_error=False)
            last = name
            if not result.is_error:
                snapshot = str(structured(result).get("snapshot") or snapshot)
        if goal_mode(instruction) == "answer":
            await client.call_tool("env_answer", {"answer": last or "unknown"})
        await client.call_tool("env_close", {})


@agent("word-match")
def word_match(name: str = "word-match") -> WordMatchAgent:
    """The lower-bound baseline: clicks the control sharing most words with the instruction, answers with the last one clicked."""
    return WordMatchAgent(name)
