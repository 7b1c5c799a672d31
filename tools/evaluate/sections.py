"""Sections of a wiki page's markup, read from its text export, and the check that a sentence ends one of them.

A heading is a line in one of two families, whichever the page uses (``=`` headings when it
has any, else Markdown ``#`` headings, so a MoinMoin ``## comment`` is no heading on a page
with ``=`` headings):

- ``= Title =``, ``== Title`` (Trac, MoinMoin, MediaWiki, Creole; closing ``=`` optional,
  a trailing ``#anchor`` dropped);
- ``# Title``, ``## Title ##`` (Markdown).

Lines inside code blocks (``{{{ … }}}`` counted by nesting, ````` ``` ````` or ``~~~`` fences,
``<pre>`` … ``</pre>``) are never headings. A section's *body* is the text between its
heading and the next heading of any level; it is a *leaf* when the next heading is no
deeper than its own (no subsections).

Texts are compared with spaces collapsed (a browser sends a text box's lines with CRLF) and
without case; digests are of that form.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = ["Section", "sections", "split_section", "flat", "text_digest", "sentence_ends_section"]

_EQ_CLOSED = re.compile(r"^\s*(={1,6})\s*(\S.*?)\s*\1\s*(?:#[\w:.-]+)?\s*$")
_EQ_OPEN = re.compile(r"^\s*(={1,6})\s+(\S.*?)\s*(?:#[\w:.-]+)?\s*$")
_HASH = re.compile(r"^(#{1,6})\s+(\S.*?)(?:\s+#+)?\s*$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_PRE_OPEN = re.compile(r"<(pre|nowiki|syntaxhighlight|source|code)\b[^>]*>", re.I)
#: What a section may end with around the sentence and still "end with" it: list bullets, quote marks, rules.
_TRAILING = " *-#>:"


@dataclass(frozen=True)
class Section:
    """One heading: its text, level, line number (0-based), its body's lines ``[line + 1, end)`` and whether it has subsections."""

    title: str
    level: int
    line: int
    end: int
    leaf: bool


def flat(text: str) -> str:
    """``text`` with spaces collapsed and in lower case.

    >>> flat("A  line\\r\\nand  More ")
    'a line and more'
    """
    return " ".join(text.split()).lower()


def text_digest(text: str) -> str:
    """A digest of ``text`` as compared (:func:`flat`, trailing list or quote marks dropped)."""
    return hashlib.sha1(flat(text).rstrip(_TRAILING).encode()).hexdigest()[:16]


def _code_lines(lines: list[str]) -> set[int]:
    """Indexes of lines inside (or opening or closing) a code block."""
    inside: set[int] = set()
    depth, fence, pre = 0, False, ""
    for i, line in enumerate(lines):
        if fence or _FENCE.match(line):
            inside.add(i)
            if _FENCE.match(line):
                fence = not fence
            continue
        if pre:
            inside.add(i)
            if f"</{pre}" in line.lower():
                pre = ""
            continue
        opened = _PRE_OPEN.search(line)
        if opened and f"</{opened.group(1).lower()}" not in line.lower()[opened.end():]:
            pre = opened.group(1).lower()
            inside.add(i)
            continue
        change = line.count("{{{") - line.count("}}}")
        if depth or change:
            inside.add(i)
        depth = max(0, depth + change)
    return inside


def _heading(line: str, style: str) -> tuple[int, str] | None:
    if style == "=":
        found = _EQ_CLOSED.match(line) or _EQ_OPEN.match(line)
    else:
        found = _HASH.match(line)
    return (len(found.group(1)), found.group(2).strip()) if found else None


def sections(text: str) -> list[Section]:
    """The page's headings in order (see the module notes).

    >>> [(s.title, s.level, s.line, s.end, s.leaf) for s in sections("= Guide\\nintro\\n== Install ==\\nrun it\\n{{{\\n= not a heading\\n}}}\\n== Use\\n")]
    [('Guide', 1, 0, 2, False), ('Install', 2, 2, 7, True), ('Use', 2, 7, 8, True)]
    >>> [s.title for s in sections("#format wiki\\n## a comment\\n= Title =\\n")]
    ['Title']
    >>> [(s.title, s.level) for s in sections("# Read me\\ntext\\n## Usage ##\\n```\\n# shell comment\\n```\\n")]
    [('Read me', 1), ('Usage', 2)]
    """
    lines = text.splitlines()
    code = _code_lines(lines)
    style = "=" if any(i not in code and (_EQ_CLOSED.match(line) or _EQ_OPEN.match(line)) for i, line in enumerate(lines)) else "#"
    heads = [(i, h) for i, line in enumerate(lines) if i not in code and (h := _heading(line, style)) is not None]
    found: list[Section] = []
    for n, (i, (level, title)) in enumerate(heads):
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        leaf = n + 1 == len(heads) or heads[n + 1][1][0] <= level
        found.append(Section(title, level, i, end, leaf))
    return found


def split_section(text: str, title: str) -> tuple[str, str] | None:
    """(the body of the one section headed ``title``, the rest of the page without that body); None unless exactly one heading has that text.

    >>> split_section("= A\\none\\n= B\\ntwo\\nthree\\n", "b")
    ('two\\nthree', '= A\\none\\n= B')
    >>> split_section("= A\\n= A\\n", "A") is None
    True
    """
    hits = [s for s in sections(text) if flat(s.title) == flat(title)]
    if len(hits) != 1:
        return None
    lines = text.splitlines()
    section = hits[0]
    return "\n".join(lines[section.line + 1 : section.end]), "\n".join(lines[: section.line + 1] + lines[section.end :])


def sentence_ends_section(text: str, title: str, sentence: str, before: str, others: str) -> tuple[bool, str]:
    """Whether ``sentence`` appears once on the page, at the end of the section ``title`` whose earlier text digests to ``before``, the rest of the page to ``others``.

    >>> page = "= A\\none.\\n= B\\ntwo.\\n"
    >>> a, rest = split_section(page, "A")
    >>> sentence_ends_section("= A\\none.\\n\\nNew here.\\n= B\\ntwo.\\n", "A", "New here.", text_digest(a), text_digest(rest))
    (True, "the section 'A' ends with the sentence; the rest of the page is as it was")
    >>> sentence_ends_section("= A\\none.\\n= B\\ntwo. New here.\\n", "A", "New here.", text_digest(a), text_digest(rest))[1]
    "the section 'A' does not end with the sentence"
    """
    said = flat(sentence)
    times = len(re.findall(r"(?<!\w)" + re.escape(said) + r"(?!\w)", flat(text)))
    if times != 1:
        return False, f"the sentence appears {times} times on the page, not once"
    parts = split_section(text, title)
    if parts is None:
        return False, f"the page has no single section headed {title!r}"
    body, rest = parts
    core = flat(body).rstrip(_TRAILING)
    if not core.endswith(said.rstrip(_TRAILING)):
        return False, f"the section {title!r} does not end with the sentence"
    if text_digest(core[: len(core) - len(said.rstrip(_TRAILING))]) != before:
        return False, f"the section {title!r} ends with the sentence, but its earlier text changed"
    if text_digest(rest) != others:
        return False, f"the section {title!r} ends with the sentence, but another part of the page changed"
    return True, f"the section {title!r} ends with the sentence; the rest of the page is as it was"
