"""The MCP surface of the server, through an in-memory fastmcp client.

Every test builds its own server over a fresh workspace (the ``settings`` fixture,
hashing embedder) and opens its client in the test body.
"""

from __future__ import annotations

import json
import logging
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from mcp.shared.exceptions import MCPError

from taskloom.server.app import build_server
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
FIELD_GUIDE = ROOT / "examples" / "documents" / "field-guide.md"

TOOL_NAMES = {
    "graph_ingest_document",
    "graph_ingest_website",
    "graph_list",
    "graph_stats",
    "graph_search",
    "graph_facts",
    "graph_node",
    "graph_neighbors",
    "graph_path",
    "graph_sample_subgraph",
    "graph_export",
    "graph_delete",
}
READ_ONLY_TOOLS = [
    "graph_list",
    "graph_stats",
    "graph_search",
    "graph_facts",
    "graph_node",
    "graph_neighbors",
    "graph_path",
    "graph_sample_subgraph",
]
CELL = "table:1/r1c1"  # Table 1, row 1 (Thermometer), column 1 (Quantity)


@pytest.fixture
def server(settings: Settings) -> FastMCP:
    """A server over a fresh, empty workspace."""
    return build_server(settings)


@dataclass
class Guide:
    server: FastMCP
    graph_id: str


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> Guide:
    """A server whose workspace holds the field guide (ingested with the library).

    Shared by the tests that only read, so each does not pay for an ingestion; the
    tests of ingestion, listing and deletion use ``server`` instead.
    """
    settings = Settings(workspace=tmp_path_factory.mktemp("guide") / "ws", embedder="hashing", allow_roots=[tmp_path_factory.getbasetemp(), ROOT / "examples"])
    graph_id = GraphService(settings).ingest_document(FIELD_GUIDE).graph_id
    return Guide(build_server(settings), graph_id)


async def call(client: Client, name: str, args: dict[str, Any] | None = None) -> Any:
    """Call a tool that must succeed; return its structured content."""
    result = await client.call_tool(name, args or {}, raise_on_error=False)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def ingest_guide(client: Client) -> str:
    """Ingest the bundled field guide and return its graph id."""
    return (await call(client, "graph_ingest_document", {"path": str(FIELD_GUIDE)}))["graph_id"]


async def table_caption(client: Client, graph_id: str) -> str:
    """Id of the caption 'Table 1: …' (found by search, not assumed)."""
    hits = (await call(client, "graph_search", {"graph_id": graph_id, "query": "Table 1 core sensors", "k": 10, "node_types": ["caption"]}))["result"]
    ids = [h["node_id"] for h in hits if h["text"].startswith("Table 1")]
    assert len(ids) == 1, hits
    return ids[0]


def _schema_shape(schema: dict[str, Any]) -> dict[str, Any]:
    """The input schema without its prose: property types, bounds and defaults."""
    return {
        "type": schema["type"],
        "additionalProperties": schema.get("additionalProperties"),
        "required": sorted(schema.get("required", [])),
        "properties": {name: {k: v for k, v in prop.items() if k != "description"} for name, prop in schema["properties"].items()},
    }


# --- tools/list -----------------------------------------------------------------------


@pytest.mark.anyio
async def test_tools_list_has_exactly_the_graph_tools(server: FastMCP) -> None:
    async with Client(server) as client:
        tools = await client.list_tools()
    graph_tools = [t.name for t in tools if t.name.startswith("graph_")]
    assert set(graph_tools) == TOOL_NAMES and len(graph_tools) == len(TOOL_NAMES)


@pytest.mark.anyio
async def test_every_tool_has_a_description_and_an_output_schema(server: FastMCP) -> None:
    async with Client(server) as client:
        tools = await client.list_tools()
    missing = [t.name for t in tools if not (t.description or "").strip() or (not t.output_schema and t.name != "browser_take_screenshot")]  # a screenshot is image content
    assert missing == []


@pytest.mark.anyio
async def test_query_tools_are_annotated_read_only(server: FastMCP) -> None:
    async with Client(server) as client:
        tools = {t.name: t for t in await client.list_tools()}
    hints = {name: tools[name].annotations.read_only_hint if tools[name].annotations else None for name in READ_ONLY_TOOLS}
    assert hints == {name: True for name in READ_ONLY_TOOLS}
    assert tools["graph_ingest_document"].annotations.read_only_hint is False
    assert tools["graph_delete"].annotations.read_only_hint is False


@pytest.mark.anyio
async def test_graph_delete_is_annotated_destructive(server: FastMCP) -> None:
    async with Client(server) as client:
        tools = {t.name: t for t in await client.list_tools()}
    assert tools["graph_delete"].annotations.destructive_hint is True
    assert [n for n, t in tools.items() if n.startswith("graph_") and n != "graph_delete" and t.annotations.destructive_hint] == []  # browser_* acting on a live site may destroy there


@pytest.mark.anyio
async def test_ingest_document_input_schema(server: FastMCP) -> None:
    async with Client(server) as client:
        tools = {t.name: t for t in await client.list_tools()}
    schema = tools["graph_ingest_document"].input_schema
    assert _schema_shape(schema) == {
        "type": "object",
        "additionalProperties": False,
        "required": ["path"],
        "properties": {
            "path": {"type": "string"},
            "name": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
    }
    assert "ctx" not in schema["properties"]  # the Context parameter is not exposed
    assert schema["properties"]["path"]["description"]


@pytest.mark.anyio
async def test_search_input_schema(server: FastMCP) -> None:
    async with Client(server) as client:
        tools = {t.name: t for t in await client.list_tools()}
    schema = tools["graph_search"].input_schema
    assert _schema_shape(schema) == {
        "type": "object",
        "additionalProperties": False,
        "required": ["graph_id", "query"],
        "properties": {
            "graph_id": {"type": "string"},
            "query": {"type": "string", "maxLength": 10_000},
            "k": {"type": "integer", "default": 10, "minimum": 1, "maximum": 100},
            "node_types": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None},
            "mode": {"anyOf": [{"type": "string", "enum": ["hybrid", "vector", "lexical"]}, {"type": "null"}], "default": None},
        },
    }


# --- ingestion ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_ingest_markdown_returns_a_structured_report(server: FastMCP) -> None:
    async with Client(server) as client:
        report = await call(client, "graph_ingest_document", {"path": str(FIELD_GUIDE)})
    assert report["graph_id"].startswith("field-guide-")
    assert report["format"] == "markdown"
    assert {"section", "table", "table_cell", "caption", "chunk"} <= set(report["node_types"])
    assert {"refers_to", "caption_of"} <= set(report["edge_types"])
    assert report["nodes"] == sum(report["node_types"].values())
    assert report["edges"] == sum(report["edge_types"].values())
    assert report["embedded"] > 0


@pytest.mark.anyio
async def test_ingest_pdf_reports_progress_per_page_then_per_batch(server: FastMCP, real_pdfs: dict[str, Path]) -> None:
    events: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        events.append((progress, total, message))

    async with Client(server) as client:
        result = await client.call_tool("graph_ingest_document", {"path": str(real_pdfs["countreg"])}, progress_handler=on_progress, raise_on_error=False)
    assert not result.is_error, result.content[0].text
    assert result.structured_content["pages"] == 25
    pages = [e for e in events if (e[2] or "").startswith("page")]
    embeds = [e for e in events if (e[2] or "").startswith(("embedding", "embedded"))]  # "embedding N texts" first, then each call
    assert len(pages) >= 25
    assert {e[1] for e in pages} == {25}
    assert [e[0] for e in pages] == sorted(e[0] for e in pages)
    assert pages[-1][0] == 25
    assert embeds, events
    assert len({e[1] for e in embeds}) == 1 and embeds[0][1] is not None
    assert [e[0] for e in embeds] == sorted(e[0] for e in embeds)
    assert embeds[-1][0] == embeds[-1][1] == result.structured_content["embedded"]
    assert events.index(pages[-1]) < events.index(embeds[0])  # pages first, then embedding
    assert len(pages) + len(embeds) == len(events)  # no event outside the two phases


# --- queries --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_graph_list_shows_the_ingested_graph(server: FastMCP) -> None:
    async with Client(server) as client:
        assert (await call(client, "graph_list"))["result"] == []
        graph_id = await ingest_guide(client)
        listed = (await call(client, "graph_list"))["result"]
    assert [g["graph_id"] for g in listed] == [graph_id]
    assert listed[0]["name"] == "Running a Community Weather Station: A Field Guide"
    assert listed[0]["embedder"] == "hashing"
    assert listed[0]["sources"] == [str(FIELD_GUIDE)]


@pytest.mark.anyio
async def test_graph_stats_counts_match_the_ingest_report(server: FastMCP) -> None:
    async with Client(server) as client:
        report = await call(client, "graph_ingest_document", {"path": str(FIELD_GUIDE)})
        stats = await call(client, "graph_stats", {"graph_id": report["graph_id"]})
    assert stats["graph_id"] == report["graph_id"]
    assert (stats["nodes"], stats["edges"]) == (report["nodes"], report["edges"])
    assert stats["node_types"] == report["node_types"]
    assert stats["edge_types"] == report["edge_types"]
    assert stats["node_types"]["table"] == 1
    assert stats["node_types"]["table_cell"] == 24  # 6 rows x 4 columns


@pytest.mark.anyio
async def test_graph_search_returns_only_the_requested_node_types(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        unfiltered = (await call(client, "graph_search", {"graph_id": graph_id, "query": "sensor accuracy check interval", "k": 20}))["result"]
        hits = (await call(client, "graph_search", {"graph_id": graph_id, "query": "sensor accuracy check interval", "k": 20, "node_types": ["table"]}))["result"]
    assert {h["type"] for h in unfiltered} - {"table"}  # the filter has something to remove
    assert [h["node_id"] for h in hits] == ["table:1"]
    assert {h["type"] for h in hits} == {"table"}


@pytest.mark.anyio
async def test_graph_node_returns_a_table_cell_by_its_slash_id(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        node = await call(client, "graph_node", {"graph_id": graph_id, "node_id": CELL})
    assert node["id"] == CELL
    assert node["type"] == "table_cell"
    assert node["text"] == "Air temperature"
    assert node["attrs"]["row"] == 1 and node["attrs"]["col"] == 1
    assert node["attrs"]["row_header"] == "Thermometer"
    assert node["attrs"]["column_header"] == "Quantity"


@pytest.mark.anyio
async def test_graph_neighbors_follows_only_the_given_edge_types(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        caption = await table_caption(client, graph_id)
        everything = (await call(client, "graph_neighbors", {"graph_id": graph_id, "node_id": caption}))["result"]
        along = (await call(client, "graph_neighbors", {"graph_id": graph_id, "node_id": caption, "edge_types": ["caption_of"]}))["result"]
    assert len(everything) > len(along)
    assert [(h["node_id"], h["type"], h["distance"]) for h in along] == [("table:1", "table", 1)]


@pytest.mark.anyio
async def test_graph_neighbors_hops_bounds_the_distance(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        caption = await table_caption(client, graph_id)
        args = {"graph_id": graph_id, "node_id": caption, "edge_types": ["caption_of", "contains"], "direction": "out"}
        one = (await call(client, "graph_neighbors", {**args, "hops": 1}))["result"]
        two = (await call(client, "graph_neighbors", {**args, "hops": 2, "limit": 500}))["result"]
    assert [h["node_id"] for h in one] == ["table:1"]
    assert {h["distance"] for h in two} == {1, 2}
    assert CELL in {h["node_id"] for h in two if h["distance"] == 2}
    assert sum(h["type"] == "table_cell" for h in two) == 24


@pytest.mark.anyio
async def test_graph_path_from_caption_to_cell_is_a_connected_edge_chain(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        caption = await table_caption(client, graph_id)
        path = await call(client, "graph_path", {"graph_id": graph_id, "source": caption, "target": CELL})
    edges = path["edges"]
    assert path["length"] == len(edges) == 2
    assert caption in (edges[0]["source"], edges[0]["target"])
    assert CELL in (edges[-1]["source"], edges[-1]["target"])
    for a, b in zip(edges, edges[1:]):
        assert {a["source"], a["target"]} & {b["source"], b["target"]}
    assert [e["type"] for e in edges] == ["caption_of", "contains"]


SAMPLE = {"objective": "sensor accuracy and calibration", "node_types": ["paragraph", "table"], "tau": 0.0, "max_nodes": 4, "seed": 7}


@pytest.mark.anyio
async def test_sample_subgraph_keeps_to_node_types_and_max_nodes(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        sub = await call(client, "graph_sample_subgraph", {"graph_id": graph_id, **SAMPLE})
    assert 1 <= len(sub["nodes"]) <= 4
    assert {n["type"] for n in sub["nodes"]} <= {"paragraph", "table"}
    ids = {n["id"] for n in sub["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in sub["edges"])


@pytest.mark.anyio
async def test_sample_subgraph_is_deterministic_for_a_seed(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        first = await call(client, "graph_sample_subgraph", {"graph_id": graph_id, **SAMPLE})
        second = await call(client, "graph_sample_subgraph", {"graph_id": graph_id, **SAMPLE})
    assert first["nodes"]  # not trivially equal
    assert first == second


@pytest.mark.anyio
async def test_export_json_is_node_link_json_of_the_graph(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        stats = await call(client, "graph_stats", {"graph_id": graph_id})
        out = await call(client, "graph_export", {"graph_id": graph_id, "format": "json"})
    assert out["format"] == "json" and out["path"] is None
    data = json.loads(out["content"])
    assert out["chars"] == len(out["content"])
    assert data["graph"]["id"] == graph_id
    assert len(data["nodes"]) == stats["nodes"]
    assert len(data["edges"]) == stats["edges"]


@pytest.mark.anyio
async def test_export_graphml_is_graphml_xml(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        out = await call(client, "graph_export", {"graph_id": graph_id, "format": "graphml"})
    text = out["content"]
    # No '<?xml' declaration is emitted (networkx.generate_graphml); the document
    # must still parse as GraphML.
    assert text.lstrip().startswith(("<?xml", "<graphml"))
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "{http://graphml.graphdrawing.org/xmlns}graphml"
    node_ids = {n.get("id") for n in root.iter("{http://graphml.graphdrawing.org/xmlns}node")}
    assert CELL in node_ids


@pytest.mark.anyio
async def test_export_with_path_writes_the_file(guide: Guide, tmp_path: Path) -> None:
    target = tmp_path / "out" / "guide.json"
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        out = await call(client, "graph_export", {"graph_id": graph_id, "path": str(target)})
    assert out["path"] == str(target.resolve())
    assert out["content"] is None
    text = target.read_text(encoding="utf-8")
    assert out["chars"] == len(text)
    assert json.loads(text)["graph"]["id"] == graph_id
    assert [p.name for p in target.parent.iterdir()] == ["guide.json"]  # no temp file left


@pytest.mark.anyio
async def test_deleted_graph_is_gone(server: FastMCP) -> None:
    async with Client(server) as client:
        graph_id = await ingest_guide(client)
        deleted = await call(client, "graph_delete", {"graph_id": graph_id})
        after = await client.call_tool("graph_node", {"graph_id": graph_id, "node_id": CELL}, raise_on_error=False)
        listed = (await call(client, "graph_list"))["result"]
    assert deleted == {"deleted": graph_id}
    assert after.is_error
    assert graph_id in after.content[0].text
    assert "graph_list" in after.content[0].text
    assert listed == []


# --- bad input ------------------------------------------------------------------------


def _not_a_pdf(tmp_path: Path) -> Path:
    path = tmp_path / "notes.pdf"
    path.write_text("These are plain-text meeting notes, saved with the wrong suffix.\n", encoding="utf-8")
    return path


def _empty_md(tmp_path: Path) -> Path:
    path = tmp_path / "empty.md"
    path.write_text("", encoding="utf-8")
    return path


def _bad_calls(request: pytest.FixtureRequest, tmp_path: Path, graph_id: str) -> dict[str, tuple[str, dict[str, Any], list[str]]]:
    """name -> (tool, arguments, fragments the error message must contain)."""
    missing = tmp_path / "missing" / "report.pdf"
    not_pdf = _not_a_pdf(tmp_path)
    encrypted = request.getfixturevalue("encrypted_pdf")
    image_only = request.getfixturevalue("image_only_pdf")
    zero = request.getfixturevalue("zero_page_pdf")
    empty = _empty_md(tmp_path)
    return {
        "missing file": ("graph_ingest_document", {"path": str(missing)}, [str(missing), "does not exist", "check the path"]),
        "not a pdf": ("graph_ingest_document", {"path": str(not_pdf)}, [str(not_pdf), "not a readable PDF", "pass a PDF"]),
        "encrypted pdf": ("graph_ingest_document", {"path": str(encrypted)}, [str(encrypted), "encrypted", "decrypt"]),
        "image-only pdf": ("graph_ingest_document", {"path": str(image_only)}, [str(image_only), "no text layer", "OCR"]),
        "zero-page pdf": ("graph_ingest_document", {"path": str(zero)}, [str(zero), "no pages"]),
        "empty markdown": ("graph_ingest_document", {"path": str(empty)}, [str(empty), "no text"]),
        "unknown graph id": ("graph_stats", {"graph_id": "no-such-graph-0000"}, ["no-such-graph-0000", graph_id, "graph_list"]),
        "unknown node id": ("graph_node", {"graph_id": graph_id, "node_id": "table:99/r1c1"}, ["table:99/r1c1", graph_id, "graph_search"]),
        "unknown node type": ("graph_search", {"graph_id": graph_id, "query": "rain", "node_types": ["tabel"]}, ["tabel", "valid types", "'table'"]),
        "hops out of range": ("graph_neighbors", {"graph_id": graph_id, "node_id": CELL, "hops": 9}, ["hops", "less than or equal to 5"]),
    }


@pytest.fixture
def quiet_server_log() -> Any:
    """Keep fastmcp from logging expected errors with rich tracebacks.

    The mounted graph sub-server logs every TaskloomError at ERROR with a rich
    traceback; for the chained pymupdf error ('not a pdf') rendering it takes ~5 s.
    Logging is not what these tests check, so it is turned down while they run.
    """
    logger = logging.getLogger("fastmcp")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


BAD_CASES = [
    "missing file",
    "not a pdf",
    "encrypted pdf",
    "image-only pdf",
    "zero-page pdf",
    "empty markdown",
    "unknown graph id",
    "unknown node id",
    "unknown node type",
    "hops out of range",
]


@pytest.mark.anyio
@pytest.mark.parametrize("case", BAD_CASES)
@pytest.mark.usefixtures("quiet_server_log")
async def test_bad_input_gives_a_readable_tool_error(guide: Guide, request: pytest.FixtureRequest, tmp_path: Path, case: str) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        tool, args, fragments = _bad_calls(request, tmp_path, graph_id)[case]
        result = await client.call_tool(tool, args, raise_on_error=False)
    assert result.is_error
    text = result.content[0].text
    assert "Traceback" not in text
    assert "Error calling tool" not in text  # not the masked catch-all
    missing = [f for f in fragments if f not in text]
    assert missing == [], text


@pytest.mark.anyio
@pytest.mark.usefixtures("quiet_server_log")
async def test_server_keeps_serving_after_errors(guide: Guide, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        failures = []
        for tool, args, _ in _bad_calls(request, tmp_path, graph_id).values():
            failures.append((await client.call_tool(tool, args, raise_on_error=False)).is_error)
        node = await call(client, "graph_node", {"graph_id": graph_id, "node_id": CELL})
        hits = (await call(client, "graph_search", {"graph_id": graph_id, "query": "rain gauge", "k": 3}))["result"]
    assert failures == [True] * len(BAD_CASES)
    assert node["text"] == "Air temperature"
    assert len(hits) == 3


@pytest.mark.anyio
async def test_export_to_an_unwritable_path_says_why(guide: Guide, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        result = await client.call_tool("graph_export", {"graph_id": graph_id, "path": str(blocker / "out.json")}, raise_on_error=False)
    assert result.is_error
    assert str(blocker) in result.content[0].text


@pytest.mark.anyio
async def test_sample_subgraph_negative_seed_says_why(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        result = await client.call_tool("graph_sample_subgraph", {"graph_id": graph_id, "seed": -1}, raise_on_error=False)
    assert result.is_error
    assert "seed" in result.content[0].text


# --- resources ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_graphs_resource_lists_the_graph(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        contents = await client.read_resource("taskloom://graphs")
    assert contents[0].mime_type == "application/json"
    listed = json.loads(contents[0].text)
    assert [g["id"] for g in listed] == [graph_id]
    assert "stats" not in listed[0]


@pytest.mark.anyio
async def test_graph_resource_has_stats(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        stats = await call(client, "graph_stats", {"graph_id": graph_id})
        contents = await client.read_resource(f"taskloom://graphs/{graph_id}")
    data = json.loads(contents[0].text)
    assert data["graph_id"] == graph_id
    assert data["nodes"] == stats["nodes"] and data["node_types"] == stats["node_types"]


@pytest.mark.anyio
async def test_node_resource_returns_a_cell_with_a_slash_id(guide: Guide) -> None:
    async with Client(guide.server) as client:
        graph_id = guide.graph_id
        contents = await client.read_resource(f"taskloom://graphs/{graph_id}/nodes/{CELL}")
    node = json.loads(contents[0].text)
    assert node["id"] == CELL
    assert node["type"] == "table_cell"
    assert node["text"] == "Air temperature"


@pytest.mark.anyio
async def test_unknown_graph_resource_names_the_id(server: FastMCP) -> None:
    async with Client(server) as client:
        with pytest.raises(MCPError) as info:
            await client.read_resource("taskloom://graphs/no-such-graph-0000")
    assert "no-such-graph-0000" in str(info.value)
    assert "graph_list" in str(info.value)
    assert "Traceback" not in str(info.value)
