"""The ``taskloom`` command imports heavy libraries only in the commands that use them (not timed: see bench/cli.py)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command

from taskloom.server.cli import app
from taskloom.server.cli.lazy import COMMANDS, LazyGroup, load_command
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
FIELD_GUIDE = ROOT / "examples" / "documents" / "field-guide.md"
HEAVY = ("chromadb", "fitz", "pymupdf", "playwright", "onnxruntime", "fastmcp", "mcp", "numpy", "networkx", "bm25s", "scipy", "httpx")

#: Runs the console script's ``main`` with ``argv`` in a fresh interpreter, then writes the top-level modules it imported to a file.
PROBE = """
import json, sys
out, sys.argv = sys.argv[1], ["taskloom", *sys.argv[2:]]
from taskloom.server.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
with open(out, "w") as fh:
    json.dump({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}, fh)
"""


def imported_by(tmp_path: Path, *argv: str) -> tuple[int, set[str]]:
    """The exit code of ``taskloom *argv`` and the top-level packages its process imported."""
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off")
    done = subprocess.run([sys.executable, "-c", PROBE, str(out), *argv], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.exists(), done.stderr
    found = json.loads(out.read_text())
    return int(found["code"] or 0), set(found["modules"])


@pytest.mark.parametrize("argv", [("--help",), ("graph", "--help"), ("graph", "search", "--help")], ids=" ".join)
def test_help_imports_no_heavy_module(tmp_path: Path, argv: tuple[str, ...]) -> None:
    code, modules = imported_by(tmp_path, *argv)
    assert code == 0
    assert "typer" in modules and "taskloom" in modules
    assert sorted(modules & set(HEAVY)) == []


def test_graph_search_loads_neither_the_mcp_server_nor_pdf_parsing(tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing")
    with Runtime.open_sync(settings) as runtime:
        graph_id = runtime.graphs.ingest_document(FIELD_GUIDE).graph_id
    code, modules = imported_by(tmp_path, "-w", str(settings.workspace), "--embedder", "hashing", "graph", "search", graph_id, "calibration")
    assert code == 0
    assert "chromadb" in modules  # the search really ran: hybrid mode queries the vectors
    assert sorted(modules & {"fastmcp", "mcp", "fitz", "pymupdf", "onnxruntime"}) == []


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_summary_is_its_commands_help(name: str) -> None:
    """The root's help lists the table's summaries: each must be the first paragraph of the loaded command's help."""
    group = typer_group()
    command = load_command(name, COMMANDS[name], group)
    assert command.name == name
    first = inspect.cleandoc(command.help or "").split("\n\n")[0].replace("\n", " ")
    assert first == COMMANDS[name].summary


def test_root_lists_every_command_without_loading_it() -> None:
    group = typer_group()
    assert group.list_commands(None) == list(COMMANDS)  # type: ignore[arg-type]
    assert group.commands == {}


def typer_group() -> LazyGroup:
    """The root click group Typer builds for ``app``."""
    group = get_command(app)
    assert isinstance(group, LazyGroup)
    return group
