"""An agent as named on the command line (``kind[:key=value,…]``): light to import, for the run store and the CLI."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ...tools.errors import InputError

__all__ = ["AgentSpec"]


class AgentSpec(BaseModel):
    """An agent as named on the command line: ``kind[:key=value,…]``, e.g. ``explorer:seed=7``."""

    kind: str
    name: str
    options: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> AgentSpec:
        """Parse ``kind[:key=value,…]``; a ``cmd=`` option comes last and takes the rest (commas included)."""
        kind, _, rest = text.partition(":")
        options: dict[str, str] = {}
        head, sep, command = rest.partition("cmd=")  # cmd= takes the rest of the spec, commas and all
        if sep and head and not head.endswith(","):
            head, command = rest, ""
        elif sep:
            options["cmd"] = command.strip()
        for part in filter(None, (p.strip() for p in head.split(","))):
            key, eq, value = part.partition("=")
            if not eq:
                raise InputError(f"agent option {part!r} in {text!r} is not key=value")
            options[key.strip()] = value.strip()
        name = options.pop("name", None) or (kind if not options or "cmd" in options else f"{kind}-" + "-".join(f"{v}" for _, v in sorted(options.items())))
        return cls(kind=kind.strip(), name=name, options=options)
