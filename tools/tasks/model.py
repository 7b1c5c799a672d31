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
    "GoldStep",
    "SuccessCriterion",
    "Provenance",
    "Task",
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
    """A machine-checkable condition on the final browser state or the trajectory."""

    kind: Literal["url_matches", "text_present", "text_absent", "element_state", "action_performed"]
    value: str = Field(description="Regex for url_matches; text for text_*; selector for element_state; canonical action for action_performed.")
    state: str | None = Field(None, description="element_state: visible, hidden, checked, unchecked, disabled, enabled, value=<text> or label=<selected option>.")


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
    kind: Literal["document", "web", "composite"]
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
    # composite
    subtasks: list[str] = Field(default_factory=list)
    dag: list[tuple[str, str]] = Field(default_factory=list)
    complexity: dict[str, Any] = Field(default_factory=dict)
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
