"""Prompts for solving and judging: a calling model can act as the agent or as the judge, with the judges' own wording."""

from __future__ import annotations

from pathlib import Path

from fastmcp import FastMCP

from ..tools.environment.trajectory import load_trajectory
from ..tools.evaluate.judge import answer_judge_messages, trajectory_judge_messages
from ..tools.security.roots import Roots
from ..tools.tasks.store import TaskStore

__all__ = ["register"]


def register(mcp: FastMCP, tasks: TaskStore, roots: Roots | None = None) -> None:
    """Add ``solve_document_task``, ``judge_answer`` and ``judge_trajectory`` to ``mcp``.

    ``roots``: where ``judge_trajectory`` may read a trajectory file (None: anywhere, for library use).
    """

    @mcp.prompt
    def solve_document_task(task_id: str) -> str:
        """Answer a document task by reading its source with doc_search and doc_read."""
        return (
            f"Call env_start(task_id='{task_id}') to get the question. Find the answer in the document with "
            "doc_search (by meaning) and doc_read (one part and its neighbours); quote numbers and names exactly as "
            "the document gives them. Then call env_answer with a short answer, and env_close."
        )

    @mcp.prompt
    def judge_answer(task_id: str, answer: str) -> str:
        """Judge an answer to a document task against its gold answer (quality, relevance, completeness in [0,1])."""
        return answer_judge_messages(tasks.load(task_id), answer)[0]["content"]

    @mcp.prompt
    def judge_trajectory(task_id: str, trajectory_path: str) -> str:
        """Judge whether a recorded episode completed its web task, from its actions and final page (no gold shown)."""
        path = Path(trajectory_path) if roots is None else roots.readable_file(trajectory_path, "trajectory_path")
        trajectory = load_trajectory(path)
        closed = trajectory.closed
        messages = trajectory_judge_messages(
            tasks.load(task_id), trajectory.actions, closed.final_url if closed else None,
            (closed.final_text if closed else None) or "", answer=trajectory.answer,
        )
        return "\n\n".join(m["content"] for m in messages)
