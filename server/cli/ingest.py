"""``taskloom ingest PATH|URL``: build a knowledge graph from a document, with progress on stderr."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import typer

from ...tools.graph.ingest.fetch import is_url
from ...tools.graph.service import GraphService
from .common import echo_json, progress_bar, roots, run, settings

#: The first word of the parsers' and embedder's progress messages, as the unit the counts are in.
_PHASES = {"page": "pages parsed", "parsed": "parsed", "embedded": "nodes embedded"}


def ingest(
    source: str = typer.Argument(..., metavar="PATH|URL", help="A PDF, HTML, Markdown or text file, or its http(s) URL (fetched within its origin)."),
    name: str | None = typer.Option(None, "--name", help="Display name (default: the document's title)."),
) -> None:
    """Ingest a document (a file, or an http(s) URL to fetch) into a knowledge graph and print the report as JSON."""
    current = settings()
    document: str | Path = source if is_url(source) else run(lambda: roots(current).readable_file(source, "PATH"))
    label = (Path(urlparse(source).path).name or source) if isinstance(document, str) else document.name
    # a document ingest needs no browser: the graph service alone (importing the whole Runtime cost ~0.6 s per call)
    service = run(lambda: GraphService(current))
    with progress_bar(f"ingest {label}") as update:

        def progress(done: float, total: float, message: str) -> None:
            update(done, total, _PHASES.get(message.split(" ")[0], message.split(" ")[0]))

        report = run(lambda: service.ingest_document(document, name, progress))
    echo_json(report)
