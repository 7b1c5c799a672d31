"""Browser episodes are fenced by origin (scheme, host, port), in the real Chromium.

The site runs on one port of 127.0.0.1 and a "workspace" server with a secret on another
port of the same host. Navigating there, or being sent there by an HTTP redirect, a script
or a meta refresh, fails with a clear message, the other server gets no request (except
for the second hop of a redirect chain, which Chromium follows itself: that page is
refused after the load and never shown), and nothing from it reaches an observation.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from taskloom.tools.environment.episodes import ActionFailed
from taskloom.tools.environment.manager import EpisodeManager
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.errors import InputError
from taskloom.tools.runtime import Runtime
from taskloom.tools.security.origin import Origin, OriginFence
from taskloom.tools.settings import Settings

CHROMIUM = Path("/usr/bin/chromium")
SECRET = "WORKSPACE-SECRET-4b1f"


class _Server:
    """A real HTTP server on 127.0.0.1; ``pages`` maps a path to (status, headers, body); requests are logged."""

    def __init__(self, pages: dict[str, Callable[[], tuple[int, dict[str, str], str]]]) -> None:
        self.pages, self.log = pages, list[str]()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - base class signature
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                server.log.append(self.path)
                status, headers, html = server.pages.get(self.path, lambda: (404, {}, "<title>404</title>"))()
                body = html.encode()
                self.send_response(status)
                for name, value in {"Content-Type": "text/html; charset=utf-8", "Content-Length": str(len(body)), **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _html(title: str, body: str = "", head: str = "") -> Callable[[], tuple[int, dict[str, str], str]]:
    return lambda: (200, {}, f"<!doctype html><html><head><title>{title}</title>{head}</head><body><h1>{title}</h1>{body}</body></html>")


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[_Server, _Server]]:
    workspace = _Server({"/tasks/t1.json": _html("Task file", f"<pre>{SECRET}</pre>")})
    secret = workspace.base + "/tasks/t1.json"
    site = _Server(
        {
            "/": _html("Fence site", '<a href="/next">Next</a>'),
            "/next": _html("Next page"),
            "/redirect": lambda: (302, {"Location": secret}, ""),
            "/hop1": lambda: (302, {"Location": "/hop2"}, ""),
            "/hop2": lambda: (302, {"Location": secret}, ""),
            "/js": _html("Script", head=f'<script>location.href = "{secret}";</script>'),
            "/meta": _html("Meta", head=f'<meta http-equiv="refresh" content="0; url={secret}">'),
        }
    )
    yield site, workspace
    site.close()
    workspace.close()


def test_origins_and_fences() -> None:
    assert Origin.parse("https://Example.org") == Origin("https", "example.org", 443)
    fence = OriginFence.for_site("http://127.0.0.1:8000/", ["127.0.0.1", "example.org:8443", "https://docs.test"])
    assert fence.allows("http://127.0.0.1:8000/x") and not fence.allows("http://127.0.0.1:8001/x")
    assert fence.allows("http://a.example.org:8443/") and not fence.allows("https://a.example.org:8443/") and not fence.allows("http://example.org/")
    assert fence.allows("https://docs.test/a") and not fence.allows("https://sub.docs.test/a") and not fence.allows("http://docs.test/a")
    assert all(fence.allows(u) for u in ("about:blank", "data:text/html,x", "blob:http://127.0.0.1:8000/1"))
    assert not any(fence.allows(u) for u in ("file:///etc/passwd", "chrome://settings", "ftp://127.0.0.1:8000/", "not a url"))
    with pytest.raises(InputError, match="start_url"):
        OriginFence.for_site("file:///etc/passwd")


def _run(coro_fn: Callable[[EpisodeManager], object], tmp_path: Path) -> None:
    async def go() -> None:
        async with Runtime(Settings(workspace=tmp_path, embedder="hashing", chromium=str(CHROMIUM))) as runtime:
            manager = runtime.episode_manager(tmp_path / "episodes", screenshots=True)
            try:
                await coro_fn(manager)  # type: ignore[misc]
            finally:
                await manager.close_all()

    asyncio.run(go())


@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_an_episode_cannot_reach_another_port_of_its_host(servers: tuple[_Server, _Server], tmp_path: Path) -> None:
    site, workspace = servers
    workspace.log.clear()
    seen: list[str] = []

    async def scenario(manager: EpisodeManager) -> None:
        episode, started = await manager.start(url=site.base + "/", allowed_domains=["127.0.0.1"])
        seen.append(started.snapshot)
        home = site.base + "/"
        # straight there: refused before anything is requested
        with pytest.raises(ActionFailed) as refused:
            await episode.navigate(workspace.base + "/tasks/t1.json")
        message = str(refused.value)
        assert "outside this episode's allowed domains" in message and site.base in message and workspace.base + "/tasks/t1.json" in message
        # sent there by the site: an HTTP redirect, a script, a meta refresh, a two-hop redirect
        for path in ("/redirect", "/js", "/meta", "/hop1"):
            with pytest.raises(ActionFailed) as sent:
                await episode.navigate(site.base + path)
                await episode.wait_for(seconds=0.5)  # a script or meta refresh leaves just after the load
            seen.append(str(sent.value))
            assert "outside" in str(sent.value), (path, str(sent.value))
            observed = await episode.observe()
            seen.append(observed.snapshot or "")
            assert episode.guarded.allows(observed.url), (path, observed.url)
        # the episode is still usable and on the site
        after = await episode.navigate(site.base + "/next")
        seen.append(after.snapshot or "")
        assert after.url == site.base + "/next" and "Next page" in (after.snapshot or "")
        path = await manager.close(episode.id)
        actions = load_trajectory(path).actions
        assert sum(1 for a in actions if a.error) >= 5
        assert all(workspace.base not in (a.url_after or "") for a in actions)
        assert all(a.screenshot is None for a in actions if a.error)
        assert home  # the start page was the site's

    _run(scenario, tmp_path)
    assert not any(SECRET in text or "Task file" in text for text in seen), seen
    # only the second hop of the two-hop chain reached the other port (Chromium follows it itself); its page was never shown
    assert workspace.log in ([], ["/tasks/t1.json"]), workspace.log


@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_a_one_hop_redirect_elsewhere_never_reaches_the_other_server(servers: tuple[_Server, _Server], tmp_path: Path) -> None:
    site, workspace = servers
    workspace.log.clear()

    async def scenario(manager: EpisodeManager) -> None:
        episode, _ = await manager.start(url=site.base + "/")
        for path in ("/redirect", "/js", "/meta"):
            with pytest.raises(ActionFailed):
                await episode.navigate(site.base + path)
                await episode.wait_for(seconds=0.5)
        assert episode.guarded.left and all(u.startswith(workspace.base) for u in episode.guarded.left)

    _run(scenario, tmp_path)
    assert workspace.log == []
