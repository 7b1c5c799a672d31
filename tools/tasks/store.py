"""TaskStore: tasks as JSON files in the workspace's ``tasks/`` folder, written atomically."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import ValidationError

from ..errors import InputError, NotFoundError
from ..security.lock import WorkspaceLock
from ..workspace import Workspace, atomic_write_json
from .model import Task

__all__ = ["TaskStore", "TASK_ID_RE"]

TASK_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


class TaskStore:
    """Save, load, list and delete tasks (one file each: ``tasks/{id}.json``).

    Writes hold the workspace's ``tasks`` lock (waiting up to ``lock_timeout`` seconds),
    so ``taskloom gc`` never mistakes a write in progress for debris.
    """

    def __init__(self, workspace: Workspace, lock_timeout: float = 30.0) -> None:
        self.dir = workspace.tasks
        self.root = workspace.root
        self.lock_timeout = lock_timeout

    def _lock(self, what: str) -> WorkspaceLock:
        return WorkspaceLock(self.root, "tasks", self.lock_timeout, what)

    def path(self, task_id: str) -> Path:
        if not TASK_ID_RE.fullmatch(task_id or ""):
            raise InputError(f"task id {task_id!r} is not valid (letters, digits, '.', '_', '-')")
        return self.dir / f"{task_id}.json"

    def save(self, task: Task) -> Path:
        path = self.path(task.id)
        with self._lock(f"save task {task.id}"):
            atomic_write_json(path, task.model_dump(mode="json"))
        return path

    def load(self, task_id: str) -> Task:
        path = self.path(task_id)
        if not path.is_file():
            raise NotFoundError(f"no task with id {task_id!r}; list them with tasks_list or `taskloom tasks list`")
        try:
            return Task.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, ValidationError) as exc:
            raise InputError(f"task file {path} is unreadable ({str(exc).splitlines()[0]}); regenerate the task") from None

    def list(self, kind: str | None = None, graph_id: str | None = None) -> list[Task]:
        """All tasks, sorted by id, optionally of one kind or from one graph."""
        tasks = [self.load(p.stem) for p in sorted(self.dir.glob("*.json")) if TASK_ID_RE.fullmatch(p.stem)]
        return [t for t in tasks if (kind is None or t.kind == kind) and (graph_id is None or t.provenance.graph_id == graph_id)]

    def delete(self, task_id: str) -> None:
        path = self.path(task_id)
        if not path.is_file():
            raise NotFoundError(f"no task with id {task_id!r}")
        with self._lock(f"delete task {task_id}"):
            path.unlink(missing_ok=True)
