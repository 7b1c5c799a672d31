"""Tasks: what an agent is asked to do, how success is checked, and where the task came from.

One model for document, web and composite tasks. Gold fields (answer, evidence,
steps, success criteria) are for generation and evaluation only; an agent under
test sees :meth:`Task.public` and nothing else.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "TASK_VERSION",
    "Difficulty",
    "DesktopSetup",
    "GoldStep",
    "SuccessCriterion",
    "Provenance",
    "ResourceKind",
    "TaskKind",
    "Resource",
    "Subtask",
    "Task",
    "criterion_key",
]

TASK_VERSION = 1
Difficulty = Literal["easy", "medium", "hard", "expert"]


class GoldStep(BaseModel):
    """One step of a reference solution, in the browser tools' terms."""

    action: Literal["navigate", "click", "type", "select_option", "press_key", "hover", "scroll", "wait_for"]
    selector: str | None = Field(None, description="CSS selector of the element acted on.")
    text: str | None = Field(None, description="Text typed, option chosen, key pressed, or URL navigated to.")
    submit: bool = False
    node_id: str | None = Field(None, description="The graph node the step acts on.")
    canonical: str | None = Field(None, description="Canonical form, e.g. click(text='Search', element='button').")


class SuccessCriterion(BaseModel):
    """A declarative, machine-checkable condition on the browser state or the trajectory.

    State kinds (``url_matches``, ``text_present``, ``text_absent``, ``element_state``)
    are tested against a live page; action kinds (``action_performed``, ``clicked``,
    ``typed``) against recorded actions. Nothing is ever executed as code.
    """

    kind: Literal[
        "url_matches", "page_is", "query_has", "text_present", "text_absent", "element_state", "items", "stored", "record", "action_performed", "clicked", "typed",
        "file_content", "path_state", "sheet_cells", "app_setting",
    ]
    value: str = Field(
        description="Regex for url_matches; a URL for page_is (same page after normalising fragment, trailing slash, index.html and "
        "query order) and query_has (same path, and these query parameters with these values, others free); text for text_*; "
        "selector, or 'role=<role> name=<accessible name>', for element_state; for items, JSON "
        '{"<item text>": "checked"|"unchecked"|"shown", ...} that the visible items of one list in the main content must be exactly '
        "(order ignored; an item is named by its whole text, first line, or first label, heading or link; 'shown' = any state); for stored, a text "
        "that some localStorage or sessionStorage value of the page's origin holds as a whole string (JSON values searched leaf by leaf; case "
        "and spaces ignored: items a filtered view hides are still checked); for record, JSON "
        '{"source": export URL, "key": {column: value}, "fields": {column: value}, "count": N, "total": M|null, "others": digest|null}: the application\'s CSV/TSV export, '
        "fetched after the episode, has exactly N rows with the key, each with the fields, M rows in all and every other row unchanged; or "
        '{"source": page URL, "text": T, "count": N}: the record\'s page holds T exactly N times (see taskloom.tools.evaluate.appstate); canonical action for '
        "action_performed; the clicked element's name or text for clicked; the typed text for typed; for file_content (desktop tasks), JSON "
        '{"path": path in the home folder, "content": text}: the file holds exactly that text (one final newline ignored); for path_state, JSON {"path": ..., "state": "file"|"folder"|"absent"}; '
        'for sheet_cells, JSON {"path": workbook, "cells": {"D8": number or text}, "rules": [...]}: its cells hold those values (see taskloom.tools.environment.sheet_cells); '
        'for app_setting, JSON {"path": keyfile, "setting": "group/key", "value": text}: the application saved that setting with that value.'
    )
    state: str | None = Field(None, description="element_state: visible, hidden, checked, unchecked, disabled, enabled, value=<text> or label=<selected option>.")
    scope: Literal["page", "main"] = Field("page", description="text_*: the whole page, or its main content only (main landmark, else the body without header, nav, footer, aside).")
    whole_words: bool = Field(False, description="text_*: match whole words only (case- and space-insensitive).")

    @property
    def on_state(self) -> bool:
        """True when the criterion is tested against the page rather than the actions."""
        return self.kind in ("url_matches", "page_is", "query_has", "text_present", "text_absent", "element_state", "items", "stored", "record", "file_content", "path_state", "sheet_cells", "app_setting")


def criterion_key(criterion: SuccessCriterion) -> str:
    """A stable string naming one criterion, used to record per-action probe results."""
    return f"{criterion.kind}|{criterion.value}|{criterion.state or ''}"


TaskKind = Literal["document", "web", "composite", "desktop"]
ResourceKind = Literal[
    "search_query", "result_list", "detail_page", "form_data", "filter_state", "document_fact", "file", "page_state", "record", "record_set", "field_value"
]


class Resource(BaseModel):
    """A typed input or output of a subtask; an output feeding an input makes a DAG edge."""

    kind: ResourceKind
    name: str = Field(description="What it is, e.g. the query text, the page URL, the filter value.")


class Subtask(BaseModel):
    """One node of a composite task: a verified short task with its resources and completion checks."""

    id: str = Field(description="Unique within the composite task, e.g. 's1'.")
    instruction: str
    intent: str = Field("", description="The goal it serves; a composite groups subtasks of one intent.")
    category: str = Field("", description="Site section, app or node category (knowledge complexity counts these).")
    inputs: list[Resource] = Field(default_factory=list)
    outputs: list[Resource] = Field(default_factory=list)
    gold_steps: list[GoldStep] = Field(default_factory=list)
    checks: list[SuccessCriterion] = Field(default_factory=list, description="Declarative completion checks for the graph evaluator.")
    source_task: str | None = Field(None, description="Id of the verified task this subtask came from.")


class DesktopSetup(BaseModel):
    """Desktop tasks: the application an episode starts and the files its fresh home folder holds."""

    app: str = Field(description="Application name, e.g. 'mousepad'.")
    files: dict[str, str] = Field(default_factory=dict, description="Seeded files: path in the home folder -> content.")
    open_files: list[str] = Field(default_factory=list, description="Seeded files the application opens at start.")


class Provenance(BaseModel):
    """Where a task came from, so it can be regenerated exactly."""

    graph_id: str
    template: str | None = Field(None, description="Template id (documents) or meta-path id (web).")
    generator: str = Field(description="Generator name, e.g. 'template' or 'llm'.")
    model: str = Field("none", description="LLM model, or 'none'.")
    seed: int = 0


class Task(BaseModel):
    """A generated task (document, web or composite)."""

    version: int = TASK_VERSION
    id: str
    kind: TaskKind
    type: str = Field(description="Task type, e.g. table_qa, comparison, search_filter_detail.")
    difficulty: Difficulty = "easy"
    instruction: str
    # documents
    gold_answer: str | None = None
    answer_kind: Literal["text", "number", "boolean", "list"] = "text"
    evidence: list[str] = Field(default_factory=list, description="Node ids the answer is grounded in.")
    reasoning_path: list[tuple[str, str, str]] = Field(default_factory=list, description="(source, edge type, target) edges.")
    metrics: list[str] = Field(default_factory=list, description="Evaluation metrics, e.g. exact_match, f1, rouge_l.")
    # web
    start_url: str | None = None
    allowed_domains: list[str] = Field(default_factory=list)
    gold_steps: list[GoldStep] = Field(default_factory=list)
    success: list[SuccessCriterion] = Field(default_factory=list)
    gold_trajectory: str | None = Field(None, description="Path of the verified replay's trajectory.")
    # desktop
    desktop: DesktopSetup | None = None
    # composite (chained long tasks and task DAGs)
    subtasks: list[Subtask] = Field(default_factory=list)
    dag: list[tuple[str, str]] = Field(default_factory=list, description="Subtask id edges a -> b: an output of a feeds an input of b.")
    level: int | None = Field(None, description="Chained tasks: the number of chained subtasks (1..6).")
    orders: list[list[str]] = Field(default_factory=list, description="Valid topological orders of the DAG (all, or a seeded sample when too many).")
    order_count: int | None = Field(None, description="Exact number of valid topological orders.")
    complexity: dict[str, Any] = Field(default_factory=dict, description="Five complexities: value and easy/medium/hard level each.")
    capabilities: list[str] = Field(default_factory=list)
    # bookkeeping
    provenance: Provenance
    quality: dict[str, Any] = Field(default_factory=dict, description="Scores and verdicts of each filter stage.")

    def public(self) -> dict[str, Any]:
        """What an agent under test may see: never gold answers, steps or criteria."""
        return {
            "id": self.id,
            "kind": self.kind,
            "type": self.type,
            "instruction": self.instruction,
            "start_url": self.start_url,
            "allowed_domains": self.allowed_domains,
        }
