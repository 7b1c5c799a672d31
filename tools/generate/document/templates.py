"""Document task templates (Graph2Eval, Appendix C): graph requirements plus Jinja2 prompt and answer.

A :class:`TaskTemplate` says which subgraph a task needs (node and edge types, node
count, hop distance) and how to phrase it. The generator in :mod:`.document` finds
matching subgraphs, extracts the variables, and renders both templates through
:func:`render`, which uses ``StrictUndefined`` so a missing variable is an error,
never a silently empty string.
"""

from __future__ import annotations

import re

from functools import lru_cache
from typing import Any

from jinja2 import Environment, StrictUndefined, Template
from pydantic import BaseModel, Field

from ...tasks.model import Difficulty

__all__ = ["DOCUMENT_TASK_TYPES", "DOCUMENT_TEMPLATES", "TaskTemplate", "render", "templates_by_id"]

#: The twelve text task types of Graph2Eval.
DOCUMENT_TASK_TYPES = (
    "extraction", "summarization", "comprehension", "comparison", "analysis", "reasoning",
    "aggregation", "synthesis", "table_qa", "figure_interpretation", "cross_reference", "fact_verification",
)

_QUOTED_TWICE = re.compile(r'""([^"\n]+)""')
_ENV = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True)


@lru_cache(maxsize=256)
def _compile(source: str) -> Template:
    return _ENV.from_string(source)


def render(source: str, variables: dict[str, Any]) -> str:
    """Render a Jinja2 template string; an undefined variable raises ``jinja2.UndefinedError``."""
    return _compile(source).render(**variables).strip()


class TaskTemplate(BaseModel):
    """A task template: graph requirements, Jinja2 prompt and answer, and evaluation metrics."""

    id: str
    type: str = Field(description="One of DOCUMENT_TASK_TYPES.")
    difficulty: Difficulty
    required_node_types: list[str]
    required_edge_types: list[str] = Field(default_factory=list)
    min_nodes: int = 1
    max_nodes: int = 64
    max_hops: int = 1
    prompt_template: str
    answer_template: str = "{{ answer }}"
    metrics: list[str]
    description: str = ""

    def render_prompt(self, variables: dict[str, Any]) -> str:
        return _QUOTED_TWICE.sub(r'"\1"', render(self.prompt_template, variables))  # the row "https" is printed with its quotes

    def render_answer(self, variables: dict[str, Any]) -> str:
        return render(self.answer_template, variables)


_T = TaskTemplate

DOCUMENT_TEMPLATES: list[TaskTemplate] = [
    # --- extraction -----------------------------------------------------------------
    _T(
        id="extraction_cloze",
        type="extraction",
        difficulty="easy",
        required_node_types=["paragraph", "entity"],
        required_edge_types=["mentions"],
        min_nodes=2, max_nodes=2, max_hops=1,
        prompt_template=(
            "Read the document. In the passage beginning \"{{ opening }}\", one {{ kind_label }} has been blanked out:\n"
            "\"{{ cloze }}\"\nWhich {{ kind_label }} fills the blank (____)? Answer with the exact text."
        ),
        metrics=["exact_match", "f1"],
        description="A value, quantity or acronym a paragraph states (via a mentions edge), asked as a cloze.",
    ),
    # --- summarization --------------------------------------------------------------
    _T(
        id="summarization_section",
        type="summarization",
        difficulty="medium",
        required_node_types=["section", "paragraph"],
        required_edge_types=["contains"],
        min_nodes=3, max_nodes=4, max_hops=1,
        prompt_template="Summarise section {{ section }} of the document in {{ n }} sentences, keeping its key statements.",
        answer_template="{{ key_sentences | join('\n') }}",
        metrics=["rouge_l", "f1"],
        description="Gold = the opening sentence of each of the section's first paragraphs.",
    ),
    # --- comprehension --------------------------------------------------------------
    _T(
        id="comprehension_next_sentence",
        type="comprehension",
        difficulty="easy",
        required_node_types=["section", "paragraph"],
        required_edge_types=["contains"],
        min_nodes=2, max_nodes=2, max_hops=1,
        prompt_template=(
            "In section {{ section }}, the passage beginning \"{{ opening }}\" says:\n\"{{ sentence }}\"\n"
            "What does the passage state in the sentence that immediately follows?"
        ),
        metrics=["f1", "rouge_l"],
        description="Gold = the next sentence of the same paragraph.",
    ),
    # --- comparison -----------------------------------------------------------------
    _T(
        id="comparison_table_rows",
        type="comparison",
        difficulty="medium",
        required_node_types=["table", "table_cell"],
        required_edge_types=["contains"],
        min_nodes=3, max_nodes=4, max_hops=2,
        prompt_template=(
            "Compare two rows of {{ label }}{% if caption %} (\"{{ caption }}\"){% endif %}: what is the \"{{ column }}\" of \"{{ row_a }}\" "
            "and of \"{{ row_b }}\"? Give the value for \"{{ row_a }}\" first, then for \"{{ row_b }}\", separated by a semicolon."
        ),
        answer_template="{{ value_a }}; {{ value_b }}",
        metrics=["exact_match", "f1"],
        description="Two rows of one table contrasted on one column.",
    ),
    _T(
        id="comparison_sections",
        type="comparison",
        difficulty="hard",
        required_node_types=["section", "paragraph"],
        required_edge_types=["contains"],
        min_nodes=5, max_nodes=5, max_hops=2,
        prompt_template=(
            "Sections \"{{ section_a }}\" and \"{{ section_b }}\" are both part of {{ parent }}. "
            "Compare them: state the point each section opens with, \"{{ section_a }}\" first, on separate lines."
        ),
        answer_template="{{ sentence_a }}\n{{ sentence_b }}",
        metrics=["rouge_l", "f1"],
        description="Two sibling sections contrasted by their opening statements.",
    ),
    # --- analysis -------------------------------------------------------------------
    _T(
        id="analysis_referenced_object",
        type="analysis",
        difficulty="hard",
        required_node_types=["paragraph", "caption"],
        required_edge_types=["refers_to", "caption_of"],
        min_nodes=3, max_nodes=3, max_hops=2,
        prompt_template=(
            "Analyse {{ label }} of the document: what does it present, and how does the passage beginning "
            "\"{{ opening }}\" use it? Quote the caption and that passage's sentences that mention {{ label }}."
        ),
        answer_template="{{ caption }}\n{{ sentences | join('\n') }}",
        metrics=["rouge_l", "f1"],
        description="A table or figure and the text that uses it.",
    ),
    # --- reasoning ------------------------------------------------------------------
    _T(
        id="reasoning_ref_table_cell",
        type="reasoning",
        difficulty="hard",
        required_node_types=["paragraph", "table", "table_cell"],
        required_edge_types=["refers_to", "contains"],
        min_nodes=3, max_nodes=3, max_hops=2,
        prompt_template=(
            "The passage beginning \"{{ opening }}\" refers to a table. In that table, what is the "
            "\"{{ column }}\" entry of the row \"{{ row }}\"?"
        ),
        metrics=["exact_match", "f1"],
        description="Two hops: paragraph -refers_to-> table -contains-> cell.",
    ),
    _T(
        id="reasoning_ref_section_caption",
        type="reasoning",
        difficulty="expert",
        required_node_types=["paragraph", "section", "caption"],
        required_edge_types=["refers_to", "contains", "caption_of"],
        min_nodes=4, max_nodes=4, max_hops=3,
        prompt_template=(
            "The passage beginning \"{{ opening }}\" points the reader to \"{{ ref_label }}\". "
            "That part of the document contains exactly one {{ object_kind }}. What is its caption?"
        ),
        metrics=["exact_match", "f1", "rouge_l"],
        description="Three hops: paragraph -refers_to-> section -contains-> caption -caption_of-> table/figure.",
    ),
    # --- aggregation ----------------------------------------------------------------
    _T(
        id="aggregation_table_rows",
        type="aggregation",
        difficulty="medium",
        required_node_types=["table", "table_cell"],
        required_edge_types=["contains"],
        min_nodes=2, max_nodes=64, max_hops=1,
        prompt_template="How many rows, not counting the header row, does {{ label }}{% if caption %} (\"{{ caption }}\"){% endif %} have?",
        metrics=["exact_match", "number"],
        description="Count the data rows of a table (one evidence cell per row).",
    ),
    _T(
        id="aggregation_section_citations",
        type="aggregation",
        difficulty="medium",
        required_node_types=["section", "paragraph", "reference"],
        required_edge_types=["contains", "cites"],
        min_nodes=3, max_nodes=64, max_hops=2,
        prompt_template=(
            "How many distinct bibliography entries are cited in the paragraphs of section {{ section }} "
            "(not counting its subsections)?"
        ),
        metrics=["exact_match", "number"],
        description="Count the distinct references cited by a section's own paragraphs.",
    ),
    _T(
        id="aggregation_document_objects",
        type="aggregation",
        difficulty="easy",
        required_node_types=["section"],
        required_edge_types=["contains"],
        min_nodes=1, max_nodes=64, max_hops=1,
        prompt_template="How many {{ plural }} does the document contain?",
        metrics=["exact_match", "number"],
        description="Count the figures or tables of the document.",
    ),
    # --- synthesis ------------------------------------------------------------------
    _T(
        id="synthesis_multi_reference",
        type="synthesis",
        difficulty="expert",
        required_node_types=["paragraph"],
        required_edge_types=["refers_to"],
        min_nodes=3, max_nodes=6, max_hops=2,
        prompt_template=(
            "Several passages of the document refer to {{ label }}. Synthesise what the document says about it: "
            "identify it and combine the statements of the passages beginning {% for o in openings %}\"{{ o }}\"{{ ', ' if not loop.last }}{% endfor %}."
        ),
        answer_template="{{ title }}\n{{ sentences | join('\n') }}",
        metrics=["rouge_l", "f1"],
        description="Statements from two or more passages that refer to the same table, figure or section.",
    ),
    # --- table_qa -------------------------------------------------------------------
    _T(
        id="table_qa_cell",
        type="table_qa",
        difficulty="easy",
        required_node_types=["table", "table_cell"],
        required_edge_types=["contains"],
        min_nodes=2, max_nodes=3, max_hops=2,  # cell → table → caption: the question quotes the caption
        prompt_template=(
            "In {{ label }}{% if caption %} (\"{{ caption }}\"){% endif %}, what is the value in the "
            "\"{{ column }}\" column for the row \"{{ row }}\"?"
        ),
        metrics=["exact_match", "f1"],
        description="A cell addressed by its row header and column header.",
    ),
    # --- figure_interpretation ------------------------------------------------------
    _T(
        id="figure_interpretation_caption",
        type="figure_interpretation",
        difficulty="medium",
        required_node_types=["figure", "caption"],
        required_edge_types=["caption_of"],
        min_nodes=2, max_nodes=2, max_hops=1,
        prompt_template="What does {{ label }} of the document show?",
        metrics=["rouge_l", "f1"],
        description="Gold = the figure's caption (without its 'Figure N:' label).",
    ),
    # --- cross_reference ------------------------------------------------------------
    _T(
        id="cross_reference_caption",
        type="cross_reference",
        difficulty="medium",
        required_node_types=["paragraph", "caption"],
        required_edge_types=["refers_to", "caption_of"],
        min_nodes=3, max_nodes=3, max_hops=2,
        prompt_template=(
            "Which {{ object_kind }} does the passage beginning \"{{ opening }}\" refer to when it says "
            "\"{{ ref_label }}\", and what is its caption?"
        ),
        answer_template="{{ caption }}",
        metrics=["exact_match", "f1", "rouge_l"],
        description="Follow a refers_to edge to a table or figure; gold = its caption (which names it).",
    ),
    _T(
        id="cross_reference_section",
        type="cross_reference",
        difficulty="easy",
        required_node_types=["paragraph", "section"],
        required_edge_types=["refers_to"],
        min_nodes=2, max_nodes=2, max_hops=1,
        prompt_template=(
            "The passage beginning \"{{ opening }}\" mentions \"{{ ref_label }}\". What is the title of that part of the document?"
        ),
        metrics=["exact_match", "f1"],
        description="Follow a refers_to edge to a section; gold = its heading.",
    ),
    # --- fact_verification ----------------------------------------------------------
    _T(
        id="fact_verification_statement",
        type="fact_verification",
        difficulty="medium",
        required_node_types=["paragraph"],
        min_nodes=1, max_nodes=2, max_hops=1,
        prompt_template=(
            "According to the document (section {{ section }}), is the following statement true or false? "
            "Answer \"true\" or \"false\".\nStatement: {{ statement }}"
        ),
        metrics=["exact_match"],
        description="A sentence from a paragraph, verbatim (true) or with one number or acronym changed (false).",
    ),
]


def templates_by_id() -> dict[str, TaskTemplate]:
    return {t.id: t for t in DOCUMENT_TEMPLATES}
