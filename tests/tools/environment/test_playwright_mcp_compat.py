"""Playwright MCP parity: a client that knows only current Playwright MCP names and argument shapes works unchanged.

Every call here uses ``target`` (never ``ref``) and leaves ``element`` out, as prompts
written for Playwright MCP 0.0.70 and later do. The example site's bundled tasks are
solved through the agent profile; a small playground page (served from a temporary
folder on 127.0.0.1) covers what the site lacks: a ``target=_blank`` link, ``confirm``
and ``prompt`` dialogs, a form of every field type, drag and drop, a drop zone for files
and text, a file input, console output, a fetch, a resize readout and a long list.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from mcp.types import TextContent

from taskloom.harness.service import load_tasks_file
from taskloom.server.app import build_server
from taskloom.tools.environment.site import serve_static
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.settings import Settings
from taskloom.tools.tasks import TaskStore
from taskloom.tools.tasks.model import GoldStep, Task
from taskloom.tools.workspace import Workspace

ROOT = Path(__file__).resolve().parents[3]
TASKS = ROOT / "examples" / "tasks" / "example-site-composite-tasks.jsonl"
CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [pytest.mark.integration, pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")]

PLAYGROUND = """<!doctype html>
<html><head><meta charset="utf-8"><title>Playground</title></head><body>
<h1>Playground</h1>
<a href="second.html" target="_blank">Open second</a>
<button onclick="document.getElementById('out').textContent = confirm('Delete the record?') ? 'accepted' : 'dismissed'">Delete</button>
<button onclick="document.getElementById('out').textContent = 'hello ' + prompt('Your name?', 'nobody')">Greet</button>
<p id="out">nothing yet</p>
<form onsubmit="return false">
  <label>Name <input id="name"></label>
  <label><input type="checkbox" id="agree"> Agree</label>
  <label>Colour <select id="colour"><option>Red</option><option>Blue</option></select></label>
  <label>Volume <input type="range" id="volume" min="0" max="10" value="1"></label>
  <button onclick="const v = (id) => document.getElementById(id); v('summary').textContent = 'summary: ' + [v('name').value, v('agree').checked, v('colour').value, v('volume').value].join(' / ')">Show</button>
</form>
<p id="summary">no summary</p>
<div id="card" draggable="true" ondragstart="event.dataTransfer.setData('text/plain', 'Card')">Card</div>
<div id="zone" ondragover="event.preventDefault()" ondrop="event.preventDefault(); this.textContent = 'dropped ' + event.dataTransfer.getData('text/plain')">Drop here</div>
<div id="dropzone" ondragover="event.preventDefault()" ondrop="event.preventDefault(); document.getElementById('dropped').textContent = 'got ' + [...event.dataTransfer.files].map(f => f.name).join(',') + ' + ' + event.dataTransfer.getData('text/plain')">Drop files here</div>
<p id="dropped">nothing dropped</p>
<label>Attachment <input type="file" id="file" onchange="document.getElementById('uploaded').textContent = 'uploaded ' + this.files[0].name"></label>
<p id="uploaded">no upload</p>
<p id="size">size unknown</p>
<p id="data">no data</p>
<ul aria-label="Items">ITEMS</ul>
<script>
  console.log('playground ready');
  console.error('playground broke something');
  window.addEventListener('resize', () => { document.getElementById('size').textContent = 'size ' + innerWidth + 'x' + innerHeight; });
  fetch('data.json').then(r => r.json()).then(d => { document.getElementById('data').textContent = 'data ' + d.word; });
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def playground(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("playground")
    items = "".join(f"<li>Item {i} of the long list</li>" for i in range(1, 121))
    (folder / "index.html").write_text(PLAYGROUND.replace("ITEMS", items), encoding="utf-8")
    (folder / "second.html").write_text('<!doctype html><html><head><title>Second</title></head><body><h1>Second page</h1></body></html>', encoding="utf-8")
    (folder / "data.json").write_text('{"word": "pelican"}', encoding="utf-8")
    (folder / "big.txt").write_text("x" * 5000, encoding="utf-8")
    (folder / "welcome.html").write_text("<!doctype html><title>Welcome</title><script>alert('Welcome aboard')</script><h1>Aboard</h1>", encoding="utf-8")
    with serve_static(folder) as site:
        yield site.url + "/"


# -- a client that speaks current Playwright MCP ---------------------------------------------


def ref(snapshot: str, role: str, name: str | None = None) -> str:
    """The ref of the first element with this role (and accessible name) in the snapshot."""
    named = rf' "{re.escape(name)}"' if name is not None else r'(?: "[^"]*")?'
    match = re.search(rf"^\s*- {re.escape(role)}{named}[^\n]*?\[ref=([^\]]+)\]", snapshot, re.M)
    assert match, f"no {role} {name!r} in snapshot:\n{snapshot}"
    return match.group(1)


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    """A call that must succeed: its structured result."""
    assert "ref" not in args and "element" not in args, "this client speaks current Playwright MCP: target, no element"
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert not result.is_error, f"{tool}({args}) failed: {_text(result)}"
    assert result.structured_content is not None
    return result.structured_content


async def refused(client: Client, tool: str, **args: Any) -> str:
    """A call that must fail with a one-line message: the message."""
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert result.is_error, f"{tool}({args}) unexpectedly succeeded"
    message = _text(result)
    assert message.strip() and "\n" not in message.strip() and "Traceback" not in message, message
    return message


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def _find(snapshot: str, step: GoldStep) -> str:
    """The ref a person reading the snapshot would pick for a gold step: the element its canonical form names.

    An element is matched by role and by its accessible name or its shown text (a button
    named "Browse" showing "Browse ▾").
    """
    quoted = re.findall(r"""(\w+)=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""", step.canonical or "")
    fields = {key: ast.literal_eval(value) for key, value in quoted}  # canonical() quotes with repr()
    wanted = fields.get("text") if step.action == "click" else fields.get("element")
    roles = [fields.get("element"), "link", "button", "menuitem", "tab"] if step.action == "click" else ["searchbox", "textbox", "combobox"]
    lines = re.findall(r'^\s*- ([\w-]+) "([^"]*)"[^\n]*?\[ref=([^\]]+)\][^\n]*?(?:: (.*))?$', snapshot, re.M)
    for role in roles:
        for line_role, name, found, shown in lines:
            if line_role == role and wanted in (name, shown.strip().strip('"')):
                return found
    raise AssertionError(f"no element for {step.canonical} in snapshot:\n{snapshot}")


async def solve(client: Client, task: Task) -> None:
    """Carry out a task's steps the way a Playwright MCP client would: read the snapshot, act on refs by target."""
    snapshot = (await call(client, "env_start", task_id=task.id))["snapshot"]
    for step in task.gold_steps:
        if step.action == "navigate":
            seen = await call(client, "browser_navigate", url=step.text)
        elif step.action == "click":
            seen = await call(client, "browser_click", target=_find(snapshot, step))
        elif step.action == "type":
            seen = await call(client, "browser_type", target=_find(snapshot, step), text=step.text, submit=step.submit)
        elif step.action == "select_option":
            seen = await call(client, "browser_select_option", target=_find(snapshot, step), values=[step.text])
        else:
            raise AssertionError(f"the example tasks use no {step.action} step")
        snapshot = seen["snapshot"]
    await call(client, "env_close")


# -- the example site's tasks ----------------------------------------------------------------


@pytest.mark.anyio
async def test_a_playwright_mcp_client_solves_the_example_site_tasks(settings: Settings) -> None:
    store = TaskStore(Workspace(settings.workspace))
    with serve_static() as site:
        text = TASKS.read_text(encoding="utf-8").replace("http://127.0.0.1:42355", site.url)
        TASKS_HERE = settings.workspace / "example-tasks.jsonl"
        TASKS_HERE.parent.mkdir(parents=True, exist_ok=True)
        TASKS_HERE.write_text(text, encoding="utf-8")
        tasks = load_tasks_file(TASKS_HERE)
        for task in tasks:
            store.save(task)
        async with Client(build_server(settings, profile="agent")) as client:
            for task in tasks:
                await solve(client, task)
    episodes = Path(settings.workspace).resolve() / "runs" / "episodes"
    outcomes = {}
    for path in episodes.glob("*/trajectory.jsonl"):
        trajectory = load_trajectory(path)
        assert all(a.error is None for a in trajectory.actions), [a.error for a in trajectory.actions]
        assert all("ref" not in a.args for a in trajectory.actions)
        assert trajectory.closed is not None
        outcomes[trajectory.episode.task_id] = trajectory.closed.success
    assert outcomes == {task.id: True for task in tasks}, [c for p in episodes.glob("*/trajectory.jsonl") for c in (load_trajectory(p).closed.checks or []) if not c.ok]


# -- what the example site lacks: tabs, dialogs, forms, drag, uploads, logs, resize, snapshot size ----


@pytest.mark.anyio
async def test_tabs_opened_by_the_page_are_listed_and_selectable(settings: Settings, playground: str) -> None:
    async with Client(build_server(settings, profile="agent")) as client:
        start = await call(client, "env_start", url=playground + "index.html")
        assert start["url"] == playground + "index.html"
        opened = await call(client, "browser_click", target=ref(start["snapshot"], "link", "Open second"))
        assert opened["url"] == playground + "index.html"  # the new tab does not take over
        assert [(t["index"], t["url"], t["current"]) for t in opened["tabs"]] == [(0, playground + "index.html", True), (1, playground + "second.html", False)]
        assert opened["tabs"][1]["title"] == "Second"
        assert "### Open tabs" in opened["snapshot"] and "1: Second — " + playground + "second.html" in opened["snapshot"]

        listed = await call(client, "browser_tabs", action="list")
        assert listed["snapshot"] is None and [t["title"] for t in listed["tabs"]] == ["Playground", "Second"]
        selected = await call(client, "browser_tabs", action="select", index=1)
        assert selected["url"] == playground + "second.html" and 'heading "Second page"' in selected["snapshot"]
        assert [t["current"] for t in selected["tabs"]] == [False, True]
        assert "no tab 5" in await refused(client, "browser_tabs", action="select", index=5)
        assert "index" in await refused(client, "browser_tabs", action="select")
        closed = await call(client, "browser_tabs", action="close")
        assert closed["url"] == playground + "index.html" and [t["url"] for t in closed["tabs"]] == [playground + "index.html"]
        assert "only tab" in await refused(client, "browser_tabs", action="close")
        new = await call(client, "browser_tabs", action="new", url=playground + "second.html")
        assert new["url"] == playground + "second.html" and len(new["tabs"]) == 2 and new["tabs"][1]["current"]
        assert "allowed domains" in await refused(client, "browser_tabs", action="new", url="https://example.org/")
        done = await call(client, "env_close")
    actions = load_trajectory(Path(settings.workspace).resolve() / "runs" / "episodes" / done["episode_id"] / "trajectory.jsonl").actions
    tabs = [(a.args.get("action"), a.args.get("index"), a.error is not None) for a in actions if a.name == "tabs"]
    assert tabs == [
        ("list", None, False), ("select", 1, False), ("select", 5, True), ("select", None, True),
        ("close", None, False), ("close", None, True), ("new", None, False), ("new", None, True),
    ]  # fmt: skip


@pytest.mark.anyio
async def test_dialogs_are_held_until_handled_and_recorded(settings: Settings, playground: str) -> None:
    async with Client(build_server(settings, profile="agent")) as client:
        start = await call(client, "env_start", url=playground + "index.html")
        asked = await call(client, "browser_click", target=ref(start["snapshot"], "button", "Delete"))
        assert asked["modal"] is not None and "[confirm] 'Delete the record?'" in asked["modal"]
        assert "### Modal state" in asked["snapshot"] and "browser_handle_dialog" in asked["snapshot"]
        blocked = await refused(client, "browser_click", target=ref(start["snapshot"], "button", "Greet"))
        assert "dialog" in blocked and "browser_handle_dialog" in blocked
        accepted = await call(client, "browser_handle_dialog", accept=True)
        assert accepted["modal"] is None and 'paragraph [ref=' in accepted["snapshot"] and ": accepted" in accepted["snapshot"]
        assert accepted["action"] == "dialog(kind='confirm', message='Delete the record?', accept='yes')"

        again = await call(client, "browser_click", target=ref(accepted["snapshot"], "button", "Delete"))
        assert again["modal"] is not None
        dismissed = await call(client, "browser_handle_dialog", accept=False)
        assert ": dismissed" in dismissed["snapshot"]
        await call(client, "browser_click", target=ref(dismissed["snapshot"], "button", "Greet"))
        greeted = await call(client, "browser_handle_dialog", accept=True, promptText="Ada")
        assert ": hello Ada" in greeted["snapshot"]
        assert "no dialog" in await refused(client, "browser_handle_dialog", accept=True)
        # a dialog a page opens while loading holds the navigation until it is handled
        arrived = await call(client, "browser_navigate", url=playground + "welcome.html")
        assert arrived["modal"] is not None and "[alert] 'Welcome aboard'" in arrived["modal"]
        aboard = await call(client, "browser_handle_dialog", accept=True)
        assert aboard["url"] == playground + "welcome.html" and 'heading "Aboard"' in aboard["snapshot"] and aboard["modal"] is None
        back = await call(client, "browser_navigate_back")
        # a dialog still open at the end does not stop the episode from closing and being checked
        await call(client, "browser_click", target=ref(back["snapshot"], "button", "Delete"))
        done = await call(client, "env_close")
    actions = load_trajectory(Path(settings.workspace).resolve() / "runs" / "episodes" / done["episode_id"] / "trajectory.jsonl").actions
    trajectory = load_trajectory(Path(settings.workspace).resolve() / "runs" / "episodes" / done["episode_id"] / "trajectory.jsonl")
    assert trajectory.closed is not None and trajectory.closed.final_url == playground + "index.html"
    assert trajectory.closed.final_text is not None and "dismissed" in trajectory.closed.final_text  # dismissed at close
    handled = [(a.args, a.error is None) for a in actions if a.name == "handle_dialog"]
    assert handled == [({"accept": True}, True), ({"accept": False}, True), ({"accept": True, "promptText": "Ada"}, True), ({"accept": True}, False), ({"accept": True}, True)]
    blocked_click = next(a for a in actions if a.name == "click" and a.error)
    assert "dialog" in (blocked_click.error or "")


@pytest.mark.anyio
async def test_fill_form_drag_upload_and_resize(settings: Settings, playground: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    inside = tmp_path / "note.txt"
    inside.write_text("a note", encoding="utf-8")
    outside = tmp_path_factory.mktemp("elsewhere") / "secret.txt"
    outside.write_text("not for agents", encoding="utf-8")
    async with Client(build_server(settings, profile="agent")) as client:
        page = (await call(client, "env_start", url=playground + "index.html"))["snapshot"]
        filled = await call(
            client,
            "browser_fill_form",
            fields=[
                {"name": "Name", "type": "textbox", "target": ref(page, "textbox", "Name"), "value": "Ada"},
                {"name": "Agree", "type": "checkbox", "target": ref(page, "checkbox", "Agree"), "value": "true"},
                {"name": "Colour", "type": "combobox", "target": ref(page, "combobox", "Colour"), "value": "Blue"},
                {"name": "Volume", "type": "slider", "target": ref(page, "slider", "Volume"), "value": "7"},
            ],
        )
        shown = await call(client, "browser_click", target=ref(filled["snapshot"], "button", "Show"))
        assert "summary: Ada / true / Blue / 7" in shown["snapshot"]
        assert "'true' or 'false'" in await refused(client, "browser_fill_form", fields=[{"name": "Agree", "type": "checkbox", "target": "e1", "value": "yes"}])

        # Playwright MCP's target is a ref or a unique selector: these two have no accessible name to find them by
        dropped = await call(client, "browser_drag", startTarget="#card", endTarget="#zone")
        assert "dropped Card" in dropped["snapshot"]

        assert "no file chooser" in await refused(client, "browser_file_upload", paths=[str(inside)])
        chooser = await call(client, "browser_click", target="#file")
        assert chooser["modal"] is not None and "[file chooser]" in chooser["modal"]
        assert "outside the allowed roots" in await refused(client, "browser_file_upload", paths=[str(outside)])
        uploaded = await call(client, "browser_file_upload", paths=[str(inside)])
        assert "uploaded note.txt" in uploaded["snapshot"] and uploaded["modal"] is None

        resized = await call(client, "browser_resize", width=640, height=480)
        assert "size 640x480" in resized["snapshot"]
        done = await call(client, "env_close")
    actions = load_trajectory(Path(settings.workspace).resolve() / "runs" / "episodes" / done["episode_id"] / "trajectory.jsonl").actions
    names = [(a.name, a.error is None) for a in actions]
    assert names[1:7] == [("type", True), ("set_checked", True), ("select_option", True), ("type", True), ("click", True), ("fill_form", False)]
    assert ("drag", True) in names and ("resize", True) in names
    uploads = [(a.args["paths"], a.error is None) for a in actions if a.name == "file_upload"]
    assert uploads == [([str(inside)], False), ([str(outside)], False), ([str(inside)], True)]
    upload = [a for a in actions if a.name == "file_upload"][-1]
    assert upload.target is not None and upload.target.selector == "#file"


@pytest.mark.anyio
async def test_console_and_network_logs_are_the_episodes_own(settings: Settings, playground: str) -> None:
    async with Client(build_server(settings, profile="agent")) as client:
        await call(client, "env_start", url=playground + "index.html")
        await call(client, "browser_wait_for", text="data pelican")
        console = await call(client, "browser_console_messages")
        assert [(m["level"], m["text"]) for m in console["messages"]] == [("info", "playground ready"), ("error", "playground broke something")]
        assert (console["total"], console["errors"], console["warnings"]) == (2, 1, 0)
        errors = await call(client, "browser_console_messages", level="error")
        assert [m["text"] for m in errors["messages"]] == ["playground broke something"]
        network = await call(client, "browser_network_requests")
        seen = [(r["method"], r["url"], r["status"], r["resource_type"]) for r in network["requests"]]
        assert ("GET", playground + "index.html", 200, "document") in seen and ("GET", playground + "data.json", 200, "fetch") in seen
        only = await call(client, "browser_network_requests", filter=r"\.json$")
        assert [r["url"] for r in only["requests"]] == [playground + "data.json"]
        assert "regular expression" in await refused(client, "browser_network_requests", filter="(")

        # a new page starts a new log, and a second episode never sees the first one's
        await call(client, "browser_navigate", url=playground + "second.html")
        assert (await call(client, "browser_console_messages"))["total"] == 0
        assert (await call(client, "browser_console_messages", all=True))["total"] == 2
        other = await call(client, "env_start", url=playground + "second.html")
        theirs = await call(client, "browser_network_requests", episode_id=other["episode_id"])
        assert [r["url"] for r in theirs["requests"]] == [playground + "second.html"]
        assert (await call(client, "browser_console_messages", all=True, episode_id=other["episode_id"]))["total"] == 0


@pytest.mark.anyio
async def test_drop_files_and_text_from_the_allowed_roots(settings: Settings, playground: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    inside = tmp_path / "drop.txt"
    inside.write_text("dropped note", encoding="utf-8")
    outside = tmp_path_factory.mktemp("elsewhere") / "secret.txt"
    outside.write_text("not for agents", encoding="utf-8")
    async with Client(build_server(settings, profile="agent")) as client:
        await call(client, "env_start", url=playground + "index.html")
        assert "nothing to drop" in await refused(client, "browser_drop", target="#dropzone")
        assert "outside the allowed roots" in await refused(client, "browser_drop", target="#dropzone", paths=[str(outside)])
        dropped = await call(client, "browser_drop", target="#dropzone", paths=[str(inside)], data={"text/plain": "hello"})
        assert "got drop.txt + hello" in dropped["snapshot"]
        text_only = await call(client, "browser_drop", target="#dropzone", data={"text/plain": "just text"})
        assert "got + just text" in " ".join(text_only["snapshot"].split())
        assert "did not accept the drop" in await refused(client, "browser_drop", target="#card", data={"text/plain": "no"})
        done = await call(client, "env_close")
    actions = load_trajectory(Path(settings.workspace).resolve() / "runs" / "episodes" / done["episode_id"] / "trajectory.jsonl").actions
    drops = [(a.args.get("paths"), a.error is None) for a in actions if a.name == "drop"]
    assert drops == [(None, False), ([str(outside)], False), ([str(inside)], True), (None, True), (None, False)]
    landed = [a for a in actions if a.name == "drop" and a.error is None][0]
    assert landed.target is not None and landed.target.selector == "#dropzone"
    assert "drop.txt" in landed.canonical and "text/plain" in landed.canonical


@pytest.mark.anyio
async def test_one_network_request_in_full(settings: Settings, playground: str) -> None:
    async with Client(build_server(settings, profile="agent")) as client:
        await call(client, "env_start", url=playground + "index.html")
        await call(client, "browser_wait_for", text="data pelican")
        listed = (await call(client, "browser_network_requests", filter=r"data\.json$"))["requests"]
        detail = await call(client, "browser_network_request", index=listed[0]["index"])
        assert (detail["request"]["method"], detail["request"]["url"], detail["request"]["status"]) == ("GET", playground + "data.json", 200)
        assert detail["request"]["resource_type"] == "fetch"
        assert "json" in detail["response_headers"]["content-type"] and "user-agent" in detail["request_headers"]
        assert detail["body"] == '{"word": "pelican"}' and detail["body_note"] is None
        assert "no request #999" in await refused(client, "browser_network_request", index=999)

        # a long text body is cut; another episode's index 1 is its own page, never this one's
        await call(client, "browser_navigate", url=playground + "big.txt")
        own = (await call(client, "browser_network_requests"))["requests"]
        big = await call(client, "browser_network_request", index=own[0]["index"])
        assert big["body"] == "x" * 4000 and "4000 of 5000" in big["body_note"]
        other = await call(client, "env_start", url=playground + "second.html")
        theirs = await call(client, "browser_network_request", index=1, episode_id=other["episode_id"])
        assert theirs["request"]["url"] == playground + "second.html"
        done = await call(client, "env_close", episode_id=other["episode_id"])
    actions = load_trajectory(Path(settings.workspace).resolve() / "runs" / "episodes" / done["episode_id"] / "trajectory.jsonl").actions
    assert [(a.name, a.args) for a in actions if a.name == "network_request"] == [("network_request", {"index": 1})]


@pytest.mark.anyio
async def test_snapshots_can_be_cut_to_size_or_scoped_to_one_element(settings: Settings, playground: str) -> None:
    async with Client(build_server(settings, profile="agent")) as client:
        full = (await call(client, "env_start", url=playground + "index.html"))["snapshot"]
        assert len(full) > 4000
        cut = await call(client, "browser_snapshot", maxChars=1000)
        body, marker = cut["snapshot"].rsplit("\n", 1)
        assert len(body) <= 1000 and full.startswith(body)
        assert marker == f"[… snapshot truncated at 1000 of {len(full)} characters; call browser_snapshot with target=<a ref shown above> to see one part, or with depth=N for an outline]"
        assert "maxChars" in await refused(client, "browser_snapshot", maxChars=10)

        items = ref(full, "list", "Items")
        scoped = (await call(client, "browser_snapshot", target=items))["snapshot"]
        assert scoped.startswith(f'- list "Items" [ref={items}]') and "Item 120 of the long list" in scoped and "Playground" not in scoped
        outline = (await call(client, "browser_snapshot", depth=1))["snapshot"]
        assert "Item 1 of" not in outline and len(outline) < len(full)
        boxed = (await call(client, "browser_snapshot", target=items, boxes=True))["snapshot"]
        assert re.search(r"\[box=\d+,\d+,\d+,\d+\]", boxed), boxed[:300]
        # refs of the whole page still work after a partial snapshot
        clicked = await call(client, "browser_click", target=ref(full, "button", "Delete"))
        assert clicked["modal"] is not None
        await call(client, "browser_handle_dialog", accept=True)
        assert "Ref e99999 not found in the current page snapshot" in await refused(client, "browser_snapshot", target="e99999")
        await call(client, "env_close")


@pytest.mark.anyio
async def test_screenshots_of_one_element_and_as_jpeg_carry_structured_output(settings: Settings, playground: str) -> None:
    import base64
    import io

    from mcp.types import ImageContent
    from PIL import Image

    async with Client(build_server(settings, profile="agent")) as client:
        page = (await call(client, "env_start", url=playground + "index.html"))["snapshot"]
        button = await client.call_tool("browser_take_screenshot", {"target": ref(page, "button", "Delete")})
        whole = await client.call_tool("browser_take_screenshot", {"type": "jpeg"})
        assert "target" in await refused(client, "browser_take_screenshot", target="#out", fullPage=True)
        await call(client, "env_close")
    shots = []
    for result, kind in ((button, "png"), (whole, "jpeg")):
        [image] = [c for c in result.content if isinstance(c, ImageContent)]
        assert image.mimeType == f"image/{kind}"
        data = base64.b64decode(image.data)
        assert result.structured_content == {"format": kind, "url": playground + "index.html", "bytes": len(data), "marks": False, "saved": None}
        shots.append(Image.open(io.BytesIO(data)))
    assert shots[0].size[0] < 200 and shots[1].size == (1280, 800)  # one button, the whole viewport


@pytest.mark.anyio
async def test_snapshot_mode_none_answers_actions_without_the_page(settings: Settings, playground: str) -> None:
    """As Playwright MCP's --snapshot-mode none: actions answer with URL and title; browser_snapshot still shows the page."""
    quiet = settings.model_copy(update={"snapshot_mode": "none"})
    async with Client(build_server(quiet, profile="agent")) as client:
        started = await call(client, "env_start", url=playground + "index.html")
        page = (await call(client, "browser_snapshot"))["snapshot"]
        typed = await call(client, "browser_type", target=ref(page, "textbox", "Name"), text="Ada")
        assert typed["snapshot"] is None and typed["title"] == "Playground" and typed["url"] == playground + "index.html"
        assert typed["action"] == "type(text='Ada', element='Name')"
        shown = await call(client, "browser_click", target=ref(page, "button", "Show"))  # refs of the last snapshot stay valid
        assert shown["snapshot"] is None
        assert "summary: Ada / false / Red / 1" in (await call(client, "browser_snapshot"))["snapshot"]
        asked = await call(client, "browser_click", target=ref(page, "button", "Delete"))  # a dialog is still told
        assert asked["snapshot"] is not None and "Delete the record?" in asked["modal"]
        await call(client, "browser_handle_dialog", accept=True)
        opened = await call(client, "browser_click", target=ref(page, "link", "Open second"))  # and so are tabs
        assert [t["title"] for t in opened["tabs"]] == ["Playground", "Second"] and "Second" in opened["snapshot"]
        await call(client, "env_close")
    actions = load_trajectory(Path(quiet.workspace).resolve() / "runs" / "episodes" / started["episode_id"] / "trajectory.jsonl").actions
    assert [a.name for a in actions] == ["navigate", "snapshot", "type", "click", "snapshot", "click", "handle_dialog", "click"]
    assert all(a.error is None for a in actions)


def test_recorded_actions_replay_with_current_names() -> None:
    """Replays (the replay agent) call the tools with target, also for trajectories recorded with ref."""
    from taskloom.harness.agents.calls import call_for_action, call_for_step
    from taskloom.tools.environment.trajectory import ActionRecord, Target

    def record(name: str, args: dict[str, Any], selector: str | None = "#go") -> ActionRecord:
        return ActionRecord(index=0, name=name, args=args, canonical=f"{name}()", target=Target(selector=selector) if selector else None, t_start=0, t_end=0)

    assert call_for_action(record("click", {"element": "Go", "ref": "e3"})) == ("browser_click", {"element": "Go", "target": "css=#go"})
    assert call_for_action(record("type", {"ref": "e3", "text": "x"}, selector=None)) == ("browser_type", {"target": "e3", "text": "x"})
    assert call_for_action(record("set_checked", {"element": "Agree", "target": "e4", "checked": True})) == (
        "browser_fill_form", {"fields": [{"name": "Agree", "type": "checkbox", "target": "css=#go", "value": "true"}]},
    )
    assert call_for_action(record("handle_dialog", {"accept": False}, selector=None)) == ("browser_handle_dialog", {"accept": False})
    assert call_for_action(record("tabs", {"action": "select", "index": 1}, selector=None)) == ("browser_tabs", {"action": "select", "index": 1})
    assert call_for_action(record("drag", {"startTarget": "e1", "endTarget": "e2"})) is None  # the drop target's selector is not recorded
    step = GoldStep(action="click", selector="#search", canonical="click(text='Search', element='button')")
    assert call_for_step(step) == ("browser_click", {"element": "click(text='Search', element='button')", "target": "css=#search"})
