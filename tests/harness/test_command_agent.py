"""CommandAgent: an external MCP agent as a subprocess — the bundled minimal agent solving tasks on the example site
in a real Chromium (over the harness-served HTTP endpoint and over the stdio bridge), how the instruction and the MCP
config reach the process, the time limit, cancellation and exit codes (checked on real processes through /proc:
nothing is left running). Agents run in the default sandbox, so their scripts and outputs live in ``agent_dir`` and
they run ``agent_python`` (see conftest)."""

from __future__ import annotations

import json
import re
import secrets
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from taskloom.harness.agents.base import Job
from taskloom.harness.agents.command import AgentProcessError, AgentTimeout, CommandAgent
from taskloom.tools.environment.trajectory import Trajectory, load_trajectory
from taskloom.tools.errors import InputError
from taskloom.tools.security.sandbox import bwrap_problem

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import marked  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = ROOT / "examples" / "agents" / "minimal_mcp_agent.py"
CHROMIUM = Path("/usr/bin/chromium")
INSTRUCTION = 'Open “Genres” — {not a field} $HOME; echo "hi" && exit 7'  # no shell, no formatting: arrives verbatim

PROBE = """\
import json, os, sys
record = {
    "argv": sys.argv[2:],
    "env_instruction": os.environ.get("TASKLOOM_INSTRUCTION"),
    "stdin": sys.stdin.read(),
    "config_path": os.environ.get("TASKLOOM_MCP_CONFIG"),
    "task_id": os.environ.get("TASKLOOM_TASK_ID"),
    "leaked": sorted(k for k in os.environ if k.startswith("TASKLOOM_") and k not in ("TASKLOOM_MCP_CONFIG", "TASKLOOM_TASK_ID", "TASKLOOM_INSTRUCTION")),
    "config": json.load(open(os.environ["TASKLOOM_MCP_CONFIG"])),
}
print(json.dumps(record), flush=True)  # stdout: the agent.stdout.log the harness writes (the sandbox may give no shared folder)
"""

HANG = """\
import json, os, subprocess, sys, time
marker = sys.argv[2]  # in every command line, so the test finds these processes from outside any PID namespace
same = subprocess.Popen(["sleep", marker])  # in the agent's process group
own = subprocess.Popen(["sleep", marker], start_new_session=True)  # in a session of its own, as MCP clients start servers
print(json.dumps([os.getpid(), same.pid, own.pid]), flush=True)
time.sleep(300)
"""


#: An agent written for Playwright MCP: no env_* call, ends with its last message (and names the tool it was told of).
PLAYWRIGHT_STYLE = """\
import asyncio, json, os, re, sys
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
entry = json.load(open(os.environ["TASKLOOM_MCP_CONFIG"]))["mcpServers"]["taskloom"]
async def main():
    async with Client(StreamableHttpTransport(entry["url"], headers=entry["headers"])) as client:
        page = (await client.call_tool("browser_snapshot", {})).structured_content["snapshot"]
        ref = re.search(r'link "Genres" \\[ref=(\\w+)\\]', page).group(1)
        await client.call_tool("browser_click", {"target": ref, "element": "Genres"})
    told = "env_answer" in sys.argv[1]
    print("I opened the genres page." + (" I was told of env_answer." if told else "") + "\\n\\nThe answer is: Genres")
asyncio.run(main())
"""


async def _hang(agent: CommandAgent, job: Job, pids_file: Path, marker: str, limit: float | None = None) -> tuple[list[int], bool]:
    """Attempt ``job`` (cancelled after ``limit`` s when given); the marked processes seen while it ran, and whether it was cancelled."""
    seen: list[int] = []
    async with anyio.create_task_group() as group:

        async def look() -> None:
            while not pids_file.is_file() or not pids_file.read_text():
                await anyio.sleep(0.1)
            await anyio.sleep(0.3)
            seen.extend(marked(marker))

        group.start_soon(look)
        error: AgentTimeout | None = None
        try:
            with anyio.move_on_after(limit) as scope:
                await agent.attempt(job, None)
        except AgentTimeout as exc:
            error = exc
        group.cancel_scope.cancel()
    if error is not None:
        raise error
    return seen, scope.cancelled_caught




def _trajectory(job: Job) -> Trajectory:
    files = sorted(job.episodes_dir.glob("*/trajectory.jsonl"))
    assert len(files) == 1, files
    return load_trajectory(files[0])


def _script(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    path.chmod(0o644)
    return shlex.quote(str(path))


@pytest.fixture
def probe_job(process_agents_job: Any, process_agents_web_task: Any) -> Job:
    task = process_agents_web_task("web-probe", INSTRUCTION, r"genres\.html$", ["#nav-genres"])
    job: Job = process_agents_job(task, "probe")
    return job


@pytest.mark.parametrize(
    "mode, words, argv_tail, env_instruction, stdin",
    [
        ("arg", " {instruction}", [INSTRUCTION], None, ""),
        ("arg", "", [INSTRUCTION], None, ""),  # no {instruction} word: appended as the last argument
        ("env", "", [], INSTRUCTION, ""),
        ("stdin", "", [], None, INSTRUCTION),
    ],
    ids=["arg", "arg-appended", "env", "stdin"],
)
@pytest.mark.anyio
async def test_the_instruction_and_the_config_reach_the_process(
    agent_dir: Path, agent_python: str, probe_job: Job, monkeypatch: pytest.MonkeyPatch,
    mode: str, words: str, argv_tail: list[str], env_instruction: str | None, stdin: str,
) -> None:
    monkeypatch.setenv("TASKLOOM_LLM_API_KEY", "sk-never-shown")
    out = probe_job.episodes_dir / "agent.stdout.log"  # the default sandbox may give the agent no folder it shares with the test
    cmd = "{python} " + _script(agent_dir, "probe.py", PROBE) + " - {config} {task_id}" + words
    await CommandAgent("probe", {"cmd": cmd, "input": mode, "python": agent_python}).attempt(probe_job, None)

    seen = json.loads(out.read_text(encoding="utf-8"))
    config_path = seen["config_path"]
    assert seen["argv"] == [config_path, "web-probe", *argv_tail]
    assert seen["env_instruction"] == env_instruction and seen["stdin"] == stdin
    assert seen["task_id"] == "web-probe" and seen["leaked"] == []  # no TASKLOOM_* setting or key reaches the agent
    assert list(seen["config"]["mcpServers"]) == ["taskloom"]  # one server: the episode's, served by the harness
    entry = seen["config"]["mcpServers"]["taskloom"]
    assert entry["type"] == "http" and re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", entry["url"])
    assert re.fullmatch(r"Bearer [\w-]{40,}", entry["headers"]["Authorization"]) and set(entry) == {"type", "url", "headers"}
    text = json.dumps(seen["config"])
    assert "sk-never-shown" not in text and str(probe_job.settings.workspace.resolve()) not in text and "TASKLOOM_WORKSPACE" not in text
    assert not Path(config_path).exists()  # the config lives only as long as the attempt


@pytest.mark.parametrize(
    "options, says",
    [
        ({}, "cmd is empty"),
        ({"cmd": "run {instructions}"}, "unknown placeholder"),
        ({"cmd": "run 'unclosed"}, "quotes"),
        ({"cmd": "run", "input": "file"}, "arg, env or stdin"),
        ({"cmd": "run", "timeout": "soon"}, "not a number"),
        ({"cmd": "run", "timeout": "0"}, "positive"),
        ({"cmd": "run", "transport": "sse"}, "http or stdio"),
        ({"cmd": "run", "answer": "stderr"}, "env, last-message or tool"),
    ],
)
def test_bad_options_are_refused_with_what_to_do(options: dict[str, str], says: str) -> None:
    with pytest.raises(InputError) as caught:
        CommandAgent("bad", options)
    assert says in str(caught.value)


@pytest.mark.anyio
async def test_a_non_zero_exit_raises_with_the_code_and_stderr(probe_job: Job, agent_python: str) -> None:
    cmd = """{python} -c "import sys; print('starting', file=sys.stderr); print('boom: no MCP config', file=sys.stderr); sys.exit(3)" """
    with pytest.raises(AgentProcessError) as caught:
        await CommandAgent("failing", {"cmd": cmd, "python": agent_python}).attempt(probe_job, None)
    first = str(caught.value).splitlines()[0]  # the runner keeps the first line as the episode's reason
    assert "exited with code 3" in first and "starting | boom: no MCP config" in first
    assert (probe_job.episodes_dir / "agent.stderr.log").read_text().splitlines() == ["starting", "boom: no MCP config"]


@pytest.mark.anyio
@pytest.mark.integration
async def test_a_hanging_command_is_killed_at_its_timeout_with_everything_it_started(agent_dir: Path, agent_python: str, probe_job: Job) -> None:
    pids_file, marker = probe_job.episodes_dir / "agent.stdout.log", f"300.{secrets.randbelow(10**9)}"
    cmd = "{python} " + _script(agent_dir, "hang.py", HANG) + f" - {marker}"
    agent = CommandAgent("hanging", {"cmd": cmd, "timeout": "4", "python": agent_python})
    agent.stray_grace_s = 0.5  # the own-session sleep never exits by itself; do not wait the default
    started = anyio.current_time()
    with pytest.raises(AgentTimeout) as caught:
        await _hang(agent, probe_job, pids_file, marker)
    assert "4 s" in str(caught.value)
    assert isinstance(caught.value, TimeoutError)
    assert 4 <= anyio.current_time() - started < 4 + 3 * 2 + 5
    assert len(json.loads(pids_file.read_text())) == 3 and marked(marker) == [] and marked(str(agent_dir)) == []


@pytest.mark.anyio
@pytest.mark.integration
async def test_cancelling_the_attempt_kills_the_command_and_everything_it_started(agent_dir: Path, agent_python: str, probe_job: Job) -> None:
    pids_file, marker = probe_job.episodes_dir / "agent.stdout.log", f"300.{secrets.randbelow(10**9)}"
    cmd = "{python} " + _script(agent_dir, "hang.py", HANG) + f" - {marker}"
    agent = CommandAgent("hanging", {"cmd": cmd, "python": agent_python})
    agent.stray_grace_s = 0.5
    seen, cancelled = await _hang(agent, probe_job, pids_file, marker, limit=4)  # what the runner's time limit does (job.timeout_s is 120)
    assert cancelled
    assert len(seen) >= 3  # the agent and both sleeps were running (and the sandbox wrapper, when there is one)
    assert marked(marker) == [] and marked(str(agent_dir)) == []


@pytest.mark.anyio
@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
@pytest.mark.parametrize(
    ("transport", "sandbox"),
    [("http", "auto"), ("stdio", "auto"), pytest.param("stdio", "bwrap", marks=pytest.mark.skipif(bwrap_problem() is not None, reason="no bubblewrap"))],
)
async def test_the_minimal_agent_solves_a_two_step_navigation(
    process_agents_job: Any, process_agents_web_task: Any, agent_python: str, transport: str, sandbox: str
) -> None:
    """Under bubblewrap the agent sees only the system, its code and its home: the bridge's Taskloom modules are mounted for it."""
    task = process_agents_web_task(
        "web-poetry", "On the page “Harbourside Library”, open “Genres”, then open “Poetry”.", r"search\.html\?genre=poetry$", ["#nav-genres", "#genre-link-poetry"]
    )
    job: Job = process_agents_job(task, "minimal", agent_sandbox=sandbox)
    options = {"cmd": "{python} " + shlex.quote(str(MINIMAL)), "python": agent_python, "transport": transport}
    await CommandAgent("minimal", options).attempt(job, None)

    trajectory = _trajectory(job)
    assert (trajectory.episode.agent, trajectory.episode.task_id) == ("minimal", "web-poetry")
    assert [a.name for a in trajectory.actions] == ["navigate", "click", "click"]
    assert [a.target.name if a.target else None for a in trajectory.actions[1:]] == ["Genres", "Poetry"]
    assert trajectory.closed is not None and trajectory.closed.reason is None and trajectory.closed.success is True
    assert "closed" in (job.episodes_dir / "agent.stderr.log").read_text()


@pytest.mark.anyio
@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
async def test_the_minimal_agent_searches_with_the_instruction_from_stdin(process_agents_job: Any, process_agents_web_task: Any, agent_python: str) -> None:
    task = process_agents_web_task("web-search", "On the page “Harbourside Library”, search for “lantern”.", r"[?&]q=lantern", ["#search-input"])
    job: Job = process_agents_job(task, "minimal-stdin")
    options = {"cmd": "{python} " + shlex.quote(str(MINIMAL)), "input": "stdin", "python": agent_python}
    await CommandAgent("minimal-stdin", options).attempt(job, None)

    trajectory = _trajectory(job)
    assert [a.name for a in trajectory.actions] == ["navigate", "type"]
    assert trajectory.actions[1].args["text"] == "lantern" and trajectory.actions[1].args["submit"] is True
    assert trajectory.closed is not None and trajectory.closed.success is True


@pytest.mark.anyio
@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
async def test_a_playwright_mcp_agent_needs_no_env_tools_and_answers_with_its_last_message(
    agent_dir: Path, process_agents_job: Any, process_agents_web_task: Any, agent_python: str
) -> None:
    task = process_agents_web_task("web-pw-genres", "Open “Genres” and say which page you opened.", r"genres\.html$", ["#nav-genres"])
    job: Job = process_agents_job(task, "pw-style")
    options = {"cmd": "{python} " + _script(agent_dir, "pw.py", PLAYWRIGHT_STYLE), "python": agent_python, "answer": "last-message"}
    await CommandAgent("pw-style", options).attempt(job, None)

    trajectory = _trajectory(job)
    assert [a.name for a in trajectory.actions] == ["navigate", "snapshot", "click"]  # the first browser_* call opened the episode
    assert trajectory.answer == "The answer is: Genres"  # the last paragraph of its stdout
    assert '"source": "last_message"' in next(job.episodes_dir.glob("*/trajectory.jsonl")).read_text()
    assert trajectory.closed is not None and trajectory.closed.success is True
    assert "I opened the genres page.\n" in (job.episodes_dir / "agent.stdout.log").read_text()
    told = CommandAgent("pw-style", {**options, "answer": "tool"}).argv(job, agent_dir / "mcp.json")
    assert told[-1].endswith("call the env_answer tool with it.")
