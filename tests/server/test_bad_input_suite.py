"""A table-driven bad-input suite over every MCP tool of both profiles.

For every tool the schema is read from the server itself; every parameter then gets
each bad value that fits it (wrong type, out of range, unknown enum, 1 MB string, NUL
byte, traversal, and for paths symlinks out of the roots, devices, folders, FIFOs,
truncated PDFs and non-UTF-8 files) while the other arguments keep working values.
Each answer must be a success or an error that says what was wrong: never the masked
catch-all "Error calling tool", never a traceback, never a hang; the server must keep
answering throughout. The counts are printed for the closing note.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastmcp import Client, FastMCP
from mcp.shared.exceptions import MCPError

from taskloom.server.app import build_server
from taskloom.tools.environment.site import serve_static
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.anyio]

ROOT = Path(__file__).resolve().parents[2]
FIELD_GUIDE_MD = ROOT / "examples" / "documents" / "field-guide.md"
FIELD_GUIDE_PDF = ROOT / "examples" / "documents" / "field-guide.pdf"
MEGABYTE = "x" * (1024 * 1024)
CALL_LIMIT_S = 60.0
MASKED = "Error calling tool"
# Bad paths and URLs that must never be accepted by any tool.
NEVER_ACCEPTED = (
    "traversal", "outside root", "symlink out of root", "device", "fifo", "overlong name", "nul byte",
    "file url", "javascript url", "huge url",
)
# Tools whose working call is slow or changes what later calls need; their bad-input
# variants still run, but their baseline points at something harmless.
SKIP_TOOLS = {"desktop_"}  # the desktop is opt-in and needs a display


@dataclass
class World:
    """Everything a working call needs: a graph, a node, a task, a site, files of every awkward kind."""

    base: Path
    settings: Settings
    graph_id: str
    node_id: str
    site: str
    files: dict[str, Path] = field(default_factory=dict)
    task_id: str = "no-such-task"


def _awkward_files(base: Path) -> dict[str, Path]:
    """Files inside the allowed roots that no tool should be fooled by."""
    folder = base / "inputs"
    folder.mkdir()
    files = {"folder": folder / "a-folder"}
    files["folder"].mkdir()
    files["symlink_out"] = folder / "passwd-link.md"
    files["symlink_out"].symlink_to("/etc/passwd")
    files["fifo"] = folder / "pipe.md"
    os.mkfifo(files["fifo"])
    files["truncated_pdf"] = folder / "truncated.pdf"
    files["truncated_pdf"].write_bytes(FIELD_GUIDE_PDF.read_bytes()[:2048])
    files["non_utf8"] = folder / "latin1.md"
    files["non_utf8"].write_bytes("# Caf\xe9 notes\n\nR\xe9sum\xe9 of the r\xe9gion.\n".encode("latin-1") + b"\xff\xfe\x00bad")
    files["non_utf8_jsonl"] = folder / "trajectory.jsonl"
    files["non_utf8_jsonl"].write_bytes(b"\xff\xfe{not json\n")
    files["not_trajectory"] = folder / "plain.jsonl"
    files["not_trajectory"].write_text('{"kind": "something"}\n[1, 2]\n', encoding="utf-8")
    files["existing_out"] = folder / "exists.json"
    files["existing_out"].write_text("keep me", encoding="utf-8")
    return files


def _bad_path_values(world: World) -> dict[str, str]:
    f = world.files
    return {
        "traversal": "../../../../../../etc/passwd",
        "outside root": "/etc/shadow",
        "symlink out of root": str(f["symlink_out"]),
        "device": "/dev/zero",
        "folder": str(f["folder"]),
        "fifo": str(f["fifo"]),
        "truncated pdf": str(f["truncated_pdf"]),
        "non-utf8 file": str(f["non_utf8"]),
        "non-utf8 jsonl": str(f["non_utf8_jsonl"]),
        "not a trajectory": str(f["not_trajectory"]),
        "existing file": str(f["existing_out"]),
        "overlong name": str(world.base / ("n" * 300)),
        "nul byte": str(world.base / "a\x00b.md"),
    }


BAD_URLS = {
    "file url": "file:///etc/passwd",
    "javascript url": "javascript:alert(1)",
    "no scheme": "127.0.0.1/x",
    "other host": "http://evil.example/",
    "huge url": "http://127.0.0.1/" + MEGABYTE,
}


def _types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a property accepts (anyOf/oneOf flattened)."""
    found: set[str] = set()
    for option in [schema, *schema.get("anyOf", []), *schema.get("oneOf", [])]:
        kind = option.get("type")
        if isinstance(kind, list):
            found.update(kind)
        elif kind:
            found.add(kind)
        if "$ref" in option:
            found.add("object")
        if "enum" in option:
            found.add("enum")
    return found


def _enum(schema: dict[str, Any]) -> list[Any] | None:
    for option in [schema, *schema.get("anyOf", []), *schema.get("oneOf", [])]:
        if "enum" in option:
            return list(option["enum"])
    return None


def _bound(schema: dict[str, Any], key: str) -> float | None:
    for option in [schema, *schema.get("anyOf", [])]:
        for name in (key, f"exclusive{key[0].upper()}{key[1:]}"):
            if name in option:
                return float(option[name])
    return None


def _good(tool: str, name: str, schema: dict[str, Any], world: World) -> Any:
    """A working value for a required parameter."""
    known: dict[str, Any] = {
        "graph_id": world.graph_id,
        "node_id": world.node_id,
        "source": world.node_id,
        "target": world.node_id,
        "task_id": world.task_id,
        "query": "rain gauge calibration",
        "answer": "42",
        "run_id": "no-such-run",
        "path": str(FIELD_GUIDE_MD),
        "paths": [str(world.base / "ws" / "runs")],
        "url": world.site + "/index.html",
        "start_url": world.site + "/index.html",
        "element": "a link",
        "ref": "e1",
        "text": "hello",
        "key": "Tab",
        "values": ["x"],
    }
    if tool == "graph_delete":
        return "no-such-graph"  # a working delete would take the graph away from the calls after it
    if name in known:
        return known[name]
    kinds = _types(schema)
    enum = _enum(schema)
    if enum:
        return enum[0]
    if "integer" in kinds or "number" in kinds:
        low = _bound(schema, "minimum")
        return int(low) + 1 if low is not None else 1
    if "boolean" in kinds:
        return False
    if "array" in kinds:
        return []
    return "x"


def _variants(name: str, schema: dict[str, Any], world: World) -> Iterator[tuple[str, Any]]:
    """(case, bad value) pairs that fit this parameter."""
    kinds = _types(schema)
    yield "wrong type", {"nested": [1, 2]} if "object" not in kinds else 12345
    enum = _enum(schema)
    if enum is not None:
        yield "unknown enum", "no-such-choice"
    for key, step in (("minimum", -1), ("maximum", 1)):
        limit = _bound(schema, key)
        if limit is not None:
            yield f"out of range ({key})", int(limit) + step if float(limit).is_integer() else limit + step
    if "integer" in kinds or "number" in kinds:
        yield "huge number", 10**30
    if "string" in kinds:
        yield "1 MB string", MEGABYTE
        yield "NUL byte", "bad\x00value"
        yield "traversal", "../../../../etc/passwd"
        yield "empty string", ""
    if "array" in kinds:
        yield "array of wrong items", [{"a": 1}, None]
        yield "array of 1 MB strings", [MEGABYTE]
    if name in ("path", "paths"):
        for case, value in _bad_path_values(world).items():
            yield f"path: {case}", [value] if name == "paths" else value
    if name in ("url", "start_url"):
        for case, value in BAD_URLS.items():
            yield f"url: {case}", value
    if name == "where":  # graph_facts' field filters
        yield "where: non-string value", {"Island": {"nested": [1]}}
        yield "where: 1 MB label", {MEGABYTE: "x"}


@dataclass
class Tally:
    tried: int = 0
    clear_errors: int = 0
    accepted: int = 0
    accepted_cases: list[str] = field(default_factory=list)
    masked: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    by_case: Counter[str] = field(default_factory=Counter)

    def line(self, profile: str) -> str:
        return (
            f"{profile}: inputs tried {self.tried}, clear errors {self.clear_errors}, accepted {self.accepted}, "
            f"masked {len(self.masked)}, crashes {len(self.crashes)}"
        )


async def _probe(client: Client[Any], tool: str, args: dict[str, Any], case: str, tally: Tally) -> None:
    tally.tried += 1
    tally.by_case[case.split(": ", 1)[-1]] += 1
    label = f"{tool} / {case}"
    try:
        with anyio.fail_after(CALL_LIMIT_S):
            result = await client.call_tool(tool, args, raise_on_error=False)
    except TimeoutError:
        tally.crashes.append(f"{label}: no answer within {CALL_LIMIT_S:g} s")
        return
    except MCPError as exc:  # a protocol-level refusal is an answer too, if it says something
        _classify(label, str(exc), tally)
        return
    if not result.is_error:
        tally.accepted += 1
        tally.accepted_cases.append(label)
        return
    _classify(label, " ".join(getattr(c, "text", "") for c in result.content), tally)


def _classify(label: str, text: str, tally: Tally) -> None:
    if MASKED in text or not text.strip():
        tally.masked.append(f"{label}: {text[:200]}")
    elif "Traceback" in text:
        tally.crashes.append(f"{label}: traceback in the answer")
    else:
        tally.clear_errors += 1


async def _suite(server: FastMCP, world: World, profile: str, start_episode: bool) -> Tally:
    tally = Tally()
    async with Client(server) as client:
        if start_episode:  # browser_* and doc_* then act on a live episode rather than failing on "no episode"
            await client.call_tool("env_start", {"url": world.site + "/index.html"})
        tools = await client.list_tools()
        for tool in sorted(tools, key=lambda t: t.name):
            if any(tool.name.startswith(prefix) for prefix in SKIP_TOOLS):
                continue
            properties: dict[str, Any] = tool.inputSchema.get("properties", {})
            required = set(tool.inputSchema.get("required", []))
            base = {name: _good(tool.name, name, properties[name], world) for name in required}
            if tool.name in ("graph_ingest_website",):
                base.update(max_pages=1, max_depth=0, contexts=1)  # one page: a second browser context would only idle
            for name, schema in properties.items():
                for case, value in _variants(name, schema, world):
                    if tool.name in ("env_close", "browser_close") and name != "episode_id":
                        continue
                    args = {**base, name: value}
                    if tool.name in ("env_close", "browser_close"):
                        args["episode_id"] = value  # never close the live episode with a good id
                    await _probe(client, tool.name, args, f"{name}: {case}", tally)
            listed = await client.list_tools()  # the server still answers after each tool's batch
            assert len(listed) == len(tools)
    return tally


def _wrongly_accepted(tally: Tally) -> list[str]:
    """Accepted calls whose path or URL must have been refused."""
    return [c for c in tally.accepted_cases if any(c.endswith(f"path: {k}") or c.endswith(f"url: {k}") for k in NEVER_ACCEPTED)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp_path_factory.mktemp("badinput")
    # a 2 s action timeout: a wait for text that never shows (a 1 MB string) is refused after 4 s, not 10
    settings = Settings(workspace=base / "ws", embedder="hashing", allow_roots=[base, ROOT / "examples"], record_screenshots=False, action_timeout_ms=2_000)
    graph_id = GraphService(settings).ingest_document(FIELD_GUIDE_MD).graph_id
    kg = GraphService(settings).load(graph_id)
    node_id = next(n.id for n in kg.nodes() if n.type == "paragraph")
    with serve_static() as site:
        yield World(base=base, settings=settings, graph_id=graph_id, node_id=str(node_id), site=site.url, files=_awkward_files(base))


@pytest.fixture
def quiet_log() -> Iterator[None]:
    logger = logging.getLogger("fastmcp")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


@pytest.mark.usefixtures("quiet_log")
async def test_every_full_profile_tool_answers_bad_input_clearly(world: World) -> None:
    server = build_server(world.settings, "full")
    async with Client(server) as client:  # a real document task, so task_id has a working value
        made = await client.call_tool("tasks_generate", {"graph_id": world.graph_id, "count": 2, "seed": 1})
        world.task_id = (made.structured_content or {})["task_ids"][0]
    tally = await _suite(server, world, "full", start_episode=True)
    print("\n" + tally.line("full profile"))
    print(json.dumps(dict(tally.by_case), indent=None))
    assert tally.tried > 500
    assert tally.masked == [], "\n".join(tally.masked)
    assert tally.crashes == [], "\n".join(tally.crashes)
    assert _wrongly_accepted(tally) == []
    assert Path(world.files["existing_out"]).read_text(encoding="utf-8") == "keep me"  # nothing was overwritten


@pytest.mark.usefixtures("quiet_log")
async def test_every_agent_profile_tool_answers_bad_input_clearly(world: World) -> None:
    server = build_server(world.settings, "agent")
    tally = await _suite(server, world, "agent", start_episode=True)
    print("\n" + tally.line("agent profile"))
    assert tally.tried > 150
    assert tally.masked == [], "\n".join(tally.masked)
    assert tally.crashes == [], "\n".join(tally.crashes)
    assert _wrongly_accepted(tally) == []


BAD_IDS = {"unknown": "no-such-thing", "traversal": "..%2F..%2Fetc%2Fpasswd", "dots": "..", "NUL byte": "a%00b", "long": "y" * 5000}


@pytest.mark.usefixtures("quiet_log")
async def test_every_resource_template_answers_bad_ids_clearly(world: World) -> None:
    tally = Tally()
    async with Client(build_server(world.settings, "full")) as client:
        templates = await client.list_resource_templates()
        assert templates, "the full profile has resource templates"
        for template in templates:
            names = [part.split("}")[0] for part in template.uriTemplate.split("{")[1:]]
            for case, bad in BAD_IDS.items():
                for name in names:
                    uri = template.uriTemplate
                    for other in names:
                        uri = uri.replace("{" + other + "}", bad if other == name else world.graph_id)
                    tally.tried += 1
                    try:
                        with anyio.fail_after(CALL_LIMIT_S):
                            await client.read_resource(uri)
                        tally.accepted_cases.append(f"{uri[:80]} / {case}")
                    except MCPError as exc:
                        _classify(f"{template.uriTemplate} / {name}: {case}", str(exc), tally)
        assert len(await client.list_tools()) > 0
    print(f"\nresources: tried {tally.tried}, clear errors {tally.clear_errors}, masked {len(tally.masked)}, crashes {len(tally.crashes)}")
    assert tally.masked == [], "\n".join(tally.masked)
    assert tally.crashes == [], "\n".join(tally.crashes)
    assert tally.accepted_cases == []
    assert tally.clear_errors == tally.tried
