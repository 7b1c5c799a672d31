"""The browser environment through a real MCP client: env_* and browser_* on the example site.

The site (examples/site) is served on 127.0.0.1 by ``http.server``; every request it gets is
logged, and a canary server on 127.0.0.2 must never get any (the episode is fenced to
127.0.0.1). Servers are built with the ``agent`` profile, as an agent under test sees them;
clients are opened inside the test bodies (in memory, so the session-bound episode is used
when ``episode_id`` is omitted).
"""

from __future__ import annotations

import base64
import functools
import http.server
import io
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.client.client import CallToolResult
from mcp.types import ImageContent, TextContent

from taskloom.server.app import build_server
from taskloom.tools.environment.trajectory import Trajectory, load_trajectory
from taskloom.tools.settings import Settings

SITE = Path(__file__).resolve().parents[3] / "examples" / "site"
CHROMIUM = Path("/usr/bin/chromium")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")


# -- the served site ------------------------------------------------------------------------


@dataclass
class Served:
    """One HTTP server and every request it received as (Host header, path)."""

    server: http.server.ThreadingHTTPServer
    requests: list[tuple[str, str]] = field(default_factory=list)

    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/"


class _LoggingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a directory and records each request on the server's ``Served``.

    ``/probe.html`` is a synthetic page that tries to reach the canary (image, fetch, iframe)
    and example.org, to check the domain fence covers sub-resources, not just navigations.
    """

    served: Served
    canary: Served | None = None

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - signature from the base class
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.served.requests.append((self.headers.get("Host", ""), self.path))
        if self.path.startswith("/probe.html") and self.canary is not None:
            canary = self.canary.base
            body = (
                "<!doctype html><html><head><title>Probe</title>"
                f'<link rel="stylesheet" href="{canary}probe.css"></head><body>'
                "<h1>Probe page</h1>"
                f'<img src="{canary}probe.png" alt="canary image">'
                f'<iframe src="{canary}probe-frame.html" title="canary frame"></iframe>'
                '<iframe src="https://example.org/" title="outside frame"></iframe>'
                f'<script>fetch("{canary}probe-fetch").catch(() => {{}});'
                'fetch("https://example.org/probe").catch(() => {});'
                "document.body.dataset.probed = 'yes';</script>"
                "<p>Probe done</p></body></html>"
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


def _serve(host: str, directory: Path, canary: Served | None = None) -> tuple[Served, threading.Thread]:
    class Handler(_LoggingHandler):
        pass

    Handler.canary = canary
    server = http.server.ThreadingHTTPServer((host, 0), functools.partial(Handler, directory=str(directory)))
    served = Served(server)
    Handler.served = served
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return served, thread


@dataclass
class Site:
    site: Served
    canary: Served

    @property
    def base(self) -> str:
        return self.site.base


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The example site on 127.0.0.1 and a canary server on 127.0.0.2 (another host, same machine)."""
    canary_dir = tmp_path_factory.mktemp("canary")
    (canary_dir / "secret.html").write_text("<title>Canary</title><p>canary secret</p>", encoding="utf-8")
    canary, canary_thread = _serve("127.0.0.2", canary_dir)
    served, thread = _serve("127.0.0.1", SITE, canary=canary)
    try:
        yield Site(served, canary)
    finally:
        for s, t in ((served, thread), (canary, canary_thread)):
            s.server.shutdown()
            s.server.server_close()
            t.join(timeout=5)


@pytest.fixture
def server(settings: Settings) -> Any:
    return build_server(settings, profile="agent")


# -- helpers --------------------------------------------------------------------------------


def ref_of(snapshot: str, role: str, name: str) -> str:
    """The ref the snapshot shows for the element with this role and accessible name (any ref form)."""
    match = re.search(rf'^\s*- {re.escape(role)} "{re.escape(name)}"[^\n]*?\[ref=([^\]]+)\]', snapshot, re.M)
    assert match, f"no {role} {name!r} in snapshot:\n{snapshot}"
    return match.group(1)


async def act(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    """Call a tool that must succeed; its structured result."""
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert not result.is_error, f"{tool}({args}) failed: {_text(result)}"
    assert result.structured_content is not None
    return result.structured_content


async def refused(client: Client, tool: str, **args: Any) -> str:
    """Call a tool that must fail with a readable one-line message (never a traceback); the message."""
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert result.is_error, f"{tool}({args}) unexpectedly succeeded: {result.structured_content}"
    message = _text(result)
    assert message.strip(), f"{tool} failed with an empty message"
    assert "Traceback" not in message and 'File "' not in message, message
    assert "\n" not in message.strip(), f"multi-line error from {tool}: {message!r}"
    return message


def _text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def _path(settings: Settings, episode_id: str) -> Path:
    """Where the recorder put an episode's trajectory (the agent profile does not say)."""
    return Path(settings.workspace).resolve() / "runs" / "episodes" / episode_id / "trajectory.jsonl"


def _trajectory(settings: Settings, episode_id: str) -> Trajectory:
    return load_trajectory(_path(settings, episode_id))


def _pixels(png: bytes) -> bytes:
    from PIL import Image

    return Image.open(io.BytesIO(png)).convert("RGB").tobytes()


# Refs in snapshots of every page after the first one look like ``f1e34`` (Playwright prefixes
# them with the document's sequence number), but tools/environment/episodes.py:27 accepts only
# ``e\d+`` and :28 (set-of-marks) finds only ``e\d+``: no element can be acted on after any
# navigation. Remove the marker once fixed (strict: an unexpected pass fails the run).


# -- a full episode -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_full_episode_is_acted_and_recorded(site: Site, settings: Settings) -> None:
    settings = settings.model_copy(update={"record_screenshots": True})  # per-step screenshots are opt-in
    server = build_server(settings, profile="agent")
    base = site.base
    async with Client(server) as client:
        started = await act(client, "env_start", url=base + "index.html")
        episode_id = started["episode_id"]
        assert episode_id.startswith("ep-")
        assert started["url"] == base + "index.html"
        assert started["title"] == "Harbourside Library"
        assert started["instruction"] is None
        assert re.search(r"\[ref=e\d+\]", started["snapshot"])
        assert 'searchbox "Search the catalogue"' in started["snapshot"]

        # search by typing into the search box and pressing Enter
        typed = await act(
            client,
            "browser_type",
            element="Search box",
            ref=ref_of(started["snapshot"], "searchbox", "Search the catalogue"),
            text="sea",
            submit=True,
        )
        assert typed["url"] == base + "search.html?q=sea"
        assert typed["title"] == "“sea” – Search – Harbourside Library"
        assert "12 results for “sea”" in typed["snapshot"]
        assert typed["action"] == "type(text='sea', element='Search the catalogue')"

        # filter by genre (the filter navigates at once)
        selected = await act(
            client, "browser_select_option", element="Genre filter", ref=ref_of(typed["snapshot"], "combobox", "Genre"), values=["Nature"]
        )
        assert selected["url"] == base + "search.html?q=sea&genre=nature"
        assert "3 results for “sea” in Nature" in selected["snapshot"]
        assert selected["action"] == "select(option='Nature', element='Genre')"

        looked = await act(client, "browser_snapshot")
        assert looked["url"] == selected["url"]

        # open a result
        book = await act(
            client,
            "browser_click",
            element="Seabirds result link",
            ref=ref_of(looked["snapshot"], "link", "Seabirds of the Western Cliffs"),
        )
        assert book["url"] == base + "book.html?id=b23"
        assert book["title"] == "Seabirds of the Western Cliffs – Harbourside Library"
        assert book["action"] == "click(text='Seabirds of the Western Cliffs', element='link')"

        # the loan dialog, with a card number that fails validation
        dialog = await act(
            client, "browser_click", element="Request a loan button", ref=ref_of(book["snapshot"], "button", "Request a loan")
        )
        assert 'dialog "Request a loan"' in dialog["snapshot"]
        invalid = await act(
            client,
            "browser_type",
            element="Card number",
            ref=ref_of(dialog["snapshot"], "textbox", "Library card number"),
            text="12ab",
            submit=True,
        )
        assert re.search(r"- alert \[ref=[^\]]+\]: .*Library card number must be exactly 8 digits\.", invalid["snapshot"])
        assert 'dialog "Request a loan"' in invalid["snapshot"]  # still open
        escaped = await act(client, "browser_press_key", key="Escape")
        assert 'dialog "Request a loan"' not in escaped["snapshot"]
        assert escaped["url"] == book["url"]

        back = await act(client, "browser_navigate_back")
        assert back["url"] == selected["url"]
        assert back["action"] == "go_back()"
        hovered = await act(
            client, "browser_hover", element="Seabirds result link", ref=ref_of(back["snapshot"], "link", "Seabirds of the Western Cliffs")
        )
        assert hovered["url"] == back["url"]
        scrolled = await act(client, "browser_scroll", direction="down", amount=400)
        assert scrolled["action"] == "scroll(direction='down')"
        waited = await act(client, "browser_wait_for", text="3 results")
        assert waited["action"] == "wait(text='3 results')"

        plain = await client.call_tool("browser_take_screenshot", {})
        marked = await client.call_tool("browser_take_screenshot", {"marks": True})
        images = []
        for shot in (plain, marked):
            assert not shot.is_error
            (content,) = [c for c in shot.content if isinstance(c, ImageContent)]
            assert content.mimeType == "image/png"
            data = base64.b64decode(content.data)
            assert data.startswith(PNG_SIGNATURE)
            images.append(data)
        assert _pixels(images[0]) != _pixels(images[1]), "set-of-marks screenshot has no marks drawn"

        answered = await act(client, "env_answer", answer="3 books")
        assert answered == {"episode_id": episode_id, "answer": "3 books"}
        closed = await act(client, "env_close")
        assert closed["episode_id"] == episode_id
        assert closed["trajectory"] is None and started["trajectory"] is None  # no workspace paths for agents
        assert "call env_start" in await refused(client, "browser_snapshot")

    trajectory = _trajectory(settings, episode_id)
    folder = _path(settings, episode_id).parent
    assert trajectory.id == episode_id
    assert trajectory.episode.env == "browser"
    assert trajectory.episode.start_url == base + "index.html"
    search, nature, b23 = base + "search.html?q=sea", base + "search.html?q=sea&genre=nature", base + "book.html?id=b23"
    expected = [
        # name, canonical, url_before, url_after
        ("navigate", f"navigate(url='{base}index.html')", "about:blank", base + "index.html"),
        ("type", "type(text='sea', element='Search the catalogue')", base + "index.html", search),
        ("select_option", "select(option='Nature', element='Genre')", search, nature),
        ("snapshot", "snapshot()", nature, nature),
        ("click", "click(text='Seabirds of the Western Cliffs', element='link')", nature, b23),
        ("click", "click(text='Request a loan', element='button')", b23, b23),
        ("type", "type(text='12ab', element='Library card number')", b23, b23),
        ("press_key", "press(key='Escape')", b23, b23),
        ("navigate_back", "go_back()", b23, nature),
        ("hover", "hover(text='Seabirds of the Western Cliffs', element='link')", nature, nature),
        ("scroll", "scroll(direction='down')", nature, nature),
        ("wait_for", "wait(text='3 results')", nature, nature),
        ("take_screenshot", "screenshot()", nature, nature),
        ("take_screenshot", "screenshot(marks='yes')", nature, nature),
    ]
    got = [(a.name, a.canonical, a.url_before, a.url_after) for a in trajectory.actions]
    assert got == expected
    assert [a.index for a in trajectory.actions] == list(range(len(expected)))
    assert all(a.error is None for a in trajectory.actions)
    assert all(a.t_start <= a.t_end for a in trajectory.actions)

    targets = {i: trajectory.actions[i].target for i in (1, 2, 4, 5, 6, 9)}
    assert all(t is not None for t in targets.values())
    assert (targets[1].role, targets[1].name, targets[1].selector) == ("searchbox", "Search the catalogue", "#search-input")
    assert (targets[2].role, targets[2].name, targets[2].selector) == ("combobox", "Genre", "#filter-genre")
    assert (targets[4].role, targets[4].name, targets[4].selector) == ("link", "Seabirds of the Western Cliffs", "#result-link-b23")
    assert (targets[5].role, targets[5].name, targets[5].selector) == ("button", "Request a loan", "#request-loan")
    assert (targets[6].role, targets[6].name, targets[6].selector) == ("textbox", "Library card number", "#loan-card")
    assert (targets[9].role, targets[9].selector) == ("link", "#result-link-b23")
    # recorded under Playwright MCP's current name (target), whichever name the agent used
    assert trajectory.actions[1].args == {"element": "Search box", "target": trajectory.actions[1].target.ref, "text": "sea", "submit": True}
    assert trajectory.actions[2].args["values"] == ["Nature"]
    assert all(
        a.target is None
        for a in trajectory.actions
        if a.name in ("navigate", "snapshot", "press_key", "navigate_back", "scroll", "wait_for")
    )

    shots = [a.screenshot for a in trajectory.actions if a.name != "snapshot"]
    assert all(shots), "every action but snapshot has a screenshot"
    for shot in shots:
        path = folder / shot
        assert path.is_file() and path.read_bytes().startswith(PNG_SIGNATURE), path
    assert (folder / trajectory.actions[-1].screenshot).read_bytes() == images[1]  # the marked screenshot is the one stored
    assert trajectory.answer == "3 books"
    assert trajectory.closed is not None and trajectory.closed.status == "closed"


@pytest.mark.anyio
async def test_screenshots_are_taken_only_when_asked_for(site: Site, settings: Settings) -> None:
    """With per-step screenshots off, actions record everything else; an explicit browser_take_screenshot still stores one."""
    settings = settings.model_copy(update={"record_screenshots": False})
    async with Client(build_server(settings, profile="agent")) as client:
        started = await act(client, "env_start", url=site.base + "index.html")
        genres = await act(client, "browser_click", element="Genres link", ref=ref_of(started["snapshot"], "link", "Genres"))
        shot = await client.call_tool("browser_take_screenshot", {})
        closed = await act(client, "env_close")
    assert genres["url"] == site.base + "genres.html" and "[ref=" in genres["snapshot"]
    actions = _trajectory(settings, closed["episode_id"]).actions
    assert [a.name for a in actions] == ["navigate", "click", "take_screenshot"]
    click = actions[1]
    assert click.screenshot is None and click.error is None
    assert click.target is not None and (click.target.role, click.target.name) == ("link", "Genres") and click.target.selector
    assert (click.url_before, click.url_after, click.canonical) == (site.base + "index.html", site.base + "genres.html", "click(text='Genres', element='link')")
    folder = _path(settings, closed["episode_id"]).parent
    assert [p.name for p in (folder / "screenshots").iterdir()] == [Path(actions[2].screenshot or "").name]
    png = base64.b64decode(next(c for c in shot.content if isinstance(c, ImageContent)).data)
    assert (folder / (actions[2].screenshot or "")).read_bytes() == png


@pytest.mark.anyio
async def test_each_observation_shows_the_page_the_action_led_to(site: Site, settings: Settings) -> None:
    """Without screenshots there is no pause before the snapshot: the page an action navigated to
    (waited for by Playwright, as after Enter, or not, as after choosing an option) must be shown
    with the results it fetches after loading, five times in a row."""
    settings = settings.model_copy(update={"record_screenshots": False})
    base = site.base
    async with Client(build_server(settings, profile="agent")) as client:
        for _ in range(5):
            started = await act(client, "env_start", url=base + "index.html")
            box = ref_of(started["snapshot"], "searchbox", "Search the catalogue")
            typed = await act(client, "browser_type", element="Search box", ref=box, text="sea", submit=True)
            assert typed["url"] == base + "search.html?q=sea" and "12 results for “sea”" in typed["snapshot"]
            genre = ref_of(typed["snapshot"], "combobox", "Genre")
            selected = await act(client, "browser_select_option", element="Genre filter", ref=genre, values=["Nature"])
            assert selected["url"] == base + "search.html?q=sea&genre=nature" and "3 results for “sea” in Nature" in selected["snapshot"]
            closed = await act(client, "env_close")
            actions = _trajectory(settings, closed["episode_id"]).actions
            assert [a.url_after for a in actions] == [base + "index.html", typed["url"], selected["url"]]


@pytest.mark.anyio
async def test_refs_from_a_snapshot_after_navigation_are_accepted(server: Any, site: Site) -> None:
    """The minimal repro: the second page's snapshot gives refs that must work (and be marked)."""
    async with Client(server) as client:
        await act(client, "env_start", url=site.base + "index.html")
        search = await act(client, "browser_navigate", url=site.base + "search.html?q=sea")
        link = ref_of(search["snapshot"], "link", "Seabirds of the Western Cliffs")
        plain = await client.call_tool("browser_take_screenshot", {})
        marked = await client.call_tool("browser_take_screenshot", {"marks": True})
        shots = [base64.b64decode(next(c for c in r.content if isinstance(c, ImageContent)).data) for r in (plain, marked)]
        clicked = await client.call_tool("browser_click", {"element": "Seabirds result link", "ref": link}, raise_on_error=False)
        await act(client, "env_close")
    assert not clicked.is_error, f"ref {link} from the latest snapshot was refused: {_text(clicked)}"
    assert clicked.structured_content["url"] == site.base + "book.html?id=b23"
    assert _pixels(shots[0]) != _pixels(shots[1]), "no set-of-marks drawn for the refs of this page"


# -- failures the agent must be able to read ------------------------------------------------


@pytest.mark.anyio
async def test_stale_refs_fail_readably_and_the_episode_goes_on(server: Any, site: Site, settings: Settings) -> None:
    base = site.base
    async with Client(server) as client:
        started = await act(client, "env_start", url=base + "index.html")
        home = started["snapshot"]

        unknown = await refused(client, "browser_click", element="Nothing", ref="e99999")
        assert "e99999" in unknown and "browser_snapshot" in unknown

        genres = await act(client, "browser_click", element="Genres link", ref=ref_of(home, "link", "Genres"))
        assert genres["url"] == base + "genres.html"

        stale_ref = ref_of(home, "searchbox", "Search the catalogue")  # from the page before navigating
        stale = await refused(client, "browser_type", element="Search box", ref=stale_ref, text="sea")
        assert stale_ref in stale and "browser_snapshot" in stale

        fresh = await act(client, "browser_snapshot")
        assert fresh["url"] == base + "genres.html"
        back = await act(client, "browser_navigate_back")
        assert back["url"] == base + "index.html"
        closed = await act(client, "env_close")

    actions = _trajectory(settings, closed["episode_id"]).actions
    assert [(a.name, a.error is not None) for a in actions] == [
        ("navigate", False),
        ("click", True),
        ("click", False),
        ("type", True),
        ("snapshot", False),
        ("navigate_back", False),
    ]
    assert actions[1].error == unknown and actions[1].target is not None and actions[1].target.ref == "e99999"
    assert actions[1].url_before == actions[1].url_after == base + "index.html"
    assert actions[1].screenshot is None
    assert actions[3].error == stale and actions[3].target is not None and actions[3].target.ref == stale_ref
    assert actions[3].url_before == actions[3].url_after == base + "genres.html"
    assert actions[3].args == {"element": "Search box", "target": stale_ref, "text": "sea", "submit": False}


@pytest.mark.anyio
async def test_malformed_ref_names_the_expected_form(server: Any, site: Site) -> None:
    async with Client(server) as client:
        await act(client, "env_start", url=site.base + "index.html")
        for tool, extra in (
            ("browser_click", {}),
            ("browser_hover", {}),
            ("browser_type", {"text": "x"}),
            ("browser_select_option", {"values": ["Nature"]}),
        ):
            message = await refused(client, tool, element="Search button", ref="button-3", **extra)
            assert "button-3" in message
            assert "[ref=eN]" in message or re.search(r"'e\d+'", message), message
        still = await act(client, "browser_snapshot")
        assert still["url"] == site.base + "index.html"
        await act(client, "env_close")


@pytest.mark.anyio
async def test_other_domains_are_refused_and_nothing_leaves_loopback(server: Any, site: Site, settings: Settings) -> None:
    base, canary = site.base, site.canary.base
    site.site.requests.clear()
    site.canary.requests.clear()
    async with Client(server) as client:
        started = await act(client, "env_start", url=base + "index.html")

        outside = await refused(client, "browser_navigate", url="https://example.org/")
        assert "https://example.org/" in outside and "allowed domains" in outside and "127.0.0.1" in outside
        other_host = await refused(client, "browser_navigate", url=canary + "secret.html")
        assert "allowed domains" in other_host

        # the episode is still usable, and still where it was
        here = await act(client, "browser_snapshot")
        assert here["url"] == base + "index.html"

        # the footer's external link: the click is refused (nothing is fetched) and the page goes back
        message = await refused(client, "browser_click", element="Example.org footer link", ref=ref_of(started["snapshot"], "link", "Example.org"))
        assert "outside this episode's allowed domains" in message
        back = await act(client, "browser_snapshot")
        assert back["url"] == base + "index.html"

        # a page on the allowed host that tries to load images, frames and fetches from elsewhere
        probe = await act(client, "browser_navigate", url=base + "probe.html")
        assert probe["url"] == base + "probe.html"
        await act(client, "browser_wait_for", text="Probe done")
        await act(client, "browser_wait_for", time=0.5)
        usable = await act(client, "browser_navigate", url=base + "search.html?q=sea")
        assert "12 results for “sea”" in usable["snapshot"]
        closed = await act(client, "env_close")

    assert site.canary.requests == [], f"requests reached another host: {site.canary.requests}"
    site_port = site.site.server.server_address[1]
    assert site.site.requests, "the site got no requests"
    assert {host for host, _ in site.site.requests} == {f"127.0.0.1:{site_port}"}
    paths = [path for _, path in site.site.requests]
    assert "/index.html" in paths and "/probe.html" in paths and "/search.html?q=sea" in paths
    for path in paths:
        local = path.split("?")[0].lstrip("/")
        assert local == "probe.html" or (SITE / local).is_file() or local == "favicon.ico", path

    actions = _trajectory(settings, closed["episode_id"]).actions
    refusals = [a for a in actions if a.name == "navigate" and a.error]
    assert [a.args["url"] for a in refusals] == ["https://example.org/", canary + "secret.html"]
    assert refusals[0].error == outside
    assert all(a.url_before == a.url_after == base + "index.html" and a.screenshot is None for a in refusals)


@pytest.mark.anyio
async def test_browser_tools_before_env_start_say_call_env_start(server: Any) -> None:
    async with Client(server) as client:
        for tool, args in (
            ("browser_snapshot", {}),
            ("browser_click", {"element": "Search button", "ref": "e9"}),
            ("browser_navigate", {"url": "http://127.0.0.1:9/"}),
            ("browser_take_screenshot", {}),
            ("env_answer", {"answer": "42"}),
            ("env_close", {}),
        ):
            message = await refused(client, tool, **args)
            assert "env_start" in message, f"{tool}: {message}"
        unknown = await refused(client, "browser_snapshot", episode_id="ep-000000000000")
        assert "ep-000000000000" in unknown and "env_start" in unknown


# -- isolation ------------------------------------------------------------------------------


async def _request_loan(client: Client, episode_id: str, snapshot: str) -> dict[str, Any]:
    """Fill in and submit the loan-request dialog on a book page (Northgate branch)."""
    ep = {"episode_id": episode_id}
    dialog = await act(client, "browser_click", element="Request a loan", ref=ref_of(snapshot, "button", "Request a loan"), **ep)
    snap = dialog["snapshot"]
    await act(client, "browser_type", element="Your name", ref=ref_of(snap, "textbox", "Your name"), text="Ada Finch", **ep)
    await act(client, "browser_type", element="Card", ref=ref_of(snap, "textbox", "Library card number"), text="12345678", **ep)
    await act(client, "browser_select_option", element="Branch", ref=ref_of(snap, "combobox", "Pickup branch"), values=["Northgate"], **ep)
    return await act(client, "browser_click", element="Submit request", ref=ref_of(snap, "button", "Submit request"), **ep)


@pytest.mark.anyio
async def test_two_episodes_are_isolated(server: Any, site: Site, settings: Settings) -> None:
    book = site.base + "book.html?id=b02"
    async with Client(server) as client:
        a = await act(client, "env_start", url=book)
        b = await act(client, "env_start", url=book)
        assert a["episode_id"] != b["episode_id"]

        requested = await _request_loan(client, a["episode_id"], a["snapshot"])
        assert "Loan requested: Salt on the Stairwell — pick up at Northgate" in requested["snapshot"]
        assert 'button "Requested" [disabled]' in requested["snapshot"]

        # B does not see A's localStorage, even after a reload
        b_again = await act(client, "browser_navigate", url=book, episode_id=b["episode_id"])
        assert 'button "Request a loan"' in b_again["snapshot"]
        assert "Requested" not in b_again["snapshot"]
        a_search = await act(client, "browser_navigate", url=site.base + "search.html?q=sea", episode_id=a["episode_id"])
        b_search = await act(client, "browser_navigate", url=site.base + "search.html?q=sea", episode_id=b["episode_id"])
        assert "Requested" in a_search["snapshot"]
        assert "Requested" not in b_search["snapshot"]

        # without episode_id, the session's episode is the one started last (B)
        implicit = await act(client, "browser_snapshot")
        assert implicit["url"] == b_search["url"]

        await act(client, "env_close", episode_id=a["episode_id"])
        still_b = await act(client, "browser_snapshot", episode_id=b["episode_id"])
        assert still_b["url"] == b_search["url"]
        gone = await refused(client, "browser_snapshot", episode_id=a["episode_id"])
        assert a["episode_id"] in gone
        await act(client, "env_close", episode_id=b["episode_id"])

    ta, tb = _trajectory(settings, a["episode_id"]), _trajectory(settings, b["episode_id"])
    assert _path(settings, a["episode_id"]) != _path(settings, b["episode_id"])
    assert (ta.id, tb.id) == (a["episode_id"], b["episode_id"])
    assert [x.name for x in ta.actions] == ["navigate", "click", "type", "type", "select_option", "click", "navigate"]
    assert [x.name for x in tb.actions] == ["navigate", "navigate", "navigate", "snapshot", "snapshot"]
    assert ta.closed is not None and tb.closed is not None


# -- tasks never show gold data -------------------------------------------------------------


@pytest.mark.anyio
async def test_task_start_shows_instruction_but_no_gold(server: Any, site: Site, settings: Settings) -> None:
    gold = {
        "gold_answer": "GOLD-ANSWER-7f3a9",
        "success_criteria": {"must_visit": "GOLD-CRITERIA-91bc2", "answer_contains": "GOLD-CRITERIA-55e0d"},
        "gold_steps": ["GOLD-STEP-d4e21 click", "GOLD-STEP-88a0c type"],
        "answer": "GOLD-ANSWER-TWO-3c1d",
        "reference": {"answer": "GOLD-REFERENCE-0b7e"},
        "notes": "GOLD-NOTES-6a2f",
    }
    instruction = "How many books match 'sea' in the Nature genre?"
    task = {
        "id": "web-sea-nature",
        "kind": "web",
        "instruction": instruction,
        "start_url": site.base + "search.html?q=sea",
        "allowed_domains": ["127.0.0.1"],
        **gold,
    }
    tasks = settings.workspace / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / "web-sea-nature.json").write_text(json.dumps(task), encoding="utf-8")
    secrets = [
        "GOLD-ANSWER-7f3a9",
        "GOLD-CRITERIA-91bc2",
        "GOLD-CRITERIA-55e0d",
        "GOLD-STEP-d4e21",
        "GOLD-STEP-88a0c",
        "GOLD-ANSWER-TWO-3c1d",
        "GOLD-REFERENCE-0b7e",
        "GOLD-NOTES-6a2f",
        "GOLD",
    ]

    async with Client(server) as client:
        result = await client.call_tool("env_start", {"task_id": "web-sea-nature"}, raise_on_error=False)
        assert not result.is_error, _text(result)
        started = result.structured_content
        assert started is not None
        assert started["instruction"] == instruction
        assert started["url"] == site.base + "search.html?q=sea"
        assert "12 results for “sea”" in started["snapshot"]
        visible = json.dumps(started, ensure_ascii=False) + "\n" + _text(result) + "\n" + json.dumps(result.meta or {}, default=str)
        for secret in secrets:
            assert secret not in visible, f"{secret} shown to the agent"
        for key in ("gold_answer", "success_criteria", "gold_steps", "reference", "notes"):
            assert key not in started
        # nothing the agent can do next shows it either
        looked = await client.call_tool("browser_snapshot", {})
        answered = await client.call_tool("env_answer", {"answer": "3"})
        closed = await client.call_tool("env_close", {})
        for later in (looked, answered, closed):
            text = json.dumps(later.structured_content, ensure_ascii=False) + _text(later)
            assert not any(secret in text for secret in secrets)

    trajectory = _trajectory(settings, closed.structured_content["episode_id"])
    assert trajectory.episode.task_id == "web-sea-nature"
    assert trajectory.episode.start_url == site.base + "search.html?q=sea"


@pytest.mark.anyio
async def test_failed_actions_go_to_the_trajectory_not_to_stderr(server: Any, site: Site, settings: Settings, capfd: pytest.CaptureFixture[str]) -> None:
    """A stale ref is the agent's business: it reads the message and the trajectory keeps it; the server's stderr stays quiet."""
    async with Client(server) as client:
        await act(client, "env_start", url=site.base + "index.html")
        capfd.readouterr()
        message = await refused(client, "browser_click", target="e99999")
        tab = await refused(client, "browser_tabs", action="select", index=3)
        closed = await act(client, "env_close")
    err = capfd.readouterr().err
    assert "e99999" not in err and "no tab 3" not in err and "Error calling tool" not in err, err
    errors = [a.error for a in _trajectory(settings, closed["episode_id"]).actions if a.error]
    assert errors == [message, tab]


@pytest.mark.anyio
async def test_older_argument_names_are_still_accepted(server: Any, site: Site, settings: Settings) -> None:
    """Agents written for Playwright MCP before 0.0.70 pass ref (startRef/endRef, ref in form fields): still understood, recorded as target."""
    async with Client(server) as client:
        started = await act(client, "env_start", url=site.base + "book.html?id=b02")
        dialog = await act(client, "browser_click", element="Request a loan", ref=ref_of(started["snapshot"], "button", "Request a loan"))
        snap = dialog["snapshot"]
        filled = await act(
            client,
            "browser_fill_form",
            fields=[
                {"name": "Your name", "type": "textbox", "ref": ref_of(snap, "textbox", "Your name"), "value": "Ada Finch"},
                {"name": "Card", "type": "textbox", "ref": ref_of(snap, "textbox", "Library card number"), "value": "12345678"},
                {"name": "Branch", "type": "combobox", "ref": ref_of(snap, "combobox", "Pickup branch"), "value": "Northgate"},
            ],
        )
        done = await act(client, "browser_click", target=ref_of(filled["snapshot"], "button", "Submit request"))
        assert "Loan requested: Salt on the Stairwell — pick up at Northgate" in done["snapshot"]
        both = await client.call_tool("browser_click", {"target": "e1", "ref": "e1", "bogus": 1}, raise_on_error=False)
        assert both.is_error
        closed = await act(client, "env_close")
    actions = _trajectory(settings, closed["episode_id"]).actions
    assert [a.name for a in actions] == ["navigate", "click", "type", "type", "select_option", "click"]
    assert all("ref" not in a.args for a in actions) and all("target" in a.args for a in actions[1:])
