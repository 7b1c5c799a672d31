"""Fixtures of the browser MCP tests: the served example site and an agent-profile server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from taskloom.server.app import build_server
from taskloom.tools.settings import Settings

from .browser_site import SITE, Site, serve


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The example site on 127.0.0.1 and a canary server on 127.0.0.2 (another host, same machine)."""
    canary_dir = tmp_path_factory.mktemp("canary")
    (canary_dir / "secret.html").write_text("<title>Canary</title><p>canary secret</p>", encoding="utf-8")
    canary, canary_thread = serve("127.0.0.2", canary_dir)
    served, thread = serve("127.0.0.1", SITE, canary=canary)
    try:
        yield Site(served, canary)
    finally:
        for s, t in ((served, thread), (canary, canary_thread)):
            s.server.shutdown()
            s.server.server_close()
            t.join(timeout=5)


@pytest.fixture
def server(settings: Settings) -> Any:
    """A server with the ``agent`` profile, as an agent under test sees it."""
    return build_server(settings, profile="agent")
