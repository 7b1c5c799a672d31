"""Errors Taskloom raises on purpose: each says what was wrong and what to do.

The server translates every :class:`TaskloomError` into an MCP tool error in one
place; anything else is a bug and is masked.
"""

from __future__ import annotations

__all__ = [
    "TaskloomError",
    "InputError",
    "NotFoundError",
    "DocumentError",
    "EmbedderError",
]


class TaskloomError(Exception):
    """Base class of the errors a user or an agent is meant to read."""


class InputError(TaskloomError):
    """An argument is malformed or out of range."""


class NotFoundError(TaskloomError):
    """A graph, node, task or file that was asked for does not exist."""


class DocumentError(TaskloomError):
    """A document cannot be ingested (not a PDF, encrypted, no text layer, empty…)."""


class EmbedderError(TaskloomError):
    """The embedding model is missing, corrupt or misconfigured."""
