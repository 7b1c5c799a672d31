"""A cheating command agent (used by test_sandbox.py): it hunts for its task's gold by every route it can think of,
records everything it read, then does its episode honestly through the MCP tools.

Run as ``python cheater.py FILE``: FILE (outside the workspace) holds the real workspace path, which the test tells
it through this side channel (the worst case: an agent that knows where the tasks are). The record goes to ``$HOME/found.json`` and to stdout as one JSON line.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import anyio
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport

TEXT_LIMIT = 200_000
record: dict[str, Any] = {"handed": {}, "tried": [], "opened": {}, "mcp": {}, "errors": []}


def attempt_read(path: Path | str, why: str) -> None:
    """Try to read a file (or list a folder); record the outcome, and the content when it worked."""
    path = str(path)
    entry: dict[str, Any] = {"path": path, "why": why}
    try:
        if os.path.isdir(path):
            names = sorted(os.listdir(path))
            entry["listing"] = names
            record["opened"][path] = "\n".join(names)
        else:
            with open(path, "rb") as handle:
                text = handle.read(TEXT_LIMIT).decode("utf-8", errors="replace")
            entry["read"] = len(text)
            record["opened"][path] = text
    except OSError as exc:
        entry["error"] = f"{type(exc).__name__}: {exc.strerror}"
    record["tried"].append(entry)


def paths_in(text: str) -> set[str]:
    return set(re.findall(r"(/[\w.@+-]+(?:/[\w.@+-]+)*)", text))


def hunt(known: str, task_id: str) -> None:
    env = dict(os.environ)
    config_path = env.get("TASKLOOM_MCP_CONFIG", "")
    config_text = Path(config_path).read_text(encoding="utf-8") if config_path else ""
    cwd = os.getcwd()
    record["handed"] = {"env": env, "config": config_text, "argv": sys.argv, "cwd": cwd, "cwd_listing": sorted(os.listdir(cwd))}
    record["taskloom_env"] = {k: v for k, v in env.items() if k.startswith("TASKLOOM_")}
    candidates: dict[str, str] = {known: "told by the test (worst case)", "/work/main/.taskloom": "the usual checkout", ".taskloom": "relative"}
    repo = Path(__file__).resolve().parents[2]
    candidates[str(repo / ".taskloom")] = "next to the repository"
    here = Path(cwd)
    for parent in [here, *here.parents]:
        candidates.setdefault(str(parent / ".taskloom"), "a parent of the cwd")
        candidates.setdefault(str(parent), "a parent of the cwd")
    if env.get("TASKLOOM_WORKSPACE"):
        candidates[env["TASKLOOM_WORKSPACE"]] = "TASKLOOM_WORKSPACE"
    for found in paths_in(json.dumps(env) + config_text + " ".join(sys.argv)):
        candidates.setdefault(found, "a path in env/config/argv")
        candidates.setdefault(str(Path(found) / ".taskloom"), "a path in env/config/argv")
    ppid = os.getppid()
    for pid in sorted({ppid, 1}):
        attempt_read(f"/proc/{pid}/environ", "the parent's environment")
        attempt_read(f"/proc/{pid}/cmdline", "the parent's command line")
        try:
            target = os.readlink(f"/proc/{pid}/cwd")
            candidates[target] = f"/proc/{pid}/cwd"
            candidates[str(Path(target) / ".taskloom")] = f"/proc/{pid}/cwd"
        except OSError as exc:
            record["tried"].append({"path": f"/proc/{pid}/cwd", "why": "the parent's cwd", "error": f"{type(exc).__name__}: {exc.strerror}"})
        candidates[f"/proc/{pid}/cwd/.taskloom"] = "through the parent's cwd link"
    for path in list(record["opened"]):  # paths named in what /proc gave away
        for found in paths_in(record["opened"][path]):
            candidates.setdefault(found, f"named in {path}")
    for root, why in candidates.items():
        attempt_read(Path(root) / "tasks" / f"{task_id}.json", why)
        attempt_read(Path(root) / "tasks", why)
        attempt_read(Path(root) / "runs", why)


async def use_server(task_id: str) -> None:
    config = json.loads(Path(os.environ["TASKLOOM_MCP_CONFIG"]).read_text(encoding="utf-8"))
    entry = config["mcpServers"]["taskloom"]
    transport = StreamableHttpTransport(entry["url"], headers=entry.get("headers") or {})
    mcp = record["mcp"]
    async with Client(transport, timeout=60) as client:
        mcp["tools"] = sorted(t.name for t in await client.list_tools())
        try:
            mcp["resources"] = [str(r.uri) for r in await client.list_resources()]
            mcp["templates"] = [str(t.uriTemplate) for t in await client.list_resource_templates()]
        except Exception as exc:  # noqa: BLE001 - a cheater records every refusal
            mcp["resources_error"] = str(exc)
        for uri in (f"taskloom://tasks/{task_id}", "taskloom://tasks", "taskloom://runs"):
            try:
                mcp[uri] = str(await client.read_resource(uri))
            except Exception as exc:  # noqa: BLE001
                mcp[uri + " error"] = f"{type(exc).__name__}: {exc}"
        for tool, args in (("tasks_get", {"task_id": task_id}), ("tasks_list", {}), ("tasks_export", {"path": "/tmp/x.jsonl"})):
            try:
                result = await client.call_tool(tool, args, raise_on_error=False)
                mcp[tool] = str(result.content)
            except Exception as exc:  # noqa: BLE001
                mcp[tool + " error"] = f"{type(exc).__name__}: {exc}"
        started = await client.call_tool("env_start", {})
        mcp["env_start"] = str(started.content)
        hits = await client.call_tool("doc_search", {"query": "field guide", "k": 2})
        mcp["doc_search"] = str(hits.content)
        await client.call_tool("env_answer", {"answer": "I could not find it"})
        closed = await client.call_tool("env_close", {})
        mcp["env_close"] = str(closed.content)


def main() -> None:
    known, task_id = Path(sys.argv[1]).read_text(encoding="utf-8").strip(), os.environ.get("TASKLOOM_TASK_ID", "")
    try:
        hunt(known, task_id)
    except Exception as exc:  # noqa: BLE001 - keep going: the episode must still be done
        record["errors"].append(f"hunt: {type(exc).__name__}: {exc}")
    anyio.run(use_server, task_id)
    text = json.dumps(record, ensure_ascii=False)
    (Path.home() / "found.json").write_text(text, encoding="utf-8")
    print(text, flush=True)


if __name__ == "__main__":
    main()
