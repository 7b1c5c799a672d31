"""Fixtures for the process agents' tests: the example site, hand-written web tasks on it, and jobs over a fresh workspace."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from taskloom.harness.agents.base import Job
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
            task=task, agent=agent, model=model, episodes_dir=tmp_path / "episodes" / agent, settings=config, max_steps=max_steps, timeout_s=timeout_s
        )

    return make
