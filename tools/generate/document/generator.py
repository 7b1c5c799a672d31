"""Template-only document task generation: real questions with gold answers taken from the graph.

For every task type, :func:`generate_document_tasks` enumerates the subgraphs that fit
the type's templates (in graph insertion order), renders each candidate's prompt and
gold answer, and keeps a seeded random selection. Every gold answer is text of, or a
count over, the task's evidence nodes; the reasoning path lists the graph edges that
lead from the question to the answer. No LLM and no global random state: the same graph,
arguments and seed give the same tasks.
"""

from __future__ import annotations

import re

import hashlib
import math
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...errors import InputError
from ...graph.model import KnowledgeGraph, Node
from ...tasks.model import Provenance, Task
from .address import unambiguous
from .guards import boilerplate, cap_cloze, confirmed_count, garbled, passage_of
from .falsify import _falsify
from .leaning import INTRODUCES, TAKES_BACK, leans_back, pointer, question
from .templates import DOCUMENT_TASK_TYPES, DOCUMENT_TEMPLATES, TaskTemplate
from .index import (
    Builder,
    _CAPTION_PREFIX,
    _Cand,
    _DIFFICULTIES,
    _Index,
    _whole_sentence,
    _good_sentence,
    _has_label,
    _is_prose,
    _kind,
    _table_ctx,
    clean_rows,
    listing_columns,
    _whole_word,
    normalise,
    split_sentences,
)

__all__ = ["generate_document_tasks", "normalise", "split_sentences", "TABLE_QA_SHARE"]

#: table_qa tasks per type's count: one and a half times as many, so table questions make at
#: least a tenth of a document's tasks wherever it has tables (twelve types share the count).
TABLE_QA_SHARE = 1.5


def _capital_neighbour(s: str, term: str) -> bool:
    """Whether ``term`` stands beside another word in capitals: a part of a name whose underscores the PDF drew as
    rules ("SEEK SET" for SEEK_SET), not an acronym of its own.

    >>> _capital_neighbour("Use SEEK SET to go to the start.", "SET"), _capital_neighbour("The NASA archive.", "NASA")
    (True, False)
    """
    t = re.escape(term)
    return bool(re.search(rf"\b[A-Z][A-Z0-9]+\s+{t}\b|\b{t}\s+[A-Z][A-Z0-9]+\b", s))


def spelled_out(s: str, term: str) -> bool:
    """Whether the acronym ``term`` stands in brackets right after the words it abbreviates ("the Filesystem Hierarchy
    Standard (FHS)", "global/local estimation (IGLE)"): a blank there is read off the words before it.

    >>> spelled_out("Files go where the Filesystem Hierarchy Standard (FHS) says.", "FHS"), spelled_out("It uses the FHS layout.", "FHS")
    (True, False)
    >>> spelled_out("an iterative global/local estimation (IGLE) algorithm", "IGLE")
    True
    >>> spelled_out("obeying the Filesystem Hierarchy Standard (http://www.debian.org/doc/fhs-3.0.html) (FHS).", "FHS")
    True
    >>> spelled_out("measurements of carbon dioxide (CO2) emissions", "CO2")
    True
    """
    at = s.find(f"({term})")
    if at < 0:
        return False
    if any(ch.isdigit() for ch in term):
        return True  # "carbon dioxide (CO2)": a formula after its name
    before = re.sub(r"\([^()]*\)", " ", s[:at])  # "the Filesystem Hierarchy Standard (http://…/fhs-3.0.html) (FHS)"
    words = re.findall(r"[A-Za-z]+", before[-160:])[-len(term) - 2 :]
    initials = "".join(w[0] for w in words).upper()
    return term.upper() in initials or all(ch in initials for ch in term.upper())


def _b_extraction(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    for para in ix.of("paragraph"):
        if not _is_prose(para.text) or ix.addr.opening(para) is None:
            continue
        text = normalise(para.text)
        for eid in ix.mentions.get(para.id, []):
            ent = ix.nodes[eid]
            kind = ent.attrs.get("kind")
            if kind not in ("quantity", "acronym"):
                continue
            term = normalise(ent.text)
            pat = _whole_word(term)
            for s in split_sentences(para.text):
                if _good_sentence(s) and len(pat.findall(s)) == 1 and not (kind == "acronym" and (_capital_neighbour(s, term) or re.search(rf"(?:[\\%$@#/]|\$[({{]){re.escape(term)}", s) or spelled_out(s, term)
                                                                                     or len(re.findall(re.escape(term), s, re.I)) > 1)):  # "… comply with DFSG, … containing dfsg"
                    first = pat.search(text)  # the opening must end before the term's first use, or it gives the answer away
                    opening = ix.addr.opening(para, first.start() if first else None)
                    if opening is None:
                        break
                    cloze = pat.sub("____", s)
                    yield _Cand(t, {"opening": opening, "kind_label": "quantity" if kind == "quantity" else "acronym",
                                    "cloze": cloze, "answer": term}, [para.id, ent.id], [(para.id, "mentions", ent.id)])
                    break


def _b_summarization(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    """A section summarised by its paragraphs' openings, only where those openings cover it: a section of its own
    (no subsections) of two to six paragraphs, each of them prose opening with a statement that stands alone (a
    paragraph that goes on from a display does not). Elsewhere the openings leave out what the section says (audit
    14: a chapter summarised from one of its sections, a tutorial's asides kept and its point lost)."""
    for sec in ix.of("section"):
        if ix.kids(sec.id, "section"):
            continue
        paras = ix.kids(sec.id, "paragraph")
        if not 2 <= len(paras) <= 6 or not all(_is_prose(p.text) and not ix.after_display(p.id) for p in paras):
            continue
        keys: list[tuple[Node, str]] = []
        for p in paras:  # a paragraph's key statement is its opening: a later sentence leans on what came before it
            first, second = (split_sentences(p.text) + ["", ""])[:2]
            if _good_sentence(first, 25, 400) and not INTRODUCES.search(first) and first[:1].isupper() and not leans_back(first) and not question(first) and not TAKES_BACK.match(second):
                keys.append((p, first))
        opening = next(iter(ix.kids(sec.id, "paragraph", "list", "formula", "code")), None)
        if opening is not None and (_kind(opening) != "paragraph" or not _is_prose(opening.text)):
            continue  # a section that opens with code or a display (a reference entry) has no key statements in prose
        if len(keys) < len(paras) or (name := ix.addr.section(sec)) is None:
            continue
        yield _Cand(t, {"section": name, "n": len(keys), "key_sentences": [s for _, s in keys]},
                    [sec.id] + [p.id for p, _ in keys], [(sec.id, "contains", p.id) for p, _ in keys])


def _b_comprehension(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    for para in ix.of("paragraph"):
        sec = ix.section_of(para.id)
        if sec is None or not _is_prose(para.text, 150):
            continue
        if (name := ix.addr.section(sec)) is None or ix.addr.opening(para) is None:
            continue
        sents, text = split_sentences(para.text), normalise(para.text)
        made = 0
        for i in range(len(sents) - 1):
            if made >= 3:
                break
            if _good_sentence(sents[i], 25) and _good_sentence(sents[i + 1], 25) and sents.count(sents[i]) == 1 and sents[i] != sents[i + 1] and not sents[i + 1].endswith(":"):
                opening = ix.addr.opening(para, text.find(sents[i + 1], text.find(sents[i]) + len(sents[i])))  # not into the answer
                if opening is None:
                    continue
                made += 1
                yield _Cand(t, {"section": name, "opening": opening, "sentence": sents[i], "answer": sents[i + 1]},
                            [para.id, sec.id], [(sec.id, "contains", para.id)], key=str(i))


def _b_comparison_rows(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    for table in ix.of("table"):
        if (ctx := _table_ctx(ix, table)) is None:
            continue
        label, caption, cev, cpath = ctx
        by_col: dict[str, list[Node]] = {}
        for c in ix.valid_cells(table.id):
            by_col.setdefault(normalise(c.attrs["column_header"]), []).append(c)
        for col, cells in by_col.items():
            for a, b in zip(cells, cells[1:]):
                yield _Cand(t, {"label": label, "caption": caption, "column": col,
                                "row_a": normalise(a.attrs["row_header"]), "row_b": normalise(b.attrs["row_header"]),
                                "value_a": normalise(a.text), "value_b": normalise(b.text)},
                            [a.id, b.id, table.id] + cev, [(table.id, "contains", a.id), (table.id, "contains", b.id)] + cpath, "list")


def _first_sentence(ix: _Index, sec: Node) -> tuple[Node, str] | None:
    """The sentence a section opens with: the first sentence of its first paragraph, when that is a whole sentence of
    prose. None otherwise; a later sentence is no opening (seriation's 2.8 opens with a sentence that runs into a formula,
    constparty's 2.2 with one that runs into R code: both were passed over for a sentence from the middle)."""
    first = next(iter(ix.kids(sec.id, "paragraph")), None)
    if first is None or not _is_prose(first.text, 80):
        return None
    s = next(iter(split_sentences(first.text)), None)
    return (first, s) if s and _good_sentence(s, 25, 400) else None


def _b_comparison_sections(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    for parent in ix.of("section"):
        if (name := ix.addr.section(parent)) is None:
            continue
        found = [(s, _first_sentence(ix, s)) for s in ix.kids(parent.id, "section")]
        titles = Counter(normalise(s.text) for s, _ in found)
        # a sibling is named by its title within the parent: only titles no other sibling shares
        subs = [(s, f) for s, f in found if f is not None and normalise(s.text) and titles[normalise(s.text)] == 1]
        for (sa, (pa, xa)), (sb, (pb, xb)) in zip(subs, subs[1:]):  # type: ignore[misc]
            if normalise(xa) == normalise(xb):
                continue  # two sections opening with one sentence ("Package actuar provides support for …") tell nothing apart
            yield _Cand(t, {"parent": name, "section_a": normalise(sa.text), "section_b": normalise(sb.text),
                            "sentence_a": xa, "sentence_b": xb},
                        [sa.id, pa.id, sb.id, pb.id, parent.id],
                        [(parent.id, "contains", sa.id), (sa.id, "contains", pa.id), (parent.id, "contains", sb.id), (sb.id, "contains", pb.id)])


def _b_analysis(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    seen = set()
    for src, tgt, ref in ix.refers:
        target, para = ix.nodes[tgt], ix.nodes[src]
        if para.type.value != "paragraph" or target.type.value not in ("table", "figure") or tgt not in ix.caption_of:
            continue
        if (src, tgt) in seen or not ref or not ix.label(target):
            continue
        seen.add((src, tgt))
        sents = [s for s in split_sentences(para.text) if _has_label(s, ref)][:3]
        if not sents or not all(_whole_sentence(s) for s in sents) or (opening := ix.addr.opening(para)) is None:
            continue
        cap = ix.caption_of[tgt]
        yield _Cand(t, {"label": ix.label(target), "opening": opening, "caption": normalise(ix.nodes[cap].text), "sentences": sents},
                    [tgt, cap, src], [(src, "refers_to", tgt), (cap, "caption_of", tgt)])


def _b_reasoning_cell(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    tables_of: dict[str, list[str]] = {}
    for src, tgt, _ in ix.refers:
        if ix.nodes[tgt].type.value == "table" and tgt not in tables_of.setdefault(src, []):
            tables_of[src].append(tgt)
    for src, tables in tables_of.items():
        para = ix.nodes[src]
        if len(tables) != 1 or para.type.value != "paragraph" or (opening := ix.addr.opening(para)) is None:
            continue
        for cell in ix.valid_cells(tables[0]):
            yield _Cand(t, {"opening": opening, "column": normalise(cell.attrs["column_header"]),
                            "row": normalise(cell.attrs["row_header"]), "answer": normalise(cell.text)},
                        [src, tables[0], cell.id], [(src, "refers_to", tables[0]), (tables[0], "contains", cell.id)])


def _b_reasoning_section_caption(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    seen = set()
    for src, tgt, ref in ix.refers:
        if ix.nodes[tgt].type.value != "section" or ix.nodes[src].type.value != "paragraph" or (src, tgt) in seen or not ref:
            continue
        seen.add((src, tgt))
        if not _has_label(ix.nodes[src].text, ref) or (opening := ix.addr.opening(ix.nodes[src])) is None:
            continue
        caps = [d for d in ix.descendants(tgt) if ix.nodes[d].type.value == "caption"]
        if len(caps) != 1 or ix.parent.get(caps[0]) != tgt:
            continue
        cap = caps[0]
        obj = next((e.target for e in ix.kg.edges("caption_of") if e.source == cap), None)
        if obj is None:
            continue
        yield _Cand(t, {"opening": opening, "ref_label": ref, "object_kind": ix.nodes[obj].type.value,
                        "answer": normalise(ix.nodes[cap].text)},
                    [src, tgt, cap, obj], [(src, "refers_to", tgt), (tgt, "contains", cap), (cap, "caption_of", obj)])


def _b_agg_rows(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    for table in ix.of("table"):
        cells = ix.table_cells(table.id)
        header_rows = {int(c.attrs.get("row", -1)) for c in cells if c.attrs.get("header")}
        if header_rows != {0} or not clean_rows(cells) or listing_columns(cells):
            continue  # rows counted only where each is a record
        first_of_row: dict[int, Node] = {}
        for c in cells:
            r = int(c.attrs.get("row", -1))
            if not c.attrs.get("header") and r not in first_of_row:
                first_of_row[r] = c
        if not first_of_row:
            continue
        if (ctx := _table_ctx(ix, table)) is None:
            continue
        label, caption, cev, cpath = ctx
        rows = [first_of_row[r] for r in sorted(first_of_row)]
        yield _Cand(t, {"label": label, "caption": caption, "answer": str(len(rows))},
                    [table.id] + cev + [c.id for c in rows], [(table.id, "contains", c.id) for c in rows] + cpath, "number")


def _b_agg_citations(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    for sec in ix.of("section"):
        paras, refs, path = [], [], []
        for p in ix.kids(sec.id, "paragraph", "list"):
            cited = [r for r in ix.cites.get(p.id, []) if ix.nodes[r].type.value == "reference"]
            if not cited:
                continue
            paras.append(p.id)
            path.append((sec.id, "contains", p.id))
            for r in cited:
                if r not in refs:
                    refs.append(r)
                    path.append((p.id, "cites", r))
        if len(refs) >= 2 and (name := ix.addr.section(sec)) is not None:
            yield _Cand(t, {"section": name, "answer": str(len(refs))}, [sec.id] + paras + refs, path, "number")


def _b_agg_objects(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    for kind, plural in (("figure", "figures"), ("table", "tables")):
        objs = ix.of(kind)
        if objs:
            path = [(ix.parent[o.id], "contains", o.id) for o in objs if o.id in ix.parent]
            yield _Cand(t, {"plural": plural, "answer": str(len(objs))}, [o.id for o in objs], path, "number", key=kind)


def _b_synthesis(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    by_target: dict[str, list[tuple[str, str]]] = {}
    for src, tgt, ref in ix.refers:
        if ix.nodes[src].type.value == "paragraph" and ix.nodes[tgt].type.value in ("table", "figure", "section") and ref:
            lst = by_target.setdefault(tgt, [])
            if src not in [s for s, _ in lst]:
                lst.append((src, ref))
    for tgt, refs in by_target.items():
        target = ix.nodes[tgt]
        picked: list[tuple[str, str]] = []
        for src, ref in refs:
            s = next((s for s in split_sentences(ix.nodes[src].text) if _has_label(s, ref) and len(s) >= 25 and not pointer(s)), None)
            if s and _whole_sentence(s) and s not in [x for _, x in picked]:  # a sentence cut by a page break is no statement
                picked.append((src, s))
        picked = picked[:3]
        openings = [ix.addr.opening(ix.nodes[s]) for s, _ in picked]
        if len(picked) < 2 or None in openings:
            continue
        cap = ix.caption_of.get(tgt)
        first_ref = refs[0][1]
        if target.type.value == "section":
            title = normalise(target.text)
            # the passage's own words ("Appendix A") when they name one section: its number is unique in the document
            label = first_ref if not first_ref.lower().startswith("sections") and ix.addr.unique_number(target) else ix.label(target)
        elif cap is not None and ix.label(target):
            title, label = normalise(ix.nodes[cap].text), ix.label(target)
        else:
            continue
        if not title or not label:
            continue
        ev = [tgt] + ([cap] if cap and target.type.value != "section" else []) + [s for s, _ in picked]
        path = [(s, "refers_to", tgt) for s, _ in picked] + ([(cap, "caption_of", tgt)] if cap and target.type.value != "section" else [])
        yield _Cand(t, {"label": label, "openings": openings, "title": title,
                        "sentences": [x for _, x in picked]}, ev, path)


def _b_table_qa(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    for table in ix.of("table"):
        if (ctx := _table_ctx(ix, table)) is None:
            continue
        label, caption, cev, cpath = ctx
        for cell in ix.valid_cells(table.id):
            yield _Cand(t, {"label": label, "caption": caption, "column": normalise(cell.attrs["column_header"]),
                            "row": normalise(cell.attrs["row_header"]), "answer": normalise(cell.text)},
                        [cell.id, table.id] + cev, [(table.id, "contains", cell.id)] + cpath)


def _b_figure(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    for fig in ix.of("figure"):
        cap = ix.caption_of.get(fig.id)
        if cap is None or not ix.label(fig):
            continue
        body = _CAPTION_PREFIX.sub("", normalise(ix.nodes[cap].text))
        if len(body) >= 10:
            yield _Cand(t, {"label": ix.label(fig), "answer": body}, [fig.id, cap], [(cap, "caption_of", fig.id)])


#: A plural reference label ("Figures 7", "Tables 2", "Figs. 3"): it names a range or a list, not one object.
_PLURAL_LABEL = re.compile(r"(?:figures|tables|figs\.|tabs\.)\s", re.I)


def _b_xref_caption(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    seen = set()
    for src, tgt, ref in ix.refers:
        para, target = ix.nodes[src], ix.nodes[tgt]
        if para.type.value != "paragraph" or target.type.value not in ("table", "figure") or tgt not in ix.caption_of:
            continue
        # "Figures 7 and 8" names two: the passage never says "Figures 7" alone (as for sections, only a singular label)
        if (src, tgt) in seen or not ref or _PLURAL_LABEL.match(ref) or not _has_label(para.text, ref):
            continue
        seen.add((src, tgt))
        if (opening := ix.addr.opening(para)) is None:
            continue
        cap = ix.caption_of[tgt]
        yield _Cand(t, {"object_kind": target.type.value, "opening": opening, "ref_label": ref, "caption": normalise(ix.nodes[cap].text)},
                    [src, tgt, cap], [(src, "refers_to", tgt), (cap, "caption_of", tgt)])


def _b_xref_section(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    seen = set()
    for src, tgt, ref in ix.refers:
        para, target = ix.nodes[src], ix.nodes[tgt]
        if para.type.value != "paragraph" or target.type.value != "section" or (src, tgt) in seen:
            continue
        seen.add((src, tgt))
        # Plural labels ("Sections 2") name a range; only a singular one names exactly this section.
        if not ref or ref.lower().startswith("sections") or not _has_label(para.text, ref) or not normalise(target.text):
            continue
        if (opening := ix.addr.opening(para)) is None:
            continue
        yield _Cand(t, {"opening": opening, "ref_label": ref, "answer": normalise(target.text)}, [src, tgt], [(src, "refers_to", tgt)])


def _b_fact(ix: _Index, t: TaskTemplate, rng: np.random.Generator) -> Iterator[_Cand]:
    acronyms = sorted({normalise(e.text) for e in ix.of("entity") if e.attrs.get("kind") == "acronym" and normalise(e.text)})
    for para in ix.of("paragraph"):
        sec = ix.section_of(para.id)
        if sec is None or not _is_prose(para.text, 80) or (name := ix.addr.section(sec)) is None:
            continue
        made = 0
        for i, s in enumerate(split_sentences(para.text)):
            if made >= 2:
                break
            if not _good_sentence(s, 40, 300) or s.rstrip().endswith(":") or leans_back(s) or question(s) or (i == 0 and ix.after_display(para.id)):
                continue  # "This is less obvious for nodes 2 and 3." says nothing alone; "… in the standard format:" ends in a display
            false = _falsify(ix, para, s, acronyms, rng)
            if false is None or normalise(false[0]) in ix.doc_text:
                continue
            made += 1
            truth = bool(rng.random() < 0.5)
            statement = s if truth else false[0]
            evidence = [para.id, sec.id] + ([false[1]] if not truth and false[1] else [])
            yield _Cand(t, {"section": name, "statement": statement, "answer": "true" if truth else "false"},
                        evidence, [(sec.id, "contains", para.id)], "boolean", key=str(i))


_BUILDERS: dict[str, Builder] = {
    "extraction_cloze": _b_extraction,
    "summarization_section": _b_summarization,
    "comprehension_next_sentence": _b_comprehension,
    "comparison_table_rows": _b_comparison_rows,
    "comparison_sections": _b_comparison_sections,
    "analysis_referenced_object": _b_analysis,
    "reasoning_ref_table_cell": _b_reasoning_cell,
    "reasoning_ref_section_caption": _b_reasoning_section_caption,
    "aggregation_table_rows": _b_agg_rows,
    "aggregation_section_citations": _b_agg_citations,
    "aggregation_document_objects": _b_agg_objects,
    "synthesis_multi_reference": _b_synthesis,
    "table_qa_cell": _b_table_qa,
    "figure_interpretation_caption": _b_figure,
    "cross_reference_caption": _b_xref_caption,
    "cross_reference_section": _b_xref_section,
    "fact_verification_statement": _b_fact,
}

#: Why a template found nothing, when its graph requirements were met.
_EMPTY_REASON = {
    "extraction_cloze": "no paragraph sentence states a mentioned quantity or acronym exactly once",
    "summarization_section": "no section has two or more prose paragraphs",
    "comprehension_next_sentence": "no prose paragraph inside a section has two consecutive usable sentences",
    "comparison_table_rows": "no table column has two rows addressable by unique row headers",
    "comparison_sections": "no section has two subsections that open with prose",
    "analysis_referenced_object": "no paragraph refers to a captioned table or figure in a quotable sentence",
    "reasoning_ref_table_cell": "no paragraph refers to exactly one table with addressable cells",
    "reasoning_ref_section_caption": "no referenced section contains exactly one caption",
    "aggregation_table_rows": "no table has exactly one header row",
    "aggregation_section_citations": "no section cites two or more references",
    "aggregation_document_objects": "the document has no figures or tables",
    "synthesis_multi_reference": "no table, figure or section is referred to by two or more paragraphs",
    "table_qa_cell": "no table cell has a unique row header and column header",
    "figure_interpretation_caption": "no numbered figure has a caption",
    "cross_reference_caption": "no paragraph refers to a captioned table or figure",
    "cross_reference_section": "no paragraph refers to a single titled section",
    "fact_verification_statement": "no paragraph sentence has a number or acronym to verify",
}


def _task_id(graph_id: str, template_id: str, evidence: list[str], key: str) -> str:
    raw = "\x1f".join([graph_id, template_id, ",".join(evidence), key])
    return "doc-" + hashlib.sha1(raw.encode("utf-8")).hexdigest()[:12]


def _to_task(kg: KnowledgeGraph, cand: _Cand, seed: int) -> Task:
    t = cand.template
    instruction = t.render_prompt(cand.variables)
    return Task(
        id=_task_id(kg.id, t.id, cand.evidence, cand.key or instruction),
        kind="document",
        type=t.type,
        difficulty=t.difficulty,
        instruction=instruction,
        gold_answer=t.render_answer(cand.variables),
        answer_kind=cand.answer_kind,  # type: ignore[arg-type]
        evidence=list(cand.evidence),
        reasoning_path=list(cand.path),
        metrics=list(t.metrics),
        provenance=Provenance(graph_id=kg.id, template=t.id, generator="template", model="none", seed=seed),
    )


def _missing(ix: _Index, t: TaskTemplate) -> str | None:
    for nt in t.required_node_types:
        if not ix.by_type.get(nt):
            return f"graph has no {nt} nodes"
    for et in t.required_edge_types:
        if et not in ix.edge_types:
            return f"graph has no {et} edges"
    return None


def _candidates(
    ix: _Index, furniture: set[str], kg: KnowledgeGraph, ttype: str, difficulty: str | None, seed: int, rng: np.random.Generator, pool: dict[str, Task]
) -> dict[str, Any]:
    """Fill ``pool`` with every guarded candidate of type ``ttype``; return the type's report entry."""
    entry: dict[str, Any] = {"templates": {}, "candidates": 0, "kept": 0, "skipped": None}
    for tpl in DOCUMENT_TEMPLATES:
        if tpl.type != ttype:
            continue
        if difficulty is not None and tpl.difficulty != difficulty:
            entry["templates"][tpl.id] = {"candidates": 0, "skipped": f"template difficulty is {tpl.difficulty}"}
            continue
        reason = _missing(ix, tpl)
        n = 0
        guarded = {"boilerplate": 0, "unconfirmed_count": 0, "garbled": 0}
        if reason is None:
            for cand in _BUILDERS[tpl.id](ix, tpl, rng):
                counted_refs = tpl.id == "aggregation_section_citations"
                if any(e in furniture and not (counted_refs and ix.nodes[e].type.value == "reference") for e in cand.evidence):
                    guarded["boilerplate"] += 1
                    continue
                task = _to_task(kg, cand, seed)
                if not confirmed_count(ix, tpl.id, cand.evidence, str(task.gold_answer or "")):
                    guarded["unconfirmed_count"] += 1
                    continue
                if garbled(task.instruction) or garbled(str(task.gold_answer or "")):
                    guarded["garbled"] += 1
                    continue
                if task.id not in pool:
                    pool[task.id] = task
                    n += 1
            if n == 0:
                reason = _EMPTY_REASON[tpl.id]
        entry["templates"][tpl.id] = {"candidates": n, "skipped": reason, "dropped": {k: v for k, v in guarded.items() if v}}
        entry["candidates"] += n
    return entry


def generate_document_tasks(
    kg: KnowledgeGraph,
    types: list[str] | None = None,
    count: int = 5,
    seed: int = 0,
    difficulty: str | None = None,
) -> tuple[list[Task], dict[str, Any]]:
    """Generate up to ``count`` tasks per type from a document graph, template-only.

    Returns ``(tasks, report)``; the report has, per type, the templates tried, the
    number of candidates, how many were kept, and why a type (or template) produced
    nothing. Tasks come out grouped by type in :data:`DOCUMENT_TASK_TYPES` order.
    Each type draws from its own generator ``default_rng([seed, type index])``, so a
    type's tasks do not depend on which other types were asked for. Candidates that ask
    another candidate's question with a different gold answer are dropped before the
    selection (:func:`~.address.unambiguous`), listed in ``report["ambiguous_dropped"]``.
    """
    wanted = list(DOCUMENT_TASK_TYPES) if not types else list(dict.fromkeys(types))
    unknown = [t for t in wanted if t not in DOCUMENT_TASK_TYPES]
    if unknown:
        raise InputError(f"unknown document task type(s) {unknown}; choose from {list(DOCUMENT_TASK_TYPES)}")
    if difficulty is not None and difficulty not in _DIFFICULTIES:
        raise InputError(f"unknown difficulty {difficulty!r}; choose from {list(_DIFFICULTIES)}")
    if count < 1:
        raise InputError(f"count must be at least 1, got {count}")

    ix = _Index(kg)
    furniture = boilerplate(ix)
    tasks: list[Task] = []
    report: dict[str, Any] = {"graph_id": kg.id, "seed": seed, "count_per_type": count, "difficulty": difficulty, "types": {}}
    pools: dict[str, dict[str, Task]] = {}
    rngs: dict[str, np.random.Generator] = {}
    for ttype in [t for t in DOCUMENT_TASK_TYPES if t in wanted]:
        rngs[ttype] = np.random.default_rng([seed, DOCUMENT_TASK_TYPES.index(ttype)])
        report["types"][ttype] = _candidates(ix, furniture, kg, ttype, difficulty, seed, rngs[ttype], pools.setdefault(ttype, {}))
    report["ambiguous_dropped"] = unambiguous(pools)
    for ttype, pool in pools.items():
        entry = report["types"][ttype]
        entry["ambiguous"] = sum(1 for d in report["ambiguous_dropped"] if d["type"] == ttype)
        ids = list(pool)
        chosen: list[str] = []
        passages: set[str] = set()
        quota = math.ceil(TABLE_QA_SHARE * count) if ttype == "table_qa" else count  # tables carry the exact facts
        for i in rngs[ttype].permutation(len(ids)) if ids else []:  # one task per evidence passage and type
            passage = passage_of(pool[ids[i]], ix)
            if passage not in passages and len(chosen) < quota:
                passages.add(passage)
                chosen.append(ids[i])
        tasks.extend(pool[i] for i in chosen)
        entry["kept"] = len(chosen)
        if not chosen:
            reasons = [f"{tid}: {v['skipped']}" for tid, v in entry["templates"].items() if v["skipped"]]
            if entry["ambiguous"]:
                reasons.append(f"{entry['ambiguous']} candidate(s) dropped as ambiguous")
            entry["skipped"] = "; ".join(reasons) or "no candidates"
    tasks, report["cloze_dropped"] = cap_cloze(tasks)
    report["total"] = len(tasks)
    return tasks, report
