"""What evaluation produces: one result per (task, agent) episode, the unit reports aggregate."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["CriterionVerdict", "EpisodeStatus", "EpisodeResult"]

EpisodeStatus = Literal["finished", "failed", "timeout", "crashed"]


class CriterionVerdict(BaseModel):
    """One success criterion as checked on an episode's final state: what was expected beside what was observed."""

    kind: str = Field(description="The criterion's kind: url_matches, page_is, text_present, element_state, clicked, …")
    expected: str = Field(description="What the criterion asks for, in words (e.g. text 'Dream' on the page).")
    observed: str = Field(description="What the checker saw (the final URL, whether the text was found, the element's state, …).")
    ok: bool


class EpisodeResult(BaseModel):
    """How one agent did on one task: outcome, scores, cost."""

    run_id: str | None = None
    task_id: str
    task_kind: Literal["document", "web", "composite", "desktop"]
    task_type: str
    difficulty: str
    level: int | None = Field(None, description="Chained tasks: number of chained subtasks.")
    agent: str
    model: str | None = None
    trajectory: str | None = Field(None, description="Path of the trajectory file.")
    status: EpisodeStatus = Field("finished", description="finished: the agent ended the episode itself; otherwise why it was ended.")
    reason: str | None = Field(None, description="Why the episode failed, timed out or crashed.")
    success: bool = Field(description="Machine-checked success (web: every criterion; document: the answer matched).")
    answer: str | None = None
    scores: dict[str, float] = Field(
        default_factory=dict,
        description="Named scores in [0,1]: exact_match, f1, rouge_l, numeric, judge_quality…, criteria (fraction held), cr, lc.",
    )
    steps: int = Field(0, description="Actions taken.")
    duration_s: float = 0.0
    tokens: int = Field(0, description="LLM tokens the agent used, when known.")
    criteria: list[CriterionVerdict] = Field(default_factory=list, description="Web and composite tasks: every success criterion's verdict at close.")
    final_url: str | None = Field(None, description="Browser episodes: the page the episode ended on.")
