"""``scanner``: a non-LLM baseline that uses the site's own filters and reads every result page.

It reads only what any agent under test gets: the instruction and the snapshots. From the
instruction it takes, flat and in one pass (it does not follow nested descriptions):

* the *values* it names (quoted values and capitalised words) and the *thresholds* ("with a
  year above 2015");
* what is asked: how many, the record with the highest or lowest *measure*, a field of that
  record ("What is the title of …"), or its page ("Open the page of …").

Then it acts as a person with a catalogue would: it applies each value through the site's own
controls where one offers it (a link, a select option or a radio named exactly so), opens a
listing-like link when the page lists nothing, reads the records shown on every result page
(following "Next"), keeps those showing the values no control took and meeting the thresholds,
and answers from them: their number, or the one with the highest or lowest measure (a table
column sharing the measure's words, else the one number a result shows).

It solves a one-hop question about a listing. A chained question needs a value found on the
way (the year of a book it must first pick) that it never looks for, so its success falls
with the chain's level: the curve the composites should show. Change goals are left to
no one (the episode closes without an action).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from fastmcp import Client

from .base import InProcessAgent, Job
from .calls import structured
from .explorer import _BROWSE, _NEXT, _QUESTION_STOP, _QUOTED, SnapshotElement, SnapshotNode, goal_mode, page_records, parse_snapshot, parse_tree, words
from .registry import agent

__all__ = ["ScannerAgent", "Ask", "read_ask", "result_items", "answer_from"]

_SUPERLATIVE = re.compile(
    r"\b(highest|lowest|largest|smallest|greatest|biggest|latest|earliest|longest|shortest|most|least|fewest)\s+([a-z][a-z0-9 -]*?)(?=\s+(?:among|that|of|from|with|in|on|and|whose)\b|[?.,]|$)"
)
_MAX_WORDS = {"highest", "largest", "greatest", "biggest", "latest", "longest", "most"}
_THRESHOLD = re.compile(r"\bwith an? ([a-z][a-z -]*?) (above|below|over|under|greater than|less than) ([\d,]+(?:\.\d+)?)")
_ASKED = re.compile(r"^what is the ([a-z][a-z -]*?) of\b", re.I)
_CAPITALS = re.compile(r"(?<![\w“\"])([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)")
_NAMED_FIELD = re.compile(r"[“\"]([^”\"]+)[”\"] value\b")
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w])")
#: Plain words before the records' noun ("among the male penguins", "how many female penguins"): values too.
_BEFORE_NOUN = re.compile(r"\b(?:among the|how many) ((?:[a-z][\w'-]* ){1,3}?)[a-z]+s\b")
#: Result pages read at most.
MAX_PAGES = 12
#: Listing-like links followed at most before reading what the page shows.
MAX_BROWSE = 4


@dataclass
class Ask:
    """The instruction, read flat: values and thresholds to filter by, and what to give."""

    mode: str  # answer, open or change
    values: list[str]
    thresholds: list[tuple[set[str], str, float]]
    count: bool = False
    op: str | None = None  # max or min
    measure: set[str] = field(default_factory=set)
    asked: set[str] = field(default_factory=set)
    wanted: set[str] = field(default_factory=set)  # every content word
    label: str | None = None  # the asked field as the instruction quotes it ("What is the “C Type” value of …")


def read_ask(instruction: str) -> Ask:
    """What the scanner takes from an instruction (see the module notes).

    >>> a = read_ask("How many books with format “E-book” have a year below that of the book with the highest year among the books with genre History?")
    >>> a.values, a.count, a.op, sorted(a.measure)
    (['E-book', 'History'], True, 'max', ['year'])
    >>> read_ask("What is the title of the book with the lowest year among the books with a year above 2015?").thresholds
    [({'year'}, 'gt', 2015.0)]
    >>> a = read_ask("What is the individual ID of the penguin with the lowest “Delta 13 C” value among the Chinstrap penguins?")
    >>> a.values, a.op, sorted(a.measure), sorted(a.asked)
    (['Chinstrap'], 'min', ['13', 'delta'], ['id', 'individual'])
    >>> read_ask("What is the individual ID of the penguin with the highest body mass among the male penguins?").values
    ['male']
    """
    quoted_label = re.match(r"\s*what is the [“\"]([^”\"]+)[”\"] value of\b", instruction, re.I)
    text = _NAMED_FIELD.sub(lambda m: m[1] + " value", instruction.strip())  # “Delta 13 C” value: a field's name, not a value
    quoted = [q.strip() for q in _QUOTED.findall(text) if q.strip()]
    bare = _QUOTED.sub(" ", text)
    first = re.match(r"\s*(\w+)", bare)
    capitals = [c for c in _CAPITALS.findall(bare) if c.lower() not in _QUESTION_STOP and not (first and bare.strip().startswith(c) and c.split()[0] == first.group(1))]
    ask = Ask(goal_mode(text), list(dict.fromkeys(quoted + capitals)), [], wanted=words(text, _QUESTION_STOP), label=quoted_label[1] if quoted_label else None)
    low = bare.lower()
    ask.count = low.strip().startswith("how many")
    if m := _SUPERLATIVE.search(low):
        ask.op = "max" if m[1] in _MAX_WORDS else "min"
        ask.measure = words(m[2], _QUESTION_STOP)
    for f, way, number in _THRESHOLD.findall(low):
        ask.thresholds.append((words(f, _QUESTION_STOP), "gt" if way in ("above", "over", "greater than") else "lt", float(number.replace(",", ""))))
    if m := _ASKED.search(low.strip()):
        ask.asked = words(m[1], _QUESTION_STOP)
    plain = [w for m in _BEFORE_NOUN.finditer(_QUOTED.sub(" ", text)) for w in m[1].split() if w not in _QUESTION_STOP and not w.isdigit()]
    ask.values += [w for w in plain if w not in {v.lower() for v in ask.values}]
    fields = ask.measure | ask.asked | {w for f, _, _ in ask.thresholds for w in f}
    ask.values = [v for v in ask.values if v in quoted or (words(v) and not words(v) <= fields)]  # "ID" of "individual ID" names a field
    return ask


@dataclass
class Item:
    """One result a page shows: its name (first link), that link, its labelled values (tables) and its text."""

    name: str
    url: str | None
    fields: list[tuple[str, str]]
    text: str


def _listitems(node: SnapshotNode, skip: bool = False) -> list[Item]:
    out: list[Item] = []
    if node.role in ("navigation", "banner", "contentinfo", "menu", "menubar", "tablist"):
        return out
    if node.role == "listitem" and not skip:
        links = [n for n in node.walk() if n.role == "link" and n.name]
        text = " ".join(n.content() for n in node.children if n.role != "list")
        if links and len(text) > len(links[0].name) + 3:  # a result shows more than its link
            out.append(Item(links[0].name, links[0].url, [], text))
            return out
    for child in node.children:
        out += _listitems(child, skip)
    return out


def result_items(snapshot: str) -> list[Item]:
    """The results the page lists: rows of a table of several records, else list items with a link and more text."""
    rows = [r for r in page_records(snapshot) if r.listing]
    if rows:
        return [Item(r.links[0].name if r.links else r.fields[0][1], r.links[0].url if r.links else None, r.fields, r.text()) for r in rows]
    return [item for root in parse_tree(snapshot) for item in _listitems(root)]


def _has(text: str, value: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(value.lower())}(?![\w])", text.lower()) is not None


def _number(item: Item, wanted: set[str]) -> float | None:
    """The item's value of the field ``wanted`` names: a labelled column sharing its words, else the one number it shows."""
    if item.fields:
        best = max(item.fields, key=lambda f: len(words(f[0]) & wanted))
        if not words(best[0]) & wanted:
            return None
        found = _NUMBER.search(best[1])
    else:
        numbers = _NUMBER.findall(item.text.replace(item.name, " "))
        found = None if len(numbers) != 1 else _NUMBER.search(numbers[0])
    return float(found.group().replace(",", "")) if found else None


def answer_from(items: list[Item], ask: Ask) -> tuple[str | None, Item | None]:
    """The answer (and the record it comes from) over the items kept."""
    if ask.count:
        return str(len(items)), None
    if ask.op:
        valued = [(v, i) for i in items if (v := _number(i, ask.measure)) is not None]
        if not valued:
            return None, None
        best = (max if ask.op == "max" else min)(valued, key=lambda p: p[0])[1]
    elif items:
        best = items[0]
    else:
        return None, None
    named = [v for lb, v in best.fields if ask.label and lb.strip().casefold() == ask.label.casefold()]
    if named:  # the field the instruction quotes, by its whole name ("C Type", not "Type code")
        return named[0], best
    if ask.asked and best.fields:
        label, value = max(best.fields, key=lambda f: len(words(f[0]) & ask.asked))
        if words(label) & ask.asked:
            return value, best
    return best.name, best


class ScannerAgent(InProcessAgent):
    """Filters with the site's controls, reads every result page, answers from the results (see the module notes)."""

    async def attempt(self, job: Job, client: Client[Any] | None) -> None:
        assert client is not None
        started = structured(await client.call_tool("env_start", {}))
        instruction, episode = str(started.get("instruction") or ""), str(started.get("episode_id", ""))
        ask = read_ask(instruction)
        if episode.startswith(("doc-", "desk-")) or ask.mode == "change":
            await client.call_tool("env_close", {})  # a document, a desktop or a change: nothing to filter or read
            return
        self.steps = max(job.max_steps - 2, 1)
        snapshot, url = str(started.get("snapshot") or ""), str(started.get("url") or "")
        snapshot, url, pending = await self._filter(client, ask, snapshot, url)
        items = await self._read(client, snapshot, url)
        kept = [i for i in items if all(_has(i.text, v) for v in pending)]
        for wanted, op, limit in ask.thresholds:
            kept = [i for i in kept if (v := _number(i, wanted)) is not None and (v > limit if op == "gt" else v < limit)]
        answer, best = answer_from(kept, ask)
        if ask.mode == "open" and best is not None and best.url and self.steps > 0:
            await client.call_tool("browser_navigate", {"url": urljoin(url, best.url)}, raise_on_error=False)
        elif ask.mode == "answer":
            await client.call_tool("env_answer", {"answer": answer or "unknown"})
        await client.call_tool("env_close", {})

    async def _act(self, client: Client[Any], tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
        if self.steps <= 0:
            return None
        self.steps -= 1
        result = await client.call_tool(tool, args, raise_on_error=False)
        return None if result.is_error else structured(result)

    async def _filter(self, client: Client[Any], ask: Ask, snapshot: str, url: str) -> tuple[str, str, list[str]]:
        """Apply each value a control on the page offers (opening a listing-like link first when nothing offers one); the values left."""
        pending = list(ask.values)
        browsed: set[str] = set()
        seen = {url.split("#")[0]}
        while self.steps > 0:
            move: tuple[str | None, str, dict[str, Any]] | None = _control(snapshot, pending)
            if move is None:
                items = result_items(snapshot)
                if _lists(items, ask, pending) or (len(items) >= 5 and _next_link(snapshot)) or len(browsed) >= MAX_BROWSE:  # results, or their first page
                    break
                browse = _browse_link(snapshot, ask, browsed, url, seen)
                if browse is None:
                    break
                browsed.add(browse[0])
                move = (None, "browser_click", {"element": browse[0], "target": browse[1]})
            value, tool, args = move
            data = await self._act(client, tool, args)
            if value is not None:
                pending.remove(value)
            if data is not None:
                snapshot, url = str(data.get("snapshot") or snapshot), str(data.get("url") or url)
                seen.add(url.split("#")[0])
        return snapshot, url, pending

    async def _read(self, client: Client[Any], snapshot: str, url: str) -> list[Item]:
        """The results of this page and of every next page (up to :data:`MAX_PAGES`), each once."""
        items: dict[str, Item] = {}
        for _ in range(MAX_PAGES):
            for item in result_items(snapshot):
                items.setdefault(item.text, item)
            following = _next_link(snapshot)
            if following is None:
                break
            data = await self._act(client, "browser_click", {"element": following.name, "target": following.ref})
            if data is None:
                break
            snapshot, url = str(data.get("snapshot") or snapshot), str(data.get("url") or url)
        return list(items.values())


def _next_link(snapshot: str) -> SnapshotElement | None:
    return next((e for e in parse_snapshot(snapshot) if e.role == "link" and _NEXT.match(e.name.strip())), None)


def _control(snapshot: str, pending: list[str]) -> tuple[str, str, dict[str, Any]] | None:
    """A control offering one of the values: a select option, a radio or check box, or a link named exactly so."""
    elements = parse_snapshot(snapshot)
    for value in pending:
        for e in elements:
            if e.role == "combobox" and any(o.lower() == value.lower() for o in e.options):
                option = next(o for o in e.options if o.lower() == value.lower())
                return value, "browser_select_option", {"element": e.name or "select", "target": e.ref, "values": [option]}
        for e in elements:
            if e.role in ("radio", "checkbox", "link", "tab", "menuitem") and e.name.strip().lower() == value.lower():
                return value, "browser_click", {"element": e.name, "target": e.ref}
    return None


def _lists(items: list[Item], ask: Ask, pending: list[str]) -> bool:
    """Whether the page lists what the instruction is about: a result showing every value no control took, and the measure if one is asked."""
    for item in items:
        if all(_has(item.text, v) for v in pending) and (not ask.op or _number(item, ask.measure) is not None):
            return True
    return False


def _browse_link(snapshot: str, ask: Ask, browsed: set[str], url: str, seen: set[str]) -> tuple[str, str] | None:
    """A link not yet followed, to a page not yet seen, that looks like it lists the records: named by a browse word ("Catalogue", "Content") or a word of the instruction."""
    best: tuple[float, str, str] | None = None
    for e in parse_snapshot(snapshot):
        if e.role != "link" or not e.name or _NEXT.match(e.name.strip()) or e.name in browsed or (e.url and urljoin(url, e.url).split("#")[0] in seen):
            continue
        named = words(e.name)
        score = (len(named & ask.wanted) + 0.4 * len(named & _BROWSE)) / max(len(named), 1)  # "penguins" before "penguins.sqlite", "Content" before "Toggle helper tables"
        if score > 0 and (best is None or score > best[0]):
            best = (score, e.name, e.ref)
    return None if best is None else (best[1], best[2])


@agent("scanner")
def scanner(name: str = "scanner") -> ScannerAgent:
    """A non-LLM baseline: applies the instruction's values with the site's filters, reads every result page, answers from the results."""
    return ScannerAgent(name)

