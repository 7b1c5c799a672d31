"""Text-level links: ``refers_to`` ("Table 2", "Section 4.1", "Eq. (5)") and ``cites`` (→ bibliography).

References resolve to the node carrying that number — not to the first node of
its kind — using the ``numbered`` index the builder records in the graph stats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..model import Edge, EdgeType, KnowledgeGraph, Node, NodeType
from .textutil import join_wrapped

__all__ = [
    "REFERENCE_RE", "RefKey", "link_references", "link_citations", "join_reference_fragments", "reference_key", "parse_reference",
    "looks_like_entry_start", "entry_label", "opens_author_year_entry",
]

REFERENCE_RE = re.compile(
    r"\b(Tables?|Tab\.|Figures?|Figs?\.|Sections?|Sec\.|§|Chapters?|Chap\.|Appendix|Equations?|Eqs?\.)\s*"
    r"(\(\s*\d+[a-z]?\s*\)|[A-Z]?\d+(?:\.\d+)*[a-z]?|[A-Z]{1,7}(?:\.\d+)+\b|[IVXLC]{2,7}\b|[A-Z]\b)"  # "Section 2.1", "A.3", "X.2", "IV", "Appendix B"
)
_KIND = {"tab": "table", "fig": "figure", "sec": "section", "§": "section", "cha": "section", "app": "section", "equ": "formula", "eq.": "formula", "eqs": "formula"}
_SOURCE_TYPES = (NodeType.PARAGRAPH, NodeType.CAPTION, NodeType.LIST, NodeType.FOOTNOTE, NodeType.TABLE, NodeType.FORMULA)


def _kind(word: str) -> str:
    w = word.lower()
    return _KIND.get(w[:3], _KIND.get(w[:1], "section"))


#: A mention of another work's part: "Supplementary Table 1", "Table 4 in Salib and Hillier (1997)", "Figure 2 of Bates et al. 2015".
_ELSEWHERE_BEFORE = re.compile(r"(?:\b(?:Supplementary|Supplemental|Online)|\b(?:1[6-9]|20)\d\d[a-z]?\)?,|[(\s]\?\)?,)\s*$", re.I)  # "Hsu (1996), Chapter 7", "(?, Chapter 5)": a citation LaTeX left unresolved
_ELSEWHERE_AFTER = re.compile(r"^\s*(?:in|of|from)\s+(?:the\s+)?[A-Z][\w'’-]+(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][\w'’-]+)?\s*,?\s*\(?(?:1[6-9]|20)\d\d")


def elsewhere(text: str, start: int, end: int) -> bool:
    """Whether the mention ``text[start:end]`` names a part of another work, not of this document.

    >>> t = "taken from Supplementary Table 1 in Bullinger et al. (2004), as Table 4 in Salib and Hillier (1997) and Table 2 here"
    >>> [elsewhere(t, m.start(), m.end()) for m in REFERENCE_RE.finditer(t)]
    [True, True, False]
    >>> t = "(Davis 2006, Chapter 2), Hsu (1996), Chapter 7, and see Chapter 3"
    >>> [elsewhere(t, m.start(), m.end()) for m in REFERENCE_RE.finditer(t)]
    [True, True, False]
    >>> t = "as in (?, Chapter 5) and ?, Section 2; what is it? Section 4 says"
    >>> [elsewhere(t, m.start(), m.end()) for m in REFERENCE_RE.finditer(t)]
    [True, True, False]
    """
    return bool(_ELSEWHERE_BEFORE.search(text[max(0, start - 20):start]) or _ELSEWHERE_AFTER.match(text[end:end + 80]))


def link_references(kg: KnowledgeGraph) -> int:
    """Add ``refers_to`` edges for every resolvable "Table/Figure/Section/Equation N" mention.

    Returns the number of edges added. A caption does not refer to its own table; a
    mention of another work's part (:func:`elsewhere`), or of a chapter in a document
    that has none (``stats["chapters"]`` false), refers to nothing here.
    """
    numbered: dict[str, str] = kg.meta.stats.get("numbered", {})
    chapters = bool(kg.meta.stats.get("chapters", True))
    added = 0
    for node in kg.nodes(*_SOURCE_TYPES):
        captioned = {v for _, v, k in kg.g.out_edges(node.id, keys=True) if k == EdgeType.CAPTION_OF.value}
        for match in REFERENCE_RE.finditer(node.text):
            kind = _kind(match.group(1))
            number = match.group(2).strip("() ").rstrip(".")
            if not chapters and match.group(1).lower().startswith("chap"):
                continue  # a tutorial whose parts are sections: its "Chapter 3" is the manual's it points readers to
            target = numbered.get(f"{kind} {number}")
            if target is None or target == node.id or target in captioned or elsewhere(node.text, match.start(), match.end()):
                continue
            if not kg.g.has_edge(node.id, target, key=EdgeType.REFERS_TO.value):
                kg.add_edge(Edge(source=node.id, target=target, type=EdgeType.REFERS_TO, attrs={"label": match.group(0)}))
                added += 1
    return added


# --- bibliography entries ---------------------------------------------------------------

_YEAR = r"(?:1[6-9]\d\d|20\d\d)"
_YEAR_RE = re.compile(rf"(?<![\w/.-])({_YEAR})([a-z]?)(?![\w/-])")
_PAREN_YEAR_RE = re.compile(rf"\(\s*({_YEAR})([a-z]?)\s*[,;)]")
_LABEL_RE = re.compile(r"^\s*(?:\[(\d{1,4})\]|(\d{1,4})\.)\s+")
_LINK_RE = re.compile(r"(?:https?://|www\.|doi:\s*|\bdoi\.org/|\b10\.\d{4,}/|ISBN\s*|ISSN\s*|arXiv:)\S*", re.I)
_NAME_END_RE = re.compile(r"^(.*?(?:[a-zß-ÿ]{2}|[A-Z]{2,}))\.\s")
_INITIALS_RE = re.compile(r"^(?:[A-Z]\.?-?){1,4}$|^(?:[A-Z]\.){1,4}-?$")
_SUFFIX_RE = re.compile(r"^(?:Jr|Sr|II|III|IV)\.?$")
_CORPORATE_RE = re.compile(
    r"\b(?:Team|Group|Consortium|Council|Committee|Foundation|Association|Society|Institute|Organi[sz]ation|Agency|"
    r"Office|Project|Cent(?:er|re)|Bureau|Department|Ministry|Commission|Board|Corporation|Inc|Ltd|Developers)\b"
)
_NAME_TOKEN_RE = re.compile(r"^(?:[A-ZÀ-Þ][\w'’´¨`-]*\.?|(?:[A-Z]\.){1,3}-?|van|von|de|der|den|del|da|di|du|le|la|ter|ten|dos|y)$")
_LIST_WORDS = {"and", "&", "et", "al.", "al", "others", "(eds.)", "(ed.)", "(eds)", "(ed)"}
_AUTHOR_SPLIT_RE = re.compile(r"\s*[,;]\s*(?:and\s+|&\s*)?|\s+and\s+|\s*&\s*")
_NAME = r"(?:(?:[a-z]+\s+){0,2}[A-ZÀ-Þ][\w'’´¨-]+(?:\s+[A-ZÀ-Þ][\w'’´¨-]+)?)"
_CITE_TAIL = rf"(?P<tail>\s+et\s+al\.?|(?:\s*,\s*{_NAME})*\s*,?\s+(?:and|&)\s+{_NAME}|\s*&\s*{_NAME}|\s+and\s+others|-[A-ZÀ-Þ][\w'’´¨]+)?"  # "-Swineford": a pair joined by a hyphen
_CITE_YEARS = rf"(?P<years>{_YEAR}[a-z]?(?:\s*,\s*(?:{_YEAR}[a-z]?|[a-z]\b))*)"


@dataclass
class RefKey:
    """What a bibliography entry is cited by: first author (surname or body), year, suffix letter, label."""

    first: str | None = None
    year: str | None = None
    suffix: str = ""
    numeric: str | None = None
    authors: list[str] = field(default_factory=list)
    et_al: bool = False


def reference_key(text: str) -> tuple[str | None, str | None, str | None]:
    """(first author surname, year with its suffix letter, numeric label) of a bibliography entry.

    Examples
    --------
    >>> reference_key("Bates D, Maechler M (2015). lme4: Linear mixed-effects models.")
    ('Bates', '2015', None)
    >>> reference_key("[3] Smith, J. A study. 2019.")
    ('Smith', '2019', '3')
    >>> reference_key("Douglas Bates and Ann Lee. A book title. Springer, 2014b.")
    ('Bates', '2014b', None)
    """
    key = parse_reference(text)
    return key.first, (key.year + key.suffix) if key.year else None, key.numeric


def parse_reference(text: str) -> RefKey:
    """Parse the author list, year and label of one bibliography entry.

    Author–year styles ("Bates D, Maechler M (2015).", "Smith, J. & Jones, B. (2008).")
    take the authors before the parenthesised year; styles that put the year last
    ("Douglas Bates and Ann Lee. Title. 2014.") take them up to the first full stop
    after a word, and the last year outside links and identifiers.
    """
    label = _LABEL_RE.match(text)
    body = text[label.end():] if label else text.strip()
    paren = _PAREN_YEAR_RE.search(body[:400])
    name_end = _NAME_END_RE.match(body)
    if paren and (name_end is None or paren.start() <= name_end.end()):
        segment, year, suffix = body[: paren.start()], paren.group(1), paren.group(2)
    else:
        segment = name_end.group(1) if name_end else body
        years = _YEAR_RE.findall(_LINK_RE.sub(" ", body))
        year, suffix = years[-1] if years else (None, "")
    authors, et_al = _authors(segment)
    return RefKey(
        first=authors[0] if authors else None,
        year=year,
        suffix=suffix,
        numeric=(label.group(1) or label.group(2)) if label else None,
        authors=authors,
        et_al=et_al,
    )


def _authors(segment: str) -> tuple[list[str], bool]:
    """Surnames (or a corporate author's whole name) of an author list, and whether it ends in "et al."."""
    segment = re.sub(r"\((?:eds?|Hrsg|coords?)\.?\)", " ", segment).strip(" .,;")
    et_al = bool(re.search(r"\bet\s+al\b|\bothers\b", segment))
    pieces = [p.strip(" .") for p in _AUTHOR_SPLIT_RE.split(segment)]
    names: list[str] = []
    for piece in pieces:
        if not piece or re.fullmatch(r"et\s+al\.?|others", piece) or all(_INITIALS_RE.match(t) for t in piece.split()):
            continue
        if _CORPORATE_RE.search(piece):
            names.append(" ".join(piece.split()))
            continue
        kept = [t.strip(".,;:()") for t in piece.split() if not _INITIALS_RE.match(t) and not _SUFFIX_RE.match(t)]
        kept = [t for t in kept if t]
        if kept:
            names.append(kept[-1])
    return names, et_al


_AUTHOR_YEAR_START_RE = re.compile(
    r"^(?:(?:van|von|de|der|den|del|da|di|du|le|la)\s+)*[A-ZÀ-Þ][\w'’´¨-]+"
    rf"(?:,?\s+(?:[A-Z]\.?\s*){{1,3}}|,\s+[A-Z][\w'’-]+)?[^.()]{{0,120}}?\(\s*{_YEAR}[a-z]?\s*\)"
)


def entry_label(text: str) -> int | None:
    """The number of a labelled entry ("[12] …", "12. …"), else None.

    >>> entry_label("[12] Smith J (2001). Title."), entry_label("2(3), 7–10.")
    (12, None)
    """
    label = _LABEL_RE.match(text)
    return int(label.group(1) or label.group(2)) if label else None


def opens_author_year_entry(text: str) -> bool:
    """Whether a line opens an author–year entry: a surname, initials or names, then "(year)" soon after.

    >>> opens_author_year_entry("Smith J, Jones B (2008a). A title."), opens_author_year_entry("Journal of Stats, 12(3).")
    (True, False)
    """
    return bool(_AUTHOR_YEAR_START_RE.match(text))


def looks_like_entry_start(text: str) -> bool:
    """Does ``text`` open a bibliography entry: a ``[n]``/``n.`` label, or an author list before a year?

    Author lists are names, initials, particles and "and"/"&"/"et al." before a
    parenthesised year ("Bates D, Walker S (2013)."), or — for styles that put the
    year last — before the first full stop, every author with given name and surname
    ("Douglas Bates and Ann Lee. Title …, 2014.").
    """
    if _LABEL_RE.match(text):
        return True
    paren = _PAREN_YEAR_RE.search(text[:300])
    if paren and _names_only(text[: paren.start()]):
        return True
    name_end = _NAME_END_RE.match(text)
    if not name_end or not _YEAR_RE.search(text):
        return False
    pieces = [p for p in _AUTHOR_SPLIT_RE.split(name_end.group(1)) if p.strip()]
    return _names_only(name_end.group(1)) and all(len(p.split()) >= 2 for p in pieces)


def _names_only(segment: str) -> bool:
    """Whether ``segment`` holds nothing but personal or corporate names."""
    tokens = [t for t in re.split(r"[\s,;]+", segment.strip()) if t and t.lower() not in _LIST_WORDS]
    return bool(tokens) and len(tokens) <= 60 and all(_NAME_TOKEN_RE.match(t) for t in tokens)


# --- re-joining entries the layout cut ------------------------------------------------------


def join_reference_fragments(kg: KnowledgeGraph) -> int:
    """Merge bibliography fragments (an entry's wrapped lines the layout gave as separate blocks) into their entry.

    Within each run of consecutive reference (and code: URL lines) nodes of one
    section, a fragment continues the entry before it when the page's geometry says
    so — indented under a hanging indent (or at the margin under first-line indents)
    — or, without usable geometry, when its text does not open an entry. Returns the
    number of nodes merged away.
    """
    merged = 0
    for run in _reference_runs(kg):
        nodes = [kg.node(node_id) for node_id in run]
        edges = _left_edges(nodes)
        head_indented = _head_indented(nodes, edges)
        head = nodes[0]
        for index in range(1, len(nodes)):
            if _continues_entry(nodes, index, head_indented, edges):
                _absorb(kg, head.id, nodes[index])
                merged += 1
            elif nodes[index].type == NodeType.REFERENCE:
                head = nodes[index]
    return merged


def _reference_runs(kg: KnowledgeGraph) -> list[list[str]]:
    """Runs of reference/code nodes that follow each other (``next``) inside one section, starting at a reference."""
    runs: list[list[str]] = []
    for node in kg.nodes(NodeType.REFERENCE, NodeType.PARAGRAPH):
        if node.type == NodeType.PARAGRAPH and not node.attrs.get("code"):
            continue
        parent = _neighbour(kg, node.id, EdgeType.CONTAINS, incoming=True)
        previous = _neighbour(kg, node.id, EdgeType.NEXT, incoming=True)
        last = runs[-1][-1] if runs else None
        if last is not None and previous == last and parent == _neighbour(kg, last, EdgeType.CONTAINS, incoming=True):
            runs[-1].append(node.id)
        elif node.type == NodeType.REFERENCE:
            runs.append([node.id])
    return [run for run in runs if len(run) > 1]


def _neighbour(kg: KnowledgeGraph, node_id: str, edge: EdgeType, incoming: bool) -> str | None:
    """The node at the other end of ``node_id``'s (first) edge of type ``edge``."""
    edges = kg.g.in_edges(node_id, keys=True) if incoming else kg.g.out_edges(node_id, keys=True)
    return next(((u if incoming else v) for u, v, k in edges if k == edge.value), None)


def _left_edges(nodes: list[Node]) -> dict[int | None, list[float]]:
    """The distinct left edges of the nodes on each page, in ascending order."""
    edges: dict[int | None, set[float]] = {}
    for n in nodes:
        if n.source.bbox is not None:
            edges.setdefault(n.source.page, set()).add(n.source.bbox[0])
    return {page: sorted(xs) for page, xs in edges.items()}


def _indent(nodes: list[Node], index: int, page_edges: dict[int | None, list[float]]) -> float | None:
    """How far a node starts right of its column's left margin on its page (None without geometry).

    Columns are the clusters of left edges more than 40pt apart; a page column tells
    nothing (None) unless it shows both a margin and an indented left edge.
    """
    node = nodes[index]
    if node.source.bbox is None:
        return None
    x0 = node.source.bbox[0]
    edges = page_edges[node.source.page]  # ``_left_edges(nodes)``
    margin = max(m for m in _column_margins(edges) if m <= x0 + 0.5)
    column = [e for e in edges if margin - 0.5 <= e <= margin + 40]
    if not any(e > margin + 2 for e in column):
        return None
    return x0 - margin


def _column_margins(edges: list[float]) -> list[float]:
    """Left margins of text columns: left edges that start a new 40pt-wide cluster."""
    margins: list[float] = []
    for edge in edges:
        if not margins or edge > margins[-1] + 40:
            margins.append(edge)
    return margins


def _head_indented(nodes: list[Node], edges: dict[int | None, list[float]]) -> bool:
    """Whether entries open indented (first-line indent) rather than at the margin (hanging indent)."""
    votes = [indent > 2 for i, n in enumerate(nodes) if looks_like_entry_start(n.text) and (indent := _indent(nodes, i, edges)) is not None]
    return votes.count(True) > votes.count(False)


def _continues_entry(nodes: list[Node], index: int, head_indented: bool, edges: dict[int | None, list[float]]) -> bool:
    """Whether ``nodes[index]`` continues the entry before it."""
    node, before = nodes[index], nodes[index - 1]
    if node.attrs.get("continues"):
        return True  # its block began mid-entry, under a hanging indent (the splitter saw it)
    if _same_block(node, before):
        return False  # the splitter already cut that block into entries
    numbered = bool(_LABEL_RE.match(nodes[0].text))
    if numbered and node.type == NodeType.REFERENCE:
        return not _LABEL_RE.match(node.text)
    shared = index + 1 < len(nodes) and _same_block(node, nodes[index + 1])
    indent = None if shared else _indent(nodes, index, edges)
    if indent is not None:
        return (indent > 2) != head_indented
    if node.type != NodeType.REFERENCE:
        return True
    return not looks_like_entry_start(node.text) or bool(re.search(r"(?:[,;&-]|\band)$", before.text.rstrip()))


def _same_block(a: Node, b: Node) -> bool:
    """Whether two nodes were cut from one layout block (same page and box)."""
    return a.source.bbox is not None and a.source.page == b.source.page and a.source.bbox == b.source.bbox


def _absorb(kg: KnowledgeGraph, head: str, fragment: Node) -> None:
    """Append ``fragment``'s text to ``head`` and remove it, keeping the ``next`` chain intact."""
    data = kg.g.nodes[head]
    data["text"] = join_wrapped([data["text"], fragment.text])
    source = data.get("source") or {}
    if fragment.source.page is not None and source.get("page") is not None and fragment.source.page != source["page"]:
        data["attrs"]["end_page"] = fragment.source.page
    elif fragment.source.bbox is not None and source.get("bbox") is not None:
        a, b = source["bbox"], fragment.source.bbox
        source["bbox"] = [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]
    previous = _neighbour(kg, fragment.id, EdgeType.NEXT, incoming=True)
    following = _neighbour(kg, fragment.id, EdgeType.NEXT, incoming=False)
    _forget_member(kg, fragment.id)
    kg.g.remove_node(fragment.id)
    if previous is not None and following is not None:
        kg.add_edge(Edge(source=previous, target=following, type=EdgeType.NEXT))


def _forget_member(kg: KnowledgeGraph, node_id: str) -> None:
    """Drop ``node_id`` from the ``members`` of its section's chunks (a code line can sit in one)."""
    section = _neighbour(kg, node_id, EdgeType.CONTAINS, incoming=True)
    if section is None:
        return
    for _, child, key in kg.g.out_edges(section, keys=True):
        members = kg.g.nodes[child]["attrs"].get("members") if key == EdgeType.CONTAINS.value else None
        if members and node_id in members:
            members.remove(node_id)


# --- citations --------------------------------------------------------------------------------


def link_citations(kg: KnowledgeGraph) -> int:
    """Add ``cites`` edges from text to bibliography entries (author–year or ``[n]``).

    Bibliography fragments are first joined into whole entries
    (:func:`join_reference_fragments`). An author–year citation resolves by first
    author, year and suffix letter ("Bates et al. 2014a"); a name that follows "and"
    or sits inside an author list is a co-author and cites nothing by itself. Among
    entries that share first author and year, the citation's form ("et al.",
    "and Jones", alone) picks the one with matching co-authors.
    """
    join_reference_fragments(kg)
    entries: dict[str, list[tuple[RefKey, str]]] = {}
    by_number: dict[str, str] = {}
    for ref in kg.nodes(NodeType.REFERENCE):
        key = parse_reference(ref.text)
        if key.numeric:
            by_number[key.numeric] = ref.id
        if key.first and key.year:
            entries.setdefault(key.first, []).append((key, ref.id))
    authors = _Authors(entries)
    added = 0
    for node in kg.nodes(NodeType.PARAGRAPH, NodeType.CAPTION, NodeType.FOOTNOTE, NodeType.LIST):
        targets = _author_year_targets(node.text, authors) + _numeric_targets(node.text, by_number)
        for target in dict.fromkeys(targets):
            if not kg.g.has_edge(node.id, target, key=EdgeType.CITES.value):
                kg.add_edge(Edge(source=node.id, target=target, type=EdgeType.CITES))
                added += 1
    return added


def _citation_pattern(first: str) -> re.Pattern[str]:
    """How a first author is cited: name, optional co-authors or "et al.", then one or more years."""
    return re.compile(rf"(?<![\w-]){re.escape(first)}(?![\w]|-(?![A-ZÀ-Þ]))(?:\s+(?:Jr|Sr)\.?)?{_CITE_TAIL}(?:’s|'s)?\s*,?\s*[(\[]?\s*{_CITE_YEARS}(?![\w-])")


class _Authors:
    """The bibliography's first authors with their entries, and each one's citation pattern (compiled when first needed).

    A citation pattern opens with the name verbatim, after neither a word character nor a
    hyphen; a name that starts with a word character can only match where a text's word
    (a run of word characters so placed) equals the name's first word. Texts are only
    searched for the names they can hold, so the cost grows with the text, not with
    texts × authors.
    """

    _WORD = re.compile(r"(?<![\w-])\w+")
    _LEAD = re.compile(r"\w+")

    def __init__(self, entries: dict[str, list[tuple[RefKey, str]]]) -> None:
        self.entries = entries
        self.order = {first: i for i, first in enumerate(entries)}
        self.by_lead: dict[str, list[str]] = {}
        self.unled: list[str] = []  # names opening with punctuation: searched by substring
        for first in entries:
            lead = self._LEAD.match(first)
            if lead is None:
                self.unled.append(first)
            else:
                self.by_lead.setdefault(lead.group(), []).append(first)
        self._patterns: dict[str, re.Pattern[str]] = {}

    def candidates(self, text: str) -> list[str]:
        """The first authors whose citation pattern may match in ``text``, in bibliography order."""
        found = [first for word in set(self._WORD.findall(text)) for first in self.by_lead.get(word, ())]
        found += [first for first in self.unled if first in text]
        return sorted(found, key=self.order.__getitem__)

    def pattern(self, first: str) -> re.Pattern[str]:
        if first not in self._patterns:
            self._patterns[first] = _citation_pattern(first)
        return self._patterns[first]


def _author_year_targets(text: str, authors: _Authors) -> list[str]:
    """Entries cited author–year in ``text``."""
    targets: list[str] = []
    for first in authors.candidates(text):
        pattern, group = authors.pattern(first), authors.entries[first]
        for match in pattern.finditer(text):
            tail = match.group("tail") or ""
            if _is_coauthor(text[: match.start()], tail):
                continue
            for year in _cited_years(match.group("years")):
                targets += _pick(group, year, tail)
    return targets


def _is_coauthor(before: str, tail: str) -> bool:
    """Whether the name just matched sits inside another author list, so is no first author.

    "Smith and Jones 2008": Jones follows "Name and"; "Smith, Jones, and Lee 2008":
    Jones follows "Name," and the list goes on with "and". After a year ("Genz (1992)
    and Genz and Bretz (2002)") a name opens a new citation.
    """
    if re.search(rf"{_NAME},?\s+(?:and|&)\s*$|{_NAME}\s*&\s*$", before):
        return True
    return bool(re.search(rf"{_NAME}\s*,\s*$", before)) and bool(re.search(r"\band\b|&", tail))


def _cited_years(years: str) -> list[str]:
    """"2014a, b, 2015" → ["2014a", "2014b", "2015"]."""
    out: list[str] = []
    for token in re.findall(rf"{_YEAR}[a-z]?|\b[a-z]\b", years):
        out.append(out[-1][:4] + token if len(token) == 1 and out else token)
    return out


def _pick(group: list[tuple[RefKey, str]], year: str, tail: str) -> list[str]:
    """Entries of one first author with this year (and suffix) that the citation's form fits.

    An explicit form must fit the entry's authors even when only one entry has that year:
    "A et al." cites an entry of three or more authors (or one ending in "et al."), "A and B"
    one whose last author is B; an entry whose authors could not be read is not judged. A bare
    "A" decides only between several entries (the one with A alone), else it takes the one.

    >>> two, three = RefKey("Hothorn", "2008", authors=["Hothorn", "Bretz"]), RefKey("Hothorn", "2008", authors=["Hothorn", "Bretz", "Westfall"])
    >>> _pick([(three, "r3")], "2008", " and Bretz"), _pick([(two, "r2")], "2008", " et al."), _pick([(three, "r3")], "2008", " et al.")
    ([], [], ['r3'])
    >>> _pick([(two, "r2"), (three, "r3")], "2008", " and Bretz"), _pick([(three, "r3")], "2008", ""), _pick([(two, "r2")], "2008", "-Bretz")
    (['r2'], ['r3'], ['r2'])
    """
    found = [(key, ref_id) for key, ref_id in group if f"{key.year}{key.suffix}" == year]
    second = re.search(rf"(?:(?:and|&|,)\s+|^-)({_NAME})\s*$", tail)
    if re.search(r"\bet\s+al\b|\bothers\b", tail):
        return [r for k, r in found if len(k.authors) >= 3 or k.et_al or not k.authors]
    if second:
        name = second.group(1).split()[-1]
        return [r for k, r in found if (len(k.authors) >= 2 and k.authors[-1] == name) or not k.authors]
    if len(found) <= 1:
        return [ref_id for _, ref_id in found]
    fits = [(k, r) for k, r in found if len(k.authors) == 1 and not k.et_al]
    return [ref_id for _, ref_id in (fits or found)]


def _numeric_targets(text: str, by_number: dict[str, str]) -> list[str]:
    """Entries cited by number: "[3]", "[2, 5]", "[4–7]"."""
    targets: list[str] = []
    for group in re.findall(r"\[(\d+(?:\s*[,–-]\s*\d+)*)\]", text):
        for part in re.split(r"\s*,\s*", group):
            bounds = [int(x) for x in re.split(r"\s*[–-]\s*", part) if x]
            numbers = range(bounds[0], bounds[-1] + 1) if len(bounds) == 2 and bounds[1] - bounds[0] < 50 else bounds
            targets += [by_number[str(n)] for n in numbers if str(n) in by_number]
    return targets
