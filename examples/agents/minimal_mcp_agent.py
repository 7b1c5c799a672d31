#!/usr/bin/env python3
"""A minimal external MCP agent: follows a web task's instruction literally, one quoted value at a time.

It is what ``taskloom run --agent command:cmd=…`` expects from any agent: it reads the
MCP client config named by ``TASKLOOM_MCP_CONFIG`` (the ``{"mcpServers": {…}}`` shape
Claude Desktop, Claude Code and Cursor use), takes the ``taskloom-agent`` server it
names (else ``taskloom``, else the only one) and connects to it: an ``http`` entry
(``url`` and ``headers``, what the harness hands out by default) over streamable HTTP,
a ``command`` entry (``command:transport=stdio,…`` gives the stdio bridge) over stdio.
Then it calls ``env_start`` and works through the instruction:

* ``On the page “X”`` only says where it starts: skipped;
* ``search for “X”`` / ``type “X”``: types X into the search box (else the first text
  box) and presses Enter;
* ``filter by … “X”`` / ``select “X”``: picks option X in the drop-down that has it;
* anything else — ``open “X”``, ``switch to the “X” tab``, ``click “X”`` — clicks the
  element named X (compared by words only: exact name first, then a name containing X,
  then a name contained in X).

Each step uses the snapshot the previous tool call returned (and one fresh
``browser_snapshot`` if the element is not there yet). Finally ``env_close``. Document
tasks get the first ``doc_search`` hit as the answer. The instruction comes from the
first command-line argument, else ``TASKLOOM_INSTRUCTION``, else stdin, else what
``env_start`` returns. Progress goes to stderr.

Needs only ``fastmcp`` (``pip install fastmcp``)::

    TASKLOOM_MCP_CONFIG=mcp.json python minimal_mcp_agent.py 'On the page “Home”, open “Genres”.'
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

import anyio
from fastmcp import Client
from fastmcp.client.transports import ClientTransport, StdioTransport, StreamableHttpTransport

STEP = re.compile(r"(?P<before>[^“”\"]*)[“\"](?P<value>[^”\"]+)[”\"]")
ELEMENT = re.compile(r'^\s*- (?P<role>[a-z]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?.*?\[ref=(?P<ref>(?:f\d+)?e\d+)\]')
CLICKABLE = ("link", "button", "tab", "menuitem", "checkbox", "radio", "switch", "option")
TEXT_BOXES = ("searchbox", "textbox")


def log(message: str) -> None:
    print(f"[minimal-agent] {message}", file=sys.stderr, flush=True)


def plan(instruction: str) -> list[tuple[str, str]]:
    """The instruction as (kind, value) steps: kind is click, type or select."""
    steps: list[tuple[str, str]] = []
    for match in STEP.finditer(instruction):
        before, value = match["before"].lower(), match["value"].strip()
        if re.search(r"\bon the page\s*$", before):
            continue
        if re.search(r"\b(search for|type|enter)\b", before):
            steps.append(("type", value))
        elif re.search(r"\b(filter by|select|choose|pick)\b", before):
            steps.append(("select", value))
        else:
            steps.append(("click", value))
    return steps


def elements(snapshot: str) -> list[dict[str, Any]]:
    """Elements with a ref, in page order, each with its role, name, ref and (drop-downs) options."""
    found: list[dict[str, Any]] = []
    box: tuple[int, dict[str, Any]] | None = None
    for line in snapshot.splitlines():
        m = ELEMENT.match(line) or re.match(r'^(\s*)- (?P<role>option) "(?P<name>[^"]*)"', line)
        if not m:
            continue
        indent = len(line) - len(line.lstrip())
        if box is not None and indent <= box[0]:
            box = None
        item: dict[str, Any] = {"role": m["role"], "name": (m["name"] or "").replace('\\"', '"'), "ref": m.groupdict().get("ref"), "options": []}
        if item["role"] == "option" and box is not None:
            box[1]["options"].append(item["name"])
            continue
        if item["ref"]:
            found.append(item)
            if item["role"] == "combobox":
                box = (indent, item)
    return found


def words(text: str) -> str:
    """Lower-case words only, so “Browse ▾” matches the button named “Browse”."""
    return " ".join(re.findall(r"[\w']+", text.lower()))


def choose(kind: str, value: str, snapshot: str) -> tuple[str, dict[str, Any]] | None:
    """The tool call for one step on this snapshot, or None when the element is not there."""
    items = elements(snapshot)
    wanted = value.lower()
    if kind == "type":
        boxes = sorted((e for e in items if e["role"] in TEXT_BOXES), key=lambda e: TEXT_BOXES.index(e["role"]))
        if boxes:
            return "browser_type", {"element": boxes[0]["name"] or boxes[0]["role"], "target": boxes[0]["ref"], "text": value, "submit": True}
        return None
    if kind == "select":
        for e in items:
            if e["role"] == "combobox" and any(o.lower() == wanted for o in e["options"]):
                option = next(o for o in e["options"] if o.lower() == wanted)
                return "browser_select_option", {"element": e["name"] or "drop-down", "target": e["ref"], "values": [option]}
        return None
    clickable = [e for e in items if e["role"] in CLICKABLE and words(e["name"])]
    key = words(value)
    for match in (lambda n: n == key, lambda n: key in n, lambda n: n in key):  # exact, then either name containing the other
        hits = [e for e in clickable if match(words(e["name"]))]
        if hits:
            return "browser_click", {"element": f"{hits[0]['name']} {hits[0]['role']}", "target": hits[0]["ref"]}
    return None


def data(result: Any) -> Any:
    content = result.structured_content or {}
    return content.get("result", content) if isinstance(content, dict) and set(content) == {"result"} else content


def server_entry(config: dict[str, Any]) -> dict[str, Any]:
    servers = config.get("mcpServers") or {}
    for name in ("taskloom-agent", "taskloom"):
        if name in servers:
            return dict(servers[name])
    if len(servers) == 1:
        return dict(next(iter(servers.values())))
    raise SystemExit(f"no taskloom server in the MCP config (found: {sorted(servers)})")


def given_instruction() -> str:
    if len(sys.argv) > 1:
        return " ".join(sys.argv[1:]).strip()
    if os.environ.get("TASKLOOM_INSTRUCTION"):
        return os.environ["TASKLOOM_INSTRUCTION"].strip()
    return "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read().strip()


def transport_for(entry: dict[str, Any]) -> ClientTransport:
    """Streamable HTTP for a ``url`` entry (with its ``headers``), else stdio for a ``command`` entry."""
    if entry.get("url"):
        return StreamableHttpTransport(str(entry["url"]), headers=dict(entry.get("headers") or {}))
    if entry.get("command"):
        env = {**{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}, **(entry.get("env") or {})}
        return StdioTransport(command=entry["command"], args=list(entry.get("args", [])), env=env, keep_alive=False)
    raise SystemExit(f"the taskloom entry has neither a url nor a command: {sorted(entry)}")


async def run(instruction: str, config_path: str) -> None:
    with open(config_path, encoding="utf-8") as handle:
        entry = server_entry(json.load(handle))
    transport = transport_for(entry)
    async with Client(transport, timeout=120, init_timeout=120) as client:
        started = data(await client.call_tool("env_start", {}))
        instruction = instruction or str(started.get("instruction") or "")
        log(f"episode {started.get('episode_id')}: {instruction}")
        if str(started.get("episode_id", "")).startswith("doc-"):
            hits = data(await client.call_tool("doc_search", {"query": instruction[:300], "k": 1}))
            await client.call_tool("env_answer", {"answer": str(hits[0].get("preview", "")) if hits else "unknown"})
        else:
            snapshot = str(started.get("snapshot") or "")
            for kind, value in plan(instruction):
                call = choose(kind, value, snapshot)
                if call is None:
                    snapshot = str(data(await client.call_tool("browser_snapshot", {})).get("snapshot") or "")
                    call = choose(kind, value, snapshot)
                if call is None:
                    log(f"no element for {kind} “{value}”; skipping it")
                    continue
                log(f"{call[0]} {call[1]}")
                result = await client.call_tool(call[0], call[1], raise_on_error=False)
                if result.is_error:
                    log(f"  failed: {result.content[0].text if result.content else '?'}")
                else:
                    snapshot = str(data(result).get("snapshot") or snapshot)
        await client.call_tool("env_close", {})
        log("closed")


def main() -> None:
    config = os.environ.get("TASKLOOM_MCP_CONFIG")
    if not config:
        raise SystemExit("set TASKLOOM_MCP_CONFIG to an MCP client config file with a taskloom server")
    anyio.run(run, given_instruction(), config)


if __name__ == "__main__":
    main()
