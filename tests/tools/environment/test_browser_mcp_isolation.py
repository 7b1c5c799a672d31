"""What the browser environment keeps apart and keeps back, through a real MCP client.

Episodes are fenced to the site's origin (a canary server on 127.0.0.2 must get no request),
two episodes share nothing, the agent never sees gold answers or checks, failed actions reach
the trajectory rather than the server's stderr, and older argument names still work.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastmcp import Client

from taskloom.tools.settings import Settings

from .browser_site import CHROMIUM, SITE, Site, act, ref_of, refused, text_of, trajectory_of, trajectory_path

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")


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

    actions = trajectory_of(settings, closed["episode_id"]).actions
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

    ta, tb = trajectory_of(settings, a["episode_id"]), trajectory_of(settings, b["episode_id"])
    assert trajectory_path(settings, a["episode_id"]) != trajectory_path(settings, b["episode_id"])
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
        assert not result.is_error, text_of(result)
        started = result.structured_content
        assert started is not None
        assert started["instruction"] == instruction
        assert started["url"] == site.base + "search.html?q=sea"
        assert "12 results for “sea”" in started["snapshot"]
        visible = json.dumps(started, ensure_ascii=False) + "\n" + text_of(result) + "\n" + json.dumps(result.meta or {}, default=str)
        for secret in secrets:
            assert secret not in visible, f"{secret} shown to the agent"
        for key in ("gold_answer", "success_criteria", "gold_steps", "reference", "notes"):
            assert key not in started
        # nothing the agent can do next shows it either
        looked = await client.call_tool("browser_snapshot", {})
        answered = await client.call_tool("env_answer", {"answer": "3"})
        closed = await client.call_tool("env_close", {})
        for later in (looked, answered, closed):
            text = json.dumps(later.structured_content, ensure_ascii=False) + text_of(later)
            assert not any(secret in text for secret in secrets)

    trajectory = trajectory_of(settings, closed.structured_content["episode_id"])
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
    errors = [a.error for a in trajectory_of(settings, closed["episode_id"]).actions if a.error]
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
    actions = trajectory_of(settings, closed["episode_id"]).actions
    assert [a.name for a in actions] == ["navigate", "click", "type", "type", "select_option", "click"]
    assert all("ref" not in a.args for a in actions) and all("target" in a.args for a in actions[1:])
