"""``taskloom serve``: run the MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

import typer

from .common import run, settings


def serve(
    http: bool = typer.Option(False, "--http", help="Serve streamable HTTP instead of stdio."),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP bind address (loopback by default)."),
    port: int = typer.Option(8765, "--port", help="HTTP port."),
) -> None:
    """Run the Taskloom MCP server."""
    from ..app import build_server

    server = run(lambda: build_server(settings()))
    if http:
        server.run(transport="http", host=host, port=port, show_banner=False)
    else:
        server.run(transport="stdio", show_banner=False)
