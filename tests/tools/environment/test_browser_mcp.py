"""The browser environment through a real MCP client: env_* and browser_* on the example site.

An episode acted and recorded end to end, screenshots only when asked for, observations of the
page each action led to, and refs (fresh, stale, malformed). The site and its canary are served
by ``browser_site``; servers have the ``agent`` profile, as an agent under test sees them;
clients are opened inside the test bodies (in memory, so the session-bound episode is used when
``episode_id`` is omitted).
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from mcp.types import ImageContent

from taskloom.server.app import build_server
from taskloom.tools.evaluate.atif import to_atif
from taskloom.tools.evaluate.model import EpisodeResult
from taskloom.tools.settings import Settings

from .browser_site import CHROMIUM, PNG_SIGNATURE, Site, act, pixels, ref_of, refused, text_of, trajectory_of, trajectory_path

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")


# -- a full episode -------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.integration
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
        assert pixels(images[0]) != pixels(images[1]), "set-of-marks screenshot has no marks drawn"

        answered = await act(client, "env_answer", answer="3 books")
        assert answered == {"episode_id": episode_id, "answer": "3 books"}
        closed = await act(client, "env_close")
        assert closed["episode_id"] == episode_id
        assert closed["trajectory"] is None and started["trajectory"] is None  # no workspace paths for agents
        assert "call env_start" in await refused(client, "browser_snapshot")

    trajectory = trajectory_of(settings, episode_id)
    folder = trajectory_path(settings, episode_id).parent
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
    actions = trajectory_of(settings, closed["episode_id"]).actions
    assert [a.name for a in actions] == ["navigate", "click", "take_screenshot"]
    click = actions[1]
    assert click.screenshot is None and click.error is None
    assert click.target is not None and (click.target.role, click.target.name) == ("link", "Genres") and click.target.selector
    assert (click.url_before, click.url_after, click.canonical) == (site.base + "index.html", site.base + "genres.html", "click(text='Genres', element='link')")
    folder = trajectory_path(settings, closed["episode_id"]).parent
    assert [p.name for p in (folder / "screenshots").iterdir()] == [Path(actions[2].screenshot or "").name]
    png = base64.b64decode(next(c for c in shot.content if isinstance(c, ImageContent)).data)
    assert (folder / (actions[2].screenshot or "")).read_bytes() == png


@pytest.mark.anyio
@pytest.mark.integration
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
            actions = trajectory_of(settings, closed["episode_id"]).actions
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
    assert not clicked.is_error, f"ref {link} from the latest snapshot was refused: {text_of(clicked)}"
    assert clicked.structured_content["url"] == site.base + "book.html?id=b23"
    assert pixels(shots[0]) != pixels(shots[1]), "no set-of-marks drawn for the refs of this page"


# -- failures the agent must be able to read ------------------------------------------------


@pytest.mark.anyio
async def test_stale_refs_fail_readably_and_the_episode_goes_on(server: Any, site: Site, settings: Settings) -> None:
    base = site.base
    async with Client(server) as client:
        started = await act(client, "env_start", url=base + "index.html")
        home = started["snapshot"]

        unknown = await refused(client, "browser_click", element="Nothing", ref="e99999")
        assert unknown == "Ref e99999 not found in the current page snapshot. Try capturing new snapshot."  # Playwright MCP's words

        genres = await act(client, "browser_click", element="Genres link", ref=ref_of(home, "link", "Genres"))
        assert genres["url"] == base + "genres.html"

        stale_ref = ref_of(home, "searchbox", "Search the catalogue")  # from the page before navigating
        stale = await refused(client, "browser_type", element="Search box", ref=stale_ref, text="sea")
        assert stale == f"Ref {stale_ref} not found in the current page snapshot. Try capturing new snapshot."

        fresh = await act(client, "browser_snapshot")
        assert fresh["url"] == base + "genres.html"
        back = await act(client, "browser_navigate_back")
        assert back["url"] == base + "index.html"
        closed = await act(client, "env_close")

    actions = trajectory_of(settings, closed["episode_id"]).actions
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
async def test_each_action_records_the_mcp_tool_and_what_it_answered_the_agent(site: Site, settings: Settings) -> None:
    """The trajectory (and so the ATIF export) names the MCP tool the agent called and keeps the text it was answered, errors included."""
    settings = settings.model_copy(update={"record_screenshots": False})
    async with Client(build_server(settings, profile="agent")) as client:
        started = await act(client, "env_start", url=site.base + "index.html")
        box = ref_of(started["snapshot"], "searchbox", "Search the catalogue")
        typed = await client.call_tool("browser_type", {"element": "Search box", "target": box, "text": "sea", "submit": True}, raise_on_error=False)
        missed = await client.call_tool("browser_click", {"element": "Nothing", "target": "e999"}, raise_on_error=False)
        closed = await act(client, "env_close")
    assert not typed.is_error and missed.is_error
    trajectory = trajectory_of(settings, closed["episode_id"])
    assert [(a.tool, a.name) for a in trajectory.actions] == [("env_start", "navigate"), ("browser_type", "type"), ("browser_click", "click")]
    assert trajectory.actions[1].observation == text_of(typed) and "- [Snapshot](files/page-1.yml)" in (trajectory.actions[1].observation or "")
    assert "12 results for “sea”" in (trajectory_path(settings, closed["episode_id"]).parent / "files" / "page-1.yml").read_text(encoding="utf-8")
    assert trajectory.actions[2].observation == f"error: {text_of(missed)}" and "e999" in text_of(missed)
    result = EpisodeResult(task_id="t", task_kind="web", task_type="search", difficulty="easy", agent="probe", success=False)
    steps = [s for s in to_atif(result, trajectory, "Search the catalogue for sea.", "0.1.0").steps if s.source == "agent" and s.tool_calls]
    assert [s.tool_calls[0].function_name for s in steps if s.tool_calls] == ["env_start", "browser_type", "browser_click"]
    assert steps[1].observation is not None and steps[1].observation.results[0].content == text_of(typed)


@pytest.mark.anyio
@pytest.mark.parametrize("inline", [False, True])
async def test_actions_answer_in_markdown_sections_with_the_snapshot_saved_or_inline(site: Site, settings: Settings, inline: bool) -> None:
    """As Playwright MCP: an action's text is a few lines (the snapshot saved and linked) unless inline_snapshots; browser_snapshot shows it."""
    settings = settings.model_copy(update={"record_screenshots": False, "inline_snapshots": inline})
    async with Client(build_server(settings, profile="agent")) as client:
        started = await act(client, "env_start", url=site.base + "index.html")
        box = ref_of(started["snapshot"], "searchbox", "Search the catalogue")
        typed = await client.call_tool("browser_type", {"element": "Search box", "target": box, "text": "sea", "submit": True})
        looked = await client.call_tool("browser_snapshot", {})
        closed = await act(client, "env_close")
    snapshot = typed.structured_content["snapshot"]  # the structured content keeps everything
    assert "12 results for “sea”" in snapshot and len(snapshot) > 2_000
    text = text_of(typed)
    assert text.startswith("### Action\n- type(") and f"### Page\n- Page URL: {site.base}search.html?q=sea\n- Page Title: “sea” – Search" in text
    saved = trajectory_path(settings, closed["episode_id"]).parent / "files" / "page-1.yml"
    if inline:
        assert text.endswith(f"### Snapshot\n```yaml\n{snapshot}\n```") and not saved.exists()
    else:
        assert text.endswith("### Snapshot\n- [Snapshot](files/page-1.yml)") and len(text) < 300
        assert saved.read_text(encoding="utf-8") == snapshot
    shown = text_of(looked)
    assert shown.startswith("### Page\n") and "### Action" not in shown and "12 results for “sea”" in shown
