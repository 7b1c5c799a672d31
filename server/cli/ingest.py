"""``taskloom ingest PATH``: build a knowledge graph from a document, with progress on stderr."""

from __future__ import annotations

from pathlib import Path

import typer

from ...tools.runtime import Runtime
from .common import echo_json, progress_bar, roots, run, settings

#: The first word of the parsers' and embedder's progress messages, as the unit the counts are in.
_PHASES = {"page": "pages parsed", "parsed": "parsed", "embedded": "nodes embedded"}


def ingest(
    path: Path = typer.Argument(..., help="A PDF, HTML, Markdown or text file."),
    name: str | None = typer.Option(None, "--name", help="Display name (default: the document's title)."),
) -> None:
    """Ingest a document into a knowledge graph and print the report as JSON."""
    current = settings()
    source = run(lambda: roots(current).readable_file(path, "PATH"))
    service = run(lambda: Runtime(current)).graphs  # a document ingest opens no browser: nothing to close
    with progress_bar(f"ingest {source.name}") as update:

        def progress(done: float, total: float, message: str) -> None:
            update(done, total, _PHASES.get(message.split(" ")[0], message.split(" ")[0]))

        report = run(lambda: service.ingest_document(source, name, progress))
    echo_json(report)
