"""A page's whole text, kept small: hashes of its normalised sentence pieces, to tell whether a sentence stands on it.

A page node's ``text`` holds the start of the page (what embeddings and readers need); whether a
sentence found on one page also stands on another must be decided over the whole of every page.
:func:`text_hashes` cuts a text into pieces at line breaks, tabs (table cells) and sentence or clause
ends (``. ! ? ; :`` before a space), normalises each piece (case, spaces, leading bullets and
numbers, edge punctuation) and hashes the pieces of three words or more; the build stores them
on the page node as ``attrs["text_hashes"]``. :func:`appears_in` says whether every such piece
of a sentence is among a page's hashes: a sentence split differently on the other page (a
prefix before it on the same line without a clause end) can be missed, a sentence whose pieces
stand apart on the other page counts as shown there (the safe side for a uniqueness check).

>>> hashes = set(text_hashes("Intro line\\nNote: The parser keeps every comment it reads. Other text."))
>>> appears_in("The parser keeps every comment it reads.", hashes), appears_in("The parser drops every comment.", hashes)
(True, False)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection

__all__ = ["text_hashes", "sentence_hashes", "appears_in", "MIN_WORDS"]

#: Pieces shorter than this many words are not hashed (headings, labels, single words).
MIN_WORDS = 3
_CUT = re.compile(r"[\n\r\t]+|(?<=[.!?;:])\s+")
_EDGE = re.compile(r"^[\W\d_]+|[\W_]+$")


def _pieces(text: str) -> list[str]:
    out: list[str] = []
    for raw in _CUT.split(text):
        piece = _EDGE.sub("", " ".join(raw.split()).casefold())
        if len(piece.split()) >= MIN_WORDS:
            out.append(piece)
    return out


def _hash(piece: str) -> str:
    return hashlib.blake2b(piece.encode(), digest_size=5).hexdigest()


def text_hashes(text: str) -> list[str]:
    """Sorted distinct hashes of the text's pieces (10 hex digits each)."""
    return sorted({_hash(p) for p in _pieces(text)})


def sentence_hashes(sentence: str) -> list[str]:
    """Hashes of one sentence's pieces, in order (none when it has no piece of three words)."""
    return [_hash(p) for p in _pieces(sentence)]


def appears_in(sentence: str, hashes: Collection[str]) -> bool:
    """Whether every piece of ``sentence`` is among ``hashes`` (False for a sentence with no hashed piece)."""
    mine = sentence_hashes(sentence)
    return bool(mine) and all(h in hashes for h in mine)
