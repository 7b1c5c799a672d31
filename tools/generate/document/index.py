"""The graph index and text helpers behind template document generation.

:class:`_Index` gives the document generators fast, ordered access to sections,
paragraphs, tables, cells, captions and references; the helpers normalise and split
text the same way for questions and for gold answers.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pysbd

from ...graph.model import KnowledgeGraph, Node
from .templates import TaskTemplate

if TYPE_CHECKING:
    from .address import Addresses

__all__ = ["normalise", "split_sentences"]

_DIFFICULTIES = ("easy", "medium", "hard", "expert")
_MAX_CELL_CHARS = 100
_CAPTION_PREFIX = re.compile(r"^\s*(?:figure|fig\.?|table)\s*\d+(?:\.\d+)*[a-z]?\s*(?:\.:|[.:])(?!\d)\s*", re.IGNORECASE)  # "Figure 2.4:", "Table 3." and KOMA-Script's "Figure 3.5.:"
_MERGED_NUMBERS = re.compile(r"^[-−+\d.,()%\s]*\d[-−+\d.,()%]*\s+[-−+(]*\d[-−+\d.,()%\s]*$")
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:\.\d+)?(?![\w]|\.\d)")


# --- text helpers -------------------------------------------------------------------------


def normalise(text: str) -> str:
    """NFC, collapsed whitespace, stripped; case and symbols (ℓ, ⊤, …) kept as printed."""
    return " ".join(unicodedata.normalize("NFC", text).split())


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


#: A lone capital and its stop, then a word that opens sentences, not names: "… written in R. The package …" ends at "R."
_LETTER_THEN_OPENER = re.compile(
    r"(?<=\b[A-Z]\.) (?=(?:The|This|These|That|Those|It|Its|We|Our|In|An|For|If|When|As|To|There|Here|However|Then|Thus|Since|Note|See)\b)"
)

#: A piece that goes on with the sentence before it: no sentence opens on these words in lower case (a name such as
#: "lmer" may, so only function words count).
_GOES_ON = re.compile(r"(?:should|must|shall|would|could|can|may|might|will|is|are|was|were|has|have|had|does|do|and|or|but|nor|which|that|whose|to|of|for|with|from|by|as)\s")


@lru_cache(maxsize=8192)
def _sentences(text: str) -> tuple[str, ...]:
    """pysbd's sentences, glued back where it cut before a method name (".llt()") or after a "?" that goes on in lower
    case (a citation LaTeX could not resolve), and cut after a lone capital that ends a sentence ("R.") when a sentence
    opener follows.

    >>> _sentences("The methods are .llt() and .ldlt(). It is written in R. The package is fast.")
    ('The methods are .llt() and .ldlt().', 'It is written in R.', 'The package is fast.')
    >>> _sentences("It is referred to ? as well as ?. The end.")
    ('It is referred to ? as well as ?.', 'The end.')
    >>> _sentences("As shown by R. A. Fisher and D. Cox.")
    ('As shown by R. A. Fisher and D. Cox.',)
    >>> _sentences("We use the integers 1, . . ., k for both. The end.")
    ('We use the integers 1, . . ., k for both.', 'The end.')
    >>> _sentences("Follow Special case: uploads to stable. should be followed as usual. lmer fits it.")
    ('Follow Special case: uploads to stable. should be followed as usual.', 'lmer fits it.')
    """
    spans: list[list[int]] = []  # [start, end] of each sentence in text
    at = 0
    for piece in (p.strip() for p in _segmenter().segment(text)):
        start = text.find(piece, at) if piece else -1
        if start < 0:
            continue
        glued = start > 0 and not text[start - 1].isspace()  # no space before it (".llt()"), or a "?" went on in lower case
        dots = piece.startswith(". .")  # an ellipsis set as spaced dots ("1, . . ., k"), cut at its first dot
        goes_on = _GOES_ON.match(piece) is not None  # "… the stable and oldstable distributions. should be followed …": a title's full stop
        if spans and (glued and start == spans[-1][1] or (text[spans[-1][1] - 1] == "?" and piece[:1].islower()) or dots or goes_on):
            spans[-1][1] = start + len(piece)
        else:
            spans.append([start, start + len(piece)])
        at = start + len(piece)
    out = [text[a:b] for a, b in spans]
    return tuple(part for sentence in out for part in _LETTER_THEN_OPENER.split(sentence))


#: A cell's last word that no phrase ends on: its text goes on in a line the table reader made a row of its own.
_OPEN_TAIL = re.compile(r"(?:\b(?:a|an|the|of|to|in|on|for|with|by|and|or|from|at|than|that|which|is|are|was|were|be|no|not|as|would|will|can|may)|/)$", re.I)


def _cut_cell(text: str) -> bool:
    """Whether a cell's text stops where a phrase cannot ("… with '-help', or no", "blastp/", "… as would be").

    >>> _cut_cell("shows help with '-help', or no"), _cut_cell("blastp/"), _cut_cell("no"), _cut_cell("fast and exact")
    (True, True, False, False)
    """
    return bool(_OPEN_TAIL.search(text)) and (len(text.split()) >= 3 or text.endswith("/"))


def split_sentences(text: str) -> list[str]:
    """Sentences of normalised text; each one is a verbatim substring of ``normalise(text)``.

    Sentence boundaries come from ``pysbd`` (rule-based, the "Golden Rules"), which knows
    abbreviations such as "et al.", "e.g.", "Fig." and decimal numbers.

    >>> split_sentences("Shown by Smith et al. (2008) and Jones et al. 2010. The fit uses REML, i.e. restricted likelihood.")
    ['Shown by Smith et al. (2008) and Jones et al. 2010.', 'The fit uses REML, i.e. restricted likelihood.']
    """
    return list(_sentences(normalise(text)))


def _is_prose(text: str, min_chars: int = 60) -> bool:
    text = normalise(text)
    if len(text) < min_chars:
        return False
    letters = sum(ch.isalpha() for ch in text)
    return letters / len(text) >= 0.6 and len(text.split()) >= 8


def _good_sentence(s: str, lo: int = 30, hi: int = 320) -> bool:
    """A whole sentence of prose: starts like a sentence (not a fragment continued from a page break)."""
    opens = s[0].isupper() or (s[0] in "(“\"" and s[1:2].isupper())  # "(as in the case …" is the rest of a sentence
    closes_first = ")" in s and ("(" not in s or s.index(")") < s.index("("))  # "Gilks, 1996) that …": the rest of one too
    return lo <= len(s) <= hi and opens and _ends_sentence(s) and not closes_first and _is_prose(s, lo)


def _ends_sentence(s: str) -> bool:
    """Whether ``s`` ends as a sentence does; "… of a general factor and un-" stops where a line or page did, and
    "… see https:" or "… at http://journals." where a URL broken over two lines was cut.

    >>> _ends_sentence("It is right."), _ends_sentence("See https:"), _ends_sentence("Go to http://journals."), _ends_sentence("Go to http://a.org.")
    (True, False, False, True)
    """
    return bool(_SENTENCE_END.search(s)) and not _CUT_URL.search(s)


def _whole_sentence(s: str) -> bool:
    """A sentence as printed, of any length: it starts as one and ends as one ("can take the values listed in Table 2."
    and "(see Table 4)." are pieces of one)."""
    opens = s[:1].isupper() or (s[:1] in "(“\"" and s[1:2].isupper())
    closes_first = ")" in s and ("(" not in s or s.index(")") < s.index("("))
    return opens and not closes_first and _ends_sentence(s)


#: How a whole sentence ends: a full stop, "?", "!" or ":" and perhaps closing quotes or brackets.
_SENTENCE_END = re.compile(r"[.!?:][\"”’')\]]*$")
#: A URL cut where its line broke: the scheme alone, or a host of one word ("http://journals." of "journals.aps.org").
_CUT_URL = re.compile(r"(?:\b(?:https?|ftp):|\b(?:https?|ftp)://[^\s/.]+\.)$")


def _whole_word(term: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w])" + re.escape(term) + r"(?![\w])")


#: Words too common to tell two captions apart.
_COMMON = frozenset(
    "this that with from which their these those shows shown show showing figure table section given each have been into "
    "when where were what also than then there other such only more most over under between about above below based using "
    "used data plot plots panel panels left right top bottom".split()
)


def _terms(text: str) -> set[str]:
    """Content words of a text, plain words cut to six letters ("aggregation", "aggregating": "aggreg"); names with a
    dot or underscore ("meuse.grid") whole."""
    words = re.findall(r"[a-z][a-z0-9]*(?:[._][a-z0-9]+)*", text.lower())
    return {w if "." in w or "_" in w else w[:6] for w in words if len(w) >= 4 and w not in _COMMON}


def _has_label(text: str, label: str) -> bool:
    return normalise(label).lower() in normalise(text).lower()


# --- graph index ----------------------------------------------------------------------------


#: The limits of a displayed sum or integral in a table cell ("i=1,...,n", "−∞", an integral sign read as "R" before "∞"):
#: the cell holds a formula. "n = ∞" alone is a value.
_DISPLAY_MATH = re.compile(r"\bi\s?=\s?1\b|−∞|\bR\s?∞|∞\s?\(")


#: A number as a table prints it ("-0.04", "1.86", "12%").
_VALUE = re.compile(r"[−-]?\d+(?:[.,]\d+)?%?")


def _unsure_table(kg: KnowledgeGraph, table: Node) -> bool:
    """A table no task may address: formulas set as a table (a formula's lines read as rows, so no row is sure), one
    whose caption is mostly numbers (its rows were read into the caption, so its header is a row of values), or one
    with no caption whose header is only numbers (a drawing of numbered cells: sp's ``text(coordinates(g), 1:9)``), or
    one whose columns share one header (Rcpp-jss's Table 1, code set side by side under the running head read as its
    header)."""
    cells = [c for c in kg.nodes("table_cell") if c.id.startswith(f"{table.id}/")]
    if any(_DISPLAY_MATH.search(c.text) for c in cells):
        return True
    heads = [c.text.strip() for c in cells if c.attrs.get("header") and c.text.strip()]
    if not table.attrs.get("caption") and heads and all(_VALUE.fullmatch(h) for h in heads):
        return True
    named = {str(c.attrs.get("column_header", "")) for c in cells if not c.attrs.get("header")}
    if int(table.attrs.get("cols") or 0) >= 2 and len(named) == 1 and named != {""}:  # one header over every column names none
        return True
    words = str(table.attrs.get("caption", "")).split()
    return len(words) >= 30 and sum(bool(_VALUE.fullmatch(w.strip("(),;"))) for w in words) >= 0.4 * len(words)


def _kind(node: Node) -> str:
    """A node's type for generation: a paragraph of code (R input or output, a program) is "code", a line of a contents,
    index or list of figures "listing"; neither is prose."""
    if node.type.value == "paragraph":
        return "code" if node.attrs.get("code") else "listing" if node.attrs.get("listing") else "paragraph"
    return node.type.value


class _Index:
    """Lookups over one graph, all in insertion order."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg
        self.nodes: dict[str, Node] = {n.id: n for n in kg.nodes()}
        self.by_type: dict[str, list[Node]] = {}
        for n in self.nodes.values():
            self.by_type.setdefault(_kind(n), []).append(n)
        self.edge_types = {e.type.value for e in kg.edges()}
        for table in list(self.by_type.get("table", [])):
            if _unsure_table(kg, table):
                self.by_type["table"].remove(table)
                self.by_type.setdefault("unsure_table", []).append(table)
        self.children: dict[str, list[str]] = {}
        self.parent: dict[str, str] = {}
        self.caption_of: dict[str, str] = {}  # target -> caption node
        self._refers: list[tuple[str, str, str]] = []  # (source, target, label)
        self.cites: dict[str, list[str]] = {}
        self.mentions: dict[str, list[str]] = {}
        for e in kg.edges():
            t = e.type.value
            if t == "contains":
                self.children.setdefault(e.source, []).append(e.target)
                self.parent.setdefault(e.target, e.source)
            elif t == "caption_of":
                self.caption_of.setdefault(e.target, e.source)
            elif t == "refers_to":
                self._refers.append((e.source, e.target, str(e.attrs.get("label", ""))))
            elif t == "cites":
                self.cites.setdefault(e.source, []).append(e.target)
            elif t == "mentions":
                self.mentions.setdefault(e.source, []).append(e.target)
        doc_text = " ".join(normalise(n.text) for n in self.nodes.values() if n.type.value in ("paragraph", "list", "caption", "footnote"))
        self.doc_text = doc_text
        self._table_names: dict[str, str] | None = None
        self._addresses: Addresses | None = None

    @property
    def addr(self) -> Addresses:
        """Unique names of this document's sections, passages and numbered objects."""
        if self._addresses is None:
            from .address import Addresses

            self._addresses = Addresses(self)
        return self._addresses

    @cached_property
    def refers(self) -> list[tuple[str, str, str]]:
        """``refers_to`` edges (source, target, label) whose target no other node of its kind shares a number with
        ("Table 1" names one table, not a table and the "Table 1 (continued)" read as another), and whose words fit
        their target's caption no worse than another caption of its kind (:meth:`_misreferred`)."""
        return [
            (s, t, label) for s, t, label in self._refers
            if (not self.nodes[t].attrs.get("number") or self.addr.unique_number(self.nodes[t])) and not self._misreferred(s, t, label)
        ]

    def _misreferred(self, source: str, target: str, label: str) -> bool:
        """Whether the sentences naming ``label`` fit another caption of the target's kind clearly better than the
        target's (two content words more, one of them a name of data or code, "meuse.grid", that the target's caption
        lacks): the author's own slip. sp's over.pdf says "Figure 5 shows the result of this aggregation … of the
        original grid (meuse.grid)", which is Figure 4 ("aggregation over meuse.grid …"); Figure 5 is a checker board.
        Figures the sentences also name are no rivals. Common words alone decide nothing: on 24 PDFs they flagged 26
        of 243 references to figures and tables, 24 of them right; with a name, 2, both slips."""
        said_in = [s for s in split_sentences(self.nodes[source].text) if _has_label(s, label)]
        said = _terms(" ".join(said_in))
        if not said or not self.caption_text(target):
            return False
        mine = said & _terms(self.caption_text(target))
        own = len(mine)
        named = {n.id for n in self.of(self.nodes[target].type.value) if self.label(n) and any(_has_label(s, self.label(n)) for s in said_in)}
        rivals = [n for n in self.of(self.nodes[target].type.value) if n.id not in named | {target}]
        names = {w for w in said - mine if "." in w or "_" in w}  # "meuse.grid", which the target's caption lacks
        return any(len(both) >= own + 2 and both & names for both in (said & _terms(self.caption_text(n.id)) for n in rivals))

    def of(self, *types: str) -> list[Node]:
        return [n for t in types for n in self.by_type.get(t, [])] if len(types) > 1 else list(self.by_type.get(types[0], []))

    def kids(self, nid: str, *types: str) -> list[Node]:
        return [self.nodes[c] for c in self.children.get(nid, []) if not types or _kind(self.nodes[c]) in types]

    def after_display(self, nid: str) -> bool:
        """Whether the block read before ``nid`` in its section is a display, code or a sentence left open ("… has the
        following format:"): the paragraph then goes on from it ("Here x1, x2 are Boolean variables …", "The first
        routine returns …") and its opening is no statement of its own. Floats, footnotes and chunks are stepped over."""
        parent = self.parent.get(nid)
        kids = [c for c in self.children.get(parent, []) if _kind(self.nodes[c]) in ("paragraph", "list", "formula", "code", "heading")] if parent else []
        at = kids.index(nid) if nid in kids else 0
        if at == 0:
            return False
        before = self.nodes[kids[at - 1]]
        text = normalise(before.text).rstrip()
        return _kind(before) in ("formula", "code") or (_kind(before) != "heading" and not re.search(r"[.!?][\"'”’)]*$", text))

    def section_of(self, nid: str) -> Node | None:
        p = self.parent.get(nid)
        return self.nodes[p] if p is not None and self.nodes[p].type.value == "section" else None

    def caption_text(self, target: str) -> str:
        cap = self.caption_of.get(target)
        if cap is not None:
            return normalise(self.nodes[cap].text)
        return ""

    def label(self, node: Node) -> str:
        """"Table 3", "Figure 2", "Section 4.1"; empty when unnumbered, numbered by the parser only (not printed),
        or when another node of its kind has the same number."""
        kind = {"table": "Table", "figure": "Figure"}.get(node.type.value, "Section")
        number = node.attrs.get("number")
        if not number or node.attrs.get("number_inferred") or not self.addr.unique_number(node):
            return ""
        return f"{kind} {number}"

    def descendants(self, nid: str) -> Iterator[str]:
        stack = list(reversed(self.children.get(nid, [])))
        while stack:
            cur = stack.pop()
            yield cur
            stack.extend(reversed(self.children.get(cur, [])))

    def table_name(self, table: Node) -> str | None:
        """How a task names ``table``: "Table 3", or for an unnumbered table its section and columns.

        ``None`` when an unnumbered table cannot be told apart from another one that way: another table of its
        section has every column it lists ("alpha", "arm" in a table of alpha, arm, hurd-i386 too).
        """
        if table.attrs.get("number"):
            return self.label(table) or None
        if self._table_names is None:
            described = {t.id: self._describe(t) for t in self.of("table") if not t.attrs.get("number")}
            self._table_names = {}
            for tid, (where, columns) in described.items():
                shown = columns[:4]
                if len(shown) < 2 or any(o != tid and w == where and set(shown) <= set(c) for o, (w, c) in described.items()):
                    continue
                listed = ", ".join(f'"{c}"' for c in shown) + (", …" if len(columns) > 4 else "")
                self._table_names[tid] = f"the table{where} with the columns {listed}"
        return self._table_names.get(table.id)

    def _describe(self, table: Node) -> tuple[str, list[str]]:
        """Where an unnumbered table stands (' in section "…"' or "") and its columns' headers; no columns when no cell is asked."""
        heads: dict[int, str] = {}
        for c in self.table_cells(table.id):
            if not c.attrs.get("header") and c.attrs.get("column_header"):
                heads.setdefault(int(c.attrs["col"]), normalise(str(c.attrs["column_header"])))
        columns = [heads[k] for k in sorted(heads) if heads[k]]
        section = self.section_of(table.id)
        where = f' in section "{normalise(section.text)}"' if section is not None and section.text else ""
        return where, columns if any(self.valid_cells(table.id)) else []

    def table_cells(self, table_id: str) -> list[Node]:
        return self.kids(table_id, "table_cell")

    def valid_cells(self, table_id: str) -> list[Node]:
        """Data cells addressable by a unique (row header, column header) pair."""
        cells = self.table_cells(table_id)
        rows_of_header: dict[str, set[int]] = {}
        pairs: dict[tuple[str, str], int] = {}
        for c in cells:
            rh, ch = normalise(str(c.attrs.get("row_header", ""))), normalise(str(c.attrs.get("column_header", "")))
            if rh:
                rows_of_header.setdefault(rh, set()).add(int(c.attrs.get("row", -1)))
            if rh and ch:
                pairs[(rh, ch)] = pairs.get((rh, ch), 0) + 1
        values_of: dict[int, set[str]] = {}
        for c in cells:
            if not c.attrs.get("header"):
                values_of.setdefault(int(c.attrs.get("col", -1)), set()).add(normalise(c.text))
        if any((h := normalise(str(c.attrs.get("column_header", "")))) and h in values_of.get(int(c.attrs.get("col", -1)), set()) for c in cells):
            return []  # a "header" that is also a value of its column is a data row: the table printed no header
        if listing_columns(cells):
            return []  # each column a list of its own: a row holds no record
        wrapped = wrapped_rows(cells)
        out = []
        for c in cells:
            rh, ch, text = normalise(str(c.attrs.get("row_header", ""))), normalise(str(c.attrs.get("column_header", ""))), normalise(c.text)
            if c.attrs.get("header") or not (rh and ch and text) or len(text) > _MAX_CELL_CHARS or int(c.attrs.get("row", -1)) in wrapped or _cut_cell(text):
                continue
            if text == rh or rh == ch or len(rows_of_header.get(rh, ())) != 1 or pairs[(rh, ch)] != 1:
                continue
            if "; " in text or "\n" in text or len(ch) > 40 or len(rh) > 60:
                continue
            if _MERGED_NUMBERS.match(text):  # "0.248 0.248": two columns the parser merged
                continue
            if "=" in rh:  # an equation ("mi = (pi+1 choose 2)"): the text layer flattens its fractions and sums, so it names no row one can type
                continue
            out.append(c)
        return out


def wrapped_rows(cells: list[Node]) -> set[int]:
    """Rows whose cells may have been cut in two: a body row that leaves the last column empty under a filled one and
    goes on in lower case under a filled cell holding something else, and the row above it. Seriation's Table 1 wraps
    "Hamiltonian path" / "length (restricted)" and "Sorting Points Into Neighbor-" / "hoods" over two lines, read as
    two rows each. Rows under a group label carried down ("" | "quasi" | …) and standard errors under estimates
    ("" | "(0.024)" | …) fill the last column: they are rows.

    >>> from taskloom.tools.graph.model import NodeType
    >>> grid = [["Algorithm", "Optimizes", "Input"], ["OLO", "Hamiltonian path", "dist"], ["", "length (restricted)", ""],
    ...         ["QAP", "2-Sum crit.", "dist"], ["", "Linear crit.", "dist"], ["", "Inertia crit.", "dist"],
    ...         ["PCA", "least squares", "matrix"]]
    >>> sorted(wrapped_rows([Node(id=f"c{r}{k}", type=NodeType.TABLE_CELL, text=t, attrs={"row": r, "col": k, "header": r == 0})
    ...                      for r, row in enumerate(grid) for k, t in enumerate(row)]))
    [1, 2]
    """
    rows: dict[int, dict[int, str]] = {}
    for c in cells:
        if not c.attrs.get("header"):
            rows.setdefault(int(c.attrs.get("row", -1)), {})[int(c.attrs.get("col", -1))] = normalise(c.text)
    out: set[int] = set()
    last = max((k for row in rows.values() for k in row), default=0)
    for r in sorted(rows):
        above, here = rows.get(r - 1), rows[r]
        if above is None:
            continue
        short = bool(above.get(last)) and not here.get(last)
        goes_on = any(text[:1].islower() for k, text in here.items() if text and above.get(k) not in (None, "", text))
        if short and goes_on:
            out |= {r - 1, r}
    return out


def listing_columns(cells: list[Node]) -> bool:
    """Whether the table's columns are lists of their own ("Fitting", "Miscellaneous", … each as long as it needs):
    two or more columns filled from the top down to different depths, with nothing below.

    >>> from taskloom.tools.graph.model import Node, NodeType
    >>> grid = [["clm", "slice", "clm2"], ["clmm", "drop", "clmm2"], ["fit", "", "ctl"], ["ctl", "", ""]]
    >>> listing_columns([Node(id=f"c{r}{k}", type=NodeType.TABLE_CELL, text=t, attrs={"row": r, "col": k}) for r, row in enumerate(grid) for k, t in enumerate(row)])
    True
    """
    filled: dict[int, dict[int, bool]] = {}
    for c in cells:
        if not c.attrs.get("header"):
            filled.setdefault(int(c.attrs.get("col", -1)), {})[int(c.attrs.get("row", -1))] = bool(c.text.strip())
    rows = sorted({r for col in filled.values() for r in col})
    depths = set()
    for col in filled.values():
        flags = [col.get(r, False) for r in rows]
        depth = sum(flags)
        if 0 < depth < len(rows) and flags == [True] * depth + [False] * (len(rows) - depth):
            depths.add(depth)
    return len(depths) >= 2


def clean_rows(cells: list[Node]) -> bool:
    """Whether every body row of a table is a record: a label in its first cell and a value beside it (no group label rows, no rows split from their label).

    >>> from taskloom.tools.graph.model import Node, NodeType
    >>> def cells(grid): return [Node(id=f"c{r}{k}", type=NodeType.TABLE_CELL, text=t, attrs={"row": r, "col": k}) for r, row in enumerate(grid) for k, t in enumerate(row)]
    >>> clean_rows(cells([["logit", "1"], ["probit", "2"]])), clean_rows(cells([["log[γ/(1", "x"], ["", "−γ)]"]])), clean_rows(cells([["Kaplan", ""], ["n = 1", "2"]]))
    (True, False, False)
    """
    rows: dict[int, dict[int, str]] = {}
    for c in cells:
        if not c.attrs.get("header"):
            rows.setdefault(int(c.attrs.get("row", -1)), {})[int(c.attrs.get("col", -1))] = c.text.strip()
    return bool(rows) and all(row.get(0) and any(t for col, t in row.items() if col) for row in rows.values())


# --- candidates -----------------------------------------------------------------------------


@dataclass
class _Cand:
    template: TaskTemplate
    variables: dict[str, Any]
    evidence: list[str]
    path: list[tuple[str, str, str]]
    answer_kind: str = "text"
    key: str = field(default="")


Builder = Callable[[_Index, TaskTemplate, np.random.Generator], Iterator[_Cand]]


def _table_ctx(ix: _Index, table: Node) -> tuple[str, str, list[str], list[tuple[str, str, str]]] | None:
    """(label, caption, caption evidence, caption path) of a table; ``None`` when it has no unique name."""
    label = ix.table_name(table)
    if label is None:
        return None
    cap = ix.caption_of.get(table.id)
    caption = ix.caption_text(table.id) or normalise(str(table.attrs.get("caption", "")))
    caption = (split_sentences(caption) or [""])[0]  # the first sentence names the table; the rest is detail
    ev = [cap] if cap else []
    path = [(cap, "caption_of", table.id)] if cap else []
    return label, caption, ev, path
