"""Tasks on tables that carry no number: named by section and columns, never as "the table"."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from taskloom.tools.generate.document.generator import generate_document_tasks
from taskloom.tools.graph.ingest.pipeline import build_document_graph
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Task

ROOT = Path(__file__).resolve().parents[3]
GALLERY = ROOT / "tests" / "data" / "cache" / "xtableGallery.pdf"


@pytest.fixture(scope="module")
def table_tasks(tmp_path_factory: pytest.TempPathFactory) -> list[Task]:
    if not GALLERY.is_file():
        subprocess.run(["bash", str(ROOT / "tests" / "data" / "fetch-pdfs.sh")], check=True)
    kg = build_document_graph(GALLERY, Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing"))
    tasks, _ = generate_document_tasks(kg, ["table_qa", "comparison", "aggregation"], 10_000, 3, None)
    table_templates = {"comparison_table_rows", "aggregation_table_rows", "table_qa_cell"}
    return [t for t in tasks if t.provenance.template in table_templates]


def test_every_table_is_named_so_a_reader_can_find_it(table_tasks: list[Task]) -> None:
    assert len(table_tasks) >= 40
    unnumbered = [t for t in table_tasks if not re.search(r"\bTable \d+\b", t.instruction)]
    assert unnumbered, "the gallery's uncaptioned tables yield tasks"
    for task in unnumbered:
        assert re.search(r'the table in section ".+" with the columns "', task.instruction), task.instruction
    assert not any(re.search(r"\bthe table(?! in section)", t.instruction) for t in table_tasks)
    assert not any('("")' in t.instruction for t in table_tasks)


def test_a_header_that_is_data_makes_no_task(table_tasks: list[Task]) -> None:
    # "Suppress row and column names" prints a table whose first row is data: no column header exists.
    assert not any('"Suppress row and column names"' in t.instruction for t in table_tasks)
