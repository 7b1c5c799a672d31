"""The agent registry: every agent kind is one decorated factory (``@agent("explorer")``).

A factory takes the caller's context by name (``name``: the agent's name in the run,
``settings``) and the user's options as keyword arguments, converted to their
annotated types (``--agent explorer:seed=1,explore=0.4`` calls
``explorer(name="explorer-0.4-1", seed=1, explore=0.4)``). Taskloom's own kinds live in
this package's modules (``oracle``, ``replay``, ``explorer``, ``builtin``, ``command``);
another package adds one through the ``taskloom.agents`` entry point group, or by
being imported before the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ...tools.registry import Registry
from ...tools.settings import Settings
from .base import Agent, AgentSpec

__all__ = ["agents", "agent", "make_agent", "kinds"]

F = TypeVar("F", bound=Callable[..., Agent])

#: Agent factories by kind.
agents: Registry[Agent] = Registry("agent", modules=("taskloom.harness.agents",), label="agent kind", context=("name", "settings"))


def agent(name: str) -> Callable[[F], F]:
    """Register an agent factory under ``name``: ``(name, [settings], **options) -> Agent``."""
    return agents.register(name)


def kinds() -> list[str]:
    """The registered agent kinds."""
    return agents.names()


def make_agent(spec: AgentSpec, settings: Settings) -> Agent:
    """The agent a spec names, tagged with its registry spec; unknown kinds and options are refused with what is accepted."""
    return agents.create(spec.kind, spec.options, context={"name": spec.name, "settings": settings})
