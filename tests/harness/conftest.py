"""Fixtures for the process agents' tests: the example site, hand-written web tasks on it, and jobs over a fresh workspace."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from taskloom.harness.agents.base import Job
from taskloom.server.app import build_server
from taskloom.tools.environment.site import serve_static
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import GoldStep, Provenance, SuccessCriterion, Task
from taskloom.tools.tasks.store import TaskStore
from taskloom.tools.workspace import Workspace

WebTask = Callable[..., Task]
MakeJob = Callable[..., Job]


@pytest.fixture(scope="module")
def process_agents_site() -> Iterator[str]:
    """Base URL (with a trailing slash) of the bundled example site, served on loopback."""
    with serve_static() as site:
        yield site.url + "/"


@pytest.fixture
def process_agents_web_task(process_agents_site: str) -> WebTask:
    """Builds a web task on the example site: ``(task_id, instruction, url_regex, gold_selectors, start="index.html")``."""

    def make(task_id: str, instruction: str, url_regex: str, gold_selectors: list[str], start: str = "index.html") -> Task:
        return Task(
            id=task_id,
            kind="web",
            type="navigate",
            instruction=instruction,
            start_url=process_agents_site + start,
            allowed_domains=["127.0.0.1"],
            gold_steps=[GoldStep(action="click", selector=s, node_id=f"gold-node-{i}-{task_id}") for i, s in enumerate(gold_selectors)],
            success=[SuccessCriterion(kind="url_matches", value=url_regex)],
            provenance=Provenance(graph_id="hand-written", generator="test"),
        )

    return make


@pytest.fixture
def process_agents_job(tmp_path: Path) -> MakeJob:
    """Saves a task in a fresh workspace and returns a Job for it: ``(task, agent, max_steps=10, timeout_s=120, **settings)``."""

    def make(task: Task, agent: str, max_steps: int = 10, timeout_s: float = 120.0, model: str | None = None, **settings: object) -> Job:
        values: dict[str, object] = {"workspace": tmp_path / "ws", "embedder": "hashing", "record_screenshots": False, **settings}
        config = Settings(**values)  # type: ignore[arg-type]
        TaskStore(Workspace(config.workspace)).save(task)
        return Job(
            task=task, agent=agent, model=model, episodes_dir=tmp_path / "episodes" / agent, settings=config, max_steps=max_steps, timeout_s=timeout_s,
            server_factory=build_server,
        )

    return make


@pytest.fixture
def agent_dir() -> Iterator[Path]:
    """A folder command agents can read and write whichever user they run as (pytest's own tmp folders are 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="taskloom-test-agent-"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _runs_for_agent_user(python: str) -> bool:
    try:
        done = subprocess.run([python, "-c", "import fastmcp"], user="nobody", cwd="/", capture_output=True, timeout=60, check=False)
    except PermissionError:  # a folder on the way (e.g. /root) is closed to it
        return False
    return done.returncode == 0


@pytest.fixture(scope="session")
def agent_python() -> Iterator[str]:
    """A Python with this venv's packages that command agents can run: this one, unless running as root with a Python
    the agent user cannot reach (e.g. pyenv under /root); then a venv over the system Python of the same version whose
    site-packages point at this venv's."""
    if os.geteuid() != 0 or _runs_for_agent_user(sys.executable):
        yield sys.executable
        return
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = next((p for p in (f"/usr/bin/{version}", f"/usr/local/bin/{version}") if os.access(p, os.X_OK)), None)
    if system is None:
        pytest.skip(f"running as root, the agent user cannot run {sys.executable} and there is no system {version}")
    folder = Path(tempfile.mkdtemp(prefix="taskloom-test-python-"))
    folder.chmod(0o755)
    subprocess.run([system, "-m", "venv", "--without-pip", str(folder / "py")], check=True, capture_output=True, timeout=120)
    site = next((folder / "py" / "lib").glob("python*/site-packages"))
    packages = next(p for p in map(Path, sys.path) if p.name == "site-packages" and (p / "fastmcp").is_dir())
    (site / "taskloom-venv.pth").write_text(f"import site; site.addsitedir({str(packages)!r})\n", encoding="utf-8")
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
    python = str(folder / "py" / "bin" / "python")
    if not _runs_for_agent_user(python):
        pytest.skip(f"running as root, the agent user can run neither {sys.executable} nor a venv over {system}")
    yield python
    shutil.rmtree(folder, ignore_errors=True)
