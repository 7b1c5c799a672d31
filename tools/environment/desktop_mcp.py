"""The desktop environment as MCP tools: a thin layer over :class:`DesktopEpisodes`.

Registered as ``click``, ``write``… on a sub-server that the server mounts under the
``desktop`` namespace, so agents see ``desktop_click``, ``desktop_write``… (or pass
``prefix="desktop_"`` to register on a server directly). Every tool takes the episode id
first. A refused action is recorded with its reason and raised, so the agent gets a
tool error saying why — the same convention as the browser tools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import anyio.to_thread
from fastmcp import FastMCP
from fastmcp.utilities.types import Image
from pydantic import BaseModel, Field

from ..errors import InputError
from .desktop import DESKTOP_ACTIONS, MAX_WAIT, DesktopEnv, DesktopEpisodes
from .desktop_refs import REF_ACTIONS, AppDesktopEnv
from .trajectory import ActionRecord

__all__ = ["register", "DesktopActionResult"]

EpisodeId = Annotated[str, Field(description="Id of a running desktop episode.")]
X = Annotated[int, Field(description="Screen x in pixels, 0 at the left edge (the screen is 1280 wide unless told otherwise).")]
Y = Annotated[int, Field(description="Screen y in pixels, 0 at the top edge (the screen is 800 high unless told otherwise).")]
Button = Annotated[str, Field(description="Mouse button: 'left', 'right' or 'middle'.")]
Ref = Annotated[str, Field(description="The element's ref from desktop_snapshot, e.g. 'e12'.")]

ACTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
LOOKS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}


class DesktopActionResult(BaseModel):
    """What became of one desktop action."""

    ok: bool = Field(description="True when the action was carried out.")
    canonical: str = Field(description="The action as recorded, e.g. click(x='600', y='475', button='left').")
    error: str | None = Field(None, description="Why the action was refused; None when ok.")


class DesktopSnapshot(BaseModel):
    """The focused application's accessibility tree."""

    snapshot: str = Field(description="One line per element: role, \"name\", [states], [ref=eN], ': value'; children indented.")


def register(mcp: FastMCP, envs: DesktopEpisodes, prefix: str = "", owner: Callable[[str], None] | None = None) -> None:
    """Add the desktop tools to ``mcp``, named ``prefix`` + action (``click``, or ``desktop_click`` with ``prefix="desktop_"``).

    ``owner``, when given, is called with the episode id before every action and raises if
    the calling session may not use that episode.
    """

    def get(episode_id: str) -> DesktopEnv:
        if owner is not None:
            owner(episode_id)
        return envs.get(episode_id)

    async def run(episode_id: str, action: Callable[[DesktopEnv], ActionRecord]) -> DesktopActionResult:
        env = get(episode_id)
        record = await anyio.to_thread.run_sync(action, env)  # DesktopActionError (recorded) reaches the agent as a tool error
        return DesktopActionResult(ok=True, canonical=record.canonical)

    def doc(name: str) -> str:
        return {**DESKTOP_ACTIONS, **REF_ACTIONS}[name].split(": ", 1)[1]

    def app(episode_id: str) -> AppDesktopEnv:
        env = get(episode_id)
        if not isinstance(env, AppDesktopEnv):
            raise InputError(f"desktop episode {episode_id!r} runs no application, so it has no accessibility tree: use coordinates and desktop_screenshot")
        return env

    async def run_ref(episode_id: str, action: Callable[[AppDesktopEnv], ActionRecord]) -> DesktopActionResult:
        env = app(episode_id)
        record = await anyio.to_thread.run_sync(action, env)
        return DesktopActionResult(ok=True, canonical=record.canonical)

    @mcp.tool(name=f"{prefix}snapshot", description=doc("snapshot"), annotations=LOOKS)
    async def snapshot(episode_id: EpisodeId) -> DesktopSnapshot:
        return DesktopSnapshot(snapshot=await anyio.to_thread.run_sync(app(episode_id).snapshot))

    @mcp.tool(name=f"{prefix}click_element", description=doc("click_element"), annotations=ACTS)
    async def click_element(
        episode_id: EpisodeId,
        target: Ref,
        button: Button = "left",
        double: Annotated[bool, Field(description="Double-click instead of a single click.")] = False,
    ) -> DesktopActionResult:
        return await run_ref(episode_id, lambda env: env.click_element(target, button, double))

    @mcp.tool(name=f"{prefix}type", description=doc("type"), annotations=ACTS)
    async def type_(
        episode_id: EpisodeId,
        target: Ref,
        text: Annotated[str, Field(description="Text that replaces the element's text; '\\n' presses Enter, '' clears it.")],
        submit: Annotated[bool, Field(description="Press Enter after typing.")] = False,
    ) -> DesktopActionResult:
        return await run_ref(episode_id, lambda env: env.type(target, text, submit))

    @mcp.tool(name=f"{prefix}set_value", description=doc("set_value"), annotations=ACTS)
    async def set_value(
        episode_id: EpisodeId,
        target: Ref,
        value: Annotated[str, Field(description="The element's new whole text, or a number for a slider or spin button.")],
    ) -> DesktopActionResult:
        return await run_ref(episode_id, lambda env: env.set_value(target, value))

    @mcp.tool(name=f"{prefix}select_menu", description=doc("select_menu"), annotations=ACTS)
    async def select_menu(
        episode_id: EpisodeId,
        path: Annotated[list[str], Field(description="Menu names from the menu bar to the item, e.g. ['File', 'Save'].")],
    ) -> DesktopActionResult:
        return await run_ref(episode_id, lambda env: env.select_menu(path))

    @mcp.tool(name=f"{prefix}click", description=doc("click"), annotations=ACTS)
    async def click(episode_id: EpisodeId, x: X, y: Y, button: Button = "left") -> DesktopActionResult:
        return await run(episode_id, lambda env: env.click(x, y, button))

    @mcp.tool(name=f"{prefix}double_click", description=doc("double_click"), annotations=ACTS)
    async def double_click(episode_id: EpisodeId, x: X, y: Y) -> DesktopActionResult:
        return await run(episode_id, lambda env: env.double_click(x, y))

    @mcp.tool(name=f"{prefix}write", description=doc("write"), annotations=ACTS)
    async def write(
        episode_id: EpisodeId,
        text: Annotated[str, Field(description="Text to type; '\\n' presses Enter, '\\t' Tab.")],
    ) -> DesktopActionResult:
        return await run(episode_id, lambda env: env.write(text))

    @mcp.tool(name=f"{prefix}press", description=doc("press"), annotations=ACTS)
    async def press(
        episode_id: EpisodeId,
        key: Annotated[str, Field(description="A pyautogui key name ('enter', 'esc', 'pagedown', 'f5'…) or one character.")],
    ) -> DesktopActionResult:
        return await run(episode_id, lambda env: env.press(key))

    @mcp.tool(name=f"{prefix}hotkey", description=doc("hotkey"), annotations=ACTS)
    async def hotkey(
        episode_id: EpisodeId,
        keys: Annotated[list[str], Field(description="Keys pressed in order and released in reverse, e.g. ['ctrl', 'shift', 't'].")],
    ) -> DesktopActionResult:
        return await run(episode_id, lambda env: env.hotkey(*keys))

    @mcp.tool(name=f"{prefix}scroll", description=doc("scroll"), annotations=ACTS)
    async def scroll(
        episode_id: EpisodeId,
        amount: Annotated[int, Field(description="Mouse-wheel clicks: positive scrolls up, negative down.")],
        x: Annotated[int | None, Field(description="Scroll at this x (with y); omit both to scroll where the mouse is.")] = None,
        y: Annotated[int | None, Field(description="Scroll at this y (with x).")] = None,
    ) -> DesktopActionResult:
        return await run(episode_id, lambda env: env.scroll(amount, x, y))

    @mcp.tool(name=f"{prefix}move", description=doc("move"), annotations=ACTS)
    async def move(episode_id: EpisodeId, x: X, y: Y) -> DesktopActionResult:
        return await run(episode_id, lambda env: env.move(x, y))

    @mcp.tool(name=f"{prefix}drag", description=doc("drag"), annotations=ACTS)
    async def drag(
        episode_id: EpisodeId,
        x: X,
        y: Y,
        to_x: Annotated[int, Field(description="Screen x where the drag ends.")],
        to_y: Annotated[int, Field(description="Screen y where the drag ends.")],
        button: Button = "left",
    ) -> DesktopActionResult:
        return await run(episode_id, lambda env: env.drag(x, y, to_x, to_y, button))

    @mcp.tool(name=f"{prefix}wait", description=doc("wait"), annotations=LOOKS)
    async def wait(
        episode_id: EpisodeId,
        seconds: Annotated[float, Field(description=f"How long to wait, 0..{MAX_WAIT:g} seconds.")] = 5,
    ) -> DesktopActionResult:
        return await run(episode_id, lambda env: env.wait(seconds))

    @mcp.tool(name=f"{prefix}screenshot", description=doc("screenshot"), annotations=LOOKS)
    async def screenshot(episode_id: EpisodeId) -> Image:
        env = get(episode_id)
        return Image(data=await anyio.to_thread.run_sync(env.screenshot), format="png")
