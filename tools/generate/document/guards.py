"""What document tasks may stand on: no boilerplate evidence, counts confirmed twice, a balanced mix.

* **Boilerplate** — licence, copyright, acknowledgements, contents, index, lists of figures or
  tables, affiliations and the bibliography — is never a task's evidence: a section with such a
  title (or a licence's, "Appendix A GNU General Public License") and everything under it, any passage written in licence language, and every bibliography
  entry (only the citation count, which counts entries, may include them).
* **Counts** are kept only when a second, independent route through the document gives the same
  number (:func:`confirmed_count`): table rows by row index against the table's own row count;
  cited works by the ``cites`` edges against the author–year citations written in the text;
  figures and tables by their nodes against their numbered captions.
* **Legible**: a task whose question or answer shows broken glyphs (:func:`garbled`) is dropped.
* **Mix**: at most one task per evidence passage and type (:func:`passage_of`), and cloze tasks
  at most :data:`CLOZE_SHARE` of a document's tasks (:func:`cap_cloze`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...graph.ingest.pdf_outline import is_licence_title
from ...graph.model import Node
from ...tasks.model import Task
from .index import _Index, normalise

__all__ = [
    "BOILERPLATE_TITLE", "LICENCE_TEXT", "CLOZE_TEMPLATES", "CLOZE_SHARE", "boilerplate", "passage_of", "confirmed_count", "cap_cloze", "garbled",
]  # fmt: skip

#: Section titles of document furniture (numbering such as "A." or "7" allowed before them).
BOILERPLATE_TITLE = re.compile(
    r"^\s*(?:[\dA-Z]{1,3}[.)]?\s+)?(?:licen[cs]e|licensing|copyright|acknowledge?ments?|contents|table of contents|index|"
    r"(?:concept|function|variable|keyword|general) index|list of (?:figures|tables)|references|bibliography|literature cited|"
    r"works cited|affiliations?|about the authors?|colophon|disclaimer|terms of use|funding)\s*:?\s*$",
    re.I,
)
#: Wording that only licence and copyright notices use.
LICENCE_TEXT = re.compile(
    r"permission is (?:hereby )?granted|gnu (?:general|lesser|library|free documentation) (?:public )?licen[cs]e|without any warranty|"
    r"all rights reserved|licensed under|creative commons|verbatim copies|this (?:manual|document|program) is free",
    re.I,
)
#: Templates whose question blanks out a term of a sentence.
CLOZE_TEMPLATES = frozenset({"extraction_cloze"})
CLOZE_SHARE = 0.10
#: Node types that are a passage a task stands on (the first of a task's evidence of these types).
_PASSAGE_TYPES = ("paragraph", "list", "table_cell", "caption", "table", "figure", "formula", "section", "reference")
_CITATION = re.compile(r"\b([A-Z][\w'’-]+)(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][\w'’-]+)?,?\s*\(?((?:1[89]|20)\d\d)([a-z]?)\b")


#: Signs of a text layer that lost its glyphs: a lone spacing accent (from typeset math such as a
#: hat over a symbol), the replacement character, private-use glyphs, or a symbol-font letter run.
_GARBLED = re.compile(r"(?:^|[\s(])[\u02c6\u02dc\u00a8\u00b4\u02d8\u02d9\u02da\u02dd](?=\w|\s|$)|[\ufffd\ue000-\uf8ff]")


def garbled(text: str) -> bool:
    """Whether ``text`` shows broken glyphs a reader could not type (see :data:`_GARBLED`), or a line cut off in a formula.

    A line ending in an operator ("… and h+ m =") lost what followed it: a caption whose formula sat on a rotated page, or
    one whose sub- and superscripts were read apart. Quoted as a gold, it is not what the page says.

    >>> garbled('P i ˆfi(0)'), garbled('the estimate of β̂ is 0.5'), garbled('café au lait')
    (True, False, False)
    >>> garbled('Table 2: ϕh = ϕ + ϕ2 + · · · + ϕh and h+ m ='), garbled('x = 1 +\\ny'), garbled('a = b.\\nc - d')
    (True, True, False)
    """
    return bool(_GARBLED.search(text)) or any(_CUT.search(line) for line in text.splitlines())


#: A line ending in an operator that needs a right-hand side.
_CUT = re.compile(r"(?:^|\s)[=+−×·<>≤≥≈]\s*$")


def boilerplate(ix: _Index) -> set[str]:
    """Ids of nodes no task may stand on (see the module notes)."""
    out: set[str] = {n.id for n in ix.of("reference")}
    for sec in ix.of("section"):
        if BOILERPLATE_TITLE.match(normalise(sec.text)) or is_licence_title(sec.text):
            out.add(sec.id)
            out.update(ix.descendants(sec.id))
    for node in ix.of("paragraph", "list", "chunk", "footnote"):
        if LICENCE_TEXT.search(node.text):
            out.add(node.id)
    return out


def passage_of(task: Task, ix: _Index) -> str:
    """The passage a task stands on: its first evidence node of a passage type (else its first evidence)."""
    for nid in task.evidence:
        node = ix.nodes.get(nid)
        if node is not None and node.type.value in _PASSAGE_TYPES:
            return nid
    return task.evidence[0] if task.evidence else task.id


def _table_rows(ix: _Index, table: Node, counted: int) -> bool:
    cells = ix.table_cells(table.id)
    header_rows = {int(c.attrs.get("row", -1)) for c in cells if c.attrs.get("header")}
    data_rows = {int(c.attrs.get("row", -1)) for c in cells if not c.attrs.get("header")}
    declared = table.attrs.get("rows")
    return len(data_rows) == counted and isinstance(declared, int) and declared - len(header_rows) == counted


def _written_citations(ix: _Index, paragraphs: Iterable[str], refs: Iterable[str]) -> int:
    """How many of ``refs`` the paragraphs' own words cite (first author surname + year + letter)."""
    keys: set[tuple[str, str]] = set()
    for pid in paragraphs:
        for m in _CITATION.finditer(ix.nodes[pid].text):
            keys.add((m.group(1).casefold(), m.group(2) + m.group(3)))
    found = 0
    for rid in refs:
        author = re.match(r"\s*(?:\[\d+\]\s*)?([A-Z][\w'’-]+)", ix.nodes[rid].text)
        year = re.search(r"\b((?:1[89]|20)\d\d[a-z]?)\b", ix.nodes[rid].text)
        if author and year and (author.group(1).casefold(), year.group(1)) in keys:
            found += 1
    return found


def confirmed_count(ix: _Index, template_id: str, evidence: list[str], answer: str) -> bool:
    """True unless the task is a count that a second route through the document does not confirm."""
    if not template_id.startswith("aggregation_") or not answer.isdigit():
        return True
    counted = int(answer)
    nodes = [ix.nodes[n] for n in evidence if n in ix.nodes]
    if template_id == "aggregation_table_rows":
        table = next((n for n in nodes if n.type.value == "table"), None)
        return table is not None and _table_rows(ix, table, counted)
    if template_id == "aggregation_section_citations":
        paragraphs = [n.id for n in nodes if n.type.value in ("paragraph", "list")]
        refs = [n.id for n in nodes if n.type.value == "reference"]
        return _written_citations(ix, paragraphs, refs) == counted == len(refs)
    if template_id == "aggregation_document_objects":
        kinds = {n.type.value for n in nodes}
        numbers = {str(ix.nodes[c].attrs.get("number")) for k in kinds for c in (ix.caption_of.get(n.id) for n in nodes) if c}
        return len(kinds) == 1 and len(numbers) == counted
    return True


def cap_cloze(tasks: list[Task]) -> tuple[list[Task], int]:
    """The tasks with cloze tasks cut to at most :data:`CLOZE_SHARE` of the total (the earliest kept); and how many were cut."""
    cloze = [t for t in tasks if t.provenance.template in CLOZE_TEMPLATES]
    others = len(tasks) - len(cloze)
    if not others:  # only cloze tasks were asked for: nothing to balance
        return tasks, 0
    allowed = int(CLOZE_SHARE * others / (1 - CLOZE_SHARE) + 1e-9)
    dropped = {t.id for t in cloze[allowed:]}
    return [t for t in tasks if t.id not in dropped], len(dropped)
