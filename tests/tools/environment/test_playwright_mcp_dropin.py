"""A Playwright-MCP agent on a server bound to its task: no ``env_*`` call, the package's tools and arguments, browser_close to end.

The client below speaks only @playwright/mcp 0.0.83: its first call is
``browser_navigate`` to the task's start page, it uses ``browser_find``,
``browser_emulate_media``, ``filename`` arguments, ``scale`` and WebP screenshots and
``part``, and it ends with ``browser_close``. The episode is opened by that first call,
recorded, and checked when it closes.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from mcp.types import ImageContent, TextContent

from taskloom.server.app import build_server
from taskloom.tools.environment.mcp import Bound
from taskloom.tools.environment.site import serve_static
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.settings import Settings
from taskloom.tools.tasks import TaskStore
from taskloom.tools.tasks.model import Provenance, SuccessCriterion, Task
from taskloom.tools.workspace import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")]

START = '<!doctype html><title>Start</title><h1>Start</h1><a href="shelf.html">Open the shelf</a><button>Nothing</button>'
SHELF = """<!doctype html><title>Shelf</title><h1>Shelf</h1><ul aria-label="Books"><li>Dune</li><li>Emma</li><li>Ulysses</li></ul>
<p id="scheme">light</p>
<script>
  const dark = matchMedia('(prefers-color-scheme: dark)');
  dark.addEventListener('change', (e) => { document.getElementById('scheme').textContent = e.matches ? 'dark' : 'light'; });
</script>"""


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


async def _ok(client: Client[Any], tool: str, **args: Any) -> Any:
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert not result.is_error, f"{tool}({args}): {_text(result)}"
    return result


@pytest.mark.anyio
async def test_a_playwright_mcp_agent_runs_unchanged_on_a_bound_server(settings: Settings, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(START, encoding="utf-8")
    (site / "shelf.html").write_text(SHELF, encoding="utf-8")
    with serve_static(site) as served:
        task = Task(
            id="web-shelf", kind="web", type="navigate", instruction="Open the shelf.", start_url=served.url + "/index.html",
            allowed_domains=["127.0.0.1"], success=[SuccessCriterion(kind="url_matches", value=r"/shelf\.html$")],
            provenance=Provenance(graph_id="hand-written", generator="test"),
        )  # fmt: skip
        TaskStore(Workspace(settings.workspace)).save(task)
        episodes = tmp_path / "episodes"
        async with Client(build_server(settings, profile="agent", bound=Bound(task_id=task.id, agent="pw"), episodes_dir=episodes)) as client:
            first = (await _ok(client, "browser_navigate", url=task.start_url)).structured_content
            assert first["url"] == task.start_url and 'link "Open the shelf" [ref=e3]' in first["snapshot"]  # the tab's first document: eN, as in the package
            resumed = (await _ok(client, "env_start")).structured_content  # an agent that also knows env_start gets the same episode
            assert (resumed["instruction"], resumed["url"]) == ("Open the shelf.", task.start_url)
            found = (await _ok(client, "browser_find", text="open the SHELF")).structured_content
            assert found["matches"] == 1 and 'link "Open the shelf" [ref=e3]' in found["results"]
            missing = await client.call_tool("browser_click", {"target": "e77"}, raise_on_error=False)
            assert missing.is_error and _text(missing) == "Ref e77 not found in the current page snapshot. Try capturing new snapshot."
            shelf = (await _ok(client, "browser_click", target="e3", element="Open the shelf")).structured_content
            assert shelf["url"] == served.url + "/shelf.html"

            await _ok(client, "browser_emulate_media", colorScheme="dark")
            await _ok(client, "browser_wait_for", text="dark")  # the page's change listener runs after the emulation returns
            assert re.search(r"- paragraph \[ref=f1e\d+\]: dark$", (await _ok(client, "browser_snapshot")).structured_content["snapshot"], re.M)
            cleared = (await _ok(client, "browser_emulate_media", colorScheme=None)).structured_content
            assert cleared["colorScheme"] is None
            saved = (await _ok(client, "browser_snapshot", filename="../../shelf.yml", depth=2)).structured_content
            assert saved["snapshot"].startswith("(snapshot saved to files/shelf.yml")
            shot = await _ok(client, "browser_take_screenshot", scale="css", type="webp", filename="shelf.webp")
            [image] = [c for c in shot.content if isinstance(c, ImageContent)]
            assert image.mimeType == "image/webp" and base64.b64decode(image.data)[8:12] == b"WEBP"
            assert shot.structured_content["saved"] == "files/shelf.webp"
            requests = (await _ok(client, "browser_network_requests", static=False, filename="requests.json")).structured_content
            index = next(r["index"] for r in requests["requests"] if r["url"].endswith("/shelf.html"))
            part = (await _ok(client, "browser_network_request", index=index, part="response-headers")).structured_content
            assert "content-type" in part["response_headers"] and part["request_headers"] is None and part["body"] is None
            await _ok(client, "browser_resize", width=800.0, height=600.0)

            closed = (await _ok(client, "browser_close")).structured_content
            after = await client.call_tool("browser_snapshot", {}, raise_on_error=False)
            assert after.is_error and "has ended" in _text(after)
    assert resumed["episode_id"] == closed["episode_id"] and [p.name for p in episodes.iterdir()] == [closed["episode_id"]]
    folder = episodes / closed["episode_id"]
    assert (folder / "files" / "shelf.yml").read_text().startswith("- ") and (folder / "files" / "shelf.webp").read_bytes()[8:12] == b"WEBP"
    assert '"url"' in (folder / "files" / "requests.json").read_text()
    trajectory = load_trajectory(folder / "trajectory.jsonl")
    assert (trajectory.episode.task_id, trajectory.episode.agent) == ("web-shelf", "pw")
    names = [(a.name, a.error is None) for a in trajectory.actions]
    assert names[:4] == [("navigate", True), ("find", True), ("click", False), ("click", True)]  # the start page is loaded (and recorded) once
    assert ("emulate_media", True) in names and ("take_screenshot", True) in names and ("resize", True) in names
    assert trajectory.closed is not None and trajectory.closed.success is True
