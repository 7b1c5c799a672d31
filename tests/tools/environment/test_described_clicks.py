"""Pointer actions on a shown ref are described while they run: the record shows the element as it was, a ref that names nothing fails at once, and the action sent alongside never lands elsewhere.

The page (served from a temporary folder on 127.0.0.1) has a button that renames itself
when pressed, and one that replaces another button with a new one of the same role and
name, so that a ref the agent was shown goes stale while an element that looks the same
takes its place. A second page's scripts break the describing code, as a click that
navigates away before the description answers does on a loaded machine.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastmcp import Client

from taskloom.server.app import build_server
from taskloom.tools.environment.site import serve_static
from taskloom.tools.settings import Settings

from .browser_site import CHROMIUM, act, ref_of, refused, trajectory_of

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Buttons</title></head><body>
<h1>Buttons</h1>
<button id="follow" onclick="this.textContent = 'Following'">Follow</button>
<button id="press" onclick="note('old')">Press me</button>
<button id="swap" onclick="swap()">Swap</button>
<p id="log">log:</p>
<script>
  function note(word) { document.getElementById('log').textContent += ' ' + word; }
  function swap() {
    document.getElementById('press').remove();
    const fresh = document.createElement('button');
    fresh.id = 'press-again';
    fresh.textContent = 'Press me';
    fresh.onclick = () => note('new');
    document.body.insertBefore(fresh, document.getElementById('log'));
  }
</script>
</body></html>
"""


#: A page whose scripts break the describing code (it reads attributes in the page's own world).
UNDESCRIBABLE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Books</title></head><body>
<a href="index.html">Fog Over Pier Seven</a>
<script>Element.prototype.getAttribute = () => { throw new Error('no attributes here'); };</script>
</body></html>
"""


@pytest.fixture(scope="module")
def buttons(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("buttons")
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    (folder / "books.html").write_text(UNDESCRIBABLE, encoding="utf-8")
    with serve_static(folder) as site:
        yield site.url.rstrip("/") + "/index.html"


@pytest.mark.anyio
async def test_a_clicked_element_is_recorded_as_it_was_before_the_click(settings: Settings, buttons: str) -> None:
    async with Client(build_server(settings, profile="agent")) as client:
        started = await act(client, "env_start", url=buttons)
        clicked = await act(client, "browser_click", target=ref_of(started["snapshot"], "button", "Follow"))
        assert 'button "Following"' in clicked["snapshot"]  # the click happened
        closed = await act(client, "env_close")
    click = trajectory_of(settings, closed["episode_id"]).actions[-1]
    assert click.target is not None and (click.target.role, click.target.name, click.target.selector) == ("button", "Follow", "#follow")
    assert "Follow" in click.canonical and "Following" not in click.canonical


@pytest.mark.anyio
@pytest.mark.integration
async def test_a_stale_shown_ref_fails_at_once_and_its_click_never_lands(settings: Settings, buttons: str) -> None:
    async with Client(build_server(settings, profile="agent")) as client:
        started = await act(client, "env_start", url=buttons)
        old = ref_of(started["snapshot"], "button", "Press me")
        pressed = await act(client, "browser_click", target=old)
        assert "log: old" in pressed["snapshot"]
        swapped = await act(client, "browser_click", target=ref_of(pressed["snapshot"], "button", "Swap"))
        new = ref_of(swapped["snapshot"], "button", "Press me")
        assert new != old  # the element that took the old one's place has a ref of its own

        message = await refused(client, "browser_click", target=old)
        assert message == f"Ref {old} not found in the current page snapshot. Try capturing new snapshot."  # Playwright MCP's words
        # The click sent alongside the description retries until the tab's action timeout (5 s):
        # snapshots in that time give out fresh refs, and none of them may be the stale one.
        await act(client, "browser_snapshot")
        await act(client, "browser_wait_for", time=5.5)
        after = await act(client, "browser_snapshot")
        assert "log: old" in after["snapshot"] and "new" not in after["snapshot"]
        assert ref_of(after["snapshot"], "button", "Press me") == new
        closed = await act(client, "env_close")

    actions = trajectory_of(settings, closed["episode_id"]).actions
    assert [(a.name, a.error is None) for a in actions] == [
        ("navigate", True),
        ("click", True),
        ("click", True),
        ("click", False),
        ("snapshot", True),
        ("wait_for", True),
        ("snapshot", True),
    ]
    stale = actions[3]
    assert stale.error == message and stale.target is not None and stale.target.ref == old and stale.target.selector is None
    assert actions[1].target is not None and actions[1].target.selector == "#press"


@pytest.mark.anyio
async def test_a_click_the_page_cannot_describe_is_recorded_as_the_snapshot_showed_it(settings: Settings, buttons: str) -> None:
    async with Client(build_server(settings, profile="agent")) as client:
        started = await act(client, "env_start", url=buttons.replace("index.html", "books.html"))
        clicked = await act(client, "browser_click", target=ref_of(started["snapshot"], "link", "Fog Over Pier Seven"))
        assert clicked["url"] == buttons  # the click went through
        closed = await act(client, "env_close")
    click = trajectory_of(settings, closed["episode_id"]).actions[-1]
    assert click.error is None and click.target is not None
    assert (click.target.role, click.target.name, click.target.selector) == ("link", "Fog Over Pier Seven", None)  # no selector: the page never answered
    assert "Fog Over Pier Seven" in click.canonical
