"""Text-level links: ``refers_to`` ("Table 2", "Section 4.1", "Eq. (5)") and ``cites`` (→ bibliography).

References resolve to the node carrying that number — not to the first node of
its kind — using the ``numbered`` index the builder records in the graph stats.
"""

from __future__ import annotations

import re

from ..model import Edge, EdgeType, KnowledgeGraph, NodeType

__all__ = ["REFERENCE_RE", "link_references", "link_citations", "reference_key"]

REFERENCE_RE = re.compile(
    r"\b(Tables?|Tab\.|Figures?|Figs?\.|Sections?|Sec\.|§|Appendix|Equations?|Eqs?\.)\s*"
    r"(\(\s*\d+[a-z]?\s*\)|[A-Z]?\d+(?:\.\d+)*[a-z]?|[A-Z]\b)"
)
_KIND = {"tab": "table", "fig": "figure", "sec": "section", "§": "section", "app": "section", "equ": "formula", "eq.": "formula", "eqs": "formula"}
_SOURCE_TYPES = (NodeType.PARAGRAPH, NodeType.CAPTION, NodeType.LIST, NodeType.FOOTNOTE, NodeType.TABLE, NodeType.FORMULA)
_YEAR_RE = re.compile(r"\b(1[6-9]\d\d|20\d\d)[a-z]?\b")
_SURNAME_RE = re.compile(r"^\s*(?:\[\d+\]\s*|\d+\.\s+)?([A-ZÀ-Ý][\w'’À-ÿ-]+)")
_NUMERIC_RE = re.compile(r"^\s*\[(\d+)\]|^\s*(\d+)\.\s")


def _kind(word: str) -> str:
    w = word.lower()
    return _KIND.get(w[:3], _KIND.get(w[:1], "section"))


def link_references(kg: KnowledgeGraph) -> int:
    """Add ``refers_to`` edges for every resolvable "Table/Figure/Section/Equation N" mention.

    Returns the number of edges added. A caption does not refer to its own table.
    """
    numbered: dict[str, str] = kg.meta.stats.get("numbered", {})
    added = 0
    for node in kg.nodes(*_SOURCE_TYPES):
        captioned = {v for _, v, k in kg.g.out_edges(node.id, keys=True) if k == EdgeType.CAPTION_OF.value}
        for match in REFERENCE_RE.finditer(node.text):
            kind = _kind(match.group(1))
            number = match.group(2).strip("() ").rstrip(".")
            target = numbered.get(f"{kind} {number}")
            if target is None or target == node.id or target in captioned:
                continue
            if not kg.g.has_edge(node.id, target, key=EdgeType.REFERS_TO.value):
                kg.add_edge(Edge(source=node.id, target=target, type=EdgeType.REFERS_TO, attrs={"label": match.group(0)}))
                added += 1
    return added


def reference_key(text: str) -> tuple[str | None, str | None, str | None]:
    """(first author surname, year, numeric label) of a bibliography entry.

    Examples
    --------
    >>> reference_key("Bates D, Maechler M (2015). lme4: Linear mixed-effects models.")
    ('Bates', '2015', None)
    >>> reference_key("[3] Smith, J. A study. 2019.")
    ('Smith', '2019', '3')
    """
    surname = _SURNAME_RE.match(text)
    year = _YEAR_RE.search(text)
    numeric = _NUMERIC_RE.match(text)
    return (
        surname.group(1) if surname else None,
        year.group(1) if year else None,
        (numeric.group(1) or numeric.group(2)) if numeric else None,
    )


def link_citations(kg: KnowledgeGraph) -> int:
    """Add ``cites`` edges from text to bibliography entries (author–year or ``[n]``)."""
    by_author: list[tuple[re.Pattern[str], str]] = []
    by_number: dict[str, str] = {}
    for ref in kg.nodes(NodeType.REFERENCE):
        surname, year, numeric = reference_key(ref.text)
        if numeric:
            by_number[numeric] = ref.id
        if surname and year:
            pattern = re.compile(rf"\b{re.escape(surname)}\b[^()\[\]]{{0,80}}?\(?\b{year}[a-z]?\b")
            by_author.append((pattern, ref.id))
    added = 0
    for node in kg.nodes(NodeType.PARAGRAPH, NodeType.CAPTION, NodeType.FOOTNOTE, NodeType.LIST):
        targets: list[str] = []
        if _YEAR_RE.search(node.text):
            targets += [ref_id for pattern, ref_id in by_author if pattern.search(node.text)]
        for group in re.findall(r"\[(\d+(?:\s*[,–-]\s*\d+)*)\]", node.text):
            for part in re.split(r"\s*,\s*", group):
                bounds = [int(x) for x in re.split(r"\s*[–-]\s*", part) if x]
                for n in range(bounds[0], bounds[-1] + 1) if len(bounds) == 2 and bounds[1] - bounds[0] < 50 else bounds:
                    if str(n) in by_number:
                        targets.append(by_number[str(n)])
        for target in dict.fromkeys(targets):
            if not kg.g.has_edge(node.id, target, key=EdgeType.CITES.value):
                kg.add_edge(Edge(source=node.id, target=target, type=EdgeType.CITES))
                added += 1
    return added
