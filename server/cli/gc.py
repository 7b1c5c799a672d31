"""``taskloom gc``: remove what failed or killed ingests and crawls left in the workspace."""

from __future__ import annotations

import typer

from ...tools.graph.gc import collect_garbage
from .common import echo_json, run, settings


def gc(dry_run: bool = typer.Option(False, "--dry-run", help="Only list the debris; remove nothing.")) -> None:
    """Find and remove debris (orphan vectors, index folders and screenshots, unfinished writes, stale locks); print a JSON report."""
    echo_json(run(lambda: collect_garbage(settings(), dry_run=dry_run)))
