"""The document parser registry: one decorated function per format (``@parser("markdown", suffixes=(".md",))``).

A parser is ``parse(path) -> ParsedDocument``; it may also take ``progress`` (called as
``progress(done, total, message)``) and ``max_pages`` by keyword, and gets them when it
does. How a file's format is found (:func:`~.pipeline.detect_format`): a parser's
``magic`` prefixes of the file's first bytes, then its ``suffixes``, then its ``sniff``
prefixes of the (lower-cased) text, else ``text``. Another package adds a format
through the ``taskloom.parsers`` entry point group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from ...registry import Registry
from .blocks import ParsedDocument

__all__ = ["parsers", "parser"]

F = TypeVar("F", bound=Callable[..., ParsedDocument])

#: Document parsers by format name.
parsers: Registry[ParsedDocument] = Registry("parser", modules=("taskloom.tools.graph.ingest",), label="document format")


def parser(name: str, *, suffixes: Sequence[str] = (), magic: Sequence[bytes] = (), sniff: Sequence[bytes] = ()) -> Callable[[F], F]:
    """Register a parser for format ``name``: file ``suffixes`` (lower case, with the dot), ``magic`` byte
    prefixes of the file, ``sniff`` prefixes of its lower-cased, left-stripped start."""
    return parsers.register(name, suffixes=tuple(suffixes), magic=tuple(magic), sniff=tuple(sniff))
