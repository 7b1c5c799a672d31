"""Ingesting a document by URL, from a real HTTP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from taskloom.tools.environment.site import serve_static
from taskloom.tools.errors import DocumentError
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "documents"


@pytest.fixture
def site() -> Iterator[str]:
    with serve_static(EXAMPLES) as served:
        yield served.url


def test_ingest_pdf_by_url_records_the_url(site: str, settings: Settings) -> None:
    service = GraphService(settings)
    url = f"{site}/field-guide.pdf"
    report = service.ingest_document(url)
    assert report.format == "pdf" and report.pages == 3
    meta = next(m for m in service.list_graphs() if m.id == report.graph_id)
    assert meta.sources == [url]
    assert report.node_types["table"] == 1


def test_missing_url_is_a_clear_error(site: str, settings: Settings) -> None:
    with pytest.raises(DocumentError, match="HTTP 404"):
        GraphService(settings).ingest_document(f"{site}/nope.pdf")


def test_unreachable_host_is_a_clear_error(settings: Settings) -> None:
    with pytest.raises(DocumentError, match="could not fetch"):
        GraphService(settings).ingest_document("http://127.0.0.1:9/doc.pdf")
