"""LLM-as-a-judge (Graph2Eval, Appendix A): answer quality for document tasks, success for web trajectories.

:func:`judge_answer` shows the judge the task, the gold answer, optional evidence
passages and the agent's answer, and asks for quality, relevance and completeness in
[0, 1] (the paper's three dimensions). :func:`judge_trajectory` shows it the task
instruction, the agent's actions (canonical forms, errors, URL changes) and the final
page (URL and truncated visible text), and asks whether the task succeeded and how
far it got — the paper's LLM evaluator for the web Success Rate. The trajectory judge
never sees gold steps, a gold answer or success criteria: it judges what an outside
observer could see, so it is an independent check on the machine-checked criteria.

Prompts are Jinja2 templates, ``prompts/templates/judge_answer.j2`` and ``judge_trajectory.j2``
(rendered by :func:`taskloom.tools.llm.templates.render_prompt`).

Choices where the paper is open
-------------------------------
* Scores a hair outside [0, 1] (within :data:`SCORE_TOLERANCE`, e.g. 1.02) are
  clamped; anything further out (a judge answering on a 1–5 or 0–10 scale) is
  invalid, never rescaled, because "1" would be ambiguous. An invalid or unparsable
  reply makes the LLM client ask again; when its retries run out the judge raises
  :class:`~taskloom.tools.llm.client.LLMError` — a judgement is never a silent 0.
* The judge is called at temperature 0.
* The trajectory prompt shows at most ``max_actions`` actions (the first third and
  the last two thirds of that budget, with the number omitted in between), each
  canonical form and error cut at 300 characters, and the first
  ``max_page_chars`` characters of the final page text.
* ``success`` and ``progress`` are taken as the judge gives them; they are not forced
  to agree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import AliasChoices, BaseModel, Field, field_validator

from ..environment.trajectory import ActionRecord
from ..errors import InputError
from ..llm.client import LLM, LLMError
from ..llm.templates import render_prompt
from ..tasks.model import Task

__all__ = [
    "SCORE_TOLERANCE",
    "AnswerJudgement",
    "TrajectoryJudgement",
    "render_judge_prompt",
    "answer_judge_messages",
    "trajectory_judge_messages",
    "judge_answer",
    "judge_trajectory",
]

#: How far outside [0, 1] a judge's score may stray and still be clamped rather than rejected.
SCORE_TOLERANCE = 0.05

#: The judgement a judge call returns.
JudgementT = TypeVar("JudgementT", bound=BaseModel)

_FIELD_CHARS = 300
_EVIDENCE_CHARS = 1500
_MAX_EVIDENCE = 10


def _clamp_score(value: Any) -> Any:
    """Clamp a score within :data:`SCORE_TOLERANCE` of [0, 1]; leave anything else for the range check to reject."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return value
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return value
    if -SCORE_TOLERANCE <= value < 0.0:
        return 0.0
    if 1.0 < value <= 1.0 + SCORE_TOLERANCE:
        return 1.0
    return value


class AnswerJudgement(BaseModel):
    """A judge's verdict on one answer: three scores in [0, 1] and why."""

    quality: float = Field(
        ge=0.0, le=1.0, validation_alias=AliasChoices("quality", "answer_quality"),
        description="Overall quality and accuracy of the answer compared to the gold standard.",
    )
    relevance: float = Field(ge=0.0, le=1.0, description="How well the answer addresses the task.")
    completeness: float = Field(ge=0.0, le=1.0, description="How much of the gold standard answer it contains.")
    rationale: str = Field("", description="One or two sentences explaining the scores.")

    _clamp = field_validator("quality", "relevance", "completeness", mode="before")(_clamp_score)

    @property
    def overall(self) -> float:
        """The mean of the three scores (the paper's aggregated judgement)."""
        return (self.quality + self.relevance + self.completeness) / 3.0

    def scores(self) -> dict[str, float]:
        """Named scores for an episode result: judge_quality, judge_relevance, judge_completeness, judge_overall."""
        return {
            "judge_quality": self.quality,
            "judge_relevance": self.relevance,
            "judge_completeness": self.completeness,
            "judge_overall": self.overall,
        }


class TrajectoryJudgement(BaseModel):
    """A judge's verdict on one web episode: did it succeed, how far it got, and why."""

    success: bool = Field(description="True only if the task, as instructed, is complete.")
    progress: float = Field(ge=0.0, le=1.0, description="Fraction of the task accomplished.")
    rationale: str = Field("", description="One or two sentences explaining the verdict.")

    _clamp = field_validator("progress", mode="before")(_clamp_score)

    def scores(self) -> dict[str, float]:
        """Named scores for an episode result: judge_success (1.0 or 0.0) and judge_progress."""
        return {"judge_success": 1.0 if self.success else 0.0, "judge_progress": self.progress}


# --- prompts ------------------------------------------------------------------------------------


def render_judge_prompt(name: str, **variables: Any) -> str:
    """Render the judge template ``prompts/templates/<name>``, stripped; an undefined variable raises ``jinja2.UndefinedError``."""
    return render_prompt(name, **variables).strip()


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def answer_judge_messages(task: Task, answer: str | None, evidence: Sequence[str] | None = None) -> list[dict[str, str]]:
    """The chat messages :func:`judge_answer` sends.

    Raises
    ------
    InputError
        The task has no gold answer.
    """
    if task.gold_answer is None:
        raise InputError(f"Task {task.id!r} has no gold answer, so an answer judge has nothing to compare with; judge web tasks with judge_trajectory.")
    passages = [_cut(p, _EVIDENCE_CHARS) for p in (evidence or []) if p.strip()][:_MAX_EVIDENCE]
    prompt = render_judge_prompt(
        "judge_answer.j2",
        instruction=task.instruction,
        gold_answer=task.gold_answer,
        evidence=passages,
        answer=answer.strip() if answer and answer.strip() else "(the agent gave no answer)",
    )
    return [{"role": "user", "content": prompt}]


def _action_rows(actions: Sequence[ActionRecord], max_actions: int) -> tuple[list[dict[str, Any]], int]:
    """Rows for the template (at most ``max_actions``: head and tail) and how many were omitted."""
    chosen = list(actions)
    omitted = 0
    head = max_actions // 3
    if len(chosen) > max_actions:
        omitted = len(chosen) - max_actions
        chosen = chosen[:head] + chosen[len(chosen) - (max_actions - head):]
    rows = []
    for i, a in enumerate(chosen):
        moved = a.url_after if a.url_after and a.url_after != a.url_before else None
        rows.append({
            "index": a.index + 1,
            "canonical": _cut(a.canonical, _FIELD_CHARS),
            "error": _cut(a.error, _FIELD_CHARS) if a.error else None,
            "url": moved,
            "gap": omitted if omitted and i == head else 0,
        })
    return rows, omitted


_BLANKS = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")


def trajectory_judge_messages(
    task: Task,
    actions: Sequence[ActionRecord],
    final_url: str | None,
    final_text: str,
    *,
    answer: str | None = None,
    max_actions: int = 60,
    max_page_chars: int = 4000,
) -> list[dict[str, str]]:
    """The chat messages :func:`judge_trajectory` sends: only what :meth:`Task.public` and the episode show."""
    if max_actions < 3 or max_page_chars < 1:
        raise InputError(f"max_actions must be ≥ 3 and max_page_chars ≥ 1, got {max_actions} and {max_page_chars}")
    public = task.public()
    rows, omitted = _action_rows(actions, max_actions)
    text = _BLANKS.sub("\n\n", final_text.strip())
    shown = text[:max_page_chars].rstrip()
    prompt = render_judge_prompt(
        "judge_trajectory.j2",
        instruction=public["instruction"],
        start_url=public["start_url"],
        action_count=len(actions),
        error_count=sum(1 for a in actions if a.error),
        answer=answer,
        actions=rows,
        omitted=omitted,
        final_url=final_url,
        final_text=shown or "(the page shows no text)",
        truncated=len(shown) < len(text),
        shown_chars=len(shown),
        total_chars=len(text),
    )
    return [{"role": "user", "content": prompt}]


# --- judges ----------------------------------------------------------------------------------------


async def _ask(llm: LLM, messages: list[dict[str, Any]], schema: type[JudgementT], tag: str, what: str) -> JudgementT:
    try:
        completion = await llm.complete(messages, schema=schema, temperature=0.0, tag=tag)
    except LLMError as exc:
        raise LLMError(
            f"The judge gave no usable {schema.__name__} when {what}: {exc}. "
            "Use a judge model that follows JSON instructions, or raise its retries."
        ) from exc
    return completion.parsed


async def judge_answer(
    llm: LLM, task: Task, answer: str | None, evidence: Sequence[str] | None = None, *, tag: str = "judge_answer"
) -> AnswerJudgement:
    """Ask ``llm`` to rate ``answer`` against the task's gold answer (and ``evidence`` passages, when given).

    Raises
    ------
    InputError
        The task has no gold answer.
    LLMError
        The judge's replies did not parse as an :class:`AnswerJudgement` (after the client's retries).
    LLMUnavailable
        No LLM is configured.
    """
    messages = answer_judge_messages(task, answer, evidence)
    return await _ask(llm, messages, AnswerJudgement, tag, f"judging the answer to task {task.id!r}")


async def judge_trajectory(
    llm: LLM,
    task: Task,
    actions: Sequence[ActionRecord],
    final_url: str | None,
    final_text: str,
    *,
    answer: str | None = None,
    max_actions: int = 60,
    max_page_chars: int = 4000,
    tag: str = "judge_trajectory",
) -> TrajectoryJudgement:
    """Ask ``llm`` whether the episode completed the task, from its actions and final page only (no gold data).

    Raises
    ------
    LLMError
        The judge's replies did not parse as a :class:`TrajectoryJudgement` (after the client's retries).
    LLMUnavailable
        No LLM is configured.
    """
    messages = trajectory_judge_messages(
        task, actions, final_url, final_text, answer=answer, max_actions=max_actions, max_page_chars=max_page_chars
    )
    return await _ask(llm, messages, TrajectoryJudgement, tag, f"judging the trajectory of task {task.id!r}")
