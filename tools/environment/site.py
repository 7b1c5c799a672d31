"""Serve a folder of static files on loopback (the bundled example site), with a request log."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ..errors import NotFoundError

__all__ = ["StaticSite", "serve_static", "EXAMPLE_SITE"]

#: The bundled example web app (a library catalogue).
EXAMPLE_SITE = Path(__file__).resolve().parents[2] / "examples" / "site"


@dataclass
class StaticSite:
    """A running static server: its base URL and every path requested so far."""

    url: str
    requests: list[str] = field(default_factory=list)


@contextmanager
def serve_static(directory: Path = EXAMPLE_SITE, host: str = "127.0.0.1", port: int = 0) -> Iterator[StaticSite]:
    """Serve ``directory`` over HTTP on ``host:port`` (a free port by default) in a background thread."""
    if not Path(directory).is_dir():
        raise NotFoundError(f"no folder at {directory} to serve")
    site = StaticSite(url="")

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            site.requests.append(self.path)

    server = ThreadingHTTPServer((host, port), functools.partial(Handler, directory=str(directory)))
    site.url = f"http://{host}:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
