"""No route to gold for an agent under test, none to another agent, and agents die with the run.

* the sandbox's pure parts: which kind is chosen, the argv/user/env it builds, clear refusals;
* throw-away accounts: a fresh uid and 0700 home per agent and episode, everything it left removed after;
* bubblewrap as root and not: read-only system, private /tmp, no host home, no uid 0, no capabilities;
* exports written 0600 in 0700 folders;
* two hostile agents side by side (tests/harness/hostile.py): neither reads the other's home or token, drives
  the other's endpoint, or reads any gold copy (workspace, other workspace, exports, backup; under bubblewrap
  also the repository's published examples), and each one's own answer is the one scored;
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
from taskloom.tools.generate.service import TaskService
from taskloom.tools.security.accounts import AgentAccount, allocate_account, homes_folder, processes_of, release_account, sweep_agent_homes, uid_in_use
from taskloom.tools.security.mounts import bwrap_argv, code_paths, taskloom_code
from taskloom.tools.security.sandbox import agent_launch, bwrap_problem, check_closed_to, choose_sandbox
from taskloom.tools.tasks.harbor import write_harbor_tasks
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Provenance, Task
from taskloom.tools.tasks.store import TaskStore
from taskloom.tools.workspace import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_run import hostile_run  # noqa: E402
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


def test_auto_picks_bubblewrap_whenever_it_works_else_the_user_sandbox_as_root_or_refuses_clearly() -> None:
    assert choose_sandbox("none") == "none"
    if bwrap_problem() is None:  # the only sandbox that hides world-readable files (a checkout's published examples)
        assert choose_sandbox("auto") == "bwrap"
    elif IS_ROOT:
        assert choose_sandbox("auto") == "user"
    else:
        with pytest.raises(InputError, match="install bubblewrap.*agent_sandbox='none'"):
            choose_sandbox("auto")
    if bwrap_problem() is not None:
        with pytest.raises(InputError, match="bubblewrap"):
            choose_sandbox("bwrap")
    if IS_ROOT:
        assert choose_sandbox("user") == "user"
    with pytest.raises(InputError, match="auto, user, bwrap or none"):
        choose_sandbox("chroot")


UIDS = Settings().agent_uids
ROOT_ONLY = pytest.mark.skipif(not IS_ROOT, reason="throw-away uids need root")
BWRAP = pytest.mark.skipif(bwrap_problem() is not None, reason=f"bubblewrap unusable here: {bwrap_problem()}")


@ROOT_ONLY
def test_each_agent_gets_a_fresh_uid_and_a_private_home_and_leaves_nothing_behind() -> None:
    (one, home1), (two, home2) = allocate_account(UIDS), allocate_account(UIDS)
    try:
        assert one.uid != two.uid and all(UIDS[0] <= a.uid < UIDS[1] and a.gid == a.uid for a in (one, two))
        for account, home in ((one, home1), (two, home2)):
            info = home.stat()
            assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (account.uid, account.uid, 0o700)
            assert home.name == f"taskloom-agent-{os.getpid()}-{account.uid}" and uid_in_use(account.uid) is False
        folder = home1.parent.stat()  # both homes in one folder the agents can enter but not list
        assert home2.parent == home1.parent and (folder.st_uid, folder.st_mode & 0o777) == (0, 0o711)
        as_one = {"user": one.uid, "group": one.gid, "extra_groups": [], "capture_output": True, "text": True, "timeout": 30}
        listing = subprocess.run(["ls", str(home1.parent)], **as_one)  # type: ignore[call-overload]
        assert listing.returncode != 0 and "Permission denied" in listing.stderr and home2.name not in listing.stdout
        assert subprocess.run(["ls", "-a", str(home1)], **as_one).returncode == 0  # type: ignore[call-overload]  # its own home, by path
        # what an agent leaves: a file in its home, one in the shared /tmp, a process still running as it
        (home1 / "notes").write_text("x")
        scratch = Path("/tmp") / f"left-by-agent-{secrets.token_hex(4)}"
        scratch.write_text("x")
        os.chown(scratch, one.uid, one.gid)
        sleeper = subprocess.Popen(["sleep", "300"], user=one.uid, group=one.gid, extra_groups=[])
        assert processes_of(one.uid) == [sleeper.pid]
        removed = release_account(one, home1)
        assert sleeper.wait(timeout=10) == -signal.SIGKILL
        assert set(removed) == {home1, scratch} and not home1.exists() and not scratch.exists() and home2.exists()
    finally:
        release_account(one, home1)
        release_account(two, home2)


@ROOT_ONLY
def test_homes_of_a_killed_harness_are_swept_with_what_their_accounts_left() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    uid = UIDS[0] + secrets.randbelow(UIDS[1] - UIDS[0])
    base = Path(tempfile.gettempdir()).resolve()
    home, scratch = base / f"taskloom-agent-{dead.pid}-{uid}", Path("/tmp") / f"left-by-agent-{secrets.token_hex(4)}"
    home.mkdir(mode=0o700)
    scratch.write_text("x")
    for path in (home, scratch):
        os.chown(path, uid, uid)
    alive_home = base / f"taskloom-agent-{os.getpid()}-{uid + 1}"  # this process is alive: kept
    alive_home.mkdir(mode=0o700)
    os.chown(alive_home, uid + 1, uid + 1)
    try:
        assert sweep_agent_homes(base, UIDS) == [home]
        assert not home.exists() and not scratch.exists() and alive_home.exists()
    finally:
        shutil.rmtree(alive_home, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
        scratch.unlink(missing_ok=True)


def test_launches_hide_the_workspace_and_drop_privileges(tmp_path: Path) -> None:
    home, ws, episodes = tmp_path / "home", tmp_path / "ws", tmp_path / "ws" / "runs" / "e"
    account = AgentAccount(name="taskloom-agent-1600000007", uid=1600000007, gid=1600000007)
    user = agent_launch("user", ["agent", "--x"], {"PATH": "/usr/bin"}, home, [ws, episodes], account)
    assert (user.argv, user.user, user.group, user.extra_groups, user.cwd) == (["agent", "--x"], 1600000007, 1600000007, [], home)
    assert user.env["HOME"] == user.env["PWD"] == user.env["TMPDIR"] == str(home) and user.env["USER"] == account.name
    namespaced = agent_launch("user", ["agent"], {}, home, [ws], account, pid_namespace=True)
    assert namespaced.user is None and namespaced.argv[-2:] == ["--", "agent"]  # unshare (as root) then setpriv drops to the account
    for flag in ("--pid", "--kill-child", "--mount-proc", "--reuid=1600000007", "--regid=1600000007", "--clear-groups", "--no-new-privs", "--pdeathsig=KILL"):
        assert flag in namespaced.argv
    for who in (None, account):
        boxed = agent_launch("bwrap", ["agent"], {}, home, [ws, episodes, ws], who, code=[tmp_path / "venv"])
        argv = boxed.argv
        assert argv[-1] == "agent" and boxed.user is None and "/" not in [argv[i + 1] for i, w in enumerate(argv) if w in ("--bind", "--ro-bind", "--dev-bind")]
        pairs = {(w, argv[i + 1]) for i, w in enumerate(argv[:-1])}
        assert {("--ro-bind", "/usr"), ("--ro-bind", "/etc"), ("--tmpfs", "/tmp"), ("--bind", str(home)), ("--chdir", str(home)), ("--cap-drop", "ALL")} <= pairs
        assert ("--ro-bind", str(tmp_path / "venv")) in pairs and not any(w == "--tmpfs" and p.startswith(str(tmp_path)) for w, p in pairs)
        for flag in ("--unshare-pid", "--die-with-parent", "--new-session"):
            assert flag in argv
        if who is not None:  # as root: setpriv drops to the throw-away uid and clears every capability
            assert argv[argv.index("--reuid=1600000007") - 1].endswith("setpriv") and "--bounding-set=-all" in argv and "--no-new-privs" in argv
    around = agent_launch("bwrap", ["agent"], {}, home, [ws, episodes], code=[tmp_path]).argv  # a code path holding the workspace
    assert {("--tmpfs", str(ws.resolve())), ("--tmpfs", str(episodes.resolve()))} <= {(w, around[i + 1]) for i, w in enumerate(around[:-1])}


def test_the_code_an_agent_sees_is_its_interpreter_and_taskloom_modules_not_the_checkout() -> None:
    paths = code_paths([sys.executable, str(CHEATER)], dict(os.environ), sys.executable, bridge=True)
    assert CHEATER in paths and any(p.name == "site-packages" for p in paths)
    assert ROOT not in paths and all(not p.is_relative_to(ROOT / "examples") and not p.is_relative_to(ROOT / "tests" / "data") for p in paths)
    assert {p.name for p in taskloom_code()} == {"__init__.py", "harness", "prompts", "resources", "server", "tools"}
    assert not any(p.is_relative_to("/usr") for p in paths)  # the system is mounted whole, read-only


def test_a_run_with_a_command_agent_is_refused_before_it_starts_when_no_sandbox_can_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing", agent_sandbox="bwrap")
    task = Task(id="web-x", kind="web", type="navigate", instruction="Wait.", start_url="http://127.0.0.1:9/", provenance=Provenance(graph_id="g", generator="test"))
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    bwrap_problem.cache_clear()
    try:
        with pytest.raises(InputError, match="bubblewrap .bwrap. is not installed.*install bubblewrap"):
            anyio.run(lambda: Harness(settings, build_server).run([task], ["command:cmd=true"], run_id="refused"))
    finally:
        bwrap_problem.cache_clear()
    assert not (tmp_path / "ws" / "runs" / "refused").exists()


def test_the_agents_environment_names_no_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    base = {"PATH": "/usr/bin", "TASKLOOM_WORKSPACE": str(ws), "TASKLOOM_LLM_API_KEY": "k", "PWD": "/work/main", "DATA": f"{ws}/tasks", "LANG": "C"}
    assert agent_environment(base, ws) == {"PATH": "/usr/bin", "LANG": "C"}


def test_the_workspace_root_is_private(open_parent: Path) -> None:
    root = open_parent / "ws"
    root.mkdir(mode=0o755)
    agent = AgentAccount(name="taskloom-agent-1600000007", uid=1600000007, gid=1600000007)
    with pytest.raises(InputError, match="chmod 700"):  # the user sandbox refuses a workspace its agents could enter
        check_closed_to(agent, root)
    Workspace(root)
    assert root.stat().st_mode & 0o777 == 0o700
    check_closed_to(agent, root)


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


# -- bubblewrap, as root and not ------------------------------------------------------------------------------------

PROBES = """
import json, os, sys
said = {}
def attempt(name, action):
    try:
        action()
        said[name] = "ok"
    except OSError as exc:
        said[name] = type(exc).__name__
attempt("read /etc/shadow", lambda: open("/etc/shadow").read())
attempt("read other workspace", lambda: open(sys.argv[1]).read())
attempt("list host home", lambda: os.listdir(sys.argv[2]))
attempt("write /etc", lambda: open("/etc/taskloom-probe", "w").write("x"))
attempt("write /usr", lambda: open("/usr/taskloom-probe", "w").write("x"))
attempt("write root-owned folder", lambda: open(sys.argv[3] + "/probe", "w").write("x"))
attempt("write home", lambda: open(os.environ["HOME"] + "/probe", "w").write("x"))
attempt("write private /tmp", lambda: open(sys.argv[4], "w").write("x"))
status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
said["uid"], said["CapEff"], said["CapBnd"] = os.getuid(), status["CapEff"].strip(), status["CapBnd"].strip()
said["processes"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(json.dumps(said))
"""


@BWRAP
@pytest.mark.parametrize("harness", ["root", "not root"])
def test_bubblewrap_gives_a_read_only_system_a_private_tmp_no_host_home_no_uid_0_and_no_capabilities(
    open_parent: Path, agent_python: str, harness: str
) -> None:
    """As root bubblewrap drops to a throw-away uid; not as root (played by an unprivileged uid) it runs in a user namespace."""
    if harness == "root" and not IS_ROOT:
        pytest.skip("needs root")
    other = open_parent / "other-ws"
    Workspace(other)  # 0700 and root's (pytest runs as root in CI), holding a gold file
    (other / "tasks" / "t.json").write_text('{"gold_answer": "GOLD"}')
    owned = open_parent / "root-owned"
    owned.mkdir(mode=0o755)
    marker = f"/tmp/taskloom-probe-{secrets.token_hex(4)}"
    uid = UIDS[0] + secrets.randbelow(UIDS[1] - UIDS[0])
    account = AgentAccount(name="probe", uid=uid, gid=uid) if harness == "root" else None
    home = open_parent / "home"
    home.mkdir(mode=0o700)
    runs_as = {"user": uid, "group": uid, "extra_groups": []} if harness == "not root" and IS_ROOT else {}
    if IS_ROOT:
        os.chown(home, uid, uid)
    argv = [*bwrap_argv("bwrap", home, code_paths([agent_python], {}, agent_python), [], account), agent_python, "-c", PROBES]
    done = subprocess.run([*argv, str(other / "tasks" / "t.json"), str(Path.home()), str(owned), marker], capture_output=True, text=True, timeout=60, cwd=home, env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, **runs_as)  # type: ignore[call-overload]
    if done.returncode != 0 and harness == "not root" and "namespace" in done.stderr:
        pytest.skip(f"this kernel gives unprivileged users no namespaces: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    refused = ("read /etc/shadow", "read other workspace", "list host home", "write /etc", "write /usr", "write root-owned folder")
    assert all(said[r] != "ok" for r in refused), said
    assert said["write home"] == said["write private /tmp"] == "ok" and not Path(marker).exists()  # /tmp is the sandbox's own
    assert said["uid"] != 0 and said["CapEff"] == "0000000000000000" and said["CapBnd"] == "0000000000000000"
    assert len(said["processes"]) <= 2  # its own PID namespace: bubblewrap's init and itself
    assert not (owned / "probe").exists() and not Path("/etc/taskloom-probe").exists()


# -- gold copies -----------------------------------------------------------------------------------------------------


def test_exports_are_written_0600_in_0700_folders(tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing")
    task = Task(id="doc-x", kind="document", type="lookup", instruction="Q?", gold_answer="GOLD", provenance=Provenance(graph_id="g", generator="test"))
    TaskStore(Workspace(settings.workspace)).save(task)
    jsonl = tmp_path / "exports" / "new" / "tasks.jsonl"
    TaskService(GraphService(settings)).export(jsonl)
    assert [oct(p.stat().st_mode & 0o777) for p in (jsonl, jsonl.parent, jsonl.parent.parent)] == ["0o600", "0o700", "0o700"]
    document = tmp_path / "guide.md"
    document.write_text("# Guide")
    write_harbor_tasks([task], tmp_path / "harbor", {"g": document})
    folder = tmp_path / "harbor" / "doc-x"
    modes = {str(p.relative_to(folder)): p.stat().st_mode & 0o777 for p in [folder, *folder.rglob("*")]}
    assert modes.pop(".") == modes.pop("tests") == modes.pop("solution") == modes.pop("environment") == 0o700
    assert modes.pop("tests/test.sh") == modes.pop("solution/solve.sh") == 0o700
    assert modes.pop("environment/Dockerfile") == modes.pop("environment/guide.md") == 0o644  # no gold; the image reads them
    assert set(modes.values()) == {0o600}, modes  # instruction, task.toml, the verifier and the gold it reads
    assert (tmp_path / "harbor").stat().st_mode & 0o777 == 0o700


# -- two hostile agents side by side ----------------------------------------------------------------------------------

#: Routes an agent may get through, per sandbox: the user sandbox reads what is world-readable (the repository
#: checkout, and so its published examples) and writes the shared /tmp (what it left there goes with its account);
#: it cannot list the folder of the agent homes. Under bubblewrap only its private /tmp is writable, nothing else readable.
ALLOWED = {
    "user": {"write /tmp", "repository checkout", "published examples", "published examples (listing)"},
    "bwrap": {"write /tmp"},
}
#: What the default sandbox (``auto``, bubblewrap when it works) must keep from an agent, whatever the files' modes.
HIDDEN_BY_DEFAULT = {"published examples", "published examples (listing)", "repository checkout", "other agent homes listed in /tmp"}


@pytest.mark.integration
@pytest.mark.parametrize("sandbox", [SANDBOXES[0], "auto", "none"])
def test_two_hostile_agents_side_by_side_reach_neither_each_other_nor_any_gold(open_parent: Path, agent_python: str, sandbox: str) -> None:
    """``auto`` is the default sandbox: bubblewrap here whenever it works (the explicit ``bwrap`` is the same launch)."""
    kind = choose_sandbox(sandbox)
    run = hostile_run(open_parent, sandbox, agent_python)
    through = {route for route, who in run.routes.items() if any(who.values())}
    print(f"{sandbox} ({kind}): got through {sorted(through)}; answers {run.answers}")
    assert len(run.routes) >= 20 and all(len(who) == 2 for who in run.routes.values()), (run.routes, run.stderr)
    if sandbox == "none":  # the control: unfenced, the same agents steal the token and hijack the peer's episode
        assert {"peer token (its MCP config)", "peer endpoint, stolen token (hijack)", "JSONL export", "backup (cp -a)"} <= through
        assert {"published examples", "other agent homes listed in /tmp"} <= through  # the probes below can fail
        return
    assert through <= ALLOWED[kind], through - ALLOWED[kind]
    if sandbox == "auto" and bwrap_problem() is None:
        assert not through & HIDDEN_BY_DEFAULT, through & HIDDEN_BY_DEFAULT
        assert all("PermissionError" in w or "FileNotFoundError" in w for w in run.said["published examples"].values()), run.said
    assert run.answers == {"alice": "honest answer of alice", "bob": "honest answer of bob"}
    assert run.said["peer endpoint, own token"] == {"alice": "HTTP 401", "bob": "HTTP 401"}  # an endpoint takes its own token only
    assert run.gold not in "".join(run.printed.values()) and run.left_in_host_tmp == []


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
def test_kill_9_of_a_run_takes_its_command_agent_along(open_parent: Path) -> None:
    ws = open_parent / "ws"
    task = Task(id="web-sleep", kind="web", type="navigate", instruction="Wait.", start_url="http://127.0.0.1:9/", provenance=Provenance(graph_id="g", generator="test"))
    TaskStore(Workspace(ws)).save(task)
    marker = f"300.{secrets.randbelow(10**9)}"
    script = f"setsid sleep {marker} & sleep {marker} & wait"  # a detached grandchild too
    agent = f"command:name=sleeper,cmd=sh -c {shlex.quote(script)}"
    env = {**os.environ, "TASKLOOM_WORKSPACE": str(ws), "TASKLOOM_EMBEDDER": "hashing"}
    run = subprocess.Popen(
        [sys.executable, "-m", "taskloom.server.cli", "run", "--agent", agent, "--task", "web-sleep", "--timeout", "120"],
        env=env, cwd=open_parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        def sleepers() -> list[int]:
            return [pid for pid in marked(marker) if Path(f"/proc/{pid}/comm").read_text().strip() == "sleep"]

        deadline = time.monotonic() + 60  # the default sandbox may give the agent a private /tmp: watch for its processes
        while len(sleepers()) < 2 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.1)
        assert len(sleepers()) == 2, f"the agent never started; run exited {run.poll()}: {run.stderr.read().decode() if run.poll() is not None and run.stderr else ''}"
        if IS_ROOT:  # either sandbox as root: one throw-away uid, the agent's alone
            (uid,) = {os.stat(f"/proc/{pid}").st_uid for pid in sleepers()}
            assert UIDS[0] <= uid < UIDS[1]
        os.kill(run.pid, signal.SIGKILL)
        killed = time.monotonic()
        while marked(marker) and time.monotonic() - killed < 3:
            time.sleep(0.05)
        gone_after = time.monotonic() - killed
        assert marked(marker) == [], "the agent (or what it started) outlived the run by more than 3 s"
        print(f"agent and its children gone {gone_after:.2f} s after kill -9 of the run")
        run.wait()
        base = homes_folder()
        left = list(base.glob(f"taskloom-agent-{run.pid}-*"))
        assert len(left) == 1  # the killed harness could not remove the agent's home; the next one does
        assert sweep_agent_homes(base, UIDS) == left and not left[0].exists()
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        if run.stderr:
            run.stderr.close()
