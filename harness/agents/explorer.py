"""``explorer``: a deterministic non-LLM baseline that follows matches between the instruction and what it sees.

It reads only what any agent under test gets (the instruction and the snapshots).
Web: each step it parses the accessibility snapshot, scores every interactive
element by word overlap with the instruction (an element named exactly like a quoted
value “…” scores highest), types quoted values that name no element into text boxes,
picks options named in the instruction, and acts on the best candidate not yet used;
ties, and with probability ``explore`` any step, are broken by a seeded generator, so
different seeds give different, reproducible trajectories. It stops when every quoted
value has been acted on, or when nothing matches. Documents: it searches with the instruction, reads the hits and answers with
the sentence that overlaps the instruction most.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fastmcp import Client

from .base import Job
from .calls import structured
from .registry import agent

__all__ = ["ExplorerAgent", "SnapshotElement", "parse_snapshot"]

_LINE = re.compile(r'^(?P<indent>\s*)- (?P<role>[a-z]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?')
_REF = re.compile(r"\[ref=((?:f\d+)?e\d+)\]")
_ACTIONABLE = {"link", "button", "tab", "menuitem", "checkbox", "radio", "switch", "option"}
_TEXT = {"textbox", "searchbox"}
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]+")
_QUOTED = re.compile(r"[“\"]([^”\"]+)[”\"]")
_STOP = {"the", "and", "then", "page", "click", "open", "with", "from", "that", "this", "for", "into", "tab", "link", "button", "on", "of", "to", "a", "an", "in"}


@dataclass
class SnapshotElement:
    role: str
    name: str
    ref: str
    options: list[str] = field(default_factory=list)


def parse_snapshot(snapshot: str) -> list[SnapshotElement]:
    """Interactive elements of an ``aria_snapshot(mode="ai")`` text, with each combobox's options."""
    found: list[SnapshotElement] = []
    box: tuple[int, SnapshotElement] | None = None
    for line in snapshot.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        indent, role, name = len(m["indent"]), m["role"], (m["name"] or "").replace('\\"', '"')
        if box is not None and indent <= box[0]:
            box = None
        if role == "option" and box is not None:
            box[1].options.append(name)
            continue
        ref = _REF.search(line)
        if ref and (role in _ACTIONABLE or role in _TEXT or role == "combobox"):
            element = SnapshotElement(role, name, ref.group(1))
            found.append(element)
            if role == "combobox":
                box = (indent, element)
    return found


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


class ExplorerAgent:
    """Greedy instruction-matching explorer (see the module notes)."""

    in_process = True

    def __init__(self, name: str = "explorer", seed: int = 0, explore: float = 0.0) -> None:
        self.name = name
        self.model: str | None = None
        self.tokens = 0
        self.seed = seed
        self.explore = explore

    async def attempt(self, job: Job, client: Client[Any] | None) -> None:
        assert client is not None
        rng = np.random.default_rng([self.seed, job.seed, int.from_bytes(job.task.id.encode()[-8:].rjust(8, b"\0"), "big") % (2**32)])
        started = structured(await client.call_tool("env_start", {}))
        instruction = str(started.get("instruction") or "")
        if started.get("episode_id", "").startswith("doc-"):
            await self._document(client, instruction, job.max_steps)
        else:
            await self._web(client, instruction, str(started.get("snapshot") or ""), job.max_steps, rng)
        await client.call_tool("env_close", {})

    async def _document(self, client: Client[Any], instruction: str, max_steps: int) -> None:
        wanted = _words(instruction)
        hits = structured(await client.call_tool("doc_search", {"query": instruction[:300], "k": 3}))
        best, best_score = "", -1.0
        for hit in hits[: max(max_steps - 1, 0)]:
            node = structured(await client.call_tool("doc_read", {"node_id": hit["node_id"]}))
            for sentence in re.split(r"(?<=[.!?])\s+|\n+", str(node.get("text", ""))):
                words = _words(sentence)
                score = len(words & wanted) / (len(words) ** 0.5 or 1.0)
                if sentence.strip() and score > best_score:
                    best, best_score = sentence.strip(), score
        await client.call_tool("env_answer", {"answer": best or "unknown"})

    def _candidates(self, elements: list[SnapshotElement], quoted: list[str], wanted: set[str], used: set[tuple[str, str]]) -> list[tuple[float, str, dict[str, Any], tuple[str, str]]]:
        names = {e.name.lower() for e in elements} | {o.lower() for e in elements for o in e.options}
        out: list[tuple[float, str, dict[str, Any], tuple[str, str]]] = []
        for e in elements:
            key = (e.role, e.name)
            if e.role in _TEXT:
                for value in quoted:
                    if value.lower() not in names and (e.role, value) not in used:
                        out.append((2.0 + len(_words(e.name) & wanted), "browser_type", {"element": e.name or e.role, "ref": e.ref, "text": value, "submit": True}, (e.role, value)))
            elif e.role == "combobox":
                for option in e.options:
                    if any(option.lower() == q.lower() for q in quoted) and ("option", option) not in used:
                        out.append((3.0, "browser_select_option", {"element": e.name or "select", "ref": e.ref, "values": [option]}, ("option", option)))
            elif key not in used and e.name:
                exact = any(e.name.lower() == q.lower() for q in quoted)
                overlap = len(_words(e.name) & wanted) / max(len(_words(e.name)), 1)
                score = 3.0 * exact + overlap
                out.append((score, "browser_click", {"element": e.name, "ref": e.ref}, key))
        return out

    async def _web(self, client: Client[Any], instruction: str, snapshot: str, max_steps: int, rng: np.random.Generator) -> None:
        quoted = [q.strip() for q in _QUOTED.findall(instruction) if q.strip()]
        wanted = _words(instruction)
        used: set[tuple[str, str]] = set()
        pending = {q.lower() for q in quoted}
        for _ in range(max(max_steps - 1, 0)):
            if quoted and not pending:
                break  # every value the instruction names has been acted on: done
            candidates = self._candidates(parse_snapshot(snapshot), quoted, wanted, used)
            if not candidates:
                break
            positive = [c for c in candidates if c[0] > 0]
            if self.explore > 0 and rng.random() < self.explore:
                pool = candidates
            elif positive:
                top = max(c[0] for c in positive)
                pool = [c for c in positive if c[0] == top]
            else:
                break
            _, tool, args, key = pool[int(rng.integers(len(pool)))]
            used.add(key)
            result = await client.call_tool(tool, args, raise_on_error=False)
            if not result.is_error:
                snapshot = str(structured(result).get("snapshot") or snapshot)
                acted = str(args.get("text") or (args.get("values") or [""])[0] if tool != "browser_click" else args.get("element", ""))
                pending.discard(acted.lower())


@agent("explorer")
def explorer(name: str = "explorer", seed: int = 0, explore: float = 0.0) -> ExplorerAgent:
    """A deterministic non-LLM baseline following instruction/snapshot word matches; seeded exploration."""
    return ExplorerAgent(name, seed=seed, explore=explore)
