"""The browser environment as MCP tools: ``env_*`` (episode lifecycle) and ``browser_*`` (Playwright-MCP-shaped actions).

Two thin sub-servers, mounted by the server under the ``env`` and ``browser``
namespaces. Every tool accepts an optional ``episode_id``; without it the episode
bound to the caller's MCP session is used.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from typing import Annotated, Literal

import anyio.to_thread

from fastmcp import Context, FastMCP
from fastmcp.server.dependencies import get_context
from fastmcp.utilities.types import Image
from pydantic import BaseModel, Field

from ..errors import InputError
from .desktop import DesktopEpisodes
from .documents import DocHit, DocNode
from .episodes import Observation
from .manager import EpisodeManager, StartedEpisode

__all__ = ["Bound", "owner_check", "register_env", "register_browser", "register_doc"]

EpisodeId = Annotated[str | None, Field(description="Episode to act in; default: the one this session started.")]
Element = Annotated[str, Field(description="Human-readable description of the element, e.g. 'Search button'.")]
Ref = Annotated[str, Field(description="The element's ref from the latest browser_snapshot, e.g. 'e12'.")]
ACTION = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False}
LOOK = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def binding(ctx: Context) -> str | None:
    """What an episode started from this request is bound to.

    Over stdio and in memory a server process serves one client, so episodes bind to
    the process. Over HTTP they bind to the ``mcp-session-id`` when the client has one;
    sessionless HTTP requests (protocol 2026-07-28) bind to their bearer token when they
    carry one (the harness serves each command agent's episode behind a token of its
    own), else must pass ``episode_id``. The key is
    also the episode's owner: another key naming it by id is refused (sessionless
    requests share the key None, so they reach each other's episodes by id).
    """
    if ctx.transport in ("sse", "streamable-http"):
        request = ctx.request_context.request if ctx.request_context is not None else None
        session = request.headers.get("mcp-session-id") if request is not None else None
        if session:
            return f"http:{session}"
        bearer = request.headers.get("authorization") if request is not None else None  # sessionless: the token is the caller
        return f"bearer:{hashlib.sha256(bearer.encode()).hexdigest()[:32]}" if bearer else None
    return "process"


def owner_check(episodes: EpisodeManager) -> Callable[[str], None]:
    """A check for tools without a ``Context`` argument (``desktop_*``): refuse an episode the current session does not own."""

    def check(episode_id: str) -> None:
        episodes.check_owner(episode_id, binding(get_context()))

    return check


class Bound(BaseModel):
    """What a server started for one harness episode is bound to (``taskloom serve --task …``)."""

    task_id: str | None = None
    agent: str | None = None
    model: str | None = None
    max_steps: int | None = Field(None, ge=1, description="Actions allowed per episode; later ones are refused.")


class Closed(BaseModel):
    """An episode that has ended."""

    episode_id: str
    trajectory: str | None = Field(None, description="Path of the trajectory file (full profile only).")


class Answered(BaseModel):
    """The answer was recorded."""

    episode_id: str
    answer: str


def register_env(
    mcp: FastMCP,
    episodes: EpisodeManager,
    desktops: DesktopEpisodes | None = None,
    reveal_paths: bool = True,
    bound: Bound | None = None,
) -> None:
    """Add ``start``, ``answer`` and ``close`` (seen as ``env_start``, …) for browser, document and desktop episodes.

    With ``reveal_paths=False`` (the agent profile) no workspace path is returned: an agent
    with file access must not be pointed at the folder that holds the tasks. With ``bound``
    (a server the harness started for one episode) ``env_start`` opens the bound task and
    records the bound agent and model.
    """
    latest: dict[str, str] = {}
    bound = bound or Bound()

    def chosen(ctx: Context, episode_id: str | None) -> str:
        key = binding(ctx)
        if episode_id:
            return episodes.resolve(episode_id, key)  # refuses another session's episode
        found = latest.get(key) if key else None
        return found or episodes.resolve(None, key)

    @mcp.tool(annotations=ACTION)
    async def start(
        ctx: Context,
        url: Annotated[str | None, Field(description="Page to open (http/https).")] = None,
        task_id: Annotated[str | None, Field(description="A task to attempt; its instruction is returned.")] = None,
        environment: Annotated[Literal["browser", "desktop"], Field(description="browser (default) or desktop (when the server runs with --enable-desktop).")] = "browser",
    ) -> StartedEpisode:
        """Start an episode and return its id, the task's instruction and what the agent sees first.

        browser: a fresh, isolated browser context at the URL (or the task's start page);
        the accessibility snapshot is returned and later browser_* calls from this
        session act in it. desktop: a recorded session on the virtual display; act with
        desktop_* tools, passing the episode id.
        """
        key = binding(ctx)
        if bound.task_id:
            if (task_id and task_id != bound.task_id) or url:
                raise InputError(f"this server is bound to task {bound.task_id!r}; call env_start without url or with that task_id")
            task_id = bound.task_id
        if environment == "desktop":
            if desktops is None:
                raise InputError("the desktop environment is off; start the server with --enable-desktop")
            task = episodes.public_task(task_id) if task_id else None
            episode_id = f"desk-{secrets.token_hex(6)}"
            env = await anyio.to_thread.run_sync(lambda: desktops.start(episode_id, task_id=task_id))
            episodes.claim(episode_id, key, bind=False)
            started = StartedEpisode(
                episode_id=episode_id, url="", title="desktop", instruction=task.instruction if task else None,
                snapshot="(desktop: call desktop_screenshot to see the screen)", trajectory=str(env.recorder.path),
            )
        elif task_id and not url and episodes.public_task(task_id).kind == "document":
            document, started = await episodes.start_document(task_id, agent=bound.agent, model=bound.model, session=key)
            document.recorder.limit = bound.max_steps
        else:
            browser, started = await episodes.start(url=url, task_id=task_id, agent=bound.agent, model=bound.model, session=key)
            browser.recorder.limit = bound.max_steps
        if key:
            latest[key] = started.episode_id
        return started if reveal_paths else started.model_copy(update={"trajectory": None})

    @mcp.tool(annotations=ACTION)
    async def answer(
        ctx: Context,
        answer: Annotated[str, Field(description="Your final answer to the task.")],
        episode_id: EpisodeId = None,
    ) -> Answered:
        """Give the final answer of the episode (recorded in its trajectory)."""
        found = chosen(ctx, episode_id)
        recorder = desktops.get(found).recorder if desktops and found.startswith("desk-") else episodes.recorder(found)
        recorder.answer(answer)
        return Answered(episode_id=found, answer=answer)

    @mcp.tool(annotations=ACTION)
    async def close(ctx: Context, episode_id: EpisodeId = None) -> Closed:
        """End the episode: close its browser context (or document or desktop session) and finish its record."""
        found = chosen(ctx, episode_id)
        if desktops and found.startswith("desk-"):
            path = desktops.get(found).recorder.path
            await anyio.to_thread.run_sync(lambda: desktops.close(found))
            episodes.release(found)
        else:
            path = await episodes.close(found)
        return Closed(episode_id=found, trajectory=str(path) if reveal_paths else None)


def register_browser(mcp: FastMCP, episodes: EpisodeManager) -> None:
    """Add the Playwright-MCP-shaped tools (seen as ``browser_snapshot``, ``browser_click``, …)."""

    @mcp.tool(annotations=LOOK)
    async def snapshot(ctx: Context, episode_id: EpisodeId = None) -> Observation:
        """Capture the accessibility snapshot of the current page; act on elements by their [ref=eN]."""
        return await episodes.get(episode_id, binding(ctx)).snapshot()

    @mcp.tool(annotations=ACTION)
    async def click(
        ctx: Context,
        element: Element,
        ref: Ref,
        doubleClick: Annotated[bool, Field(description="Double-click instead.")] = False,
        button: Literal["left", "right", "middle"] = "left",
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Click an element."""
        return await episodes.get(episode_id, binding(ctx)).click(element, ref, doubleClick, button)

    @mcp.tool(annotations=ACTION)
    async def type(
        ctx: Context,
        element: Element,
        ref: Ref,
        text: Annotated[str, Field(description="Text to type into the element (replaces its content).")],
        submit: Annotated[bool, Field(description="Press Enter afterwards.")] = False,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Type text into an editable element."""
        return await episodes.get(episode_id, binding(ctx)).type(element, ref, text, submit)

    @mcp.tool(annotations=ACTION)
    async def select_option(
        ctx: Context,
        element: Element,
        ref: Ref,
        values: Annotated[list[str], Field(description="Option labels (or values) to select.")],
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Select option(s) in a dropdown."""
        return await episodes.get(episode_id, binding(ctx)).select_option(element, ref, values)

    @mcp.tool(annotations=ACTION)
    async def hover(ctx: Context, element: Element, ref: Ref, episode_id: EpisodeId = None) -> Observation:
        """Hover over an element."""
        return await episodes.get(episode_id, binding(ctx)).hover(element, ref)

    @mcp.tool(annotations=ACTION)
    async def press_key(
        ctx: Context,
        key: Annotated[str, Field(description="Key name, e.g. 'Enter', 'ArrowLeft', 'a', 'Control+a'.")],
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Press a key on the keyboard."""
        return await episodes.get(episode_id, binding(ctx)).press_key(key)

    @mcp.tool(annotations=ACTION)
    async def navigate(ctx: Context, url: Annotated[str, Field(description="URL to open.")], episode_id: EpisodeId = None) -> Observation:
        """Navigate to a URL (within the episode's allowed domains)."""
        return await episodes.get(episode_id, binding(ctx)).navigate(url)

    @mcp.tool(annotations=ACTION)
    async def navigate_back(ctx: Context, episode_id: EpisodeId = None) -> Observation:
        """Go back to the previous page."""
        return await episodes.get(episode_id, binding(ctx)).navigate_back()

    @mcp.tool(annotations=ACTION)
    async def wait_for(
        ctx: Context,
        time: Annotated[float | None, Field(description="Seconds to wait (at most 30).")] = None,
        text: Annotated[str | None, Field(description="Wait until this text appears.")] = None,
        textGone: Annotated[str | None, Field(description="Wait until this text disappears.")] = None,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Wait for text to appear or disappear, or for some time."""
        return await episodes.get(episode_id, binding(ctx)).wait_for(time, text, textGone)

    @mcp.tool(annotations=ACTION)
    async def scroll(
        ctx: Context,
        direction: Literal["up", "down"] = "down",
        amount: Annotated[int, Field(ge=1, le=5000, description="Pixels.")] = 600,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Scroll the page."""
        return await episodes.get(episode_id, binding(ctx)).scroll(direction, amount)

    @mcp.tool(annotations=LOOK)
    async def take_screenshot(
        ctx: Context,
        marks: Annotated[bool, Field(description="Draw set-of-marks: boxes labelled with snapshot refs.")] = False,
        fullPage: bool = False,
        episode_id: EpisodeId = None,
    ) -> Image:
        """Take a screenshot of the page (PNG), optionally with set-of-marks labels."""
        png = await episodes.get(episode_id, binding(ctx)).screenshot(marks, fullPage)
        return Image(data=png, format="png")


def register_doc(mcp: FastMCP, episodes: EpisodeManager) -> None:
    """Add ``search`` and ``read`` (seen as ``doc_search``, ``doc_read``) for document tasks."""

    @mcp.tool(annotations=LOOK)
    async def search(
        ctx: Context,
        query: Annotated[str, Field(description="What to look for, in a few words.")],
        k: Annotated[int, Field(ge=1, le=20, description="How many hits.")] = 5,
        episode_id: EpisodeId = None,
    ) -> list[DocHit]:
        """Search the task's document by meaning; returns node ids to read with doc_read and a preview of each."""
        episode = episodes.get_document(episode_id, binding(ctx))
        return await anyio.to_thread.run_sync(lambda: episode.search(query, k))

    @mcp.tool(annotations=LOOK)
    async def read(
        ctx: Context,
        node_id: Annotated[str, Field(description="A node id from doc_search or from another doc_read result.")],
        episode_id: EpisodeId = None,
    ) -> DocNode:
        """Read one part of the document (a paragraph, table, cell, section…) and see what surrounds it."""
        return episodes.get_document(episode_id, binding(ctx)).read(node_id)
