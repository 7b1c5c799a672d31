"""Prompts for task work: authoring tasks through tasks_draft / tasks_submit."""

from __future__ import annotations

from fastmcp import FastMCP

__all__ = ["register"]


def register(mcp: FastMCP) -> None:
    """Add the task prompts to ``mcp``."""

    @mcp.prompt
    def generate_tasks(graph_id: str, count: int = 5) -> str:
        """Write document tasks yourself from a knowledge graph, checked by the server."""
        return (
            f"Write {count} document-comprehension tasks from graph {graph_id}. For each one:\n"
            f"1. Call tasks_draft(graph_id='{graph_id}', seed=<a new number each time>) to get a sampled subgraph, "
            "the template to follow and the submission schema.\n"
            "2. Write one question that the nodes alone answer, and its gold answer copied or computed from their text.\n"
            "3. Call tasks_submit with the draft's graph_id and template_id, your question, answer, and the ids of the "
            "evidence nodes. If it is refused, read the problems, fix the task and submit again.\n"
            "Without an LLM of your own, tasks_generate makes template tasks instead."
        )

    @mcp.prompt
    def solve_web_task(task_id: str) -> str:
        """Attempt a web task in the browser environment."""
        return (
            f"Call env_start(task_id='{task_id}') to get the instruction and the first page. Act with browser_* tools, "
            "referring to elements by the [ref=...] values of the latest snapshot, and take a new browser_snapshot "
            "after the page changes. When the task is done, call env_answer if it asks for an answer, then env_close."
        )
