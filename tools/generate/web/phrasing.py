"""Phrasing helpers for goal tasks over records: field labels, values, numbers and subject nouns in plain words.

General rules only (no site's words): a label loses its unit brackets and camel case
("Body Mass (g)" → "body mass", "studyName" → "study name"; all-caps words such as
"ID" stay); a value loses a trailing parenthetical when its field's other values stay
distinct ("Gentoo penguin (Pygoscelis papua)" → "Gentoo penguin"); numbers get
thousands separators and their unit ("5,100 g").

>>> field_phrase("Body Mass (g)"), field_phrase("studyName"), field_phrase("Individual ID")
('body mass', 'study name', 'individual ID')
>>> short_value("Gentoo penguin (Pygoscelis papua)", ["Adelie Penguin (Pygoscelis adeliae)", "Gentoo penguin (Pygoscelis papua)"])
'Gentoo penguin'
>>> number_text(5100, "g"), number_text(-25.18543, None), number_text(12, "%")
('5,100 g', '-25.18543', '12%')
>>> singular("penguins"), singular("entries"), plural("penguin"), plural("entry"), plural("class")
('penguin', 'entry', 'penguins', 'entries', 'classes')

A label that does not read as a noun phrase is named as the site shows it, in quotes,
followed by "value" (see :func:`reads_as_noun`): one with digits or one-letter words
("Delta 13 C (o/oo)"), a head noun followed by its modifier ("Date Egg"), a plural or
verb-like last word ("Copies", "Opens"), or a verb first ("Allow null").

>>> field_noun("Body Mass (g)"), field_noun("Date Egg"), field_noun("Delta 13 C (o/oo)"), field_noun("Date of Birth")
('body mass', '“Date Egg” value', '“Delta 13 C” value', 'date of birth')
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ...graph.web.values import unit_of_label

__all__ = ["field_phrase", "field_noun", "reads_as_noun", "short_value", "number_text", "value_text", "singular", "plural", "quoted", "ID_LABEL", "answer_metrics"]

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_PAREN = re.compile(r"\s*[(\[][^()\[\]]*[)\]]\s*$")
#: Labels of row keys and identifiers: never asked about, never the only thing naming a record in prose.
ID_LABEL = re.compile(r"^(?:id|#|no\.?|nr\.?|key|pk|rowid|row|index|_id|uuid)$", re.IGNORECASE)


def field_phrase(label: str) -> str:
    """The label as words in a sentence: unit brackets dropped, camel case split, lower case except all-caps words."""
    bare = _PAREN.sub("", label) if unit_of_label(label) else label
    words = _CAMEL.sub(" ", bare.replace("_", " ")).split()
    return " ".join(w if (len(w) > 1 and w.isupper()) or (len(w) == 1 and w.isupper() and i > 0) else w.lower() for i, w in enumerate(words)) or label


#: Nouns that name what a field holds; first in a two-word label without a preposition, the label is reversed ("Date Egg").
_HEAD_NOUNS = frozenset("date time day year month number count name type code amount size length width height weight rate level total value".split())
#: Words that open a flag or a verb phrase, not a noun phrase ("Allow null", "Is active").
_VERB_FIRST = frozenset("is are was has have had can could should must will allow allows enable enables include includes show shows use uses do does".split())
_PREPOSITIONS = frozenset("of for per in at to by on from with".split())
_NOT_PLURAL = ("ss", "us", "is", "ics", "ous")
#: Nouns ending in -s that are singular too.
_INVARIANT = frozenset("species series news means canvas atlas alias bias chaos lens gas".split())


def reads_as_noun(label: str) -> bool:
    """Whether the label, as words in a sentence (:func:`field_phrase`), reads as a singular noun phrase.

    >>> [reads_as_noun(x) for x in ("Body Mass (g)", "studyName", "Individual ID", "Date created", "Status", "Species")]
    [True, True, True, True, True, True]
    >>> [reads_as_noun(x) for x in ("Date Egg", "Delta 15 N (o/oo)", "Copies", "Allow null", "Closes", "x", "On the shelf now")]
    [False, False, False, False, False, False, False]
    """
    words = field_phrase(label).split()
    if not words or len(words) > 4:
        return False
    for word in words:
        if word.isupper() and len(word) > 1 and word.isalpha():
            continue  # an abbreviation: "ID", "ISBN"
        if len(word) < 2 or not re.fullmatch(r"[A-Za-z][A-Za-z'’-]*", word):
            return False  # digits, one-letter words or symbols: "Delta 13 C"
    low = [w.lower() for w in words]
    if low[0] in _VERB_FIRST or low[0] in _PREPOSITIONS:
        return False  # a flag or a place: "Allow null", "On the shelf now"
    last = words[-1]
    if not last.isupper() and low[-1].endswith("s") and not low[-1].endswith(_NOT_PLURAL) and low[-1] not in _INVARIANT:
        return False  # plural or a verb: "Copies", "Opens"
    if len(low) >= 2 and low[0] in _HEAD_NOUNS and not _PREPOSITIONS & set(low) and not low[-1].endswith("ed"):
        return False  # head noun first: "Date Egg" (but "Date created", "Date of birth" read well)
    return True


def field_noun(label: str) -> str:
    """The field as a noun phrase in a sentence: its words ("body mass"), else the label in quotes and "value"."""
    if reads_as_noun(label):
        return field_phrase(label)
    bare = _PAREN.sub("", label).strip() if unit_of_label(label) else label.strip()
    return f"“{bare or label}” value"


def short_value(value: str, others: Iterable[str]) -> str:
    """``value`` without a trailing parenthetical, when that leaves it distinct from the other values' short forms."""
    short = _PAREN.sub("", value).strip()
    if not short or short == value:
        return value
    clashes = {_PAREN.sub("", o).strip().casefold() for o in others if o != value}
    return value if short.casefold() in clashes else short


def number_text(value: float | int, unit: str | None) -> str:
    """A number with thousands separators and its unit (no space before %, ‰ or a currency sign first)."""
    body = f"{value:,}" if isinstance(value, int) else f"{value:,.10g}" if abs(value) >= 1000 else repr(value)
    if not unit:
        return body
    if unit in ("%", "‰") or unit.startswith("°"):
        return body + unit
    if unit in ("$", "€", "£", "¥", "₹"):
        return unit + body
    return f"{body} {unit}"


def value_text(field: dict[str, Any]) -> str:
    """A stored field's value as an answer: a number with its unit, else the text as the page shows it."""
    if field.get("type") == "number" and isinstance(field.get("value"), (int, float)):
        return number_text(field["value"], field.get("unit"))
    return str(field.get("raw") or field.get("value") or "")


def quoted(text: str) -> str:
    """``text`` in curly quotes when it has spaces or punctuation, else as is."""
    return text if re.fullmatch(r"[\w.-]+", text) else f"“{text}”"


def singular(noun: str) -> str:
    """A plural noun made singular by English suffix rules (a singular noun is kept)."""
    low = noun.lower()
    if low.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if low.endswith(("sses", "shes", "ches", "xes")):
        return noun[:-2]
    if low.endswith("s") and not low.endswith(("ss", "us", "is")):
        return noun[:-1]
    return noun


def plural(noun: str) -> str:
    """A singular noun made plural by English suffix rules."""
    low = noun.lower()
    if low.endswith("y") and len(noun) > 2 and low[-2] not in "aeiou":
        return noun[:-1] + "ies"
    if low.endswith(("s", "sh", "ch", "x", "z")):
        return noun + "es"
    return noun + "s"


def answer_metrics(kind: str) -> list[str]:
    """The metrics an answer of this kind is scored with (see ``evaluate.metrics``)."""
    return ["numeric", "exact_match"] if kind == "number" else ["exact_match", "f1"]
