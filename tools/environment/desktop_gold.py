"""Desktop gold steps: written against the accessibility snapshot, replayed through a driver (an episode or MCP tools).

A desktop task's gold is a list of :class:`~taskloom.tools.tasks.model.GoldStep` read this way:

* ``click``: ``selector`` ``role=R text=T`` names the element (T is its name or its value, as the
  snapshot shows them; ``role=R value=V``: its value is exactly V, an empty V an element without
  one); ``submit`` makes it a double-click (open the item).
* ``type``: the element ``selector`` names (``role=textbox``, the first one, or ``… text=T``) gets
  ``text`` typed over its text; ``submit`` presses Enter after.
* ``press_key``: ``text`` is a key or a chord, ``ctrl+s``, ``f2``.
* ``wait_for``: waits (bounded) until the element ``selector`` names shows.

Elements are found again in every snapshot (refs are per episode), waiting up to :data:`WAIT` for
dialogs that an earlier step opened. The same steps drive a local episode (generation's replay)
and the agent-profile ``desktop_*`` tools (the harness oracle), so what was verified is what the
oracle does.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Protocol

from pydantic import BaseModel

from ..errors import InputError
from ..tasks.model import GoldStep

__all__ = ["Driver", "SnapshotLine", "parse_snapshot", "find_line", "run_gold", "WAIT"]

WAIT = 6.0
_LINE = re.compile(r'^(?P<indent>\s*)- (?P<role>\S+)(?: (?P<name>"(?:[^"\\]|\\.)*"))?(?P<states>(?: \[[a-z_]+\])*) \[ref=(?P<ref>e\d+)\](?:: (?P<value>.*)|:)?$')
_SELECTOR = re.compile(r"role=(?P<role>\S+)(?: text=(?P<text>.*)| value=(?P<value>.*))?$")


class SnapshotLine(BaseModel):
    """One element of a desktop snapshot's text."""

    role: str
    name: str = ""
    ref: str
    value: str | None = None
    states: list[str] = []


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), value)


def parse_snapshot(text: str) -> list[SnapshotLine]:
    """The elements of a ``desktop_snapshot`` text, in order.

    >>> [l.ref for l in parse_snapshot('- window "a" [ref=e1]:\\n  - img [ref=e5]: notes.txt')]
    ['e1', 'e5']
    """
    found = []
    for raw in text.splitlines():
        match = _LINE.match(raw)
        if match is None:
            continue
        name = json.loads(match["name"]) if match["name"] else ""
        states = re.findall(r"\[([a-z_]+)\]", match["states"] or "")
        found.append(SnapshotLine(role=match["role"], name=name, ref=match["ref"], value=_unescape(match["value"]) if match["value"] else None, states=states))
    return found


def _selector(selector: str | None) -> tuple[str, str | None, str | None]:
    match = _SELECTOR.match(selector or "")
    if match is None:
        raise InputError(f"desktop gold selector {selector!r} is not 'role=R', 'role=R text=T' or 'role=R value=V'")
    return match["role"], match["text"], match["value"]


def find_line(lines: list[SnapshotLine], selector: str | None) -> SnapshotLine | None:
    """The first element the selector names (``role=R``; ``role=R text=T``, T its name or value; ``role=R value=V``, V its whole value).

    >>> lines = parse_snapshot('- textbox [ref=e1]: 100%\\n- textbox [ref=e2]')
    >>> find_line(lines, "role=textbox value=").ref, find_line(lines, "role=textbox text=100%").ref
    ('e2', 'e1')
    """
    role, text, value = _selector(selector)
    return next(
        (line for line in lines if line.role == role and (text is None or text in (line.name, line.value)) and (value is None or (line.value or "") == value)), None
    )


class Driver(Protocol):
    """What a gold replay acts through: a snapshot's text and actions by ref."""

    async def snapshot(self) -> str: ...

    async def click(self, ref: str, double: bool) -> None: ...

    async def type(self, ref: str, text: str, submit: bool) -> None: ...

    async def hotkey(self, keys: list[str]) -> None: ...


async def _wait_for(driver: Driver, selector: str | None) -> SnapshotLine:
    deadline = time.monotonic() + WAIT
    while True:
        line = find_line(parse_snapshot(await driver.snapshot()), selector)
        if line is not None:
            return line
        if time.monotonic() > deadline:
            raise InputError(f"gold step: nothing matches {selector!r} within {WAIT:g}s")
        await asyncio.sleep(0.25)  # each look is a recorded snapshot when the oracle drives MCP tools


async def run_step(driver: Driver, step: GoldStep) -> None:
    """Carry out one desktop gold step."""
    if step.action == "press_key":
        await driver.hotkey((step.text or "").split("+"))
    elif step.action == "wait_for":
        await _wait_for(driver, step.selector)
    elif step.action == "click":
        await driver.click((await _wait_for(driver, step.selector)).ref, step.submit)
    elif step.action == "type":
        await driver.type((await _wait_for(driver, step.selector)).ref, step.text or "", step.submit)
    else:
        raise InputError(f"gold step action {step.action!r} is not a desktop step")


async def run_gold(driver: Driver, steps: list[GoldStep]) -> None:
    """Carry out the steps in order; the first that fails raises."""
    for step in steps:
        await run_step(driver, step)
