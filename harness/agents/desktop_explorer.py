"""The ``explorer`` baseline on desktop tasks: it acts on what the instruction names, through the ``desktop_*`` tools.

It reads only what any agent gets (the instruction and ``desktop_snapshot``), never a check:

* **answer** (a question: :func:`~.explorer.goal_mode` says so, or the instruction asks one with "?"): it answers with the line of text on
  screen (a text box's lines, element names) that shares most words with the instruction and
  is not itself quoted in it;
* **change** (anything else): each element on screen whose name the instruction spells out
  (a file in a file manager, a folder) or quotes is clicked; each other quoted value is typed
  into the first editable text; if the instruction says to save, it presses Ctrl+S.

A floor, like the web explorer: a task that this solves is one solved by following its words.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from fastmcp import Client

from ...tools.environment.desktop_gold import SnapshotLine, parse_snapshot
from .calls import structured

__all__ = ["quoted_values", "screen_lines", "explore_desktop"]

_QUOTED = re.compile(r"[“\"]([^”\"]+)[”\"]|(?<!\w)'([^']+)'(?!\w)")
_WORD = re.compile(r"[a-z0-9]+")
_TEXT_ROLES = {"text", "textbox", "entry", "paragraph", "terminal"}


def quoted_values(instruction: str) -> list[str]:
    """The values an instruction quotes, in double, curly or single quotes.

    >>> quoted_values("Replace the line 'eggs' with \\"oat milk\\" in shopping.txt; don't stop")
    ['eggs', 'oat milk']
    """
    return [v.strip() for m in _QUOTED.finditer(instruction) for v in m.groups() if v and v.strip()]


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def screen_lines(lines: list[SnapshotLine]) -> list[str]:
    """Every line of text the snapshot shows: element names and the lines of element values, in order, without repeats."""
    out = [part.strip() for line in lines for part in [line.name, *(line.value or "").split("\n")]]
    return list(dict.fromkeys(p for p in out if p))


def _named(instruction: str, lines: list[SnapshotLine]) -> list[str]:
    """Names of elements on screen that the instruction spells out as they are (case and all), in the instruction's order."""
    found = {line.name for line in lines if len(line.name) >= 3 and re.search(r"(?<![\w.-])" + re.escape(line.name) + r"(?![\w-])", instruction)}
    return sorted(found, key=instruction.index)


def _answer(instruction: str, lines: list[SnapshotLine], rng: np.random.Generator) -> str:
    quoted = {q.lower() for q in quoted_values(instruction)}
    wanted = _words(instruction)
    said = instruction.lower()
    pool = [t for t in screen_lines(lines) if t.lower() not in quoted and t.lower() not in said]
    if not pool:
        return "unknown"
    scores = [len(_words(t) & wanted) for t in pool]
    best = max(scores)
    ties = [t for t, s in zip(pool, scores) if s == best]
    return ties[int(rng.integers(len(ties)))]


async def explore_desktop(client: Client[Any], episode_id: str, instruction: str, snapshot: str, mode: str, max_steps: int, rng: np.random.Generator) -> None:
    """Pursue one desktop task (see the module notes) in at most ``max_steps`` tool calls."""
    lines = parse_snapshot(snapshot)
    if mode == "answer" or "?" in instruction:
        await client.call_tool("env_answer", {"answer": _answer(instruction, lines, rng)})
        return
    steps = max(max_steps - 1, 0)
    clicked: set[str] = set()
    for value in [*_named(instruction, lines), *quoted_values(instruction)]:
        if steps <= 1:
            break
        named = [line for line in lines if line.name.lower() == value.lower() and line.name not in clicked]
        editable = [line for line in lines if line.role in _TEXT_ROLES and "editable" in line.states]
        if named:
            clicked.add(named[0].name)
            call = ("desktop_click_element", {"target": named[0].ref})
        elif editable and value in quoted_values(instruction):
            call = ("desktop_type", {"target": editable[0].ref, "text": value})
        else:
            continue
        await client.call_tool(call[0], {"episode_id": episode_id, **call[1]}, raise_on_error=False)
        snap = await client.call_tool("desktop_snapshot", {"episode_id": episode_id}, raise_on_error=False)
        lines = parse_snapshot(str(structured(snap).get("snapshot") or "")) if not snap.is_error else lines
        steps -= 2
    if "save" in _words(instruction) and steps > 0:
        await client.call_tool("desktop_hotkey", {"episode_id": episode_id, "keys": ["ctrl", "s"]}, raise_on_error=False)
