"""Parity with the real Playwright MCP: its tools/list read from the pinned npm package, and one session run on both servers.

Every tool and argument the package lists is offered with a schema that accepts what
the package's accepts, or is in :data:`LEFT_OUT` (one place) with the reason. The table
is written to tests/data/cache/playwright-mcp-parity.md. The session drives both
servers over the same local pages: refs are shaped alike (``eN`` on a tab's first page,
``f1eN`` after it navigates, as Playwright numbers a main frame's new documents; the
package's first ``browser_navigate`` from about:blank is our ``env_start``), and an
unknown ref is refused in the package's words.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from mcp.types import TextContent

from taskloom.server.app import build_server
from taskloom.tools.environment.browser_mcp import LEFT_OUT
from taskloom.tools.environment.site import serve_static
from taskloom.tools.settings import Settings

from .playwright_reference import ROOT, VERSION, parity_table, reference_client

pytestmark = [pytest.mark.integration, pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")]
TABLE = ROOT / "tests" / "data" / "cache" / "playwright-mcp-parity.md"


def _schemas(tools: list[Any]) -> dict[str, dict[str, Any]]:
    return {t.name: t.input_schema for t in tools}


@pytest.mark.anyio
async def test_every_tool_and_argument_of_the_real_package_is_offered_or_left_out_with_a_reason(settings: Settings, tmp_path: Path) -> None:
    async with reference_client(tmp_path) as real:
        theirs = _schemas(list(await real.list_tools()))
    async with Client(build_server(settings, profile="agent")) as client:
        ours = _schemas(list(await client.list_tools()))
    assert len(theirs) >= 20 and "browser_click" in theirs  # the package answered with its tool list
    table, problems = parity_table(theirs, ours, LEFT_OUT)
    TABLE.write_text(table, encoding="utf-8")
    assert not problems, f"against @playwright/mcp {VERSION}:\n" + "\n".join(problems)
    assert set(LEFT_OUT) <= set(theirs), f"LEFT_OUT names tools the package no longer has: {sorted(set(LEFT_OUT) - set(theirs))}"
    assert "browser_evaluate" in LEFT_OUT and "browser_evaluate" not in ours


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def _refs(text: str) -> list[str]:
    return re.findall(r"\[ref=([^\]]+)\]", text)


@pytest.mark.anyio
async def test_one_session_on_both_servers_gives_the_same_refs_and_the_same_unknown_ref_error(settings: Settings, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "a.html").write_text('<title>A</title><a href="b.html">to b</a><button>Go</button>', encoding="utf-8")
    (site / "b.html").write_text('<title>B</title><a href="a.html">to a</a><button>Stay</button>', encoding="utf-8")
    with serve_static(site) as served:
        steps: list[tuple[str, dict[str, Any]]] = [
            ("browser_navigate", {"url": served.url + "/a.html"}),
            ("browser_snapshot", {}),
            ("browser_click", {"target": "e99"}),
            ("browser_click", {"target": "e2"}),
            ("browser_snapshot", {}),
            ("browser_click", {"target": "e2"}),  # a ref of the first page, gone after the navigation
        ]
        outputs: dict[str, list[tuple[bool, str]]] = {"real": [], "ours": []}
        texts: dict[str, list[str]] = {"real": [], "ours": []}
        async with reference_client(tmp_path) as real:
            for tool, args in steps:
                result = await real.call_tool(tool, args, raise_on_error=False)
                outputs["real"].append((result.is_error, _text(result)))
                texts["real"].append(_text(result))
        async with Client(build_server(settings, profile="agent")) as client:
            started = await client.call_tool("env_start", {"url": served.url + "/a.html"})  # the package's first navigate, from about:blank
            outputs["ours"].append((started.is_error, started.structured_content["snapshot"]))
            texts["ours"].append("")
            for tool, args in steps[1:]:
                result = await client.call_tool(tool, args, raise_on_error=False)
                shown = str((result.structured_content or {}).get("snapshot") or "") if not result.is_error else _text(result)
                outputs["ours"].append((result.is_error, shown))
                texts["ours"].append(_text(result))
    assert [error for error, _ in outputs["real"]] == [error for error, _ in outputs["ours"]] == [False, False, True, False, False, True], outputs
    for n in (1, 4):  # whole-page snapshots of a.html, then of b.html after the click navigated
        assert _refs(outputs["ours"][n][1]) == _refs(outputs["real"][n][1]), (outputs["real"][n][1], outputs["ours"][n][1])
    assert _refs(outputs["ours"][1][1]) == ["e1", "e2", "e3"] and _refs(outputs["ours"][4][1]) == ["f1e1", "f1e2", "f1e3"]
    for n, ref in ((2, "e99"), (5, "e2")):
        wording = f"Ref {ref} not found in the current page snapshot. Try capturing new snapshot."
        assert wording in outputs["real"][n][1] and outputs["ours"][n][1] == wording
    # the answers themselves, section by section (the package's code section is our action section: we run no generated code)
    for n in (1, 3, 4):
        real_sections, our_sections = _sections(texts["real"][n]), _sections(texts["ours"][n])
        shown = [_SAME.get(h, h) for h in real_sections if h not in _TIMED]
        assert shown == list(our_sections), (texts["real"][n], texts["ours"][n])
        assert real_sections["Page"].splitlines()[:2] == our_sections["Page"].splitlines()  # the same URL and title lines (the package adds console counts)
    assert _refs(texts["ours"][4]) == _refs(texts["real"][4])  # browser_snapshot shows the snapshot inline, as the package does
    for n in (3,):  # an action links the snapshot it saved instead of showing it
        assert re.fullmatch(r"- \[Snapshot\]\([^)]+\.yml\)", _sections(texts["real"][n])["Snapshot"]) and re.fullmatch(r"- \[Snapshot\]\(files/page-\d+\.yml\)", _sections(texts["ours"][n])["Snapshot"])


#: The package's section names that are ours under another name.
_SAME = {"Ran Playwright code": "Action"}
#: The package's sections that depend on when events arrive ("Console: 1 errors" when the page's favicon 404 lands in time).
_TIMED = {"Events"}


def _sections(text: str) -> dict[str, str]:
    """A Markdown answer's ``### `` sections, in order: heading → body."""
    parts = re.split(r"^### (.+)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
