"""The environments as MCP tools: ``env_*`` (episode lifecycle), ``doc_*`` (document tasks) and ``browser_*``.

Thin sub-servers, mounted by the server under the ``env``, ``browser`` and ``doc``
namespaces; the ``browser_*`` tools (Playwright MCP's names and argument shapes) are
in :mod:`.browser_mcp`. Every tool accepts an optional ``episode_id``; without it the
episode bound to the caller's MCP session (:func:`.session.binding`) is used.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Annotated, Literal

import anyio.to_thread

from fastmcp import Context, FastMCP
from fastmcp.server.dependencies import get_context
from pydantic import BaseModel, Field

from ..errors import InputError
from .desktop import DesktopEpisodes
from .desktop_episode import start_desktop
from .episodes import BrowserEpisode
from .documents import DocHit, DocNode
from .browser_mcp import LOOK, EpisodeId, register_browser
from .manager import EpisodeManager, StartedEpisode
from .session import binding

__all__ = ["Bound", "owner_check", "register_env", "register_browser", "register_doc"]

#: env_start opens a live website (or a desktop session) in a fresh episode.
START = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": True}
#: env_answer records the answer (a later call records another); nothing outside the server changes.
RECORD = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False}
#: env_close ends the episode for good.
END = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False}


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
    opened: dict[str | None, str] = {}  # session -> the bound task's episode it opened (env_start or a first browser_* call)
    if bound.task_id:
        episodes.autostart = _autostart(episodes, bound, latest, opened)

    def chosen(ctx: Context, episode_id: str | None) -> str:
        key = binding(ctx)
        if episode_id:
            return episodes.resolve(episode_id, key)  # refuses another session's episode
        found = latest.get(key) if key else None
        return found or episodes.resolve(None, key)

    @mcp.tool(title="Start an episode", annotations=START)
    async def start(
        ctx: Context,
        url: Annotated[str | None, Field(description="Page to open (http/https).")] = None,
        task_id: Annotated[str | None, Field(description="A task to attempt; its instruction is returned.")] = None,
        environment: Annotated[Literal["browser", "desktop"], Field(description="browser (default) or desktop (when the server runs with --enable-desktop).")] = "browser",
    ) -> StartedEpisode:
        """Start an episode and return its id, the task's instruction and what the agent sees first.

        browser: a fresh, isolated browser context at the URL (or the task's start page);
        the accessibility snapshot is returned and later browser_* calls from this
        session act in it. desktop (and desktop tasks): the task's application on a virtual
        display, its accessibility snapshot returned; act with desktop_* tools, passing the episode id.
        """
        key = binding(ctx)
        if bound.task_id:
            if (task_id and task_id != bound.task_id) or url:
                raise InputError(f"this server is bound to task {bound.task_id!r}; call env_start without url or with that task_id")
            task_id = bound.task_id
            if environment == "browser" and (open_now := episodes.episodes.get(opened.get(key, ""))) is not None:
                return await _resumed(open_now, episodes, bound.task_id, reveal_paths)  # its first browser_* call opened it already
        if environment == "desktop" or (task_id and not url and episodes.public_task(task_id).kind == "desktop"):
            if desktops is None:
                raise InputError("the desktop environment is off; start the server with --enable-desktop")
            episode_id = f"desk-{secrets.token_hex(6)}"
            _, started = await anyio.to_thread.run_sync(lambda: start_desktop(desktops, episodes, episode_id, task_id, bound.agent, bound.model, bound.max_steps))
            episodes.claim(episode_id, key, bind=False)
        elif task_id and not url and episodes.public_task(task_id).kind == "document":
            document, started = await episodes.start_document(task_id, agent=bound.agent, model=bound.model, session=key)
            document.recorder.limit = bound.max_steps
        else:
            browser, started = await episodes.start(url=url, task_id=task_id, agent=bound.agent, model=bound.model, session=key)
            browser.recorder.limit = bound.max_steps
        if bound.task_id:
            opened[key] = started.episode_id
        if key:
            latest[key] = started.episode_id
        return started if reveal_paths else started.model_copy(update={"trajectory": None})

    @mcp.tool(title="Give the answer", annotations=RECORD)
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

    @mcp.tool(title="End the episode", annotations=END)
    async def close(ctx: Context, episode_id: EpisodeId = None) -> Closed:
        """End the episode: close its browser context (or document or desktop session) and finish its record (a desktop task's files are checked first)."""
        found = chosen(ctx, episode_id)
        if desktops and found.startswith("desk-"):
            path = desktops.get(found).recorder.path
            await anyio.to_thread.run_sync(lambda: desktops.close(found))
            episodes.release(found)
        else:
            path = await episodes.close(found)
        return Closed(episode_id=found, trajectory=str(path) if reveal_paths else None)


async def _resumed(episode: BrowserEpisode, episodes: EpisodeManager, task_id: str, reveal_paths: bool) -> StartedEpisode:
    """What env_start answers for the bound task's episode a browser_* call already opened: that episode, as it is now."""
    seen = await episode.observe(snapshot=episodes.snapshots, acted=False)
    return StartedEpisode(
        episode_id=episode.id, url=seen.url, title=seen.title, instruction=episodes.public_task(task_id).instruction,
        snapshot=seen.snapshot or "", trajectory=str(episode.recorder.path) if reveal_paths else None,
    )


def _autostart(episodes: EpisodeManager, bound: Bound, latest: dict[str, str], started: dict[str | None, str]) -> Callable[[str | None], Awaitable[BrowserEpisode]]:
    """Open the bound task's episode for a session's first ``browser_*`` call (as Playwright MCP opens its browser), once per session.

    A session whose episode has ended (``browser_close``, ``env_close``) is told so rather
    than given a second episode: the harness scores one attempt per server.
    """
    lock = asyncio.Lock()

    async def start(key: str | None) -> BrowserEpisode:
        async with lock:  # two first calls at once open one episode
            if key in started:
                found = episodes.episodes.get(started[key])
                if found is None:
                    raise InputError(f"the episode of task {bound.task_id!r} has ended (browser_close or env_close); this server runs one episode")
                return found
            if episodes.public_task(bound.task_id or "").kind == "document":
                raise InputError(f"task {bound.task_id!r} is a document task: call env_start, then doc_search and doc_read")
            browser, begun = await episodes.start(task_id=bound.task_id, agent=bound.agent, model=bound.model, session=key)
            browser.recorder.limit = bound.max_steps
            started[key] = begun.episode_id
            if key:
                latest[key] = begun.episode_id
            return browser

    return start


def register_doc(mcp: FastMCP, episodes: EpisodeManager) -> None:
    """Add ``search`` and ``read`` (seen as ``doc_search``, ``doc_read``) for document tasks."""

    @mcp.tool(title="Search the document", annotations=LOOK)
    async def search(
        ctx: Context,
        query: Annotated[str, Field(description="What to look for, in a few words.")],
        k: Annotated[int, Field(ge=1, le=20, description="How many hits.")] = 5,
        episode_id: EpisodeId = None,
    ) -> list[DocHit]:
        """Search the task's document by meaning; returns node ids to read with doc_read and a preview of each."""
        episode = episodes.get_document(episode_id, binding(ctx))
        return await anyio.to_thread.run_sync(lambda: episode.search(query, k))

    @mcp.tool(title="Read part of the document", annotations=LOOK)
    async def read(
        ctx: Context,
        node_id: Annotated[str, Field(description="A node id from doc_search or from another doc_read result.")],
        episode_id: EpisodeId = None,
    ) -> DocNode:
        """Read one part of the document (a paragraph, table, cell, section…) and see what surrounds it."""
        return episodes.get_document(episode_id, binding(ctx)).read(node_id)
