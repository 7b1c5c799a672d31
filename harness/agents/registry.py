"""Agents by kind: ``oracle``, ``replay``, ``explorer``, ``builtin`` (LLM over MCP) and ``command`` (external process)."""

from __future__ import annotations

from pathlib import Path

from ...tools.errors import InputError
from ...tools.security.roots import Roots
from ...tools.settings import Settings
from .base import Agent, AgentSpec
from .explorer import ExplorerAgent
from .scripted import OracleAgent, ReplayAgent

__all__ = ["KINDS", "make_agent"]

KINDS = ("oracle", "replay", "explorer", "builtin", "command")


def _float(spec: AgentSpec, key: str, default: float) -> float:
    try:
        return float(spec.options.get(key, default))
    except ValueError:
        raise InputError(f"agent {spec.name}: {key}={spec.options[key]!r} is not a number") from None


def make_agent(spec: AgentSpec, settings: Settings) -> Agent:
    """The agent a spec names; unknown kinds and options are refused with what is accepted."""
    allowed = {"oracle": set(), "replay": {"source"}, "explorer": {"seed", "explore"}, "builtin": {"model", "max_tokens"}, "command": {"cmd", "input", "timeout", "transport", "python"}}
    if spec.kind not in allowed:
        raise InputError(f"unknown agent kind {spec.kind!r}; use one of {', '.join(KINDS)}")
    extra = sorted(set(spec.options) - allowed[spec.kind])
    if extra:
        raise InputError(f"agent {spec.kind} does not take {', '.join(extra)}; it takes {', '.join(sorted(allowed[spec.kind])) or 'no options'}")
    if spec.kind == "oracle":
        return OracleAgent(spec.name)
    if spec.kind == "replay":
        source = spec.options.get("source", "gold")
        if source == "gold":
            return ReplayAgent(spec.name)
        roots = Roots([settings.workspace, *settings.allow_roots, Path.cwd()])
        return ReplayAgent(spec.name, str(roots.readable(source, f"agent {spec.name}: source")), roots)
    if spec.kind == "explorer":
        return ExplorerAgent(spec.name, seed=int(_float(spec, "seed", 0)), explore=_float(spec, "explore", 0.0))
    if spec.kind == "builtin":
        from .builtin import BuiltinAgent

        max_tokens = int(_float(spec, "max_tokens", 0)) or None
        return BuiltinAgent(spec.name, settings, model=spec.options.get("model"), max_tokens=max_tokens)
    from .command import CommandAgent

    return CommandAgent(spec.name, spec.options)
