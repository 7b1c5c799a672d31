"""Rule-based entities: acronyms, capitalised multi-word names, numbers with units; ``mentions`` edges.

An LLM extractor can replace these rules later; the rules are deterministic and
deliberately conservative (acronyms must recur, names must not start a sentence
with a stop word).
"""

from __future__ import annotations

import re
from collections import Counter

from ..model import Edge, EdgeType, KnowledgeGraph, Node, NodeType

__all__ = ["extract_entities", "link_entities"]

_ACRONYM = re.compile(r"\b([A-Z][A-Z0-9]{1,6})s?\b")
_NAME = re.compile(r"\b([A-Z][a-zà-ÿ]+(?:[ -](?:of|de|van|von|der|la|del|and)?\s?[A-Z][a-zà-ÿ]+){1,3})\b")
_QUANTITY = re.compile(
    r"(?<![\w.])(\d+(?:[.,]\d+)?)\s?(%|percent|mm|cm|km|m|kg|mg|g|ms|s|min|h|hours|days|weeks|months|years|°C|°F|K|Hz|kHz|MHz|GHz|kB|MB|GB|TB|W|kW|MW|V|mA|A|mL|L|USD|EUR|\$)(?![\w])"
)
#: Programming literals in upper case ("weighted=TRUE", "is NULL"): no acronym stands for them.
_LITERALS = {"TRUE", "FALSE", "NULL", "NA", "NAN", "INF", "EOF"}
_ROMAN = re.compile(r"^(?=[IVXLC]+$)M*(C[MD]|D?C{0,3})(X[CL]|L?X{0,3})(I[XV]|V?I{0,3})$")
_STOP_START = {
    "The", "A", "An", "In", "This", "These", "That", "Those", "It", "We", "Our", "For", "To", "Of", "On", "At",
    "If", "When", "As", "By", "With", "From", "And", "But", "Or", "Is", "Are", "Table", "Figure", "Section", "See",
}
_TEXT_TYPES = (NodeType.PARAGRAPH, NodeType.LIST, NodeType.CAPTION, NodeType.FOOTNOTE, NodeType.HEADING)


def extract_entities(text: str) -> list[tuple[str, str]]:
    """(kind, surface form) of entity mentions in ``text``, in order of appearance.

    Examples
    --------
    >>> extract_entities("The NASA probe weighed 721.9 kg when Carl Sagan saw it.")
    [('acronym', 'NASA'), ('quantity', '721.9 kg'), ('name', 'Carl Sagan')]
    """
    found: list[tuple[int, str, str]] = []
    for m in _ACRONYM.finditer(text):
        literal = m.group(1) in _LITERALS or text[max(0, m.start() - 1) : m.start()] == "="  # "(weighted=TRUE)", "type=PDF"
        literal = literal or sum(c.isupper() for c in m.group(1)) < 2  # "Y1", "H0": a variable with its index
        if not _ROMAN.match(m.group(1)) and not m.group(1).isdigit() and not literal:
            found.append((m.start(), "acronym", m.group(1)))
    for m in _QUANTITY.finditer(text):
        found.append((m.start(), "quantity", f"{m.group(1)} {m.group(2)}"))
    for m in _NAME.finditer(text):
        words = m.group(1).split()
        if words[0] in _STOP_START:
            words = words[1:]
        if len(words) >= 2 and not any(w.isupper() for w in words):
            found.append((m.start(), "name", " ".join(words)))
    return [(kind, surface) for _, kind, surface in sorted(found)]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9%°$]+", "-", text.lower()).strip("-")


def link_entities(kg: KnowledgeGraph, min_acronym_mentions: int = 2) -> int:
    """Add entity nodes (deduplicated per document) and ``mentions`` edges; returns entities added."""
    mentions: list[tuple[str, str, str]] = []
    for node in kg.nodes(*_TEXT_TYPES):
        if node.attrs.get("code"):
            continue
        mentions += [(node.id, kind, surface) for kind, surface in extract_entities(node.text)]
    counts = Counter((kind, _slug(surface)) for _, kind, surface in mentions)
    added = 0
    for source, kind, surface in mentions:
        key = (kind, _slug(surface))
        if not key[1] or (kind == "acronym" and counts[key] < min_acronym_mentions):
            continue
        entity_id = f"entity:{kind}:{key[1]}"
        if entity_id not in kg:
            kg.add_node(Node(id=entity_id, type=NodeType.ENTITY, text=surface, attrs={"kind": kind, "mentions": counts[key]}))
            added += 1
        if not kg.g.has_edge(source, entity_id, key=EdgeType.MENTIONS.value):
            kg.add_edge(Edge(source=source, target=entity_id, type=EdgeType.MENTIONS))
    return added
