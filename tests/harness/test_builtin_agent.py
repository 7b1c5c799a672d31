"""BuiltinAgent end to end: the real openai client over HTTP to the TEST DOUBLE, a real MCP client over stdio to
``taskloom serve --profile agent``, a real Chromium on the example site.

The double answers with scripted tool calls (reading refs from the snapshots the agent
sent back), so every request the agent makes, every tool call it runs and the
trajectory the bound server records are the real ones.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "tools" / "llm"))
import openai_double  # noqa: E402
from openai_double import OpenAIDouble, ToolCalls  # noqa: E402

from taskloom.harness.agents.base import Job  # noqa: E402
from taskloom.harness.agents.builtin import BuiltinAgent  # noqa: E402
from taskloom.tools.environment.trajectory import Trajectory, load_trajectory  # noqa: E402
from taskloom.tools.errors import InputError, TaskloomError  # noqa: E402
from taskloom.tools.settings import Settings  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")

GENRES = "On the page “Harbourside Library”, open “Genres”."
OFFERED = {
    "env_start", "env_answer", "env_close", "doc_search", "doc_read", "browser_snapshot", "browser_click", "browser_type",
    "browser_select_option", "browser_hover", "browser_press_key", "browser_navigate", "browser_navigate_back",
    "browser_wait_for", "browser_scroll", "browser_tabs", "browser_handle_dialog", "browser_fill_form", "browser_file_upload",
    "browser_drag", "browser_drop", "browser_console_messages", "browser_network_requests", "browser_network_request",
    "browser_resize", "browser_find", "browser_emulate_media",
}  # the agent profile's tools without browser_take_screenshot and browser_close


@pytest.fixture
def double() -> Any:
    with OpenAIDouble() as d:
        yield d


def _tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def _ref(snapshot_text: str, role: str, name: str) -> str:
    found = re.search(rf'- {role} "{re.escape(name)}" \[ref=(e\d+)\]', snapshot_text)
    assert found, f"no {role} {name!r} in {snapshot_text[:400]}"
    return found[1]


def _job(make_job: Any, make_task: Any, double: OpenAIDouble, max_steps: int = 10, task_id: str = "web-genres") -> tuple[Job, BuiltinAgent]:
    task = make_task(task_id, GENRES, r"genres\.html$", ["#nav-genres"])
    job = make_job(task, "builtin-double", max_steps=max_steps, model="double-model", llm_base_url=double.base_url, llm_model="double-model", llm_temperature=0.3)
    return job, BuiltinAgent("builtin-double", job.settings)


def _trajectory(job: Job) -> Trajectory:
    files = sorted(job.episodes_dir.glob("*/trajectory.jsonl"))
    assert len(files) == 1, files
    return load_trajectory(files[0])


def _servers_for(job: Job) -> list[int]:
    """Live processes whose command line names this job's episode folder (its bound server)."""
    pids = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(job.episodes_dir).encode() in cmdline and state not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids


@pytest.mark.parametrize("missing, needed", [("llm_base_url", "TASKLOOM_LLM_BASE_URL"), ("llm_model", "TASKLOOM_LLM_MODEL")])
def test_refuses_without_an_endpoint_or_model(tmp_path: Path, missing: str, needed: str) -> None:
    values = {"workspace": tmp_path, "llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "m", missing: None}
    with pytest.raises(InputError) as caught:
        BuiltinAgent("b", Settings(**values))  # type: ignore[arg-type]
    assert needed in str(caught.value)


@pytest.mark.anyio
@pytest.mark.integration
async def test_a_server_that_does_not_start_is_reported_with_its_log(double: OpenAIDouble, process_agents_job: Any, process_agents_web_task: Any) -> None:
    job, agent = _job(process_agents_job, process_agents_web_task, double, max_steps=0, task_id="web-nostart")  # the CLI refuses --max-steps 0
    with pytest.raises(TaskloomError) as caught:
        await agent.attempt(job, None)
    message = str(caught.value)
    assert "did not start" in message and "max-steps" in message and str(job.episodes_dir / "server.log") in message
    assert double.chat_requests() == []  # the model is never asked


@pytest.mark.anyio
@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
async def test_scripted_tool_calls_solve_the_task_over_mcp_and_http(double: OpenAIDouble, process_agents_job: Any, process_agents_web_task: Any) -> None:
    replies: list[ToolCalls] = []

    def script(body: dict[str, Any]) -> ToolCalls:
        tools = _tool_messages(body)
        if not tools:
            reply = ToolCalls([("env_start", {})])
        elif len(tools) == 1:
            reply = ToolCalls([("browser_snapshot", {})])
        elif len(tools) == 2:
            reply = ToolCalls([("browser_click", {"element": "Genres link", "ref": _ref(tools[-1]["content"], "link", "Genres")})])
        else:
            reply = ToolCalls([("env_close", {})])
        replies.append(reply)
        return reply

    double.handler = script
    job, agent = _job(process_agents_job, process_agents_web_task, double)
    await agent.attempt(job, None)

    trajectory = _trajectory(job)
    assert (trajectory.episode.agent, trajectory.episode.model, trajectory.episode.task_id) == ("builtin-double", "double-model", "web-genres")
    assert [a.name for a in trajectory.actions] == ["navigate", "snapshot", "click"]
    click = trajectory.actions[2]
    assert click.error is None and click.target is not None and click.target.name == "Genres"
    assert (click.url_after or "").endswith("/genres.html")
    assert trajectory.closed is not None and trajectory.closed.status == "closed" and trajectory.closed.reason is None
    assert trajectory.closed.success is True and [c.ok for c in trajectory.closed.checks or []] == [True]

    requests = double.chat_requests()
    assert len(requests) == 4  # env_start, snapshot, click, close
    first = requests[0]
    assert first["model"] == "double-model" and first["temperature"] == 0.3 and first["tool_choice"] == "auto" and "max_tokens" not in first
    assert {t["function"]["name"] for t in first["tools"]} == OFFERED
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert "env_start" in first["messages"][0]["content"] and "env_close" in first["messages"][0]["content"]
    assert "web-genres" in first["messages"][1]["content"] and GENRES not in json.dumps(first, ensure_ascii=False)
    started = _tool_messages(requests[1])[0]["content"]
    assert f"instruction: {GENRES}" in started and "[ref=e" in started  # the instruction arrives through env_start
    last = _tool_messages(requests[3])
    assert "url: " in last[-1]["content"] and "/genres.html" in last[-1]["content"] and "[ref=" in last[-1]["content"]
    assert all("[ref=" not in m["content"] and "snapshot: (omitted" in m["content"] for m in last[:-1])  # older snapshots elided
    everything = json.dumps(requests, ensure_ascii=False)
    for secret in ("#nav-genres", "gold-node-", r"genres\\.html$", "url_matches", "gold_steps"):
        assert secret not in everything, secret  # no gold step or criterion ever reaches the model

    prompt = [" ".join(str(m.get("content", "")) for m in body["messages"]) for body in requests]
    spent = [openai_double._count_tokens(p) + openai_double._count_tokens(json.dumps(OpenAIDouble._message(r, 0)[0])) for p, r in zip(prompt, replies)]
    assert agent.tokens == sum(spent) > 0


@pytest.mark.anyio
@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
async def test_a_model_that_never_closes_is_stopped_at_the_step_limit(double: OpenAIDouble, process_agents_job: Any, process_agents_web_task: Any) -> None:
    double.handler = lambda body: ToolCalls([("env_start", {})] if not _tool_messages(body) else [("browser_snapshot", {})])
    job, agent = _job(process_agents_job, process_agents_web_task, double, max_steps=4, task_id="web-loop")
    await agent.attempt(job, None)

    assert len(double.chat_requests()) == 4  # env_start + 3 snapshots = 4 steps; the model is not asked again
    trajectory = _trajectory(job)
    assert [a.name for a in trajectory.actions] == ["navigate", "snapshot", "snapshot", "snapshot"]
    assert all(a.error is None for a in trajectory.actions)  # within the server's own limit of 4 actions
    assert trajectory.closed is not None and trajectory.closed.status == "closed"
    assert trajectory.closed.reason is None  # closed by the agent, not by the server shutting down
    assert trajectory.closed.success is False  # still on the home page
    assert _servers_for(job) == []


@pytest.mark.anyio
@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
async def test_tool_errors_go_back_to_the_model_and_a_plain_answer_ends_the_episode(
    double: OpenAIDouble, process_agents_job: Any, process_agents_web_task: Any
) -> None:
    double.replies.extend([ToolCalls([("env_start", {})]), ToolCalls([("browser_click", {"element": "ghost", "ref": "e9999"})]), "I could not find it."])
    job, agent = _job(process_agents_job, process_agents_web_task, double, task_id="web-error")
    await agent.attempt(job, None)

    requests = double.chat_requests()
    assert len(requests) == 3
    error = _tool_messages(requests[2])[-1]["content"]
    assert error.startswith("Error: ") and "Ref e9999 not found in the current page snapshot" in error
    trajectory = _trajectory(job)
    assert [a.name for a in trajectory.actions] == ["navigate", "click"]
    assert trajectory.actions[1].error is not None
    assert trajectory.closed is not None and trajectory.closed.reason is None and trajectory.closed.success is False
    assert trajectory.answer is None  # a web episode: the closing text is not recorded as an answer


@pytest.mark.anyio
@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
async def test_cancelled_attempt_still_closes_the_episode_and_stops_the_server(
    double: OpenAIDouble, process_agents_job: Any, process_agents_web_task: Any
) -> None:
    release = threading.Event()

    def stall(body: dict[str, Any]) -> ToolCalls:
        if not _tool_messages(body):
            return ToolCalls([("env_start", {})])
        release.wait(60)  # the model "thinks" until the test ends
        return ToolCalls([("env_close", {})])

    double.handler = stall
    job, agent = _job(process_agents_job, process_agents_web_task, double, task_id="web-cancel")
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(agent.attempt, job, None)
            with anyio.fail_after(120):
                while len(double.chat_requests()) < 2:
                    await anyio.sleep(0.1)
            cancelled_at = time.monotonic()
            group.cancel_scope.cancel()  # what the runner's time limit does
        elapsed = time.monotonic() - cancelled_at
    finally:
        release.set()

    trajectory = _trajectory(job)
    assert [a.name for a in trajectory.actions] == ["navigate"]
    assert trajectory.closed is not None and trajectory.closed.status == "closed" and trajectory.closed.reason is None
    assert trajectory.closed.success is False and trajectory.closed.checks is not None  # the final state was checked
    assert elapsed < 30
    assert _servers_for(job) == []
