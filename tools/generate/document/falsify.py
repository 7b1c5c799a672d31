"""False copies for true/false statements: one number the passage states, or one acronym, changed."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ...graph.model import Node
from .index import _NUMBER, _Index, _whole_word, normalise

__all__ = ["_NUMBER", "_falsify", "_stated_number"]

#: Numbers that state nothing a reader could check: a reference's ("Figure 2 and 3", "Section 4.1", "[5]"), a variable's
#: coding ("y = 1"), a citation's year ("Friedman (2002)", "Grün, 2002)").
_REFERENCE_BEFORE = re.compile(r"(?:\b(?:figures?|figs?\.|tables?|sections?|sec\.|equations?|eqs?\.|chapters?|appendix|pages?|pp?\.|conditions?|items?|steps?|rules?|cases?|lines?|points?|stages?|examples?)\s*(?:[\d.]+\s*(?:,|and|&|-|–|to)\s*)*|[\[=(]\s*|\d\s*[,;]\s*)$", re.I)


def _stated_number(sentence: str, m: re.Match[str]) -> bool:
    """Whether the number ``m`` states a fact of the passage (a false copy may change it), not a reference, coding or citation year."""
    year = bool(re.fullmatch(r"1[6-9]\d\d|20\d\d", m.group(0)))
    cited = year and (sentence[m.end() : m.end() + 1] in (")", ";", ",", "]") or re.search(r"[(,]\s*$", sentence[: m.start()]) is not None)
    joined = sentence[m.start() - 1 : m.start()] == "-" or re.match(r"[-–]\d", sentence[m.end() : m.end() + 2]) is not None  # "0-1 programming"
    in_formula = re.search(r"[+−×*/^=<>≤≥∑]\s*$", sentence[max(0, m.start() - 3) : m.start()]) or re.match(r"\s*[+−×*/^]|-[a-z]", sentence[m.end() : m.end() + 3])
    bound = re.search(r"\b(?:at least|at most|more than|less than|fewer than|up to|over|under|about|around|approximately|nearly|roughly)\s*$", sentence[: m.start()], re.I)
    return not _REFERENCE_BEFORE.search(sentence[: m.start()]) and not cited and not joined and not in_formula and not bound  # "θ(i+1)", "k × 1-vector", "at least 4"


def _falsify(ix: _Index, para: Node, sentence: str, acronyms: list[str], rng: np.random.Generator) -> tuple[str, str] | None:
    """A changed copy of ``sentence`` (one number or acronym replaced) and the entity id swapped in, if any."""
    options: list[tuple[str, Any]] = [("number", m) for m in _NUMBER.finditer(sentence) if _stated_number(sentence, m)]
    mentioned = [normalise(ix.nodes[e].text) for e in ix.mentions.get(para.id, []) if ix.nodes[e].attrs.get("kind") == "acronym"]
    for term in mentioned:
        found = _whole_word(term).search(sentence)
        defined = found is not None and re.search(r"(?:abbreviated|called|denoted|named|known as)\s*[(“\"]?\s*$", sentence[: found.start()], re.I)
        if len(_whole_word(term).findall(sentence)) == 1 and not defined:  # "abbreviated ST" made "abbreviated CRAN" is false unread
            options.append(("acronym", term))
    if not options:
        return None
    kind, what = options[int(rng.integers(len(options)))]
    if kind == "number":
        text = what.group(0)
        decimals = len(text.split(".")[1]) if "." in text else 0
        value = round(float(text) * 10**decimals)
        delta = int(rng.integers(1, 4))
        new_value = value - delta if value - delta >= min(value, 1) and rng.random() < 0.5 else value + delta  # "the first 3 routines" never "the first 0"
        new = f"{new_value / 10**decimals:.{decimals}f}" if decimals else str(new_value)
        changed = sentence[: what.start()] + new + sentence[what.end():]
        return changed, ""
    others = [a for a in acronyms if a != what and not _whole_word(a).search(sentence)]
    if not others:
        return None
    new = others[int(rng.integers(len(others)))]
    changed = _whole_word(what).sub(new, sentence, count=1)
    ent = next((e for e in ix.of("entity") if normalise(e.text) == new and e.attrs.get("kind") == "acronym"), None)
    return changed, ent.id if ent else ""
