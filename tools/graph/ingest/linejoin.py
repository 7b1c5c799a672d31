"""Joining a document's wrapped lines: where a line-end hyphen, underscore or slash is part of the word.

"exam-" / "ple" is one word, "log-" / "likelihood" keeps its hyphen, "kpse_" / "var_expand" and
"https://tug.org/" / "texlive" are one word. Inside :func:`known_words` a hyphen is decided by how
the document itself writes the word on other lines; the rules below decide where it never does.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["join_wrapped", "known_words", "word_counts"]

_KNOWN: ContextVar[Mapping[str, int] | None] = ContextVar("taskloom_known_words", default=None)
_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")
_TAIL = re.compile(r"[A-Za-z]+")
_HEAD = re.compile(r"([A-Za-z]+)-$")


def word_counts(lines: Iterable[str]) -> Counter[str]:
    """How often each word and each hyphenated pair occurs (lower case), a word cut at a line's end not counted.

    >>> sorted(word_counts(["the log-likelihood ratio", "a log-", "likelihood"]).items())
    [('a', 1), ('likelihood', 2), ('log', 1), ('log-likelihood', 1), ('ratio', 1), ('the', 1)]
    """
    counts: Counter[str] = Counter()
    for line in lines:
        text = line.rstrip()
        if text.endswith("-"):
            text = text.rsplit(None, 1)[0] if " " in text.strip() else ""
        for word in _WORD.findall(text):
            parts = word.lower().split("-")
            counts.update(parts)
            counts.update(f"{a}-{b}" for a, b in zip(parts, parts[1:]))
    return counts


@contextmanager
def known_words(counts: Mapping[str, int]) -> Iterator[None]:
    """Within the block, a line-end hyphen follows how the document writes the word elsewhere (:func:`word_counts`)."""
    token = _KNOWN.set(counts)
    try:
        yield
    finally:
        _KNOWN.reset(token)


def _document_says(out: str, line: str) -> bool | None:
    """Whether the document writes the word broken at ``out``'s end hyphenated (True), whole (False), or neither more often (None)."""
    counts, head, tail = _KNOWN.get(), _HEAD.search(out), _TAIL.match(line)
    if counts is None or head is None or tail is None:
        return None
    hyphened, whole = counts.get(f"{head.group(1)}-{tail.group(0)}".lower(), 0), counts.get((head.group(1) + tail.group(0)).lower(), 0)
    return None if hyphened == whole else hyphened > whole


#: Words before a line-end hyphen that make a compound ("self-" / "contained", "three-" / "character"), not a broken syllable.
_COMPOUND_HEADS = frozenset({"self", "well", "half", "cross", "two", "three", "four", "five", "six", "eight", "nine", "twelve"})  # not "ten": "ten-" / "dency"
_URL_START = re.compile(r"^[(<\[]?(?:[a-z][a-z+.-]*://|www\.)", re.I)


#: Words that follow an identifier or a URL in prose, never a piece of one ("NA_real_ and", "https://tukaani.org/xz/ and").
_PROSE_WORDS = frozenset("a an and are as at be by for from if in is it of on or set than that the then this to was when where which with".split())


def _join_pair(out: str, line: str) -> str:
    """``out`` and the next wrapped line as one string: a space between, unless the break fell inside a word."""
    word, following = out.rsplit(None, 1)[-1], line.split(None, 1)[0]
    if out.endswith("-") and out[-2:-1].isalpha():
        head = word[:-1]
        if following in ("and", "or", "to"):
            return f"{out} {line}"  # "two- and three-dimensional"
        said = _document_says(out, line)
        if said is not None:
            return out + line if said else out[:-1] + line  # "log-" / "likelihood" where the paper writes "log-likelihood"
        compound = "-" in head or (head.lower() in _COMPOUND_HEADS and not line.startswith(("teen", "ty")))
        return out[:-1] + line if line[0].islower() and not compound else out + line  # "next-highest-" / "priority" keeps its hyphen
    if len(word) > 1 and following.strip("(),.;:").lower() not in _PROSE_WORDS and line[0].isalnum():
        url = word.endswith("/") and _URL_START.match(word) and ("." in following or not word.endswith("//"))
        name = word.endswith("_") and not word.startswith("_") and not (word.isupper() and following.islower())  # not "_emphasis_", "ENV_VAR_ set"
        if url or name:
            return out + line  # an identifier or a URL broken after "_" or "/" ("kpse_" / "var_expand", "https://tug.org/" / "texlive")
    return f"{out} {line}"


def join_wrapped(lines: list[str]) -> str:
    """Join hard-wrapped lines with spaces, undoing end-of-line hyphenation.

    Inside :func:`known_words`, a hyphen the document writes elsewhere stays and one it never writes goes.
    Otherwise "exam-" followed by "ple" becomes "example" (only when the next line starts with a lowercase
    letter and the hyphen does not end a compound's head); "Smith-" + "Jones" stays "Smith-Jones",
    "next-highest-" + "priority" stays hyphenated, and "kpse_" + "var_expand" becomes one word.

    Examples
    --------
    >>> join_wrapped(["a hyphen-", "ated word and", "more"])
    'a hyphenated word and more'
    >>> join_wrapped(["Smith-", "Jones"]), join_wrapped(["the next-highest-", "priority path"]), join_wrapped(["only three-", "character names"])
    ('Smith-Jones', 'the next-highest-priority path', 'only three-character names')
    >>> join_wrapped(["calls kpse_", "var_expand (see", "https://tug.org/", "texlive)"]), join_wrapped(["match pkg2/", "that"])
    ('calls kpse_var_expand (see https://tug.org/texlive)', 'match pkg2/ that')
    >>> join_wrapped(["NA_real_", "and https://", "URLs in two-", "and three-dimensional"])
    'NA_real_ and https:// URLs in two- and three-dimensional'
    >>> with known_words(word_counts(["the log-likelihood of a PostScript file"])):
    ...     join_wrapped(["its log-", "likelihood in Post-", "Script"])
    'its log-likelihood in PostScript'
    """
    out = ""
    for raw in lines:
        line = " ".join(raw.split())
        if not line:
            continue
        out = _join_pair(out, line) if out else line
    return out
