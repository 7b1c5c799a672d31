"""Playwright MCP tools beyond the core ones: ``browser_find``, ``browser_emulate_media``, ``browser_close``; where ``filename`` saves.

An agent under test writes no file where it chooses: a ``filename`` argument (snapshot,
screenshot, console and network tools) saves into the episode's own ``files/`` folder,
under the name's last part made safe, and the answer says where.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Final, Literal

from fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

from ..errors import InputError
from .canonical import canonical
from .episodes import BrowserEpisode
from .locate import aria, shown_refs
from .manager import EpisodeManager
from .session import binding

__all__ = ["Closed", "Found", "find_in_snapshot", "register_extra", "save", "saved_name"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: Lines of the snapshot shown before and after each match.
CONTEXT = 2
#: Matches shown at most (the count says how many there were).
MAX_MATCHES = 20
#: The longest regular expression compiled: compiling is done on the server's event loop, and a pattern of a
#: megabyte holds it (every session's calls) for seconds.
MAX_REGEX_CHARS = 2_000
#: Omitted in browser_emulate_media: the feature is left as it is (JSON null clears an override, as in Playwright MCP).
UNCHANGED: Final = "unchanged"

_KEEP = "; null clears the override, omitted (or 'unchanged') leaves it as it is."
ColorScheme = Annotated[Literal["light", "dark", "unchanged"] | None, Field(description="Emulates the prefers-color-scheme media feature" + _KEEP)]
ReducedMotion = Annotated[Literal["reduce", "no-preference", "unchanged"] | None, Field(description="Emulates the prefers-reduced-motion media feature" + _KEEP)]
ForcedColors = Annotated[Literal["active", "none", "unchanged"] | None, Field(description="Emulates the forced-colors media feature" + _KEEP)]
Contrast = Annotated[Literal["more", "no-preference", "unchanged"] | None, Field(description="Emulates the prefers-contrast media feature" + _KEEP)]
MediaType = Annotated[Literal["screen", "print", "unchanged"] | None, Field(description="Changes the CSS media type of the page" + _KEEP)]
Filename = Annotated[
    str | None,
    Field(description="Also save the result to this file in the episode's files folder (only the name's last part is used; the answer says where)."),
]
READ = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
#: Changes how the page renders (media features): the site sees nothing of it.
EMULATE = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
#: browser_close ends the episode for good.
END = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False}


def saved_name(filename: str) -> str:
    """The file name ``filename`` saves under: its last path part, unsafe characters replaced, at most 100 characters."""
    name = _UNSAFE.sub("_", filename.replace("\\", "/").rsplit("/", 1)[-1]).strip("._")[:100]
    if not name:
        raise InputError(f"filename {filename!r} has no usable name; pass a plain file name such as 'page.yml'")
    return name


def save(episode: BrowserEpisode, filename: str, data: bytes | str) -> str:
    """Write ``data`` to the episode's ``files/`` folder; returns the path relative to the episode folder."""
    name = saved_name(filename)
    folder = episode.recorder.folder / "files"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return f"files/{name}"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def find_in_snapshot(snapshot: str, text: str | None = None, regex: str | None = None) -> tuple[int, str]:
    """(matches, report) of the snapshot lines holding ``text`` (any case) or matching ``regex`` ('/p/flags' adds flags).

    Each match is shown under its path from the root (its ancestors' lines, joined by
    ' > ') with :data:`CONTEXT` lines either side.
    """
    if (text is None) == (regex is None):
        raise InputError("pass text or regex (one of them, not both)")
    if text is not None:
        wanted = text.lower()
        if not wanted.strip():
            raise InputError("text is empty; pass the words to look for")

        def hit(line: str) -> bool:
            return wanted in line.lower()
    else:
        pattern, flags = regex or "", 0
        if len(pattern) > MAX_REGEX_CHARS:
            raise InputError(f"regex is {len(pattern):,} characters; at most {MAX_REGEX_CHARS:,} (search a shorter pattern, or use text)")
        if (found := re.fullmatch(r"/(.*)/([a-z]*)", pattern, re.S)) is not None:
            pattern = found.group(1)
            flags = re.I * ("i" in found.group(2)) | re.M * ("m" in found.group(2)) | re.S * ("s" in found.group(2))
        try:
            compiled = re.compile(pattern, flags)
        except re.error as exc:
            raise InputError(f"regex {regex!r} is not a valid regular expression ({exc})") from None

        def hit(line: str) -> bool:
            return compiled.search(line) is not None

    lines = snapshot.splitlines()
    matches = [i for i, line in enumerate(lines) if hit(line)]
    blocks = []
    for n, i in enumerate(matches[:MAX_MATCHES], 1):
        path, depth = [], _indent(lines[i])
        for j in range(i - 1, -1, -1):
            if _indent(lines[j]) < depth and lines[j].strip():
                path.append(lines[j].strip().rstrip(":"))
                depth = _indent(lines[j])
        where = " > ".join(reversed(path)) or "(root)"
        context = "\n".join(lines[max(0, i - CONTEXT) : i + CONTEXT + 1])
        blocks.append(f"### Match {n} of {len(matches)}\n- Path: {where}\n```yaml\n{context}\n```")
    if len(matches) > MAX_MATCHES:
        blocks.append(f"({len(matches) - MAX_MATCHES} more matches not shown; search for something narrower)")
    return len(matches), "\n".join(blocks) if blocks else "No matches in the page snapshot."


class Found(BaseModel):
    """What browser_find returns."""

    url: str
    matches: int = Field(description="How many snapshot lines matched.")
    results: str = Field(description="Each match under its path from the root, with a few lines around it; act on the [ref=eN] shown.")
    saved: str | None = Field(None, description="Where the results were saved, when a filename was given (relative to the episode folder).")


class Media(BaseModel):
    """What browser_emulate_media returns: the overrides now in force (None: the browser's default)."""

    url: str
    colorScheme: str | None = None
    reducedMotion: str | None = None
    forcedColors: str | None = None
    contrast: str | None = None
    media: str | None = None


class Closed(BaseModel):
    """What browser_close returns: the episode has ended and its final state was checked."""

    episode_id: str
    closed: bool = True
    note: str = "The episode has ended: its final state was checked. This server runs no other episode."


def register_extra(mcp: FastMCP, episodes: EpisodeManager, current: Callable[[Context, str | None], Awaitable[BrowserEpisode]]) -> None:
    """Add ``find``, ``emulate_media`` and ``close`` (seen as ``browser_find``, …); ``current`` finds (or starts) the caller's episode."""
    overrides: dict[str, dict[str, str | None]] = {}  # episode id -> media features set so far

    @mcp.tool(title="Find in page snapshot", annotations=READ)
    async def find(
        ctx: Context,
        text: Annotated[str | None, Field(description="Plain text to search for in the page snapshot (case-insensitive substring match). Provide either text or regex, not both.")] = None,
        regex: Annotated[str | None, Field(description="Regular expression to search for in the page snapshot; '/pattern/i' adds flags. Provide either text or regex, not both.")] = None,
        filename: Filename = None,
        episode_id: Annotated[str | None, Field(description="Episode to act in; default: the one this session started.")] = None,
    ) -> Found:
        """Search the accessibility snapshot of the current page for text or a regular expression: matching nodes with a few lines around them, each under its path from the root (cheaper than the whole snapshot)."""
        episode = await current(ctx, episode_id)
        if (why := episode.modal.blocking()) is not None:
            raise InputError(why)
        episode.record_look("find", {k: v for k, v in {"text": text, "regex": regex, "filename": filename}.items() if v is not None}, canonical("find", text=text, regex=regex))
        snapshot = await aria(episode.page, timeout_ms=episode.limits.snapshot_timeout_ms)
        episode.tabs.current.shown.update(shown_refs(snapshot))
        count, report = find_in_snapshot(snapshot, text, regex)
        return Found(url=episode.page.url, matches=count, results=report, saved=save(episode, filename, report) if filename else None)

    @mcp.tool(title="Emulate media features", annotations=EMULATE)
    async def emulate_media(
        ctx: Context,
        colorScheme: ColorScheme = UNCHANGED,
        reducedMotion: ReducedMotion = UNCHANGED,
        forcedColors: ForcedColors = UNCHANGED,
        contrast: Contrast = UNCHANGED,
        media: MediaType = UNCHANGED,
        episode_id: Annotated[str | None, Field(description="Episode to act in; default: the one this session started.")] = None,
    ) -> Media:
        """Emulate CSS media features for the page, e.g. switch between the light and dark color scheme. Omitted parameters are left unchanged; null clears an override."""
        episode = await current(ctx, episode_id)
        asked = {"colorScheme": colorScheme, "reducedMotion": reducedMotion, "forcedColors": forcedColors, "contrast": contrast, "media": media}
        given = {k: v for k, v in asked.items() if v != UNCHANGED}
        state = overrides.setdefault(episode.id, {})
        state.update(given)
        names = {"colorScheme": "color_scheme", "reducedMotion": "reduced_motion", "forcedColors": "forced_colors", "contrast": "contrast", "media": "media"}
        args = {names[k]: ("null" if v is None else v) for k, v in given.items()}
        episode.record_look("emulate_media", {k: v for k, v in given.items()}, canonical("emulate_media", **{k: str(v) for k, v in given.items()}))
        await episode.page.emulate_media(**args)  # type: ignore[arg-type]  # checked by the tool's Literal arguments
        return Media(url=episode.page.url, **state)

    @mcp.tool(title="Close browser", annotations=END)
    async def close(ctx: Context, episode_id: Annotated[str | None, Field(description="Episode to end; default: the one this session started.")] = None) -> Closed:
        """Close the browser: ends the episode (its final state is checked now), as env_close does."""
        if episode_id == "":
            raise InputError("episode_id is empty; leave it out to end your own episode")
        found = episodes.resolve(episode_id, binding(ctx))
        await episodes.close(found)
        overrides.pop(found, None)
        return Closed(episode_id=found)
