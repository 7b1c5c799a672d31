"""An agent from outside Taskloom, added by this one file: ``--agent parrot:answer=…``."""

from __future__ import annotations

from typing import Any

from fastmcp import Client

from taskloom.harness.agents.base import Job
from taskloom.harness.agents.registry import agent


@agent("parrot")
class Parrot:
    """Searches the document for the instruction, then gives the same answer (``answer=``) to every task."""

    in_process = True
    model: str | None = None
    tokens = 0

    def __init__(self, name: str, answer: str = "I do not know") -> None:
        self.name, self.answer = name, answer

    async def attempt(self, job: Job, client: Client[Any] | None) -> None:
        assert client is not None
        await client.call_tool("env_start", {})
        await client.call_tool("doc_search", {"query": job.task.instruction[:200]})
        await client.call_tool("env_answer", {"answer": self.answer})
        await client.call_tool("env_close", {})
