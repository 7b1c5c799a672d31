"""Ingesting a document by URL, from a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from taskloom.tools.errors import DocumentError
from taskloom.tools.graph.service import GraphService
from taskloom.tools.settings import Settings

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "documents"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(EXAMPLES))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


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
