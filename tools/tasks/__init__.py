"""Tasks: the model every generator, environment, evaluator and harness shares, and its store."""

from .model import Difficulty, GoldStep, Provenance, SuccessCriterion, Task
from .store import TaskStore

__all__ = ["Difficulty", "GoldStep", "Provenance", "SuccessCriterion", "Task", "TaskStore"]
