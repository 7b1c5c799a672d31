"""The ``browser_*`` tools: Playwright MCP's current names and argument shapes over a recorded episode.

Elements are named by ``target`` (a snapshot ref such as ``e12``, or a unique selector)
with an optional ``element`` description, as in Playwright MCP since 0.0.70; the older
``ref`` (``startRef``/``endRef`` for drag, ``ref`` in form fields) is still accepted as
an alias, so agents and prompts written for earlier versions work too. The reference is
the real ``@playwright/mcp`` package (its version pinned in ``tests/data/fetch-playwright-mcp.sh``):
every tool and argument of its default ``tools/list`` is here with a compatible schema, or
in :data:`LEFT_OUT` with the reason. On a server bound to a task the first ``browser_*``
call opens the episode (:meth:`.manager.EpisodeManager.current`) and ``browser_close``
ends it, so an agent written for Playwright MCP needs no ``env_*`` call. ``filename``
arguments save into the episode's ``files/`` folder (:mod:`.browser_extra`). Added:
``browser_scroll``, set-of-marks screenshots, ``maxChars`` on snapshots, and
``episode_id`` on every tool. Failures the episode recorded reach the agent as tool
errors and stay off the server's stderr (:func:`recorded`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from pathlib import Path
from typing import Annotated, Literal, TypeVar

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import ToolResult
from fastmcp.utilities.types import Image
from playwright.async_api import Error as PlaywrightError
from pydantic import AliasChoices, BaseModel, Field

from ..errors import InputError
from ..security.roots import Roots
from .browser_extra import Filename, register_extra, save
from .canonical import canonical
from .episodes import ActionFailed, BrowserEpisode, FormField, ImageType, Modifier, Observation
from .locate import explain
from .manager import EpisodeManager
from .page_log import ConsoleLevel, ConsoleMessages, NetworkRequests, RequestDetail
from .session import binding
from .snapshot_view import MIN_CHARS

__all__ = ["ACT", "EpisodeId", "LEFT_OUT", "LOOK", "NAVIGATE", "Screenshot", "recorded", "register_browser"]

#: Tools of @playwright/mcp's default tools/list deliberately not offered, with the reason (the parity test reads this).
LEFT_OUT = {
    "browser_evaluate": "runs page JavaScript: an agent under test could fake an end state (set the DOM the checks read)",
    "browser_run_code_unsafe": "runs arbitrary Playwright code in the server: the same end-state faking, and more",
}

T = TypeVar("T")

_TARGET = "Exact target element reference from the page snapshot (e.g. 'e12'), or a unique element selector; 'ref' is accepted too."
_ELEMENT = "Human-readable element description used to obtain permission to interact with the element (optional; recorded with the action)."
EpisodeId = Annotated[str | None, Field(description="Episode to act in; default: the one this session started.")]
Element = Annotated[str | None, Field(description=_ELEMENT)]
Target = Annotated[str, Field(description=_TARGET, validation_alias=AliasChoices("target", "ref"))]

#: Reads the page or the episode's logs; changes nothing.
LOOK = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
#: Acts on a live website (inside the episode's allowed domains): may submit, buy or delete there, and reach its servers.
ACT = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
#: Loads pages (GET) on a live website: reaches its servers but submits nothing.
NAVIGATE = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": True}
#: Changes only the browser's own state (viewport, scroll position).
LOCAL = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False}


RequestPart = Literal["request-headers", "request-body", "response-headers", "response-body"]


def whole(value: float | None, name: str) -> int | None:
    """A number argument Playwright MCP types as 'number' that must be whole here (depth, a tab index)."""
    if value is None:
        return None
    if value != int(value):
        raise ToolError(f"{name} must be a whole number, not {value:g}")
    return int(value)


def image_type(filename: str | None) -> ImageType:
    """The image format a screenshot's file name asks for (png unless it ends in .jpg/.jpeg/.webp)."""
    suffix = Path(filename or "").suffix.lower()
    return "jpeg" if suffix in (".jpg", ".jpeg") else "webp" if suffix == ".webp" else "png"


def only_part(detail: RequestDetail, part: str | None) -> RequestDetail:
    """``detail`` with only ``part`` kept (the request line always stays), as browser_network_request's part asks."""
    if part is None:
        return detail
    keep = {
        "request-headers": {"request_headers"},
        "request-body": {"request_body"},
        "response-headers": {"response_headers"},
        "response-body": {"body", "body_note"},
    }[part]
    return detail.model_copy(update={k: None for k in ("request_headers", "request_body", "response_headers", "body", "body_note") if k not in keep})


class Screenshot(BaseModel):
    """What browser_take_screenshot returns beside the image itself."""

    format: ImageType
    url: str = Field(description="The page the screenshot shows.")
    bytes: int = Field(description="Size of the image.")
    marks: bool = Field(description="Whether interactive elements are boxed and labelled with their refs.")
    saved: str | None = Field(None, description="Where the image was saved, when a filename was given (relative to the episode folder).")


async def recorded(action: Awaitable[T]) -> T:
    """``action``'s result; a failure it recorded in the trajectory reaches the agent as a tool error logged only at debug level.

    The agent reads the message and the trajectory keeps it, so nothing about it goes to
    the server's stderr (where a run's many expected misses, such as stale refs, would drown
    real problems). A browser failure no action caught (a page that broke while it was
    read) still reaches the agent as a tool error saying what failed, logged as a warning.
    """
    try:
        return await action
    except ActionFailed as exc:
        raise ToolError(str(exc), log_level=logging.DEBUG) from exc
    except PlaywrightError as exc:
        raise ToolError(f"the browser failed while reading the page: {explain(exc)}; call browser_snapshot to see where it is", log_level=logging.WARNING) from exc


def register_browser(mcp: FastMCP, episodes: EpisodeManager, upload_roots: Roots | None = None) -> None:
    """Add the Playwright-MCP-shaped tools (seen as ``browser_snapshot``, ``browser_click``, …).

    ``upload_roots`` are the folders browser_file_upload may read files from (None:
    uploads are refused).
    """

    async def episode(ctx: Context, episode_id: str | None) -> BrowserEpisode:
        return await episodes.current(episode_id, binding(ctx))

    @mcp.tool(title="Page snapshot", annotations=LOOK)
    async def snapshot(
        ctx: Context,
        target: Annotated[str | None, Field(description="Snapshot only this element (a ref from an earlier snapshot, or a unique selector); default: the whole page.")] = None,
        depth: Annotated[float | None, Field(ge=1, description="Limit the depth of the snapshot tree (a whole number).")] = None,
        filename: Filename = None,
        maxChars: Annotated[int | None, Field(ge=MIN_CHARS, description="Cut the snapshot to this many characters (default: the server's limit, 100,000 unless configured); a marker line says so and how to see the rest.")] = None,
        boxes: Annotated[bool, Field(description="Include each element's bounding box as [box=x,y,width,height] (viewport CSS pixels).")] = False,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Capture the accessibility snapshot of the current page (better than a screenshot); act on elements by their [ref=eN].

        With filename the snapshot is saved to the episode's files folder instead of returned.
        """
        browser = await episode(ctx, episode_id)
        seen = await recorded(browser.snapshot(target, whole(depth, "depth"), maxChars, boxes))
        if filename and seen.snapshot is not None:
            seen.snapshot = f"(snapshot saved to {save(browser, filename, seen.snapshot)}, {len(seen.snapshot)} characters)"
        return seen

    @mcp.tool(title="Click", annotations=ACT)
    async def click(
        ctx: Context,
        target: Target,
        element: Element = None,
        doubleClick: Annotated[bool, Field(description="Whether to perform a double click instead of a single click.")] = False,
        button: Annotated[Literal["left", "right", "middle"], Field(description="Button to click, defaults to left.")] = "left",
        modifiers: Annotated[list[Modifier] | None, Field(description="Modifier keys to press while clicking.")] = None,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Perform a click on a web page."""
        return await recorded((await episode(ctx, episode_id)).click(element, target, doubleClick, button, modifiers))

    @mcp.tool(title="Type text", annotations=ACT)
    async def type(
        ctx: Context,
        target: Target,
        text: Annotated[str, Field(description="Text to type into the element (replaces its content unless slowly).")],
        element: Element = None,
        submit: Annotated[bool, Field(description="Whether to submit entered text (press Enter after).")] = False,
        slowly: Annotated[bool, Field(description="Whether to type one character at a time, firing key handlers; by default the text is filled in at once.")] = False,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Type text into an editable element."""
        return await recorded((await episode(ctx, episode_id)).type(element, target, text, submit, slowly))

    @mcp.tool(title="Select option", annotations=ACT)
    async def select_option(
        ctx: Context,
        target: Target,
        values: Annotated[list[str], Field(description="Option labels or values to select: one, or several for a multiple select.")],
        element: Element = None,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Select option(s) in a dropdown."""
        return await recorded((await episode(ctx, episode_id)).select_option(element, target, values))

    @mcp.tool(title="Hover mouse", annotations=NAVIGATE)
    async def hover(ctx: Context, target: Target, element: Element = None, episode_id: EpisodeId = None) -> Observation:
        """Hover over an element on the page."""
        return await recorded((await episode(ctx, episode_id)).hover(element, target))

    @mcp.tool(title="Drag mouse", annotations=ACT)
    async def drag(
        ctx: Context,
        startTarget: Annotated[str, Field(description="The element to drag: " + _TARGET.replace("'ref'", "'startRef'"), validation_alias=AliasChoices("startTarget", "startRef"))],
        endTarget: Annotated[str, Field(description="The element to drop it on: " + _TARGET.replace("'ref'", "'endRef'"), validation_alias=AliasChoices("endTarget", "endRef"))],
        startElement: Annotated[str | None, Field(description="Human-readable description of the element to drag (optional).")] = None,
        endElement: Annotated[str | None, Field(description="Human-readable description of the drop target (optional).")] = None,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Perform drag and drop between two elements."""
        return await recorded((await episode(ctx, episode_id)).drag(startElement, startTarget, endElement, endTarget))

    @mcp.tool(title="Fill form", annotations=ACT)
    async def fill_form(
        ctx: Context,
        fields: Annotated[list[FormField], Field(description="Fields to fill in, in order.")],
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Fill multiple form fields (text boxes, sliders, checkboxes, radio buttons, drop-downs); each is recorded as its own action."""
        return await recorded((await episode(ctx, episode_id)).fill_form(fields))

    @mcp.tool(title="Press a key", annotations=ACT)
    async def press_key(
        ctx: Context,
        key: Annotated[str, Field(description="Name of the key to press or a character to generate, e.g. 'Enter', 'ArrowLeft', 'a', 'Control+a'.")],
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Press a key on the keyboard."""
        return await recorded((await episode(ctx, episode_id)).press_key(key))

    @mcp.tool(title="Navigate to a URL", annotations=NAVIGATE)
    async def navigate(ctx: Context, url: Annotated[str, Field(description="The URL to navigate to (inside the episode's allowed domains).")], episode_id: EpisodeId = None) -> Observation:
        """Navigate to a URL."""
        browser = await episode(ctx, episode_id)
        if browser.id in episodes.fresh and url.rstrip("/") == browser.page.url.rstrip("/"):
            # the first call of a Playwright-MCP agent on a bound server, to the start page the episode has just loaded (and
            # recorded): not loaded twice, so the page is the tab's first document and its refs are eN, as in the package
            episodes.fresh.discard(browser.id)
            seen = await recorded(browser.observe())
            seen.action = canonical("navigate", url=url)
            return seen
        return await recorded(browser.navigate(url))

    @mcp.tool(title="Go back", annotations=NAVIGATE)
    async def navigate_back(ctx: Context, episode_id: EpisodeId = None) -> Observation:
        """Go back to the previous page in the history."""
        return await recorded((await episode(ctx, episode_id)).navigate_back())

    @mcp.tool(title="Wait for", annotations={**LOOK, "idempotentHint": False})
    async def wait_for(
        ctx: Context,
        time: Annotated[float | None, Field(description="The time to wait in seconds (at most 30).")] = None,
        text: Annotated[str | None, Field(description="The text to wait for.")] = None,
        textGone: Annotated[str | None, Field(description="The text to wait for to disappear.")] = None,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Wait for text to appear or disappear, or for a time to pass."""
        return await recorded((await episode(ctx, episode_id)).wait_for(time, text, textGone))

    @mcp.tool(title="Scroll", annotations=LOCAL)
    async def scroll(
        ctx: Context,
        direction: Annotated[Literal["up", "down"], Field(description="Which way to scroll.")] = "down",
        amount: Annotated[int, Field(ge=1, le=5000, description="How far to scroll, in pixels.")] = 600,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Scroll the page (not in Playwright MCP; the snapshot already shows the whole page)."""
        return await recorded((await episode(ctx, episode_id)).scroll(direction, amount))

    @mcp.tool(title="Resize browser window", annotations=LOCAL)
    async def resize(
        ctx: Context,
        width: Annotated[float, Field(ge=200, le=7680, description="Width of the browser window (viewport), in CSS pixels.")],
        height: Annotated[float, Field(ge=200, le=4320, description="Height of the browser window (viewport), in CSS pixels.")],
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Resize the browser window."""
        return await recorded((await episode(ctx, episode_id)).resize(round(width), round(height)))

    @mcp.tool(title="Manage tabs", annotations={**NAVIGATE, "destructiveHint": True})
    async def tabs(
        ctx: Context,
        action: Annotated[Literal["list", "new", "close", "select"], Field(description="Operation to perform.")],
        index: Annotated[float | None, Field(ge=0, description="Tab index, used for close/select. If omitted for close, the current tab is closed.")] = None,
        url: Annotated[str | None, Field(description="URL to navigate to in the new tab, used for new.")] = None,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """List, create, close, or select a browser tab; tabs the page opens itself (target=_blank links, window.open) are listed too."""
        return await recorded((await episode(ctx, episode_id)).tab_action(action, whole(index, "index"), url))

    @mcp.tool(title="Handle a dialog", annotations=ACT)
    async def handle_dialog(
        ctx: Context,
        accept: Annotated[bool, Field(description="Whether to accept the dialog.")],
        promptText: Annotated[str | None, Field(description="The text of the prompt in case of a prompt dialog.")] = None,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Handle the alert, confirm or prompt dialog the page opened (shown under '### Modal state')."""
        return await recorded((await episode(ctx, episode_id)).handle_dialog(accept, promptText))

    def resolve(path: str) -> Path:
        if upload_roots is None:
            raise InputError("this server allows no file uploads; start it with --allow-root <folder> to upload files from that folder")
        return upload_roots.readable_file(path, "paths")

    @mcp.tool(title="Upload files", annotations=ACT)
    async def file_upload(
        ctx: Context,
        paths: Annotated[list[str] | None, Field(description="The absolute paths to the files to upload (inside the server's allowed folders). If omitted, the file chooser is cancelled.")] = None,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Upload one or multiple files into the file chooser the page opened (click its file input first)."""
        return await recorded((await episode(ctx, episode_id)).file_upload(paths, resolve))

    @mcp.tool(title="Drop files or data onto an element", annotations=ACT)
    async def drop(
        ctx: Context,
        target: Target,
        element: Element = None,
        paths: Annotated[list[str] | None, Field(description="The absolute paths of files to drop onto the element (inside the server's allowed folders).")] = None,
        data: Annotated[dict[str, str] | None, Field(description="Data to drop, as a map of MIME type to string value (e.g. {\"text/plain\": \"hello\"}).")] = None,
        episode_id: EpisodeId = None,
    ) -> Observation:
        """Drop files or MIME-typed data onto an element, as if dragged from outside the page. At least one of "paths" or "data" must be provided."""
        return await recorded((await episode(ctx, episode_id)).drop(element, target, paths, data, resolve))

    @mcp.tool(title="Get console messages", annotations=LOOK)
    async def console_messages(
        ctx: Context,
        level: Annotated[ConsoleLevel, Field(description="Level of the messages to return; each level includes the more severe ones.")] = "info",
        all: Annotated[bool, Field(description="Return all console messages since the tab opened, not just since the last navigation.")] = False,  # noqa: A002
        filename: Filename = None,
        episode_id: EpisodeId = None,
    ) -> ConsoleMessages:
        """Returns the console messages of the current tab."""
        browser = await episode(ctx, episode_id)
        found = await recorded(browser.console_messages(level, all))
        return found.model_copy(update={"saved": save(browser, filename, found.model_dump_json(indent=1))}) if filename else found

    @mcp.tool(title="List network requests", annotations=LOOK)
    async def network_requests(
        ctx: Context,
        static: Annotated[bool, Field(description="Whether to include successful static resources like images, fonts and scripts.")] = False,
        filter: Annotated[str | None, Field(description="Only return requests whose URL matches this regular expression (e.g. '/api/.*user').")] = None,  # noqa: A002
        filename: Filename = None,
        episode_id: EpisodeId = None,
    ) -> NetworkRequests:
        """Returns the network requests of the current page since it loaded: method, URL, status."""
        browser = await episode(ctx, episode_id)
        found = await recorded(browser.network_requests(static, filter))
        return found.model_copy(update={"saved": save(browser, filename, found.model_dump_json(indent=1))}) if filename else found

    @mcp.tool(title="Show network request details", annotations=LOOK)
    async def network_request(
        ctx: Context,
        index: Annotated[int, Field(ge=1, description="1-based index of the request, as printed by browser_network_requests.")],
        part: Annotated[RequestPart | None, Field(description="Return only this part of the request (the request line stays). Omit to return full details.")] = None,
        filename: Filename = None,
        episode_id: EpisodeId = None,
    ) -> RequestDetail:
        """Returns full details of one network request of the current tab (method, URL, status, headers, the response body when it is small text), or one part of it."""
        browser = await episode(ctx, episode_id)
        found = only_part(await recorded(browser.network_request(index)), part)
        return found.model_copy(update={"saved": save(browser, filename, found.model_dump_json(indent=1))}) if filename else found

    @mcp.tool(title="Take a screenshot", annotations=LOOK, output_schema=Screenshot.model_json_schema())
    async def take_screenshot(
        ctx: Context,
        target: Annotated[str | None, Field(description="Screenshot only this element (a ref or a unique selector); default: the viewport.")] = None,
        element: Element = None,
        type: Annotated[ImageType | None, Field(description="Image format. If unset, inferred from the filename extension, otherwise png.")] = None,
        filename: Annotated[str | None, Field(description="Also save the image to this file in the episode's files folder (only the name's last part is used).")] = None,
        fullPage: Annotated[bool, Field(description="Take the full scrollable page instead of the visible viewport (not with target).")] = False,
        scale: Annotated[Literal["css", "device"], Field(description="Image resolution scale: 'css' sizes the image in CSS pixels, 'device' in device pixels. Default css.")] = "css",
        marks: Annotated[bool, Field(description="Draw set-of-marks: interactive elements boxed and labelled with their snapshot refs.")] = False,
        episode_id: EpisodeId = None,
    ) -> ToolResult:
        """Take a screenshot of the current page; act with browser_snapshot refs, not on what the image shows."""
        browser = await episode(ctx, episode_id)
        kind = type or image_type(filename)
        image = await recorded(browser.screenshot(marks, fullPage, target, element, kind, scale))
        meta = Screenshot(format=kind, url=browser.page.url, bytes=len(image), marks=marks, saved=save(browser, filename, image) if filename else None)
        return ToolResult(content=[Image(data=image, format=kind).to_image_content()], structured_content=meta.model_dump())

    register_extra(mcp, episodes, episode)

