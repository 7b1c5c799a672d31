"""After an action the page is observed as it landed: a snapshot taken while landing is used only when the action set nothing off.

The page (served on 127.0.0.1 by a small server whose ``/slow.json`` answers after
0.3 s) has a button that changes the page at once, one that fetches data and shows it
when it arrives, and a link to another page.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastmcp import Client

from taskloom.server.app import build_server
from taskloom.tools.environment import episodes, landing
from taskloom.tools.settings import Settings

from .browser_site import CHROMIUM, act, ref_of, serve_answers

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Landing</title></head><body>
<h1>Landing</h1>
<button onclick="document.getElementById('out').textContent = 'pressed'">Press</button>
<button onclick="fetch('slow.json').then(r => r.json()).then(d => { document.getElementById('out').textContent = 'data ' + d.word; })">Load</button>
<a href="other.html">Other page</a>
<p id="out">nothing yet</p>
</body></html>
"""
OTHER = "<!doctype html><html><head><title>Other</title></head><body><h1>The other page</h1></body></html>"


def _answer(path: str) -> tuple[bytes, str]:
    if path.startswith("/slow.json"):
        time.sleep(0.3)
        return json.dumps({"word": "pelican"}).encode(), "application/json"
    return (OTHER if path.startswith("/other.html") else PAGE).encode(), "text/html; charset=utf-8"


@pytest.fixture(scope="module")
def page_url() -> Iterator[str]:
    with serve_answers(_answer) as base:
        yield f"{base}/index.html"


@pytest.fixture
def snapshots_taken(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many snapshots were asked for while landing (``early``) and when observing (``late``); the calls themselves run unchanged."""
    counts = {"early": 0, "late": 0}

    def counted(key: str, aria: Any) -> Any:
        async def call(*args: Any, **kwargs: Any) -> str:
            counts[key] += 1
            result: str = await aria(*args, **kwargs)
            return result

        return call

    monkeypatch.setattr(landing, "aria", counted("early", landing.aria))
    monkeypatch.setattr(episodes, "aria", counted("late", episodes.aria))
    return counts


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("button", "shown", "late"),
    [
        ("Press", "pressed", 0),  # nothing set off: the snapshot taken while landing is the answer
        ("Load", "data pelican", 1),  # a request started: that snapshot showed the page before the data came, so a new one is taken
    ],
)
async def test_an_action_is_answered_with_the_page_as_it_landed(
    settings: Settings, page_url: str, snapshots_taken: dict[str, int], button: str, shown: str, late: int
) -> None:
    async with Client(build_server(settings, profile="agent")) as client:
        started = await act(client, "env_start", url=page_url)
        before = dict(snapshots_taken)
        clicked = await act(client, "browser_click", target=ref_of(started["snapshot"], "button", button))
        assert shown in clicked["snapshot"] and "nothing yet" not in clicked["snapshot"] and clicked["title"] == "Landing"
        assert snapshots_taken == {"early": before["early"] + 1, "late": before["late"] + late}
        await act(client, "env_close")


@pytest.mark.anyio
async def test_an_action_that_navigates_is_observed_on_the_new_page(settings: Settings, page_url: str) -> None:
    async with Client(build_server(settings, profile="agent")) as client:
        started = await act(client, "env_start", url=page_url)
        moved = await act(client, "browser_click", target=ref_of(started["snapshot"], "link", "Other page"))
        assert moved["url"].endswith("/other.html") and moved["title"] == "Other"
        assert "The other page" in moved["snapshot"] and "Landing" not in moved["snapshot"]
        await act(client, "env_close")
