"""Origin fences for crawls and for documents fetched by URL, against real servers on 127.0.0.1.

A "site" server links to pages that leave it for an "other" server on another port of
the same host (an HTTP redirect, a JavaScript ``location=``, a meta refresh, a two-hop
redirect) and to a missing page; the crawler must store none of them and list the
blocked URLs. WebSockets to the other port (from the page, a blob worker, a worker made
from a URL) must not reach it either, and are listed as blocked (a crawl refuses the URL
worker itself); nor may WebRTC (STUN over UDP, TURN over UDP and TCP) or a preconnect
reach a real listener on another port. Documents by URL: a trickling server is cut off at
``fetch_timeout``, an oversized body is refused, redirects are checked hop by hop, each
against the origin (scheme, host and port) asked for.
"""

from __future__ import annotations

import asyncio
import doctest
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import taskloom.tools.graph.ingest.fetch as fetch_module
from taskloom.tools.browser.pool import BrowserPool
from taskloom.tools.errors import DocumentError, InputError
from taskloom.tools.graph.service import GraphService
from taskloom.tools.graph.web.crawl import SiteUnreachable
from taskloom.tools.runtime import Runtime
from taskloom.tools.security.origin import OriginFence
from taskloom.tools.settings import Settings

Route = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class Server:
    """A real HTTP server on 127.0.0.1 whose paths are answered by ``routes``; every request path is logged."""

    routes: dict[str, Route]
    host: str = "127.0.0.1"
    log: list[str] = field(default_factory=list)
    httpd: ThreadingHTTPServer | None = None

    @property
    def base(self) -> str:
        assert self.httpd is not None
        return f"http://{self.host}:{self.httpd.server_address[1]}"

    def start(self) -> Server:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - base class signature
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                server.log.append(self.path)
                route = server.routes.get(self.path.split("?")[0])
                try:
                    (route or (lambda h: send(h, 404, "<title>Not found</title><h1>Nothing here</h1>")))(self)
                except ConnectionError:
                    self.close_connection = True  # the client hung up (the limits under test do that)

        self.httpd = ThreadingHTTPServer((self.host, 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        assert self.httpd is not None
        self.httpd.shutdown()
        self.httpd.server_close()


def send(handler: BaseHTTPRequestHandler, status: int, html: str, headers: dict[str, str] | None = None) -> None:
    body = html.encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "text/html; charset=utf-8")
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def page(title: str, body: str = "", head: str = "") -> Route:
    return lambda h: send(h, 200, f"<!doctype html><html><head><title>{title}</title>{head}</head><body><main><h1>{title}</h1>{body}</main></body></html>")


def redirect(location: Callable[[], str]) -> Route:
    return lambda h: send(h, 302, "", {"Location": location()})


@pytest.fixture(scope="module")
def other() -> Iterator[Server]:
    """What must never become part of the site: a server on another port of the same host."""
    server = Server({"/secret.html": page("Workspace secret", "<p>OTHER-ORIGIN-SECRET task gold</p>")}).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def site(other: Server) -> Iterator[Server]:
    secret = lambda: other.base + "/secret.html"  # noqa: E731 - the other server's port is known only once it runs
    links = "".join(f'<p><a href="{p}">{p}</a></p>' for p in ("/ok.html", "/redirect", "/js.html", "/meta.html", "/hop1", "/missing.html", "/embeds.html"))
    server = Server(
        {
            "/": page("Fence home", links),
            "/ok.html": page("A plain page", "<p>Shelf marks and opening hours.</p>"),
            "/redirect": redirect(secret),
            "/hop1": redirect(lambda: "/hop2"),
            "/hop2": redirect(secret),
            "/js.html": page("Leaving by script", "<p>script</p>", head=""),
            "/meta.html": page("Leaving by meta", "<p>meta</p>", head=""),
            "/away": redirect(secret),
            "/broken": lambda h: send(h, 500, "<title>Server error</title><h1>Internal error</h1>"),
            "/embeds.html": page("Embeds", "<p>embeds</p>"),
        }
    )
    server.start()
    embeds = (
        f'<p>Pictures and partners.</p><img src="/away" alt="redirected picture"><iframe src="{other.base}/secret.html"></iframe>'
        f'<button type="button" onclick="window.open(\'{other.base}/secret.html\')">Open the partner</button>'
        f'<a href="{other.base}/secret.html" target="_blank">Partner in a new tab</a>'
    )
    server.routes["/embeds.html"] = page("Embeds", embeds)
    server.routes["/js.html"] = page("Leaving by script", "<p>script</p>", head=f'<script>location.href = "{other.base}/secret.html";</script>')
    server.routes["/meta.html"] = page("Leaving by meta", "<p>meta</p>", head=f'<meta http-equiv="refresh" content="0; url={other.base}/secret.html">')
    yield server
    server.stop()


def report_pages(service: GraphService, report: object) -> list[str]:
    return [str(n.attrs.get("url", "")) for n in service.load(report.graph_id).nodes("page")]  # type: ignore[attr-defined]


def _crawl(settings: Settings, url: str, **kwargs: object) -> tuple[GraphService, object]:
    runtime = Runtime(settings)

    async def go() -> object:
        return await runtime.graphs.ingest_website(url, max_pages=20, max_depth=2, **kwargs)  # type: ignore[arg-type]

    return runtime.graphs, runtime.run(go)


# -- crawls -----------------------------------------------------------------------------------


@pytest.mark.integration
def test_crawl_stores_no_page_that_left_the_origin_and_lists_what_it_blocked(site: Server, other: Server, tmp_path: Path) -> None:
    other.log.clear()
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing", crawl_delay=0)
    service, report = _crawl(settings, site.base + "/")
    kg = service.load(report.graph_id)  # type: ignore[attr-defined]
    pages = {n.attrs.get("url", "") for n in kg.nodes("page")}
    texts = " ".join(n.text for n in kg.nodes())
    assert any(u.endswith("/ok.html") for u in pages) and any(u.rstrip("/") == site.base for u in pages), pages
    assert "OTHER-ORIGIN-SECRET" not in texts and "Workspace secret" not in texts
    assert not any(other.base in u or u.endswith(("/redirect", "/js.html", "/meta.html", "/hop1", "/missing.html")) for u in pages), pages
    assert "chromewebdata" not in " ".join(pages) and "Nothing here" not in texts

    skipped = report.skipped  # type: ignore[attr-defined]
    for path in ("/redirect", "/js.html", "/meta.html", "/hop1"):
        assert skipped[site.base + path].reason == "redirected" and "outside the allowed origins" in skipped[site.base + path].detail, (path, skipped)
    assert skipped[site.base + "/missing.html"].reason == "http_status" and skipped[site.base + "/missing.html"].status == 404, skipped[site.base + "/missing.html"]
    secret = other.base + "/secret.html"
    assert secret in report.blocked_urls and report.blocked >= 4  # type: ignore[attr-defined]
    # every hop of every redirect, the script, the meta refresh, the picture redirected away, the frame, the window.open
    # of a button and the new-tab link were refused before any request reached the other port
    assert other.log == [], other.log
    assert any(p.endswith("/embeds.html") for p in report_pages(service, report)), skipped.get(site.base + "/embeds.html")  # the page itself is kept


@pytest.mark.integration
@pytest.mark.parametrize(
    ("start", "message"),
    [
        ("closed", "ERR_CONNECTION_REFUSED"),
        ("/broken", "answered HTTP 500"),
        ("/away", "redirected outside the allowed origins"),
    ],
)
def test_a_start_url_that_is_not_a_page_of_the_site_is_an_error_and_stores_nothing(site: Server, tmp_path: Path, start: str, message: str) -> None:
    if start == "closed":
        probe = Server({}).start()
        url = probe.base + "/"
        probe.stop()  # nothing listens there any more
    else:
        url = site.base + start
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing", crawl_delay=0)
    with pytest.raises(SiteUnreachable, match=message) as caught:
        _crawl(settings, url)
    assert "start_url" in str(caught.value) and "nothing was stored" in str(caught.value)
    service = GraphService(settings)
    assert service.list_graphs() == []
    graphs_dir = Path(settings.workspace) / "graphs"
    assert not graphs_dir.exists() or not any(graphs_dir.iterdir()), list(graphs_dir.iterdir())


def _script(handler: BaseHTTPRequestHandler, code: str) -> None:
    body = code.encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "text/javascript")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@pytest.mark.integration
def test_websockets_to_another_port_are_blocked_and_listed(other: Server, tmp_path: Path) -> None:
    socket = lambda path: f"new WebSocket('ws://127.0.0.1:{other.base.rsplit(':', 1)[1]}{path}')"  # noqa: E731 - a JS expression
    blob = lambda path: f"<script>new Worker(URL.createObjectURL(new Blob([\"{socket(path)}\"])))</script>"  # noqa: E731
    server = Server({
        "/": page("Live board", '<p><a href="/worker.html">worker</a> <a href="/url-worker.html">url worker</a></p>', head=f"<script>{socket('/ws-page')}</script>"),
        "/worker.html": page("Worker board", "<p>Scores from a worker.</p>" + blob("/ws-worker")),
        "/url-worker.html": page("URL worker board", "<p>Scores from a script worker.</p><script>new Worker('/w.js')</script>"),
        "/w.js": lambda h: _script(h, socket("/ws-url-worker")),
    }).start()
    other.log.clear()

    async def episode() -> list[str]:  # an agent's episode is fenced by routing instead: the same pages there
        pool = BrowserPool()
        try:
            guarded = await pool.new_context(fence=OriginFence.for_site(server.base + "/"))
            page = await guarded.context.new_page()
            for path in ("/", "/worker.html", "/url-worker.html"):
                await page.goto(server.base + path)
                await page.wait_for_timeout(500)  # let the page and its workers try
            await guarded.context.close()
            return guarded.blocked
        finally:
            await pool.close()

    try:
        settings = Settings(workspace=tmp_path / "ws", embedder="hashing", crawl_delay=0)
        service, report = _crawl(settings, server.base + "/")
        in_episode = asyncio.run(episode())
        time.sleep(0.5)  # a handshake that got out would have reached the other server by now
    finally:
        server.stop()
    assert len(report_pages(service, report)) == 3
    assert not [p for p in other.log if p.startswith("/ws-")], other.log
    sockets = f"ws://127.0.0.1:{other.base.rsplit(':', 1)[1]}"
    blocked = report.blocked_urls  # type: ignore[attr-defined]
    assert {f"{sockets}/ws-page", f"{sockets}/ws-worker", f"{server.base}/w.js"} <= set(blocked), blocked  # a URL worker: refused, not started
    assert {f"{sockets}/ws-page", f"{sockets}/ws-worker", f"{sockets}/ws-url-worker"} <= set(in_episode), in_episode


class _Listener:
    """A real TCP or UDP listener on 127.0.0.1 counting what reaches it (connections or datagrams)."""

    def __init__(self, kind: int) -> None:
        self.sock = socket.socket(socket.AF_INET, kind)
        self.sock.bind(("127.0.0.1", 0))
        self.port, self.hits = self.sock.getsockname()[1], 0
        if kind == socket.SOCK_STREAM:
            self.sock.listen(8)
        threading.Thread(target=self._serve, args=(kind,), daemon=True).start()

    def _serve(self, kind: int) -> None:
        while True:
            try:
                if kind == socket.SOCK_STREAM:
                    self.sock.accept()[0].close()
                else:
                    self.sock.recvfrom(2048)
            except OSError:
                return  # closed by the test
            self.hits += 1


#: Tries ICE to a STUN server (UDP) and TURN servers (UDP, TCP) in ``frame`` ('top' or a fresh about:blank iframe).
RTC_JS = """async ([udp, tcp, frame]) => {
  const w = frame === 'top' ? window : document.body.appendChild(document.createElement('iframe')).contentWindow;
  if (typeof w.RTCPeerConnection !== 'function') return 'no RTCPeerConnection';
  const pc = new w.RTCPeerConnection({iceServers: [{urls: `stun:127.0.0.1:${udp}`},
    {urls: [`turn:127.0.0.1:${udp}?transport=udp`, `turn:127.0.0.1:${tcp}?transport=tcp`], username: 'u', credential: 'p'}]});
  pc.createDataChannel('x');
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((done) => setTimeout(done, 1500));
  pc.close();
  return 'gathered';
}"""


@pytest.mark.integration
@pytest.mark.parametrize("binary", ["chromium", "chromium-headless-shell"])
def test_webrtc_and_preconnect_reach_no_other_port(tmp_path: Path, binary: str) -> None:
    """Fenced pages (an episode's routing, a crawl's DevTools) have no WebRTC; the browser flags keep even unfenced WebRTC off UDP.

    Both of Debian's binaries: the headless shell (the default headless browser) ignores the flag ``chromium`` reads.
    """
    executable = shutil.which(binary)
    if executable is None:
        pytest.skip(f"{binary} is not installed (make setup installs it)")
    udp, turn, early = _Listener(socket.SOCK_DGRAM), _Listener(socket.SOCK_STREAM), _Listener(socket.SOCK_STREAM)
    hints = f'<link rel="preconnect" href="http://127.0.0.1:{early.port}"><link rel="dns-prefetch" href="http://127.0.0.1:{early.port}">'
    server = Server({"/": page("Call board", "<p>Calls.</p>", head=hints)}).start()

    async def probe() -> tuple[dict[str, str], str]:
        pool = BrowserPool(executable)
        try:
            said: dict[str, str] = {}
            for mode in ("route", "devtools"):
                guarded = await pool.new_context(fence=OriginFence.for_site(server.base + "/"), interception=mode)  # type: ignore[arg-type]
                fenced = await guarded.new_page()
                await fenced.goto(server.base + "/")
                for frame in ("top", "about:blank"):
                    said[f"{mode} {frame}"] = await fenced.evaluate(RTC_JS, [udp.port, turn.port, frame])
                await guarded.context.close()
            bare = await pool.new_context()  # no fence, no script: the flag alone
            open_page = await bare.context.new_page()
            await open_page.goto(server.base + "/")
            unfenced = await open_page.evaluate(RTC_JS, [udp.port, 9, "top"])  # TURN/TCP to port 9 (discard): only UDP is measured here
            await bare.context.close()
            return said, unfenced
        finally:
            await pool.close()

    try:
        said, unfenced = asyncio.run(probe())
        time.sleep(0.3)
    finally:
        server.stop()
        for listener in (udp, turn, early):
            listener.sock.close()
    assert set(said.values()) == {"no RTCPeerConnection"}, said
    assert unfenced == "gathered"  # WebRTC itself works in this browser: the probe could have got through
    assert (udp.hits, turn.hits, early.hits) == (0, 0, 0), (udp.hits, turn.hits, early.hits)


def test_allowed_domains_entries_are_checked(tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing")
    with pytest.raises(InputError, match="allowed_domains entry"):
        _crawl(settings, "http://127.0.0.1:9/", allowed_domains=["a b"])


# -- documents by URL -------------------------------------------------------------------------


def _trickle_body(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", "1000")
    handler.end_headers()
    for _ in range(1000):
        handler.wfile.write(b"x")
        handler.wfile.flush()
        time.sleep(0.5)


def _trickle_headers(handler: BaseHTTPRequestHandler) -> None:
    for byte in b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Slow: " + b"y" * 1000:
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.5)


def _big(handler: BaseHTTPRequestHandler, announce: bool) -> None:
    handler.protocol_version = "HTTP/1.0"
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    if announce:
        handler.send_header("Content-Length", str(64 * 1024))
    handler.end_headers()
    for _ in range(16):
        handler.wfile.write(b"z" * 4096)


@pytest.fixture(scope="module")
def docs(other: Server) -> Iterator[Server]:
    text = "Fence notes\n\nThe reading room opens at nine. Each shelf mark names a bay and a shelf.\n"
    server = Server(
        {
            "/notes.txt": lambda h: send(h, 200, text, {"Content-Type": "text/plain"}),
            "/moved": redirect(lambda: "/notes.txt"),
            "/away": redirect(lambda: "http://127.0.0.2:9/notes.txt"),
            "/port": redirect(lambda: other.base + "/secret.html"),
            "/file": redirect(lambda: "file:///etc/passwd"),
            "/trickle": _trickle_body,
            "/trickle-headers": _trickle_headers,
            "/big": lambda h: _big(h, announce=True),
            "/big-chunked": lambda h: _big(h, announce=False),
            **{f"/loop{i}": redirect(lambda i=i: f"/loop{i + 1}") for i in range(10)},
        }
    ).start()
    yield server
    server.stop()


@pytest.fixture
def limited(tmp_path: Path) -> GraphService:
    return GraphService(Settings(workspace=tmp_path / "ws", embedder="hashing", fetch_timeout=2, fetch_max_bytes=16 * 1024))


def test_a_same_host_redirect_is_followed(docs: Server, limited: GraphService) -> None:
    report = limited.ingest_document(docs.base + "/moved")
    assert report.nodes > 0 and "/notes.txt" in docs.log


@pytest.mark.parametrize(
    ("path", "message"),
    [("/away", "for http://127.0.0.2:9"), ("/port", "for http://127.0.0.1:"), ("/file", "scheme 'file' is not http or https"), ("/loop0", "more than 5 times")],
)
def test_redirects_that_leave_the_origin_or_go_on_too_long_are_refused(docs: Server, other: Server, limited: GraphService, path: str, message: str) -> None:
    other.log.clear()
    with pytest.raises(DocumentError, match=message) as refused:
        limited.ingest_document(docs.base + path)
    if path in ("/away", "/port"):
        assert f"it leaves {docs.base}" in str(refused.value)
    assert other.log == [], "a refused hop is never fetched"
    assert limited.list_graphs() == []
    if path == "/loop0":
        assert "/loop5" in docs.log and "/loop6" not in docs.log  # five hops followed, the sixth refused


@pytest.mark.parametrize("path", ["/trickle", "/trickle-headers"])
def test_a_trickling_server_is_cut_off_at_fetch_timeout(docs: Server, limited: GraphService, path: str) -> None:
    began = time.monotonic()
    with pytest.raises(DocumentError, match=r"longer than 2 s \(the fetch_timeout setting\)"):
        limited.ingest_document(docs.base + path)
    took = time.monotonic() - began
    assert 1.9 <= took < 60, took  # the server would trickle for 500 s; the cut-off is the 2 s deadline, with slack for a loaded machine


@pytest.mark.parametrize("path", ["/big", "/big-chunked"])
def test_an_oversized_document_is_refused(docs: Server, limited: GraphService, path: str, tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"larger than 16384 bytes \(the fetch_max_bytes setting\)"):
        limited.ingest_document(docs.base + path)
    downloads = tmp_path / "ws" / "cache" / "downloads"
    assert not downloads.exists() or not any(downloads.iterdir())


def test_fetch_doctests() -> None:
    import taskloom.tools.security.origin as origin_module

    for module in (fetch_module, origin_module):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, (module.__name__, result)
