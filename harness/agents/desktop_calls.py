"""The oracle on desktop tasks: gold steps (see :mod:`taskloom.tools.environment.desktop_gold`) through the agent-profile ``desktop_*`` tools."""

from __future__ import annotations

from typing import Any

from fastmcp import Client
from fastmcp.exceptions import ToolError

from ...tools.environment.desktop_gold import run_gold
from ...tools.errors import InputError
from ...tools.tasks.model import GoldStep
from .calls import structured

__all__ = ["McpDriver", "desktop_gold"]


class McpDriver:
    """Snapshots and actions by ref through an MCP client, on one desktop episode."""

    def __init__(self, client: Client[Any], episode_id: str) -> None:
        self.client, self.episode_id = client, episode_id

    async def _call(self, name: str, **args: Any) -> Any:
        return structured(await self.client.call_tool(name, {"episode_id": self.episode_id, **args}))

    async def snapshot(self) -> str:
        return str((await self._call("desktop_snapshot"))["snapshot"])

    async def click(self, ref: str, double: bool) -> None:
        await self._call("desktop_click_element", target=ref, double=double)

    async def type(self, ref: str, text: str, submit: bool) -> None:
        await self._call("desktop_type", target=ref, text=text, submit=submit)

    async def hotkey(self, keys: list[str]) -> None:
        await self._call("desktop_hotkey", keys=keys)


async def desktop_gold(client: Client[Any], episode_id: str, steps: list[GoldStep]) -> None:
    """Carry out the gold steps; one that fails ends them (the server recorded it, and the final-state check decides)."""
    try:
        await run_gold(McpDriver(client, episode_id), steps)
    except (InputError, ToolError):
        return
