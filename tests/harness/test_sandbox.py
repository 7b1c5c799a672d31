"""No route to gold for an agent under test, and agents die with the run.

* the sandbox's pure parts: which kind is chosen, the argv/user/env it builds, clear refusals;
* the episode endpoint the harness serves: loopback only, Host/Origin/token checked;
* a cheating command agent (tests/harness/cheater.py) that knows the workspace path and tries every route to the
  task file — env, config, argv, cwd and its parents, the repository, /proc of its parent, resources and
  full-profile tools — finds no gold under each sandbox available here, and its episode still completes;
* kill -9 of a real ``taskloom run`` takes its command agent along within seconds.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from taskloom.harness.agents.base import Job
from taskloom.harness.agents.command import agent_environment
from taskloom.harness.service import Harness
from taskloom.harness.store import RunStore
from taskloom.server.app import build_server
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.errors import InputError
from taskloom.tools.graph.service import GraphService
from taskloom.tools.security.sandbox import AgentAccount, agent_account, agent_launch, bwrap_problem, check_closed_to, choose_sandbox, sweep_agent_homes
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Provenance, Task
from taskloom.tools.tasks.store import TaskStore
from taskloom.tools.workspace import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import marked  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "examples" / "documents" / "field-guide.md"
CHEATER = Path(__file__).with_name("cheater.py")
IS_ROOT = os.geteuid() == 0
SANDBOXES = [
    pytest.param("user", marks=pytest.mark.skipif(not IS_ROOT, reason="the user sandbox needs root")),
    pytest.param("bwrap", marks=pytest.mark.skipif(bwrap_problem() is not None, reason=f"bubblewrap unusable here: {bwrap_problem()}")),
    "none",  # the control: unfenced, the same cheater does find the gold
]


@pytest.fixture
def open_parent() -> Iterator[Path]:
    """A world-searchable folder to hold a workspace, so that only the sandbox (not pytest's 0700 tmp) keeps agents out."""
    folder = Path(tempfile.mkdtemp(prefix="taskloom-test-ws-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)




# -- the pure parts -------------------------------------------------------------------------------------------------


def test_auto_picks_the_user_sandbox_as_root_else_bubblewrap_or_refuses_clearly() -> None:
    assert choose_sandbox("none") == "none"
    if IS_ROOT:
        assert choose_sandbox("auto") == "user" and choose_sandbox("user") == "user"
    elif bwrap_problem() is None:
        assert choose_sandbox("auto") == "bwrap"
    else:
        with pytest.raises(InputError, match="install bubblewrap.*agent_sandbox='none'"):
            choose_sandbox("auto")
    if bwrap_problem() is not None:
        with pytest.raises(InputError, match="bubblewrap"):
            choose_sandbox("bwrap")
    with pytest.raises(InputError, match="auto, user, bwrap or none"):
        choose_sandbox("chroot")


def test_the_agent_account_must_exist_and_not_be_root() -> None:
    nobody = agent_account("nobody")
    assert nobody.uid != 0 and nobody.name == "nobody"
    with pytest.raises(InputError, match="does not exist.*TASKLOOM_AGENT_USER"):
        agent_account("no-such-user-" + secrets.token_hex(3))
    with pytest.raises(InputError, match="is root"):
        agent_account("root")


def test_launches_hide_the_workspace_and_drop_privileges(tmp_path: Path) -> None:
    home, ws, episodes = tmp_path / "home", tmp_path / "ws", tmp_path / "ws" / "runs" / "e"
    account = AgentAccount(name="nobody", uid=65534, gid=65534)
    user = agent_launch("user", ["agent", "--x"], {"PATH": "/usr/bin"}, home, [ws, episodes], account)
    assert (user.argv, user.user, user.group, user.extra_groups, user.cwd) == (["agent", "--x"], 65534, 65534, [], home)
    assert user.env["HOME"] == user.env["PWD"] == user.env["TMPDIR"] == str(home) and user.env["USER"] == "nobody"
    namespaced = agent_launch("user", ["agent"], {}, home, [ws], account, pid_namespace=True)
    assert namespaced.user is None and namespaced.argv[-2:] == ["--", "agent"]  # unshare (as root) then setpriv drops to the account
    for flag in ("--pid", "--kill-child", "--mount-proc", "--reuid=65534", "--regid=65534", "--clear-groups", "--no-new-privs", "--pdeathsig=KILL"):
        assert flag in namespaced.argv
    boxed = agent_launch("bwrap", ["agent"], {}, home, [ws, episodes, ws])
    assert boxed.argv[-2:] == ["--", "agent"] and boxed.user is None
    tmpfs = [boxed.argv[i + 1] for i, word in enumerate(boxed.argv) if word == "--tmpfs"]
    assert tmpfs == [str(ws.resolve()), str(episodes.resolve())]
    for flag in ("--unshare-pid", "--die-with-parent", "--new-session"):
        assert flag in boxed.argv
    assert boxed.argv[boxed.argv.index("--chdir") + 1] == str(home)


def test_a_run_with_a_command_agent_is_refused_before_it_starts_when_no_sandbox_can_work(tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing", agent_sandbox="user", agent_user="no-such-user-" + secrets.token_hex(3))
    task = Task(id="web-x", kind="web", type="navigate", instruction="Wait.", start_url="http://127.0.0.1:9/", provenance=Provenance(graph_id="g", generator="test"))
    expected = "does not exist" if IS_ROOT else "needs the harness to run as root"
    with pytest.raises(InputError, match=expected):
        anyio.run(lambda: Harness(settings, build_server).run([task], ["command:cmd=true"], run_id="refused"))
    assert not (tmp_path / "ws" / "runs" / "refused").exists()


def test_the_agents_environment_names_no_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    base = {"PATH": "/usr/bin", "TASKLOOM_WORKSPACE": str(ws), "TASKLOOM_LLM_API_KEY": "k", "PWD": "/work/main", "DATA": f"{ws}/tasks", "LANG": "C"}
    assert agent_environment(base, ws) == {"PATH": "/usr/bin", "LANG": "C"}


def test_the_workspace_root_is_private(open_parent: Path) -> None:
    root = open_parent / "ws"
    root.mkdir(mode=0o755)
    nobody = agent_account("nobody")
    with pytest.raises(InputError, match="chmod 700"):  # the user sandbox refuses a workspace its user could enter
        check_closed_to(nobody, root)
    Workspace(root)
    assert root.stat().st_mode & 0o777 == 0o700
    check_closed_to(nobody, root)


# -- the endpoint -----------------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_episode_endpoint_wants_its_token_and_a_loopback_host(process_agents_job: object, process_agents_web_task: object) -> None:
    task = process_agents_web_task("web-endpoint", "Open “Genres”.", r"genres", ["#nav-genres"])  # type: ignore[operator]
    job: Job = process_agents_job(task, "endpoint")  # type: ignore[operator]
    async with job.serve_http() as endpoint:
        assert endpoint.url.startswith("http://127.0.0.1:") and endpoint.url.endswith("/mcp")
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        good = {**endpoint.headers(), "Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient(timeout=10) as http:
            statuses = {
                "no token": (await http.post(endpoint.url, json=body, headers={"Accept": good["Accept"]})).status_code,
                "wrong token": (await http.post(endpoint.url, json=body, headers={**good, "Authorization": "Bearer nope-nope-nope"})).status_code,
                "evil host": (await http.post(endpoint.url, json=body, headers={**good, "Host": "evil.example"})).status_code,
                "evil origin": (await http.post(endpoint.url, json=body, headers={**good, "Origin": "http://evil.example"})).status_code,
                "token": (await http.post(endpoint.url, json=body, headers=good)).status_code,
            }
    assert statuses == {"no token": 401, "wrong token": 401, "evil host": 403, "evil origin": 403, "token": statuses["token"]}
    assert statuses["token"] not in (401, 403)
    with pytest.raises(httpx.ConnectError):  # stopped with the context
        httpx.post(endpoint.url, json=body, headers=good, timeout=5)


# -- the cheating agent ---------------------------------------------------------------------------------------------


def _document_task(settings: Settings, gold: str) -> Task:
    graph_id = GraphService(settings).ingest_document(GUIDE).graph_id
    task = Task(
        id="doc-cheat",
        kind="document",
        type="lookup",
        instruction="According to the field guide, what is the secret code of the ranger station?",
        gold_answer=gold,
        evidence=["n-secret-evidence"],
        provenance=Provenance(graph_id=graph_id, generator="test"),
    )
    TaskStore(Workspace(settings.workspace)).save(task)
    return task


@pytest.mark.integration
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_cheating_agent_finds_no_gold_and_its_episode_still_completes(open_parent: Path, agent_dir: Path, agent_python: str, sandbox: str) -> None:
    ws = open_parent / "ws"
    settings = Settings(workspace=ws, embedder="hashing", allow_roots=[ROOT / "examples"], agent_sandbox=sandbox)  # type: ignore[arg-type]
    gold = f"GOLD-{secrets.token_hex(8)}"  # in the task file only: not in the document, not in the instruction
    task = _document_task(settings, gold)
    assert gold in (ws / "tasks" / "doc-cheat.json").read_text()

    told = agent_dir / "workspace.txt"  # the test's side channel: the cheater knows the real path (worst case)
    told.write_text(str(ws), encoding="utf-8")
    told.chmod(0o644)
    cmd = f"{{python}} {shlex.quote(str(CHEATER))} {shlex.quote(str(told))}"
    agent = f"command:name=cheater,python={agent_python},cmd={cmd}"
    report = anyio.run(lambda: Harness(settings, build_server).run([task], [agent], run_id="cheat", timeout_s=90))
    assert report is not None

    result = next(iter(RunStore(Workspace(ws), "cheat").results()))
    episode = next(ws.glob("runs/*/episodes/**/agent.stdout.log"))
    printed = episode.read_text(encoding="utf-8")
    record = json.loads(printed.strip().splitlines()[-1])

    # it really tried: the known path, the usual places, /proc of its parent, the full-profile tools and resources
    tried = {t["path"]: t for t in record["tried"]}
    known_file = str(ws / "tasks" / "doc-cheat.json")
    assert known_file in tried
    print(f"{sandbox}: {len(tried)} paths tried, {len(record['opened'])} opened; the task file: {tried[known_file].get('error', 'READ')}")
    if sandbox == "none":  # the control: without a fence the file is simply read
        assert "read" in tried[known_file] and gold in printed
        return
    assert "error" in tried[known_file], tried[known_file]
    assert len(tried) >= 20 and any(p.startswith("/proc/") for p in tried)
    assert "/work/main/.taskloom/tasks/doc-cheat.json" in tried
    assert not any(name.startswith(("tasks_", "graph_", "eval_")) for name in record["mcp"]["tools"])
    assert "taskloom://tasks/doc-cheat error" in record["mcp"]
    # nothing it was handed names the workspace, and no TASKLOOM_* setting reached it
    handed = json.dumps(record["handed"])
    assert str(ws) not in handed and str(ws.resolve()) not in handed and "TASKLOOM_WORKSPACE" not in handed
    assert set(record["taskloom_env"]) <= {"TASKLOOM_MCP_CONFIG", "TASKLOOM_TASK_ID"}
    # and nowhere did it see the gold
    assert gold not in printed and "n-secret-evidence" not in printed
    # while its episode went through normally
    path = RunStore.trajectory_in(episode.parent)
    assert path is not None, "no trajectory"
    trajectory = load_trajectory(path)
    assert trajectory.closed is not None and trajectory.answer == "I could not find it"
    assert result.status == "finished" and not result.success


# -- dying with the run ---------------------------------------------------------------------------------------------




@pytest.mark.integration
@pytest.mark.skipif(not IS_ROOT and bwrap_problem() is not None, reason="no sandbox for command agents here (not root, no bubblewrap)")
def test_kill_9_of_a_run_takes_its_command_agent_along(open_parent: Path, agent_dir: Path) -> None:
    ws = open_parent / "ws"
    task = Task(id="web-sleep", kind="web", type="navigate", instruction="Wait.", start_url="http://127.0.0.1:9/", provenance=Provenance(graph_id="g", generator="test"))
    TaskStore(Workspace(ws)).save(task)
    ready, marker = agent_dir / "ready", f"300.{secrets.randbelow(10**9)}"
    script = f"setsid sleep {marker} & sleep {marker} & touch {ready}; wait"  # a detached grandchild too
    agent = f"command:name=sleeper,cmd=sh -c {shlex.quote(script)}"
    env = {**os.environ, "TASKLOOM_WORKSPACE": str(ws), "TASKLOOM_EMBEDDER": "hashing"}
    run = subprocess.Popen(
        [sys.executable, "-m", "taskloom.server.cli", "run", "--agent", agent, "--task", "web-sleep", "--timeout", "120"],
        env=env, cwd=open_parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.1)
        assert ready.exists(), f"the agent never started; run exited {run.poll()}: {run.stderr.read().decode() if run.poll() is not None and run.stderr else ''}"
        time.sleep(0.3)
        sleepers = [pid for pid in marked(marker) if Path(f"/proc/{pid}/comm").read_text().strip() == "sleep"]
        assert len(sleepers) == 2
        if IS_ROOT:  # the user sandbox
            assert {os.stat(f"/proc/{pid}").st_uid for pid in sleepers} == {agent_account("nobody").uid}
        os.kill(run.pid, signal.SIGKILL)
        killed = time.monotonic()
        while marked(marker) and time.monotonic() - killed < 3:
            time.sleep(0.05)
        gone_after = time.monotonic() - killed
        assert marked(marker) == [], "the agent (or what it started) outlived the run by more than 3 s"
        print(f"agent and its children gone {gone_after:.2f} s after kill -9 of the run")
        run.wait()
        base = Path(tempfile.gettempdir()).resolve()
        left = list(base.glob(f"taskloom-agent-{run.pid}-*"))
        assert len(left) == 1  # the killed harness could not remove the agent's home; the next one does
        owners = {os.geteuid(), agent_account("nobody").uid}
        assert sweep_agent_homes(base, owners) == left and not left[0].exists()
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        if run.stderr:
            run.stderr.close()
