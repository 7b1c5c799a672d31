"""The task model's public view and the task store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskloom.tools.errors import InputError, NotFoundError
from taskloom.tools.tasks import GoldStep, Provenance, SuccessCriterion, Task, TaskStore
from taskloom.tools.workspace import Workspace


def _web_task(task_id: str = "web-1") -> Task:
    return Task(
        id=task_id, kind="web", type="search", instruction="Search the catalogue for 'sea'.",
        start_url="http://127.0.0.1:8000/", allowed_domains=["127.0.0.1"],
        gold_steps=[GoldStep(action="type", selector="#search-input", text="sea-GOLD", submit=True)],
        success=[SuccessCriterion(kind="url_matches", value="q=sea-GOLD")],
        gold_answer="GOLD-ANSWER", provenance=Provenance(graph_id="g", template="search", generator="template"),
    )


def test_public_view_hides_every_gold_field() -> None:
    public = json.dumps(_web_task().public())
    assert "GOLD" not in public
    assert "Search the catalogue" in public and "127.0.0.1" in public


def test_store_round_trip_list_and_delete(tmp_path: Path) -> None:
    store = TaskStore(Workspace(tmp_path))
    for task_id in ("web-2", "web-1"):
        store.save(_web_task(task_id))
    assert [t.id for t in store.list()] == ["web-1", "web-2"]
    assert store.load("web-1") == _web_task("web-1")
    assert store.list(kind="document") == []
    store.delete("web-1")
    with pytest.raises(NotFoundError, match="tasks_list"):
        store.load("web-1")


def test_store_refuses_path_like_ids_and_reports_corrupt_files(tmp_path: Path) -> None:
    store = TaskStore(Workspace(tmp_path))
    with pytest.raises(InputError):
        store.load("../secrets")
    (tmp_path / "tasks" / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match="unreadable"):
        store.load("bad")
