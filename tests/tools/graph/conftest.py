"""Fixtures of the graph tests: one page of a cached Debian PDF laid out as ingest lays it out."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pymupdf
import pytest

from taskloom.tools.graph.ingest.pdf import _layout_page
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings
from taskloom.tools.graph.ingest.pdf_regions import Region
from taskloom.tools.graph.ingest.pdf_text import FontEncodings, TextBlock, body_font_size, page_text_blocks

CACHE = Path(__file__).resolve().parents[3] / "tests" / "data" / "cache"


def _layout(pdf: str, page: int) -> tuple[list[TextBlock], list[Region]]:
    """One page (1-based) laid out as ingest lays it out: its blocks in reading order and its tables and figures."""
    if not (CACHE / pdf).is_file():
        subprocess.run(["bash", str(CACHE.parent / "fetch-pdfs.sh")], check=True)
    doc = pymupdf.open(CACHE / pdf)
    fonts = FontEncodings()
    blocks = page_text_blocks(doc[page - 1], fonts)
    return _layout_page(doc[page - 1], blocks, body_font_size([blocks]), {}, fonts.text_table)


@pytest.fixture
def laid_out() -> Callable[[str, int], tuple[list[TextBlock], list[Region]]]:
    """``laid_out(pdf, page)``: one page (1-based) of a PDF in tests/data/cache, as ingest lays it out."""
    return _layout


def ingest_cached(tmp_path_factory: pytest.TempPathFactory, names: tuple[str, ...]) -> dict[str, KnowledgeGraph]:
    """The graphs of PDFs in tests/data/cache (fetched when missing), ingested into one fresh workspace."""
    if not all((CACHE / f"{name}.pdf").is_file() for name in names):
        subprocess.run(["bash", str(CACHE.parent / "fetch-pdfs.sh")], check=True)
    service = GraphService(Settings(workspace=tmp_path_factory.mktemp("pdfs") / "ws", embedder="hashing"))
    return {name: service.load(service.ingest_document(CACHE / f"{name}.pdf").graph_id) for name in names}
