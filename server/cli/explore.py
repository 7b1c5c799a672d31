"""``taskloom explore-app APP``: a knowledge graph of a desktop application's menus, dialogs and controls, with progress on stderr."""

from __future__ import annotations

import typer

from ...tools.generate.desktop.explore import explore_and_store
from ...tools.graph.service import GraphService
from .common import echo_json, progress_bar, run, settings


def explore_app(
    app: str = typer.Argument(..., help="The application: gnumeric, mousepad or pcmanfm (run on a private display with a fresh home folder)."),
    max_dialogs: int = typer.Option(40, "--max-dialogs", min=0, max=500, help="Dialogs to open at most (each is opened, read and cancelled)."),
) -> None:
    """Explore a desktop application's menus and dialogs into a searchable graph (app-<name>) without changing its files; print the report."""
    service = run(lambda: GraphService(settings()))
    with progress_bar(f"explore {app}") as update:
        seen = [0]

        def progress(message: str) -> None:
            seen[0] += 1
            update(seen[0], None, message)

        report = run(lambda: explore_and_store(service, app, max_dialogs, progress))
    echo_json(report)
