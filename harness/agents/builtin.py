"""``builtin``: an LLM agent that acts on the environment as an external agent would, through a real MCP client over stdio.

It starts ``taskloom serve --profile agent`` bound to the job (:meth:`Job.serve_command`),
lists the server's tools, offers them to an OpenAI-compatible chat model as function
tools, and runs the loop: completion → each tool call executed through MCP → its
result appended as a ``tool`` message → next completion. The model is told only the
server's instructions and the task id (the bound ``env_start`` needs no arguments and
returns the instruction); it never sees gold steps, answers or success criteria.

Choices the method leaves open, made here:

* **Steps.** Every tool call except ``env_close`` counts as a step. After
  ``job.max_steps`` steps the model is not asked again and the agent closes the episode.
* **End.** The episode ends when the model calls ``env_close``, when it answers without
  tool calls (the agent then closes it; in a document episode the text becomes the
  answer if ``env_answer`` was not called), or at the step limit.
* **Results as text.** Observations are rendered as ``url`` / ``title`` lines and the
  snapshot; a snapshot longer than ``max_result_chars`` is cut there with a note, and
  once a newer snapshot arrives the older ones in the history are replaced by a
  one-line note, so the prompt holds the current page only. Tool errors are fed back
  as ``Error: …`` results, never raised. ``browser_take_screenshot`` is not offered:
  the loop is text-only; nor ``browser_close`` (the episode ends with ``env_close``).
* **Always closed.** Whatever ends the attempt (the runner's time limit included), the
  episode is closed with ``env_close`` inside a shielded scope bounded by
  :data:`CLOSE_TIMEOUT_S`, so the server checks the final state; then the server
  process is stopped.
* **Requests.** Deterministic in shape: the model, the whole history, the tools in the
  server's order, ``tool_choice="auto"``, ``temperature`` from the settings and
  ``max_tokens`` only when given. Tokens are summed from ``usage.total_tokens``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import openai
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from mcp.shared.exceptions import MCPError

from ...tools.errors import InputError, TaskloomError
from ...tools.llm.client import LLMError
from ...tools.settings import Settings
from .base import Job
from .calls import structured
from .command import log_tail
from .registry import agent

__all__ = ["BuiltinAgent", "openai_tools", "render_result", "CLOSE_TIMEOUT_S", "HIDDEN_TOOLS"]

CLOSE_TIMEOUT_S = 20.0  # bound on the final env_close after a cancellation
#: Not offered: image results cannot go back in a text-only loop; this agent ends with env_answer and env_close, not browser_close.
HIDDEN_TOOLS = frozenset({"browser_take_screenshot", "browser_close"})
_SNAPSHOT = "\nsnapshot:\n"
_OMITTED = "\nsnapshot: (omitted: a later result shows the page as it is now)"


def openai_tools(tools: list[Any], hidden: frozenset[str] = HIDDEN_TOOLS) -> list[dict[str, Any]]:
    """MCP tools (``mcp.types.Tool``) as OpenAI function tools, in the server's order, without ``hidden`` ones."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        if tool.name in hidden:
            continue
        schema = dict(tool.input_schema or {})
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        out.append({"type": "function", "function": {"name": tool.name, "description": tool.description or "", "parameters": schema}})
    return out


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [cut: {len(text) - limit} more characters not shown]"


def render_result(result: Any, limit: int = 16_000) -> str:
    """A tool result as the text the model reads: ``Error: …``, an observation (fields, then the snapshot), or JSON."""
    texts = [str(getattr(part, "text", "")) for part in result.content or [] if getattr(part, "type", "") == "text"]
    if result.is_error:
        return "Error: " + (" ".join(texts).strip() or "the tool failed without a message")
    data = structured(result)
    if isinstance(data, dict) and "snapshot" in data:
        fields = "\n".join(f"{k}: {v}" for k, v in data.items() if k != "snapshot" and v is not None)
        return fields + _SNAPSHOT + _cut(str(data.get("snapshot") or ""), limit)
    if data not in (None, {}):
        return _cut(json.dumps(data, ensure_ascii=False), limit)
    images = sum(1 for part in result.content or [] if getattr(part, "type", "") == "image")
    return _cut("\n".join(texts), limit) + (f"\n[{images} image(s) not shown]" if images else "") or "(no result)"


@dataclass
class _Episode:
    """What the agent knows about its episode, from the tool results."""

    episode_id: str | None = None
    answered: bool = False
    closed: bool = False


@asynccontextmanager
async def _connected(client: Client[Any], log: Path) -> AsyncIterator[Client[Any]]:
    """``async with client``, whose exit (stopping the server process) completes even when the caller is cancelled.

    A server that does not start is reported with the end of its log (``log``).
    """
    try:
        await client.__aenter__()
    except Exception as exc:
        raise TaskloomError(f"the agent-profile server did not start ({exc}); its log {log} ends: {log_tail(log) or '(empty)'}") from exc
    try:
        yield client
    finally:
        with anyio.CancelScope(shield=True):
            await client.__aexit__(None, None, None)


class BuiltinAgent:
    """An OpenAI-compatible chat model acting through the agent-profile MCP tools (see the module notes)."""

    in_process = False

    def __init__(
        self,
        name: str,
        settings: Settings,
        model: str | None = None,
        max_tokens: int | None = None,
        max_result_chars: int = 16_000,
        call_timeout_s: float = 120.0,
    ) -> None:
        if not settings.llm_base_url:
            raise InputError(
                f"agent {name!r} (builtin) needs a model endpoint: set TASKLOOM_LLM_BASE_URL (an OpenAI-compatible URL such as "
                "http://localhost:8000/v1), TASKLOOM_LLM_MODEL and, if the endpoint needs one, TASKLOOM_LLM_API_KEY"
            )
        if not (model or settings.llm_model):
            raise InputError(f"agent {name!r} (builtin) needs a model name: pass builtin:model=NAME or set TASKLOOM_LLM_MODEL")
        self.name = name
        self.settings = settings
        self.model: str | None = model or settings.llm_model
        self.max_tokens = max_tokens
        self.max_result_chars = max_result_chars
        self.call_timeout_s = call_timeout_s
        self.tokens = 0

    def _openai(self) -> openai.AsyncOpenAI:
        key = self.settings.llm_api_key.get_secret_value() if self.settings.llm_api_key is not None else None
        return openai.AsyncOpenAI(base_url=self.settings.llm_base_url, api_key=key or "none", max_retries=3, timeout=self.call_timeout_s)

    async def attempt(self, job: Job, client: Client[Any] | None) -> None:
        command = job.serve_command()
        job.episodes_dir.mkdir(parents=True, exist_ok=True)
        log = job.episodes_dir / "server.log"
        transport = StdioTransport(command=command[0], args=command[1:], env=job.serve_env(), keep_alive=False, log_file=log)
        episode = _Episode()
        async with self._openai() as llm, _connected(Client(transport, timeout=self.call_timeout_s, init_timeout=self.call_timeout_s), log) as mcp:
            try:
                await self._loop(job, llm, mcp, episode)
            finally:
                if episode.episode_id and not episode.closed:
                    with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT_S):
                        try:
                            await mcp.call_tool("env_close", {}, raise_on_error=False)
                        except (MCPError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                            pass  # the server is gone (the error that ended the loop says why); nothing is left to close

    def _opening(self, job: Job, instructions: str | None) -> list[dict[str, Any]]:
        system = (instructions or "").strip() + (
            "\n\nYou act only through the tools. Call them one step at a time and read each result before the next step. "
            "When the task is done, call env_close."
        )
        user = f"Your task id is {job.task.id}. Begin with env_start (it needs no arguments): it returns the instruction and the first view."
        return [{"role": "system", "content": system.strip()}, {"role": "user", "content": user}]

    async def _complete(self, llm: openai.AsyncOpenAI, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        request: Any = {"model": str(self.model), "messages": messages, "tools": tools, "tool_choice": "auto", "temperature": self.settings.llm_temperature}
        if self.max_tokens:
            request["max_tokens"] = self.max_tokens
        try:
            completion = await llm.chat.completions.create(**request)
        except openai.APIError as exc:
            raise LLMError(f"the model endpoint {self.settings.llm_base_url} failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
        if completion.usage is not None:
            self.tokens += completion.usage.total_tokens
        if not completion.choices:
            raise LLMError(f"the model endpoint {self.settings.llm_base_url} returned no choices")
        return completion.choices[0].message

    async def _loop(self, job: Job, llm: openai.AsyncOpenAI, mcp: Client[Any], episode: _Episode) -> None:
        tools = openai_tools(await mcp.list_tools())
        offered = {t["function"]["name"] for t in tools}
        messages = self._opening(job, mcp.instructions)
        snapshots: list[int] = []  # indices of tool messages that still hold a full snapshot
        steps = 0
        while steps < job.max_steps:
            message = await self._complete(llm, messages, tools)
            calls = list(message.tool_calls or [])
            turn: dict[str, Any] = {"role": "assistant", "content": message.content}
            if calls:
                turn["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}} for c in calls]
            messages.append(turn)
            if not calls:
                await self._finish(mcp, episode, message.content or "")
                return
            for call in calls:
                if steps >= job.max_steps:
                    break
                name = call.function.name
                text = await self._execute(mcp, episode, offered, name, call.function.arguments)
                if name != "env_close":
                    steps += 1
                if _SNAPSHOT in text:
                    for i in snapshots:
                        messages[i]["content"] = messages[i]["content"].split(_SNAPSHOT)[0] + _OMITTED
                    snapshots = [len(messages)]
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
                if episode.closed:
                    return

    async def _execute(self, mcp: Client[Any], episode: _Episode, offered: set[str], name: str, arguments: str | None) -> str:
        """Run one tool call; every problem with it becomes an ``Error: …`` text for the model."""
        if name not in offered:
            return f"Error: there is no tool named {name!r}; use one of: {', '.join(sorted(offered))}"
        try:
            args = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            return f"Error: the arguments of {name} are not valid JSON ({exc.msg}); send a JSON object"
        if not isinstance(args, dict):
            return f"Error: the arguments of {name} must be a JSON object, not {type(args).__name__}"
        result = await mcp.call_tool(name, args, raise_on_error=False)
        if not result.is_error:
            data = structured(result)
            if name == "env_start" and isinstance(data, dict):
                episode.episode_id = str(data.get("episode_id") or "") or None
            elif name == "env_answer":
                episode.answered = True
            elif name == "env_close":
                episode.closed = True
        return render_result(result, self.max_result_chars)

    async def _finish(self, mcp: Client[Any], episode: _Episode, text: str) -> None:
        """The model answered without tool calls: record a document answer if none was given, then close."""
        if episode.episode_id is None:
            return
        if episode.episode_id.startswith("doc-") and not episode.answered and text.strip():
            await mcp.call_tool("env_answer", {"answer": text.strip()}, raise_on_error=False)
            episode.answered = True
        await mcp.call_tool("env_close", {}, raise_on_error=False)
        episode.closed = True


@agent("builtin")
def builtin(name: str, settings: Settings, model: str | None = None, max_tokens: int = 0) -> BuiltinAgent:
    """An OpenAI-compatible chat model acting through the agent-profile MCP tools."""
    return BuiltinAgent(name, settings, model=model, max_tokens=max_tokens or None)
