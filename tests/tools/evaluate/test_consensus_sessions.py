"""Playwright MCP session logs, written by the real ``@playwright/mcp`` (``--save-session``), imported into a consensus graph.

Three scripted sessions drive the pinned package over local pages, each into its own output
folder (``<agent>/<task>/<run>/session-<ms>/session.md``, as a harness running agents would lay
them out); a labels file gives the outcomes. Nothing in the logs is written by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from taskloom.tools.evaluate.consensus import build_consensus
from taskloom.tools.evaluate.consensus.reports import ImportLog, ImportOptions
from taskloom.tools.evaluate.consensus.sessions import session_actions
from taskloom.tools.evaluate.service import EvaluationService
from taskloom.tools.environment.site import serve_static
from taskloom.tools.workspace import Workspace

from ..environment.playwright_reference import reference_client

pytestmark = [pytest.mark.integration, pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")]

PAGES = {
    "index.html": '<title>Shop</title><h1>Shop</h1><a href="books.html">Books (12)</a> <input aria-label="Search" id="q">'
    "<button onclick=\"location='books.html?q='+document.getElementById('q').value\">Go</button>",
    "books.html": '<title>Books</title><h1>Books</h1><a href="index.html">Home</a> <select aria-label="Sort"><option>Title</option><option>Year</option></select>',
}


def _ref(snapshot: str, role: str, name: str) -> str:
    found = re.search(rf'{role} "{re.escape(name)}"[^\n]*\[ref=(\w+)\]', snapshot)
    assert found, snapshot
    return found.group(1)


async def _session(logs: Path, cwd: Path, url: str, script: list[tuple[str, Any]]) -> None:
    """One agent session: steps are ``(tool, args)``, or ``(tool, (role, name, args))`` to act on the element the last snapshot shows."""
    logs.mkdir(parents=True)
    async with reference_client(cwd, "--save-session", "--output-dir", str(logs)) as client:
        await client.call_tool("browser_navigate", {"url": url})
        snapshot = ""
        for tool, args in script:
            if isinstance(args, tuple):
                role, name, rest = args
                args = {"element": f"the {name} {role}", "target": _ref(snapshot, role, name), **rest}
            result = await client.call_tool(tool, args, raise_on_error=False)
            if tool == "browser_snapshot":
                snapshot = "\n".join(c.text for c in result.content if hasattr(c, "text"))


@pytest.mark.anyio
async def test_real_playwright_mcp_sessions_import_by_role_and_name_and_merge_across_agents(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    for name, html in PAGES.items():
        (site / name).write_text(html, encoding="utf-8")
    search = [
        ("browser_snapshot", {}),
        ("browser_type", ("textbox", "Search", {"text": "Dune"})),
        ("browser_click", ("button", "Go", {})),
        ("browser_snapshot", {}),
        ("browser_select_option", ("combobox", "Sort", {"values": ["Year"]})),
    ]
    detour = [("browser_snapshot", {}), ("browser_click", ("link", "Books (12)", {})), ("browser_navigate_back", {}), *search]
    logs = tmp_path / "logs"
    with serve_static(site) as served:
        start = served.url + "/index.html"
        await _session(logs / "direct" / "find-dune" / "0", tmp_path, start, search)
        await _session(logs / "direct" / "find-dune" / "1", tmp_path, start, [*search[:2], ("browser_click", {"element": "Go", "target": "e99"})])
        await _session(logs / "detour" / "find-dune" / "0", tmp_path, start, detour)
    sessions = sorted(logs.rglob("session.md"))
    assert len(sessions) == 3 and all(re.fullmatch(r"session-\d+", p.parent.name) for p in sessions)
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"direct/find-dune#0": 1, "direct/find-dune#1": 0, "detour/find-dune#0": 1}), encoding="utf-8")

    imported = EvaluationService(Workspace(tmp_path / "ws")).import_trajectories("playwright-mcp", [logs], ImportOptions(labels=labels, unknown="error"))
    report, runs = imported.report, {t.id: t for t in imported.trajectories}
    assert report.layouts == {"<root>/<agent>/<task>/<run>/session.md": 3} and report.verdict_sources == {"judge": 3}
    assert sorted(runs) == ["detour/find-dune#0", "direct/find-dune#0", "direct/find-dune#1"]
    assert report.observations == 2 + 1 + 3  # the snapshots: not actions
    direct = runs["direct/find-dune#0"]
    assert [a.text for a in direct.actions] == [
        f"navigate(url='{start}')", "type(text='Dune', element='Search')", "click(text='Go', element='button')", "select(option='Year', element='Sort')",
    ]  # read from the code the package ran: the page's role and name, not the agent's words
    assert [a.hint for a in direct.actions][1:] == ["the Search textbox", "the Go button", "the Sort combobox"]
    assert direct.actions[2].url == start and direct.actions[3].url == served.url + "/books.html?q=Dune"  # the page each action was taken on
    failed = runs["direct/find-dune#1"]
    assert [a.kind for a in failed.actions] == ["navigate", "type"]  # the package logs no call it refused (the click on e99)
    assert [a.kind for a in runs["detour/find-dune#0"].actions][:3] == ["navigate", "click", "back"]

    graph = build_consensus(imported.trajectories)
    go = next(n for n in graph.nodes if n.label.startswith("click(text='Go', element='button')"))
    assert go.trajectories == 2 and go.agents == ["detour", "direct"]  # one element, clicked by both agents through different refs


def test_a_call_without_code_is_read_from_its_arguments_and_looks_are_not_actions() -> None:
    log = ImportLog(ImportOptions())
    calls = [
        {"tool": "browser_snapshot", "args": {}, "result": {"page": "- Page URL: http://shop.test/a"}},
        {"tool": "browser_click", "args": {"element": "Save", "target": "e3"}, "result": {}},
        {"tool": "browser_press_key", "args": {"key": "Enter"}, "result": None},
    ]
    acts = session_actions(calls, log, "session.md")
    assert [(a.text, a.url, a.confidence) for a in acts] == [("click(text='Save')", "http://shop.test/a", 0.5), ("press(key='Enter')", "http://shop.test/a", 0.5)]
    assert log.observations == 1
