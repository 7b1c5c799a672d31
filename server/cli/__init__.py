"""The ``taskloom`` command: one module per command group, all calling the library."""

from __future__ import annotations

import sys

from . import bridge, consensus, crawl, demo, gc, graph, ingest, plugins, run, serve, tasks
from .common import app

__all__ = ["app", "main"]

app.command("serve")(serve.serve)
app.command("bridge")(bridge.bridge)
app.command("ingest")(ingest.ingest)
app.command("crawl")(crawl.crawl)
app.command("demo")(demo.demo)
app.add_typer(graph.app, name="graph")
app.command("generate")(tasks.generate)
app.command("compose")(tasks.compose)
app.add_typer(tasks.app, name="tasks")
app.command("run")(run.run_agents)
app.command("report")(run.report)
app.add_typer(consensus.app, name="consensus")
app.command("gc")(gc.gc)
app.command("plugins")(plugins.plugins)


def main() -> None:
    """Entry point of the ``taskloom`` console script."""
    sys.exit(app())
