"""``taskloom ingest PATH``: build a knowledge graph from a document, with a progress bar."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ...tools.graph.service import GraphService
from .common import console, echo_json, roots, run, settings


def ingest(
    path: Path = typer.Argument(..., help="A PDF, HTML, Markdown or text file."),
    name: str | None = typer.Option(None, "--name", help="Display name (default: the document's title)."),
) -> None:
    """Ingest a document into a knowledge graph and print the report as JSON."""
    current = settings()
    source = run(lambda: roots(current).readable_file(path, "PATH"))
    service = run(lambda: GraphService(current))
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("parsing", total=None)

        def progress(done: float, total: float, message: str) -> None:
            bar.update(task, completed=done, total=total, description=message.split(" ")[0])

        report = run(lambda: service.ingest_document(source, name, progress))
    echo_json(report)
