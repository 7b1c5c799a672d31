"""The ``taskloom`` console script, run as a subprocess with a temporary workspace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from taskloom.tools.environment.site import serve_static
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
FIELD_GUIDE = ROOT / "examples" / "documents" / "field-guide.md"
TASKLOOM = Path(sys.executable).parent / "taskloom"
CELL = "table:1/r1c1"


def taskloom(*args: str, workspace: Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}, **(env or {})}
    env.update(
        TASKLOOM_WORKSPACE=str(workspace),
        TASKLOOM_EMBEDDER="hashing",
        TASKLOOM_ALLOW_ROOTS=json.dumps([str(ROOT / "examples")]),
        FASTMCP_SHOW_SERVER_BANNER="false",
        FASTMCP_CHECK_FOR_UPDATES="off",
    )
    return subprocess.run([str(TASKLOOM), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


@dataclass
class Ingested:
    workspace: Path
    cwd: Path
    result: subprocess.CompletedProcess[str]
    report: dict[str, Any]

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return taskloom(*args, workspace=self.workspace, cwd=self.cwd, env=env)

    @property
    def graph_id(self) -> str:
        return str(self.report["graph_id"])


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Ingested:
    """One ``taskloom ingest field-guide.md`` shared by the read-only tests below."""
    cwd = tmp_path_factory.mktemp("cli")
    workspace = cwd / "ws"
    result = taskloom("ingest", str(FIELD_GUIDE), workspace=workspace, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return Ingested(workspace, cwd, result, json.loads(result.stdout))


def test_ingest_prints_the_report_as_json(ingested: Ingested) -> None:
    report = ingested.report
    assert report["graph_id"].startswith("field-guide-")
    assert report["format"] == "markdown"
    assert {"section", "table", "table_cell", "caption"} <= set(report["node_types"])
    assert "Traceback" not in ingested.result.stderr


def test_graph_list_shows_the_graph(ingested: Ingested) -> None:
    result = ingested.run("graph", "list")
    assert result.returncode == 0, result.stderr
    assert [g["id"] for g in json.loads(result.stdout)] == [ingested.graph_id]


def test_graph_stats_counts(ingested: Ingested) -> None:
    result = ingested.run("graph", "stats", ingested.graph_id)
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["graph_id"] == ingested.graph_id
    assert (stats["nodes"], stats["edges"]) == (ingested.report["nodes"], ingested.report["edges"])
    assert stats["node_types"] == ingested.report["node_types"]


def test_graph_search_returns_k_hits(ingested: Ingested) -> None:
    result = ingested.run("graph", "search", ingested.graph_id, "rain gauge", "-k", "3")
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)
    assert len(hits) == 3
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert any("rain gauge" in h["text"].lower() for h in hits)


def test_graph_node_shows_a_cell(ingested: Ingested) -> None:
    result = ingested.run("graph", "node", ingested.graph_id, CELL)
    assert result.returncode == 0, result.stderr
    node = json.loads(result.stdout)
    assert (node["id"], node["type"], node["text"]) == (CELL, "table_cell", "Air temperature")


def test_graph_export_graphml_to_a_file(ingested: Ingested) -> None:
    target = ingested.cwd / "guide.graphml"  # the folder the command runs in is an allowed root
    result = ingested.run("graph", "export", ingested.graph_id, "--format", "graphml", "-o", str(target))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(target)
    root = ET.parse(target).getroot()
    assert root.tag == "{http://graphml.graphdrawing.org/xmlns}graphml"
    node_ids = {n.get("id") for n in root.iter("{http://graphml.graphdrawing.org/xmlns}node")}
    assert len(node_ids) == ingested.report["nodes"]


def test_graph_delete_with_yes_removes_the_graph(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    settings = Settings(workspace=workspace, embedder="hashing")
    graph_id = GraphService(settings).ingest_document(FIELD_GUIDE).graph_id
    result = taskloom("graph", "delete", graph_id, "--yes", workspace=workspace, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"deleted {graph_id}"
    assert GraphService(settings).list_graphs() == []


def test_ingest_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    result = taskloom("ingest", "/nonexistent.pdf", workspace=tmp_path / "ws", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error:")
    assert "/nonexistent.pdf" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_graph_stats_unknown_id_exits_2(tmp_path: Path) -> None:
    result = taskloom("graph", "stats", "unknown-id", workspace=tmp_path / "ws", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error:")
    assert "unknown-id" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_lists_the_commands(tmp_path: Path) -> None:
    result = taskloom("--help", workspace=tmp_path / "ws", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    commands = {line.split()[1] for line in result.stdout.splitlines() if line.startswith("│ ") and len(line.split()) > 1}
    assert {"serve", "ingest", "graph"} <= commands


def test_graph_export_to_an_unwritable_path_is_a_one_line_error(ingested: Ingested, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    result = ingested.run("graph", "export", ingested.graph_id, "-o", str(blocker / "out.json"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_missing_config_file_is_a_one_line_error(ingested: Ingested, tmp_path: Path) -> None:
    result = ingested.run("graph", "list", env={"TASKLOOM_CONFIG": str(tmp_path / "nope.toml")})
    assert result.returncode == 2
    assert "TASKLOOM_CONFIG" in result.stderr and "Traceback" not in result.stderr


def test_malformed_config_file_is_a_one_line_error(ingested: Ingested, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("workspace = [unclosed", encoding="utf-8")
    result = ingested.run("graph", "list", env={"TASKLOOM_CONFIG": str(bad)})
    assert result.returncode == 2
    assert "not valid TOML" in result.stderr and "Traceback" not in result.stderr


def test_ingest_outside_the_allowed_roots_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    doc = outside / "notes.md"
    doc.write_text("# Notes\n\nA paragraph about rain gauges and their calibration.\n", encoding="utf-8")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    refused = taskloom("ingest", str(doc), workspace=tmp_path / "ws", cwd=cwd)
    assert refused.returncode == 2
    assert "outside the allowed roots" in refused.stderr and "--allow-root" in refused.stderr
    assert "Traceback" not in refused.stderr
    allowed = taskloom("--allow-root", str(outside), "ingest", str(doc), workspace=tmp_path / "ws", cwd=cwd)
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout)["nodes"] > 0


def test_ingest_fetches_a_url(tmp_path: Path) -> None:
    with serve_static(ROOT / "examples" / "documents") as site:
        done = taskloom("ingest", f"{site.url}/field-guide.md", workspace=tmp_path / "ws", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert report["nodes"] > 0 and report["graph_id"].startswith("field-guide-")
    assert "/field-guide.md" in site.requests


def test_an_empty_workspace_variable_never_makes_the_current_folder_the_workspace(tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir(mode=0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(TASKLOOM_WORKSPACE="", TASKLOOM_EMBEDDER="hashing", FASTMCP_SHOW_SERVER_BANNER="false")
    done = subprocess.run([str(TASKLOOM), "graph", "list"], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in cwd.iterdir()) == [".taskloom"], "the default workspace, not the folder itself"
    assert cwd.stat().st_mode & 0o777 == 0o755, "the current folder keeps its mode"


def test_a_task_file_with_a_missing_gold_answer_is_refused_naming_line_and_field(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (ROOT / "examples" / "tasks" / "field-guide-document-tasks.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    del rows[2]["gold_answer"]
    bad = tmp_path / "tasks.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    done = taskloom("--allow-root", str(tmp_path), "run", "--tasks", str(bad), "--agent", "oracle", workspace=tmp_path / "ws", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"line 3, field gold_answer: a document task needs a gold answer (task '{rows[2]['id']}')" in " ".join(done.stderr.split()), done.stderr
    assert not (tmp_path / "ws" / "runs").exists() or not any((tmp_path / "ws" / "runs").iterdir()), "nothing ran"


def test_export_never_overwrites_unless_asked(ingested: Ingested) -> None:
    target = ingested.cwd / "exists.json"
    target.write_text("keep me", encoding="utf-8")
    refused = ingested.run("graph", "export", ingested.graph_id, "-o", str(target))
    assert refused.returncode == 2 and "already exists" in refused.stderr
    assert target.read_text(encoding="utf-8") == "keep me"
    replaced = ingested.run("graph", "export", ingested.graph_id, "-o", str(target), "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    assert json.loads(target.read_text(encoding="utf-8"))["graph"]["id"] == ingested.graph_id
