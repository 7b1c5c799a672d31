"""Meta-paths: a small regex-like pattern language over typed knowledge-graph paths.

A meta-path (Graph2Eval, Appendix D) describes the *shape* of a web task as a typed
path — e.g. "a search box fills a form that submits to a results page" — and this
module's graph-regex engine finds the concrete node paths that have that shape.

Syntax
------
A pattern is a node term followed by any number of ``edge node`` steps::

    SearchBox($q) -[fills]-> Form($f) -[submits]-> Page($results)

Grammar (whitespace is free between tokens)::

    pattern    := node body
    body       := element*
    element    := edge node quant?             # a quantified node repeats its edge too
                | "(" element+ ")" quant?      # a group starts with an edge (or a group)
    node       := types (slot | pred)*         # at most one slot
    types      := "*" | "Any" | NAME ("|" NAME)* | "(" NAME ("|" NAME)* ")"
    slot       := "(" "$" NAME ")"
    pred       := "[" KEY ("=" | "!=" | "~" | "!~") VALUE "]"
    edge       := "-[" etypes "]->"            # forward:  current -> next
                | "<-[" etypes "]-"            # backward: current <- next
                | "-->" | "<--"                # any edge type
    etypes     := "*" | NAME ("|" NAME)*
    quant      := "?" | "*" | "+" | "{" N "}" | "{" N "," "}" | "{" N "," M "}"

* **Types** are the node / edge types of DESIGN.md, in snake_case or CamelCase
  (``SearchBox`` == ``search_box``, ``NavigatesTo`` == ``navigates_to``), matched
  exactly: ``Button`` never matches a ``link`` node. ``*`` or ``Any`` matches any
  node type; ``-[*]->`` any edge type. Unknown names are rejected at parse time.
* **Quantifiers** apply to a node term *together with the edge before it*, or to a
  parenthesised group of steps: ``Page -[contains]-> Region* -[contains]-> Link``
  means ``Page (-[contains]-> Region)* -[contains]-> Link``. The first node takes no
  quantifier. ``*``, ``+`` and ``{n,}`` are capped at :data:`MAX_REPEAT` repetitions
  (or ``n`` if larger), so matching always terminates. Repetition is lazy: at each
  repetition point, stopping is tried before repeating again, so shorter paths
  tend to come first.
* **Slots** ``$name`` bind the node matched by their term; inside a repeated group the
  last repetition wins. A slot name may appear only once in a pattern.
* **Predicates** filter a node on an attribute: ``[key=value]`` (equal, case
  insensitive), ``[key~value]`` (case-insensitive substring) and their negations
  ``[key!=value]``, ``[key!~value]``. The key is looked up in the node's ``attrs``
  first, then in its top-level fields (``text``, ``type``); a list value matches if
  any element does; a missing key fails ``=``/``~`` and passes ``!=``/``!~``. Values
  may be quoted with ``"`` or ``'``.

Matching
--------
:func:`match` runs a backtracking search: start nodes in graph insertion order,
neighbours in insertion order, parallel edge types sorted, no node visited twice in
one match (simple paths). Results are deterministic and de-duplicated. Syntax errors
are :class:`InputError` naming the column, with a caret under it; a search that
exceeds ``max_steps`` edge expansions raises :class:`InputError` too
(``SearchBudgetExceeded``, with the pattern, steps and budget), rather than returning a
silently partial answer; ``bounded_match`` reports it in its outcome instead, and caps
the start nodes (``max_starts``: an evenly spaced, deterministic subset of the nodes that
fit the first term), which is what task generation uses.

Examples
--------
>>> p = compile_pattern("Button($open) -[opens]-> Toast|Modal($dialog)")
>>> p.head.types, p.body[0].node.types, p.body[0].node.slot
(('button',), ('toast', 'modal'), 'dialog')
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field

from ...errors import InputError
from ...graph.model import EdgeType, NodeType

__all__ = [
    "MAX_REPEAT",
    "MAX_STARTS",
    "MAX_STEPS",
    "Predicate",
    "NodeTerm",
    "EdgeTerm",
    "Step",
    "Repeat",
    "Pattern",
    "Match",
    "parse_pattern",
    "compile_pattern",
    "normalize_type_name",
]

MAX_REPEAT = 8
"""Upper bound of ``*``, ``+`` and ``{n,}`` (unless ``n`` is larger)."""

MAX_STEPS = 1_000_000
"""Default search budget (edge expansions) of one :func:`match` call."""

MAX_STARTS = 2_000
"""Default cap on the start nodes of one bounded search (``bounded_match``); above it an evenly spaced subset is searched."""

_NODE_TYPES = frozenset(t.value for t in NodeType)
_EDGE_TYPES = frozenset(t.value for t in EdgeType)
_ANY_WORDS = frozenset({"any"})


# --------------------------------------------------------------------------- AST


@dataclass(frozen=True)
class Predicate:
    """``[key op value]`` on a node."""

    key: str
    op: Literal["=", "!=", "~", "!~"]
    value: str


@dataclass(frozen=True)
class NodeTerm:
    """A node position: allowed types (``None`` = any), an optional slot, predicates."""

    types: tuple[str, ...] | None
    slot: str | None = None
    predicates: tuple[Predicate, ...] = ()
    column: int = 0


@dataclass(frozen=True)
class EdgeTerm:
    """An edge between two node positions; ``direction`` is seen from the earlier node."""

    types: tuple[str, ...] | None
    direction: Literal["out", "in"] = "out"
    column: int = 0


@dataclass(frozen=True)
class Step:
    """One hop: follow ``edge`` from the current node to a node matching ``node``."""

    edge: EdgeTerm
    node: NodeTerm


@dataclass(frozen=True)
class Repeat:
    """``items`` repeated between ``min`` and ``max`` times (a group or a quantified node)."""

    items: tuple[Step | Repeat, ...]
    min: int
    max: int
    column: int = 0


@dataclass(frozen=True)
class Pattern:
    """A parsed meta-path: the first node term, then the steps after it."""

    text: str
    head: NodeTerm
    body: tuple[Step | Repeat, ...]

    def terms(self) -> tuple[NodeTerm, ...]:
        """Every node term, in the order they appear (groups flattened)."""
        return tuple(_terms(self))

    @property
    def slots(self) -> tuple[str, ...]:
        """Slot names in the order they appear."""
        return tuple(t.slot for t in _terms(self) if t.slot)


def _terms(pattern: Pattern) -> Iterator[NodeTerm]:
    def walk(items: tuple[Step | Repeat, ...]) -> Iterator[NodeTerm]:
        for item in items:
            if isinstance(item, Step):
                yield item.node
            else:
                yield from walk(item.items)

    yield pattern.head
    yield from walk(pattern.body)


class Match(BaseModel):
    """One path in the graph that has the pattern's shape."""

    nodes: list[str] = Field(description="Node ids along the path, first to last.")
    edges: list[tuple[str, str, str]] = Field(description="(source, edge type, target) in graph direction.")
    slots: dict[str, str] = Field(default_factory=dict, description="Slot name → bound node id.")


# --------------------------------------------------------------------------- names


def normalize_type_name(name: str) -> str:
    """``SearchBox`` / ``searchBox`` / ``SEARCH_BOX`` / ``search_box`` → ``search_box``."""
    if "_" in name or name.isupper() or name.islower():
        return name.lower()
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


# --------------------------------------------------------------------------- tokens


@dataclass(frozen=True)
class _Tok:
    kind: str  # NAME SLOT EDGE PRED QUANT ( ) | * ? + EOF
    text: str
    col: int  # 1-based
    value: Any = None


class _Syntax:
    def __init__(self, text: str) -> None:
        self.text = text

    def error(self, col: int, message: str) -> InputError:
        caret = " " * (max(col, 1) - 1) + "^"
        return InputError(f"meta-path syntax error at column {col}: {message}\n  {self.text}\n  {caret}")


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SLOT = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_FWD = re.compile(r"-\[([^\]]*)\]->")
_BWD = re.compile(r"<-\[([^\]]*)\]-")
_QUANT = re.compile(r"\{\s*(\d+)\s*(?:(,)\s*(\d*)\s*)?\}")
_PRED = re.compile(r"""\[\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(!=|!~|=|~)\s*("[^"]*"|'[^']*'|[^\]"']*?)\s*\]""")


def _tokenize(text: str, syn: _Syntax) -> list[_Tok]:
    toks: list[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        col = i + 1
        if ch.isspace():
            i += 1
            continue
        if text.startswith("<-", i):
            if text.startswith("<--", i) and not text.startswith("<-->", i):
                toks.append(_Tok("EDGE", "<--", col, ("in", None, col)))
                i += 3
                continue
            m = _BWD.match(text, i)
            if not m:
                raise syn.error(col, "malformed backward edge; write <-[type]- or <--")
            if text.startswith(">", m.end()):
                raise syn.error(col, "bidirectional edges are not supported; use -[type]-> or <-[type]-")
            toks.append(_Tok("EDGE", m.group(0), col, ("in", m.group(1), m.start(1) + 1)))
            i = m.end()
            continue
        if ch == "-":
            if text.startswith("-->", i):
                toks.append(_Tok("EDGE", "-->", col, ("out", None, col)))
                i += 3
                continue
            m = _FWD.match(text, i)
            if not m:
                raise syn.error(col, "malformed forward edge; write -[type]-> or -->")
            toks.append(_Tok("EDGE", m.group(0), col, ("out", m.group(1), m.start(1) + 1)))
            i = m.end()
            continue
        if ch == "[":
            m = _PRED.match(text, i)
            if not m:
                raise syn.error(col, "malformed predicate; write [key=value], [key~value], [key!=value] or [key!~value]")
            value = m.group(3)
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            toks.append(_Tok("PRED", m.group(0), col, Predicate(m.group(1), m.group(2), value)))  # type: ignore[arg-type]
            i = m.end()
            continue
        if ch == "{":
            m = _QUANT.match(text, i)
            if not m:
                raise syn.error(col, "malformed quantifier; write {n}, {n,} or {n,m}")
            low = int(m.group(1))
            if m.group(2) is None:
                high = low
            elif m.group(3):
                high = int(m.group(3))
            else:
                high = max(low, MAX_REPEAT)
            if high < low:
                raise syn.error(col, f"quantifier {m.group(0)} has its upper bound below its lower bound")
            if high < 1:
                raise syn.error(col, f"quantifier {m.group(0)} allows no repetition at all")
            toks.append(_Tok("QUANT", m.group(0), col, (low, high)))
            i = m.end()
            continue
        if ch == "$":
            m = _SLOT.match(text, i)
            if not m:
                raise syn.error(col, "a slot is $ followed by a name, e.g. $query")
            toks.append(_Tok("SLOT", m.group(0), col, m.group(1)))
            i = m.end()
            continue
        m = _NAME.match(text, i)
        if m:
            toks.append(_Tok("NAME", m.group(0), col))
            i = m.end()
            continue
        if ch in "()|*?+":
            toks.append(_Tok(ch, ch, col))
            i += 1
            continue
        raise syn.error(col, f"unexpected character {ch!r}")
    toks.append(_Tok("EOF", "", n + 1))
    return toks


# --------------------------------------------------------------------------- parser


class _Parser:
    def __init__(self, text: str) -> None:
        self.syn = _Syntax(text)
        self.text = text
        self.toks = _tokenize(text, self.syn)
        self.i = 0
        self.slots: dict[str, int] = {}

    def peek(self, ahead: int = 0) -> _Tok:
        return self.toks[min(self.i + ahead, len(self.toks) - 1)]

    def take(self) -> _Tok:
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, kind: str, what: str) -> _Tok:
        tok = self.peek()
        if tok.kind != kind:
            raise self.syn.error(tok.col, f"expected {what}, found {self.describe(tok)}")
        return self.take()

    @staticmethod
    def describe(tok: _Tok) -> str:
        return "end of pattern" if tok.kind == "EOF" else repr(tok.text)

    def parse(self) -> Pattern:
        if self.peek().kind == "EOF":
            raise self.syn.error(1, "empty pattern; start with a node type, e.g. Page")
        if self.peek().kind == "EDGE":
            raise self.syn.error(self.peek().col, "a pattern starts with a node, not an edge")
        head = self.node()
        if self.peek().kind in ("?", "*", "+", "QUANT"):
            raise self.syn.error(self.peek().col, "the first node cannot take a quantifier")
        body = self.elements(closing="EOF")
        return Pattern(self.text, head, tuple(body))

    def elements(self, closing: str) -> list[Step | Repeat]:
        items: list[Step | Repeat] = []
        while self.peek().kind != closing:
            tok = self.peek()
            if tok.kind == "EDGE":
                self.take()
                step = Step(self.edge(tok), self.node())
                quant = self.quantifier()
                items.append(Repeat((step,), quant[0], quant[1], tok.col) if quant else step)
            elif tok.kind == "(":
                self.take()
                if self.peek().kind not in ("EDGE", "("):
                    raise self.syn.error(
                        self.peek().col, f"a group must start with an edge such as -[contains]->, found {self.describe(self.peek())}"
                    )
                inner = self.elements(closing=")")
                self.take()
                quant = self.quantifier() or (1, 1)
                items.append(Repeat(tuple(inner), quant[0], quant[1], tok.col))
            elif tok.kind == ")" and closing == "EOF":
                raise self.syn.error(tok.col, "unbalanced ')'")
            elif tok.kind == "EOF":
                raise self.syn.error(tok.col, "unclosed group: expected ')'")
            elif tok.kind in ("?", "*", "+", "QUANT"):
                raise self.syn.error(tok.col, f"quantifier {tok.text!r} has nothing to repeat")
            else:
                raise self.syn.error(tok.col, f"expected an edge such as -[contains]-> or a group '(', found {self.describe(tok)}")
        return items

    def quantifier(self) -> tuple[int, int] | None:
        tok = self.peek()
        if tok.kind == "?":
            quant = (0, 1)
        elif tok.kind == "*":
            quant = (0, MAX_REPEAT)
        elif tok.kind == "+":
            quant = (1, MAX_REPEAT)
        elif tok.kind == "QUANT":
            quant = tok.value
        else:
            return None
        self.take()
        nxt = self.peek()
        if nxt.kind in ("?", "*", "+", "QUANT"):
            raise self.syn.error(nxt.col, f"quantifier {nxt.text!r} follows another quantifier")
        return quant

    def edge(self, tok: _Tok) -> EdgeTerm:
        direction, inner, col = tok.value
        if inner is None:
            return EdgeTerm(None, direction, tok.col)
        names = self.alternatives(inner, col, _EDGE_TYPES, "edge type", sorted(_EDGE_TYPES))
        return EdgeTerm(names, direction, tok.col)

    def alternatives(self, inner: str, col: int, known: frozenset[str], what: str, listing: list[str]) -> tuple[str, ...] | None:
        if inner.strip() in ("*", "") or inner.strip().lower() in _ANY_WORDS:
            if not inner.strip():
                raise self.syn.error(col, f"empty {what}; write * for any")
            return None
        names: list[str] = []
        offset = 0
        for part in inner.split("|"):
            stripped = part.strip()
            pcol = col + offset + (len(part) - len(part.lstrip()))
            offset += len(part) + 1
            if not _NAME.fullmatch(stripped):
                raise self.syn.error(pcol, f"expected an {what} name, found {repr(stripped) if stripped else 'nothing'}")
            name = normalize_type_name(stripped)
            if name not in known:
                raise self.syn.error(pcol, f"unknown {what} {stripped!r}; known: {', '.join(listing)}")
            if name not in names:
                names.append(name)
        return tuple(names)

    def type_name(self) -> str | None:
        tok = self.take()
        if tok.kind == "*":
            return None
        if tok.kind != "NAME":
            raise self.syn.error(tok.col, f"expected a node type such as Page or SearchBox, found {self.describe(tok)}")
        if tok.text.lower() in _ANY_WORDS:
            return None
        name = normalize_type_name(tok.text)
        if name not in _NODE_TYPES:
            raise self.syn.error(tok.col, f"unknown node type {tok.text!r}; known: {', '.join(t.value for t in NodeType)}")
        return name

    def node(self) -> NodeTerm:
        col = self.peek().col
        names: list[str | None] = []
        if self.peek().kind == "(":
            self.take()
            names.append(self.type_name())
            while self.peek().kind == "|":
                self.take()
                names.append(self.type_name())
            self.expect(")", "')' closing the type alternation")
        else:
            names.append(self.type_name())
            while self.peek().kind == "|":
                self.take()
                names.append(self.type_name())
        types: tuple[str, ...] | None = None if None in names else tuple(dict.fromkeys(n for n in names if n))
        slot: str | None = None
        preds: list[Predicate] = []
        while True:
            tok = self.peek()
            if tok.kind == "PRED":
                preds.append(self.take().value)
            elif tok.kind == "(" and self.peek(1).kind == "SLOT":
                if slot is not None:
                    raise self.syn.error(tok.col, "a node term takes one slot")
                self.take()
                stok = self.take()
                slot = stok.value
                if slot in self.slots:
                    raise self.syn.error(stok.col, f"slot ${slot} is already bound at column {self.slots[slot]}")
                self.slots[slot] = stok.col
                self.expect(")", f"')' after ${slot}")
            else:
                break
        return NodeTerm(types, slot, tuple(preds), col)


def parse_pattern(text: str) -> Pattern:
    """Parse a meta-path into its AST; raises :class:`InputError` pointing at the bad column."""
    if not isinstance(text, str):
        raise InputError(f"a meta-path is a string, got {type(text).__name__}")
    return _Parser(text).parse()


@lru_cache(maxsize=512)
def compile_pattern(text: str) -> Pattern:
    """:func:`parse_pattern`, cached by pattern text (patterns are immutable)."""
    return parse_pattern(text)
