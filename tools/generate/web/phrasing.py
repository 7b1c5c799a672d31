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

What a listing's records are called comes from its URL or its first column, never from a file,
database or framework name, nor from a column of codes (see :func:`path_noun`, :func:`column_noun`):

>>> path_noun("http://h/penguins/content/"), path_noun("http://h/db/airports?page=2"), path_noun("http://h/genres.html")
('penguin', 'airport', 'genre')
>>> path_noun("http://h/catalogue.sqlite/"), path_noun("http://h/held-vega"), path_noun("http://h/db/airports_fts"), path_noun("http://h/db/la_riots")
(None, None, None, None)
>>> column_noun("country", ["France", "Peru", "Chad"]), column_noun("iata", ["ABQ", "00M", "BOS"]), column_noun("code", ["Alpha", "Beta"])
('country', None, None)
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote, urlparse

from ...graph.web.values import unit_of_label

__all__ = [
    "field_phrase", "field_noun", "reads_as_noun", "short_value", "number_text", "value_text", "singular", "plural", "quoted", "ID_LABEL",
    "answer_metrics", "path_noun", "detail_noun", "column_noun", "internal_name", "GENERIC_SEGMENTS", "FOOTNOTE_MARK",
]

#: A footnote mark ("(4)", "[2]"): no value to ask for, to name a row by, or to join two tables on.
FOOTNOTE_MARK = re.compile(r"^\s*[(\[]\d{1,2}[)\]]\s*$")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_PAREN = re.compile(r"\s*[(\[][^()\[\]]*[)\]]\s*$")
#: Sort and toggle glyphs a column header carries beside its name ("date ▼", "↑ Name").
_GLYPHS = re.compile(r"^[\s\u2190-\u21ff\u25a0-\u25ff\u2b00-\u2bff]+|[\s\u2190-\u21ff\u25a0-\u25ff\u2b00-\u2bff]+$")
#: Labels of row keys and identifiers: never asked about, never the only thing naming a record in prose.
ID_LABEL = re.compile(r"^(?:id|#|no\.?|nr\.?|key|pk|rowid|row|index|_id|uuid)$", re.IGNORECASE)


def field_phrase(label: str) -> str:
    """The label as words in a sentence: sort glyphs and unit brackets dropped, camel case split, lower case except all-caps words."""
    label = _GLYPHS.sub("", label) or label
    bare = _PAREN.sub("", label) if unit_of_label(label) else label
    words = _CAMEL.sub(" ", bare.replace("_", " ")).split()
    return " ".join(w if (len(w) > 1 and w.isupper()) or (len(w) == 1 and w.isupper() and i > 0) else w.lower() for i, w in enumerate(words)) or label


#: Nouns that name what a field holds; first in a two-word label without a preposition, the label is reversed ("Date Egg").
_HEAD_NOUNS = frozenset("date time day year month number count name type code amount size length width height weight rate level total value".split())
#: Words that open a flag or a verb phrase, not a noun phrase ("Allow null", "Is active").
_VERB_FIRST = frozenset("is are was has have had can could should must will allow allows enable enables include includes show shows use uses do does".split())
_PREPOSITIONS = frozenset("of for per in at to by on from with".split())
#: Labels that are the words instructions use for a table's own parts.
_GENERIC_LABELS = frozenset("field fields column record entry item row".split())
_NOT_PLURAL = ("ss", "us", "is", "ics", "ous")
#: Nouns ending in -s that are singular too.
_INVARIANT = frozenset("species series news means canvas atlas alias bias chaos lens gas".split())


def reads_as_noun(label: str) -> bool:
    """Whether the label, as words in a sentence (:func:`field_phrase`), reads as a singular noun phrase.

    >>> [reads_as_noun(x) for x in ("Body Mass (g)", "studyName", "Individual ID", "Date created", "Status", "Species")]
    [True, True, True, True, True, True]
    >>> [reads_as_noun(x) for x in ("Date Egg", "Delta 15 N (o/oo)", "Copies", "Allow null", "Closes", "x", "On the shelf now", "Inherits from", "Matched")]
    [False, False, False, False, False, False, False, False, False]
    >>> [reads_as_noun(x) for x in ("Speed", "Derived from", "Step", "Field")]
    [True, False, True, False]
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
    if low[0] in _VERB_FIRST or low[0] in _PREPOSITIONS or low[-1] in _PREPOSITIONS:
        return False  # a flag, a place or a verb's object: "Allow null", "On the shelf now", "Inherits from"
    if len(low) == 1 and low[0] in _GENERIC_LABELS:
        return False  # "the field of the record" reads as the word, not the column "Field"
    if len(low) == 1 and low[0].endswith("ed") and not low[0].endswith("eed") and len(low[0]) > 4:
        return False  # a participle: "Matched" (the rows it heads are what was matched, not a thing the row has)
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


# --------------------------------------------------------------------------- what a listing's records are called

#: Path segments that say how a site shows or serves things (or where), not what it lists.
GENERIC_SEGMENTS = frozenset(
    "content contents list lists listing listings index search table tables row rows items item browse results result view views data "
    "records record entries entry all page pages home default main api en www app v1 v2 docs doc documentation wiki static public site".split()
)
#: File extensions of pages: a segment ``books.html`` names books; ``books.sqlite`` or ``books.csv`` names a file.
_PAGE_EXTENSIONS = frozenset("html htm xhtml shtml php asp aspx jsp cgi cfm".split())
#: Plurals not made with -s.
_IRREGULAR = dict(
    pair.split(":") for pair in "people:person children:child men:man women:woman mice:mouse geese:goose feet:foot teeth:tooth criteria:criterion".split()
)
#: First-column labels that name a property of a record (its id, name or code), not what the record is.
_PROPERTY_LABELS = frozenset("id name title label key code number value text description slug abbreviation abbr symbol ref".split())


def internal_name(name: str) -> bool:
    """Whether a name is a machine's, not a reader's: a leading underscore, a word without vowels ("fts", "idx"), digits.

    >>> [internal_name(x) for x in ("airports_fts", "_litestream_seq", "sqlite_stat1", "la_riots", "penguins", "Seattle weather")]
    [True, True, True, False, False, False]
    """
    stripped = name.strip()
    if not stripped or stripped.startswith("_") or any(c.isdigit() for c in stripped):
        return True
    words = [w for w in re.split(r"[\s_\-.]+", stripped.lower()) if w]
    return any(w.isalpha() and not re.search(r"[aeiouy]", w) for w in words)


def _plural_word(word: str) -> bool:
    low = word.lower()
    if low in _IRREGULAR or low in _INVARIANT:
        return True
    return low.endswith("s") and not low.endswith(_NOT_PLURAL) and len(low) > 3


def _singular_phrase(words: list[str]) -> str:
    last = words[-1].lower()
    return " ".join([*words[:-1], last if last in _INVARIANT else _IRREGULAR.get(last) or singular(last)]).lower()


def _looks_like_id(stem: str) -> bool:
    """A segment naming one item: digits, or upper and lower case mixed inside one token (base64, hashes)."""
    inner = stem[1:]
    return any(c.isdigit() for c in stem) or (" " not in stem and any(c.isupper() for c in inner) and any(c.islower() for c in inner))


def path_noun(url: str, one: bool = False) -> str | None:
    """What a listing at ``url`` lists, singular: the last path segment that is not generic or an id, when it is a plural noun.

    The first such segment decides: a file name (``db.sqlite``), a machine's name (``airports_fts``), words
    shorter than three letters or a singular name (a database, a site section: ``heldout-vega``) give None,
    and a segment before it (the database or site holding the listing) is never used instead. With ``one``
    (a path every record's own page shares, ``/book.html?id=…``) a singular noun names the records too.
    """
    segments = [unquote(s) for s in urlparse(url).path.split("/") if s]
    for segment in reversed(segments):
        stem, dot, ext = segment.rpartition(".")
        if not dot:
            stem, ext = segment, ""
        if ext and ext.lower() not in _PAGE_EXTENSIONS:
            return None  # a file: its name is not what the listing lists
        if stem.lower() in GENERIC_SEGMENTS:
            continue
        if _looks_like_id(stem) and not stem.startswith("_"):
            continue  # an id: /books/123
        words = [w for w in re.split(r"[\s_\-+]+", stem) if w]
        if internal_name(stem) or not 1 <= len(words) <= 2 or not all(w.isascii() and w.isalpha() and len(w) >= 3 for w in words):
            return None
        return _singular_phrase(words) if one or _plural_word(words[-1]) else None
    return None


def detail_noun(urls: Iterable[str]) -> str | None:
    """What records are, from the URLs of their own pages (two or more): the path they all share.

    One path for all (the record in the query: ``/book.html?id=b07``) names one record, singular or plural;
    paths differing in their last segments (``/db/airports/ABQ``) name the collection above them (:func:`path_noun`).

    >>> detail_noun(["http://h/book.html?id=b01", "http://h/book.html?id=b02"]), detail_noun(["http://h/db/airports/ABQ", "http://h/db/airports/BOS"])
    ('book', 'airport')
    >>> detail_noun(["http://h/vega/airports", "http://h/vega/la_riots"]), detail_noun(["http://h/wiki/Tide_Tables", "http://h/wiki/Harbour"])
    (None, None)

    Last segments that are one word and a number each, the same word for all (``/tracker/issue188``), name one record:

    >>> detail_noun(["http://h/tracker/issue188", "http://h/tracker/issue17"]), detail_noun(["http://h/r/v2", "http://h/r/x7"])
    ('issue', None)

    Last segments that are numbers under one segment (Trac's ``/ticket/12``) name one record too:

    >>> detail_noun(["http://h/ticket/12", "http://h/ticket/7"]), detail_noun(["http://h/books/3", "http://h/books/4"])
    ('ticket', 'book')
    """
    distinct = set(urls)
    paths = sorted({urlparse(u).path.rstrip("/") for u in distinct})
    if len(distinct) < 2 or not paths:
        return None
    if len(paths) == 1:
        return path_noun(paths[0], one=True)
    words = {m.group(1) if (m := re.fullmatch(r"([A-Za-z]{3,})(\d+)", p.rsplit("/", 1)[-1])) else "" for p in paths}
    if len(words) == 1 and (word := words.pop()):
        return path_noun(paths[0].rsplit("/", 1)[0] + "/" + word, one=True)
    split = [p.split("/") for p in paths]
    common = [parts[0] for parts in itertools.takewhile(lambda parts: len(set(parts)) == 1, zip(*split))]
    if common and all(len(parts) == len(common) + 1 and parts[-1].isdigit() for parts in split):
        return path_noun("/".join(common), one=True)
    return path_noun("/".join(common) + "/") if common else None


def column_noun(label: str, values: Iterable[str]) -> str | None:
    """What the records are when a listing's first column names them: one plain singular word whose values are names.

    A column of codes (no lower-case letters: "ABQ", "00M", "PAL0708"), of ids, names or titles (a property
    of the record, not its kind) or of a machine's name gives None.
    """
    word = label.strip()
    if not word.isascii() or not word.isalpha() or len(word) < 3 or word.lower() in _PROPERTY_LABELS or ID_LABEL.match(word):
        return None
    if internal_name(word) or (_plural_word(word) and word.lower() not in _INVARIANT) or not reads_as_noun(word):
        return None
    shown = [v for v in (str(x).strip() for x in values) if v]
    named = [v for v in shown if re.search(r"[a-z]", v) and re.search(r"[A-Za-z]{3,}", v)]
    return word.lower() if shown and len(named) >= 0.8 * len(shown) else None
