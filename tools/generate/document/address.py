"""Unique addresses: how a task names a section, a passage or a numbered object so a reader finds exactly one.

A manual may have a hundred sections titled "Description" and many paragraphs that open with the
same words; a task that names one of them by that title or opening alone has several right answers.
:class:`Addresses` names a section by its title when the title is unique, else by its title with its
parent section's title and/or its page; a passage by its first eight words, or more when those repeat
elsewhere in the document; a table or figure by its number when no other of its kind has that number.
When nothing unique is found the address is ``None`` and the task is not made.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from ...graph.model import Node
from ...tasks.model import Task
from .index import _Index, normalise as _norm

__all__ = ["Addresses", "OPENING_WORDS", "unambiguous"]

#: Words of a passage quoted to name it (more when those repeat elsewhere in the document).
OPENING_WORDS = 8
#: Longer openings tried, in order, when the first :data:`OPENING_WORDS` words are not unique.
_LONGER = (12, 16, 24)
#: Node types whose text a reader searches when looking for a quoted opening.
_SEARCHED = ("paragraph", "list", "caption", "footnote", "formula", "reference", "section", "table_cell")


class Addresses:
    """Unique names of a document's sections, passages and numbered objects (see the module notes)."""

    def __init__(self, ix: _Index) -> None:
        self.ix = ix
        sections = ix.of("section")
        self._titles = Counter(_norm(s.text) for s in sections)
        self._sections = sections
        self._section_refs: dict[str, str | None] = {}
        self._words: list[list[str]] = [_norm(n.text).split() for n in ix.of(*_SEARCHED)]
        self._grams: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        for k, words in enumerate(self._words):
            for p in range(len(words) - OPENING_WORDS + 1):
                self._grams.setdefault(tuple(words[p : p + OPENING_WORDS]), []).append((k, p))
        self._numbers = Counter((n.type.value, str(n.attrs["number"])) for n in ix.of("table", "figure", "section") if n.attrs.get("number"))
        self._openings: dict[str, str | None] = {}  # node id → its shortest unique opening (without the ellipsis)

    # --- sections ---------------------------------------------------------------------------

    def _parent_title(self, sec: Node) -> str:
        parent = self.ix.section_of(sec.id)
        return _norm(parent.text) if parent is not None else ""

    def section(self, sec: Node) -> str | None:
        """``"Title"``, or ``"Title" (under "Parent")``, ``"Title" (page 12)``, ``"Title" (under "Parent", page 12)``: the first that is unique."""
        if sec.id not in self._section_refs:
            self._section_refs[sec.id] = self._section_ref(sec)
        return self._section_refs[sec.id]

    def _section_ref(self, sec: Node) -> str | None:
        title = _norm(sec.text)
        if not title:
            return None
        if self._titles[title] == 1:
            return f'"{title}"'
        same = [s for s in self._sections if _norm(s.text) == title]
        parent, page = self._parent_title(sec), sec.source.page
        options: list[tuple[str, Callable[[Node], bool]]] = []
        if parent:
            options.append((f'under "{parent}"', lambda s: self._parent_title(s) == parent))
        if page is not None:
            options.append((f"page {page}", lambda s: s.source.page == page))
        if len(options) == 2:
            options.append((f'under "{parent}", page {page}', lambda s: self._parent_title(s) == parent and s.source.page == page))
        for where, same_place in options:
            if sum(1 for s in same if same_place(s)) == 1:
                return f'"{title}" ({where})'
        return None

    # --- passages ---------------------------------------------------------------------------

    def _occurrences(self, words: list[str]) -> int:
        """How many times ``words`` (at least :data:`OPENING_WORDS` of them) occur in the searched text."""
        n = len(words)
        return sum(1 for k, p in self._grams.get(tuple(words[:OPENING_WORDS]), []) if self._words[k][p : p + n] == words)

    def opening(self, node: Node, within: int | None = None) -> str | None:
        """The shortest opening of ``node`` (8, 12, 16 or 24 words, "…" when cut) that occurs once in the document,
        with no double quote in it (the instruction quotes it).

        ``within``: the opening must end inside the first ``within`` characters of the node's normalised text
        (so it does not give away an answer that follows); ``None`` when it cannot.
        """
        if node.id not in self._openings:
            self._openings[node.id] = self._opening(node)
        words = self._openings[node.id]
        if words is None or (within is not None and len(words) > within):
            return None
        return words + ("…" if len(words) < len(_norm(node.text)) else "")

    def _opening(self, node: Node) -> str | None:
        words = _norm(node.text).split()
        limit = next((i for i, w in enumerate(words) if '"' in w), len(words))  # a quote would end the quoted opening early
        if len(words) < OPENING_WORDS:
            whole = " ".join(words)
            found = sum(" ".join(w).count(whole) for w in self._words) if whole else 0
            return whole if found == 1 and limit == len(words) else None
        for n in (OPENING_WORDS, *_LONGER):
            n = min(n, len(words), limit)
            if n >= OPENING_WORDS and self._occurrences(words[:n]) == 1:
                return " ".join(words[:n])
            if n in (len(words), limit):
                break
        return None

    # --- numbered objects ---------------------------------------------------------------------

    def unique_number(self, node: Node) -> bool:
        """Whether no other node of ``node``'s kind carries its number."""
        number = node.attrs.get("number")
        return bool(number) and self._numbers[(node.type.value, str(number))] == 1


def _fold(text: str) -> str:
    return _norm(text).casefold()


def unambiguous(pools: dict[str, dict[str, Task]]) -> list[dict[str, str]]:
    """Check every candidate's instruction against every other candidate of the document; return what was dropped and why.

    Candidates asking the same question (case and spacing aside) with different gold answers are all
    ill-posed and all dropped; of those asking it with the same gold answer, the first is kept.
    """
    by_instruction: dict[str, list[tuple[str, Task]]] = {}
    for ttype, pool in pools.items():
        for task in pool.values():
            by_instruction.setdefault(_fold(task.instruction), []).append((ttype, task))
    dropped: list[dict[str, str]] = []
    for same in by_instruction.values():
        if len(same) < 2:
            continue
        golds = {_fold(str(t.gold_answer or "")) for _, t in same}
        if len(golds) > 1:
            why = f"ill-posed: {len(same)} candidates ask this question with {len(golds)} different gold answers"
            gone = same
        else:
            why = f"repeats the question and gold answer of {same[0][1].id}"
            gone = same[1:]
        for ttype, task in gone:
            pools[ttype].pop(task.id, None)
            dropped.append({"task_id": task.id, "type": ttype, "template": task.provenance.template or "", "instruction": task.instruction[:160], "reason": why})
    return dropped
