"""``explorer``: a deterministic non-LLM baseline that pursues the instruction's goal from what it sees.

It reads only what any agent under test gets (the instruction and the snapshots). The
instruction sets its mode (:func:`goal_mode`):

* **answer** (a question): it extracts the identifying tokens (quoted values,
  identifiers mixing letters and digits, capitalised words) and the asked field ("What
  *body mass* was recorded for …"), then navigates: a record row holding the tokens
  (its detail link when the row lacks the field), search boxes (typing the identifier),
  links sharing the instruction's words, a listing's "next" link, any unvisited link on
  the site. Once the page holds the tokens it answers from the record that holds them:
  the value whose column header or row label shares most words with the asked field
  (tables, definition lists and "Label: value" text are read from the snapshot). Out of
  steps, it answers its best guess.
* **open** ("Open the page …", "bring up its own page", "Go to the full entry …"): the
  same navigation; it stops on a page holding the tokens that is not a listing of many
  records (from a listing it opens the detail link of the row holding them).
* **change** (anything else): types quoted values that name no element into text
  boxes, picks options named in the instruction and acts on the element sharing most
  words, until every quoted value has been acted on or nothing matches.

Desktop tasks: :mod:`.desktop_explorer` (the same two ideas through the ``desktop_*`` tools).
Ties, and with probability ``explore`` any step, are broken by a seeded generator, so
different seeds give different, reproducible trajectories. Documents: it searches with
the instruction, reads the hits and answers with the sentence overlapping it most.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

import numpy as np
from fastmcp import Client

from .base import Job
from .calls import structured
from .desktop_explorer import explore_desktop
from .registry import agent

__all__ = [
    "ExplorerAgent", "SnapshotElement", "SnapshotNode", "Record", "Goal", "parse_snapshot", "parse_tree", "page_records",
    "goal_mode", "read_goal", "find_answer", "words",
]

_LINE = re.compile(r'^(?P<indent>\s*)- (?P<role>[a-z]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?(?P<rest>.*)$')
_PROP = re.compile(r"^(?P<indent>\s*)- /(?P<key>[a-z]+): ?(?P<value>.*)$")
_REF = re.compile(r"\[ref=((?:f\d+)?e\d+)\]")
_ACTIONABLE = {"link", "button", "tab", "menuitem", "checkbox", "radio", "switch", "option"}
_TEXT = {"textbox", "searchbox"}
_CELLS = {"cell", "gridcell", "rowheader", "columnheader"}
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]+")
_QUOTED = re.compile(r"[“\"]([^”\"]+)[”\"]")
_STOP = {"the", "and", "then", "page", "click", "open", "with", "from", "that", "this", "for", "into", "tab", "link", "button", "on", "of", "to", "a", "an", "in"}
_QUESTION_STOP = _STOP | {
    "what", "which", "how", "who", "when", "where", "was", "were", "is", "are", "does", "did", "do", "has", "have", "its", "their",
    "find", "look", "up", "report", "recorded", "listed", "given", "shown", "according", "site", "value", "many", "much", "any",
    "bring", "own", "go", "full", "entry", "detail", "details", "show", "by", "or", "as", "at", "it", "be",
}
_IDENT = re.compile(r"\b(?=[\w.-]*[A-Za-z])(?=[\w.-]*\d)[A-Za-z0-9][\w.-]*[A-Za-z0-9]\b")
_CAPITAL = re.compile(r"(?<![\w“\"])([A-Z][a-z][\w'-]*)")
_NEXT = re.compile(r"^(?:next\b.*|more|older|›|>|>>|→|»)$", re.I)
_BROWSE = {"content", "contents", "browse", "list", "listing", "all", "records", "catalogue", "catalog", "index", "data", "rows", "entries", "table", "search", "directory"}
_FIELD = [
    re.compile(r"(?:^|[,:;] )(?:according to [^,]+, )?what (?:is |was |are |were )?(?:the )?(?P<f>.+?) (?:was|is|were|are|does|do|did|has|of|for|listed|recorded|given|shown)\b"),
    re.compile(r"^which \w+ is (?:listed|given|recorded|shown) as the (?P<f>.+?) (?:of|for)\b"),
    re.compile(r"^find the (?P<f>.+?) (?:listed|recorded|given|shown|of|for)\b"),
    re.compile(r"\b(?:its|their) (?P<f>[^?.,;]+)[?.]?$"),
]
_ANSWER = re.compile(r"^(?:what|which|how|who|when|where|in which|were|was|is|are|did|does|look up)\b|^find the .+ (?:recorded|listed|given|shown)\b|\breport (?:its|their|the)\b", re.I)
_OPEN = re.compile(
    r"^(?:open|go to|navigate to|bring up)\b|\bbring up (?:its|the)\b|\b(?:open|show me|go to|navigate to|visit|take me to)\b[^.?]*\b(?:page|record|entry|details?|article)\b", re.I
)

Mode = Literal["answer", "open", "change"]


@dataclass
class SnapshotElement:
    role: str
    name: str
    ref: str
    options: list[str] = field(default_factory=list)
    url: str | None = None


@dataclass
class SnapshotNode:
    """One line of the snapshot: role, accessible name, ref, inline text, ``/url``, and its children."""

    role: str
    name: str
    ref: str | None
    text: str = ""
    url: str | None = None
    children: list[SnapshotNode] = field(default_factory=list)

    def content(self) -> str:
        """The node's visible text: its name, else its inline text and its children's."""
        if self.name:
            return self.name
        return " ".join(filter(None, [self.text, *(c.content() for c in self.children)])).strip()

    def walk(self) -> list[SnapshotNode]:
        return [self, *(d for c in self.children for d in c.walk())]


def parse_tree(snapshot: str) -> list[SnapshotNode]:
    """The snapshot (``aria_snapshot(mode="ai")``) as a tree; the top-level nodes."""
    roots: list[SnapshotNode] = []
    stack: list[tuple[int, SnapshotNode]] = []
    for line in snapshot.splitlines():
        prop = _PROP.match(line)
        if prop:
            if stack and prop["key"] == "url":
                stack[-1][1].url = prop["value"].strip().strip('"')
            continue
        m = _LINE.match(line)
        if not m:
            continue
        indent, rest = len(m["indent"]), m["rest"]
        ref = _REF.search(rest)
        inline = re.sub(r"\[[^\]]*\]", "", rest).strip()
        text = inline[1:].strip().strip('"') if inline.startswith(":") else ""
        node = SnapshotNode(m["role"], (m["name"] or "").replace('\\"', '"'), ref.group(1) if ref else None, text)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((indent, node))
    return roots


def parse_snapshot(snapshot: str) -> list[SnapshotElement]:
    """Interactive elements of an ``aria_snapshot(mode="ai")`` text, with each combobox's options and each link's URL."""
    found: list[SnapshotElement] = []

    def visit(node: SnapshotNode, box: SnapshotElement | None) -> None:
        if node.role == "option" and box is not None:
            box.options.append(node.name)
            return
        element = None
        if node.ref and (node.role in _ACTIONABLE or node.role in _TEXT or node.role == "combobox"):
            name = node.name or (node.content() if node.role == "link" else "")  # a link printed with its parts: "code: array", "text: — Efficient …"
            element = SnapshotElement(node.role, name, node.ref, url=node.url)
            found.append(element)
        for child in node.children:
            visit(child, element if node.role == "combobox" else box)

    for root in parse_tree(snapshot):
        visit(root, None)
    return found


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def words(text: str, stop: set[str] = _STOP) -> set[str]:
    """Content words of ``text`` (camelCase split): lower case, stop words removed, plural ``s`` dropped."""
    return {_stem(w) for w in _WORD.findall(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text).lower()) if w not in stop}


def _has(text: str, token: str) -> bool:
    """Whether ``token`` occurs in ``text`` as a whole word (case-insensitive)."""
    return re.search(rf"(?<![\w]){re.escape(token.lower())}(?![\w])", text.lower()) is not None


# --------------------------------------------------------------------------- reading the instruction


@dataclass
class Goal:
    """What the instruction asks, as the explorer reads it."""

    mode: Mode
    strong: list[str]  # quoted values and identifiers: the page must show them all
    weak: list[str]  # capitalised words: they break ties between records
    field: set[str]  # words of the asked field (answer mode)
    wanted: set[str]  # every content word


def goal_mode(instruction: str) -> Mode:
    """``answer`` for questions, ``open`` for find-and-open goals, ``change`` for the rest."""
    text = instruction.strip()
    if text.endswith("?") or _ANSWER.search(text):
        return "answer"
    return "open" if _OPEN.search(text) else "change"


def read_goal(instruction: str) -> Goal:
    """The mode, identifying tokens, asked field and content words of an instruction."""
    quoted = [q.strip() for q in _QUOTED.findall(instruction) if q.strip()]
    bare = _QUOTED.sub(" ", instruction)
    idents = [t for t in _IDENT.findall(bare) if t not in quoted]
    first = re.match(r"\s*(\w+)", bare)
    capitals = [c for c in _CAPITAL.findall(bare) if c.lower() not in _QUESTION_STOP and not (first and c == first.group(1)) and c not in idents]
    strong = list(dict.fromkeys(quoted + idents))
    low = bare.lower().strip()
    asked: set[str] = set()
    for pattern in _FIELD:
        m = pattern.search(low)
        if m:
            asked = words(m["f"], _QUESTION_STOP) - {w.lower() for w in strong + capitals}
            if asked:
                break
    wanted = words(instruction, _QUESTION_STOP)
    return Goal(goal_mode(instruction), strong, list(dict.fromkeys(capitals)), asked or (wanted - words(" ".join(strong + capitals))), wanted)


# --------------------------------------------------------------------------- reading the page


@dataclass
class Record:
    """Labelled values shown together (a table row under its column headers, a key-value table, a definition list)."""

    fields: list[tuple[str, str]]
    links: list[SnapshotNode] = field(default_factory=list)
    listing: bool = False  # a row of a table listing several records

    def text(self) -> str:
        return " ".join(v for _, v in self.fields)


def _rows(table: SnapshotNode) -> list[SnapshotNode]:
    out: list[SnapshotNode] = []
    for child in table.children:
        if child.role == "row":
            out.append(child)
        elif child.role not in ("table", "grid", "treegrid"):
            out.extend(_rows(child))
    return out


def _links(node: SnapshotNode) -> list[SnapshotNode]:
    return [n for n in node.walk() if n.role == "link" and n.ref]


def _table_records(table: SnapshotNode) -> list[Record]:
    header: list[str] = []
    pairs: list[tuple[str, str]] = []
    rows: list[Record] = []
    pair_links: list[SnapshotNode] = []
    for row in _rows(table):
        cells = [c for c in row.children if c.role in _CELLS]
        if cells and all(c.role == "columnheader" for c in cells):
            header = [c.content() for c in cells]
        elif len(cells) == 2 and not header:
            pairs.append((cells[0].content(), cells[1].content()))
            pair_links += _links(row)
        elif cells:
            labels = header if len(header) >= len(cells) else header + [""] * (len(cells) - len(header))
            rows.append(Record([(labels[i], c.content()) for i, c in enumerate(cells)], _links(row)))
    for record in rows:
        record.listing = len(rows) >= 2
    return rows + ([Record(pairs, pair_links)] if pairs else [])


def page_records(snapshot: str) -> list[Record]:
    """Every record the page shows: table rows, key-value tables, definition lists, and "Label: value" text."""
    records: list[Record] = []
    loose: list[tuple[str, str]] = []
    for root in parse_tree(snapshot):
        for node in root.walk():
            if node.role in ("table", "grid", "treegrid"):
                records += _table_records(node)
            kids = node.children
            terms = [(a.content(), b.content()) for a, b in zip(kids, kids[1:]) if a.role == "term" and b.role == "definition"]
            if terms:
                records.append(Record(terms, _links(node)))
            line = node.text or (node.name if node.role in ("paragraph", "listitem", "generic", "text") else "")
            m = re.match(r"^([^:]{2,40}):\s+(.+)$", line)
            if m and node.role not in _CELLS:
                loose.append((m[1].strip(), m[2].strip()))
    return records + ([Record(loose)] if loose else [])


def _page_text(snapshot: str) -> str:
    """Every name and text of the page, whitespace collapsed."""
    return " ".join(" ".join(f"{n.name} {n.text}".split()) for r in parse_tree(snapshot) for n in r.walk()).strip()


def _holding(records: list[Record], goal: Goal) -> list[tuple[int, int, Record]]:
    """Records holding every strong token (or, without strong tokens, at least one weak one), best first."""
    scored = []
    for record in records:
        text = record.text()
        strong = sum(_has(text, t) for t in goal.strong)
        weak = sum(_has(text, t) for t in goal.weak)
        if strong == len(goal.strong) and (goal.strong or weak):
            scored.append((strong, weak, record))
    return sorted(scored, key=lambda s: (-s[0], -s[1]))


def _value(record: Record, goal: Goal) -> str | None:
    """The record's value whose label shares most words with the asked field (labels of identifying values skipped)."""
    best, best_score = None, 0
    for label, value in record.fields:
        if not label or not value or any(_has(value, t) for t in goal.strong + goal.weak):
            continue
        score = len(words(label) & goal.field)
        if score > best_score:
            best, best_score = value, score
    return best


def find_answer(snapshot: str, goal: Goal) -> tuple[str | None, Record | None]:
    """The answer the page gives (None if none), and the record holding the tokens (to open when it lacks the field)."""
    holding = _holding(page_records(snapshot), goal)
    for _, _, record in holding:
        value = _value(record, goal)
        if value is not None:
            return value, record
    return None, holding[0][2] if holding else None


def _page_holds(snapshot: str, goal: Goal) -> bool:
    text = _page_text(snapshot).lower()
    return bool(goal.strong) and all(_has(text, t) or " ".join(t.split()).lower() in text for t in goal.strong)


def _guess(snapshot: str, goal: Goal) -> str:
    """A non-empty best guess: the page's answer, a field matching the asked one anywhere on the page, else an identifying token."""
    found, _ = find_answer(snapshot, goal)
    if found:
        return found
    for record in page_records(snapshot):
        value = _value(record, goal)
        if value:
            return value
    return (goal.strong + goal.weak + ["unknown"])[0]


# --------------------------------------------------------------------------- the agent


class ExplorerAgent:
    """Goal-pursuing explorer (see the module notes)."""

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
        episode = str(started.get("episode_id", ""))
        if episode.startswith("doc-"):
            await self._document(client, instruction, job.max_steps)
        elif episode.startswith("desk-"):
            await explore_desktop(client, episode, instruction, str(started.get("snapshot") or ""), goal_mode(instruction), job.max_steps, rng)
        else:
            goal = read_goal(instruction)
            snapshot, url = str(started.get("snapshot") or ""), str(started.get("url") or "")
            if goal.mode == "change":
                await self._web(client, instruction, snapshot, job.max_steps, rng)
            else:
                await self._pursue(client, goal, snapshot, url, job.max_steps, rng)
        await client.call_tool("env_close", {})

    async def _document(self, client: Client[Any], instruction: str, max_steps: int) -> None:
        wanted = words(instruction)
        hits = structured(await client.call_tool("doc_search", {"query": instruction[:300], "k": 3}))
        best, best_score = "", -1.0
        for hit in hits[: max(max_steps - 1, 0)]:
            node = structured(await client.call_tool("doc_read", {"node_id": hit["node_id"]}))
            for sentence in re.split(r"(?<=[.!?])\s+|\n+", str(node.get("text", ""))):
                found = words(sentence)
                score = len(found & wanted) / (len(found) ** 0.5 or 1.0)
                if sentence.strip() and score > best_score:
                    best, best_score = sentence.strip(), score
        await client.call_tool("env_answer", {"answer": best or "unknown"})

    # ---- answer and open goals

    def _next_move(self, goal: Goal, snapshot: str, url: str, visited: set[str], typed: set[tuple[str, str]], rng: np.random.Generator) -> tuple[str, dict[str, Any]] | None:
        """The next tool call towards the goal from this page, or None when nothing is left to try."""
        elements = parse_snapshot(snapshot)
        host = urlsplit(url).netloc

        def target(e: SnapshotElement) -> str | None:
            if e.role != "link" or not e.url or e.url.startswith(("#", "javascript:", "mailto:")):
                return None
            full = urljoin(url, e.url).split("#")[0]
            return full if urlsplit(full).netloc == host and full not in visited else None

        links = [(e, t) for e in elements for t in [target(e)] if t]
        if self.explore > 0 and links and rng.random() < self.explore:
            e, _ = links[int(rng.integers(len(links)))]
            return "browser_click", {"element": e.name or e.role, "target": e.ref}
        _, record = find_answer(snapshot, goal) if goal.mode == "answer" else (None, next((r for _, _, r in _holding(page_records(snapshot), goal)), None))
        complete = record is not None and all(_has(record.text(), w) for w in goal.weak)
        if record is not None and record.listing and (complete or not any(_NEXT.match(e.name.strip()) for e, _ in links)):
            # the row holding the tokens (every capitalised word too, unless there is no next page to look on): open its detail
            for node in record.links:
                if node.url and not node.url.startswith(("#", "javascript:")) and urljoin(url, node.url).split("#")[0] not in visited:
                    return "browser_click", {"element": node.name or "link", "target": node.ref}
        if goal.strong and not _page_holds(snapshot, goal):
            for e in elements:
                search_like = e.role == "searchbox" or (e.role == "textbox" and words(e.name) & {"search", "find", "filter", "look"})
                if search_like and (e.name, goal.strong[0]) not in typed:
                    typed.add((e.name, goal.strong[0]))
                    return "browser_type", {"element": e.name or e.role, "target": e.ref, "text": goal.strong[0], "submit": True}
        scored = [(3.0 * sum(_has(e.name, t) for t in goal.strong) + len(words(e.name, _QUESTION_STOP) & goal.wanted), i, e) for i, (e, _) in enumerate(links)]
        listing = any(r.listing for r in page_records(snapshot))
        if listing and (goal.strong or goal.weak) and not any(s >= 3.0 for s, _, _ in scored):  # a listing without the record: page on
            # (links sharing words on a listing are mostly its sort links)
            nexts = sorted((e for _, _, e in scored if _NEXT.match(e.name.strip())), key=lambda e: e.name.strip() in ("»", ">>"))  # "last" after "next"
            if nexts:
                return "browser_click", {"element": nexts[0].name, "target": nexts[0].ref}
        best = max((s for s, _, _ in scored), default=0.0)
        if not goal.strong and goal.mode == "open":  # nothing identifies the page: follow words while a link beats the page itself
            heading = max((len(words(n.content(), _QUESTION_STOP) & goal.wanted) for r in parse_tree(snapshot) for n in r.walk() if n.role == "heading"), default=0)
            if heading > 0 and best <= heading:
                return None
        if best <= 0:  # nothing shares a word: browse, listing-like links first, then snapshot order
            scored = [(0.5 * bool(words(e.name) & _BROWSE), i, e) for _, i, e in scored if not _NEXT.match(e.name.strip())]
            best = max((s for s, _, _ in scored), default=-1.0)
        pool = [e for s, _, e in scored if s == best]
        if not pool:
            return None
        e = pool[int(rng.integers(len(pool)))] if best > 0 else pool[0]
        return "browser_click", {"element": e.name or e.role, "target": e.ref}

    def _done_opening(self, goal: Goal, snapshot: str) -> bool:
        """An open goal is reached on a page holding the tokens that is not a listing (or shows them in one non-listing record)."""
        if not _page_holds(snapshot, goal):
            return False
        records = page_records(snapshot)
        holding = _holding(records, goal)
        return not holding[0][2].listing if holding else not any(r.listing for r in records)

    async def _pursue(self, client: Client[Any], goal: Goal, snapshot: str, url: str, max_steps: int, rng: np.random.Generator) -> None:
        visited = {url.split("#")[0]}
        typed: set[tuple[str, str]] = set()
        answer: str | None = None
        for _ in range(max(max_steps - 1, 0)):
            if goal.mode == "answer":
                found, record = find_answer(snapshot, goal)
                if found is not None and record is not None:
                    answer = answer or found  # the best so far, if no record holding every capitalised word turns up
                    if all(_has(record.text(), w) for w in goal.weak):
                        answer = found
                        break
            elif self._done_opening(goal, snapshot):
                break
            move = self._next_move(goal, snapshot, url, visited, typed, rng)
            if move is None:
                break
            result = await client.call_tool(move[0], move[1], raise_on_error=False)
            if result.is_error:
                continue
            data = structured(result)
            snapshot, url = str(data.get("snapshot") or snapshot), str(data.get("url") or url)
            visited.add(url.split("#")[0])
        if goal.mode == "answer":
            await client.call_tool("env_answer", {"answer": answer or _guess(snapshot, goal)})

    # ---- change goals (unchanged behaviour)

    def _candidates(self, elements: list[SnapshotElement], quoted: list[str], wanted: set[str], used: set[tuple[str, str]]) -> list[tuple[float, str, dict[str, Any], tuple[str, str]]]:
        names = {e.name.lower() for e in elements} | {o.lower() for e in elements for o in e.options}
        out: list[tuple[float, str, dict[str, Any], tuple[str, str]]] = []
        for e in elements:
            key = (e.role, e.name)
            if e.role in _TEXT:
                for value in quoted:
                    if value.lower() not in names and (e.role, value) not in used:
                        out.append((2.0 + len(words(e.name) & wanted), "browser_type", {"element": e.name or e.role, "target": e.ref, "text": value, "submit": True}, (e.role, value)))
            elif e.role == "combobox":
                for option in e.options:
                    if any(option.lower() == q.lower() for q in quoted) and ("option", option) not in used:
                        out.append((3.0, "browser_select_option", {"element": e.name or "select", "target": e.ref, "values": [option]}, ("option", option)))
            elif key not in used and e.name:
                exact = any(e.name.lower() == q.lower() for q in quoted)
                overlap = len(words(e.name) & wanted) / max(len(words(e.name)), 1)
                score = 3.0 * exact + overlap
                out.append((score, "browser_click", {"element": e.name, "target": e.ref}, key))
        return out

    async def _web(self, client: Client[Any], instruction: str, snapshot: str, max_steps: int, rng: np.random.Generator) -> None:
        quoted = [q.strip() for q in _QUOTED.findall(instruction) if q.strip()]
        wanted = words(instruction)
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
    """A deterministic non-LLM baseline pursuing the instruction's goal from the snapshots; seeded exploration."""
    return ExplorerAgent(name, seed=seed, explore=explore)
