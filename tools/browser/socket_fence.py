"""WebSockets, workers and WebRTC under the origin fence.

Neither Playwright's routing nor the DevTools ``Fetch`` domain sees a WebSocket handshake,
so a fenced context has two more layers:

1. :func:`guard_socket` (``context.route_web_socket``) takes every WebSocket a page or
   frame opens: one to the fence (``ws``/``wss`` count as ``http``/``https`` of the same
   host and port) is connected to its server; any other is closed before it connects and
   listed in the context's ``blocked`` URLs.
2. Workers are out of that route's reach, so the browser itself is told to refuse
   connections outside the fence with a ``Content-Security-Policy`` whose ``connect-src``
   names the fence's origins. Contexts fenced by routing add it as a header of every document
   and script (:func:`fence_policy`): a worker made from a blob inherits its page's policy, one
   made from a URL gets it with its script; violation reports go to :data:`REPORT_URL`, which
   the fence answers itself and lists (:func:`record_report`). Contexts fenced through DevTools
   (crawls) cannot change headers (Chromium ignores a policy added at the response stage), so
   each document gets the policy from a ``<meta>`` element inserted before its first script
   (:func:`meta_policy_script`), which also refuses workers made from a URL (they would not
   inherit it). The browser sends no report for a ``<meta>`` policy; what it refused (a
   worker's WebSocket among them, and the refused worker script) is read from the page's
   DevTools log instead and listed (:func:`list_policy_refusals`), as the episode side lists reports.

3. WebRTC's ICE (STUN over UDP, TURN over UDP or TCP) reaches any host and port and no
   routing, DevTools domain or CSP directive of this Chromium sees it: every document of a
   fenced context loses ``RTCPeerConnection`` (:data:`NO_WEBRTC_SCRIPT`, about:blank frames
   included), and the browser runs with ``--webrtc-ip-handling-policy=disable_non_proxied_udp``
   (:data:`taskloom.tools.browser.pool.CHROMIUM_ARGS`), which stops WebRTC's UDP in every context.
   ``<link rel=preconnect>`` and ``dns-prefetch`` opened no connection to another port in this
   Chromium (measured, ``tests/tools/graph/test_fences.py``); ``prefetch`` is an ordinary request, fenced.

A fence with an IPv6 origin has no policy (CSP cannot name IPv6 hosts); layers 1 and 3 still hold.

Examples
--------
>>> from taskloom.tools.security.origin import OriginFence
>>> fence = OriginFence.for_site("http://127.0.0.1:8000/", ["example.org"])
>>> fence_policy(fence).split(";")[0]
'connect-src http://127.0.0.1:8000 ws://127.0.0.1:8000 http://example.org:8000 ws://example.org:8000 http://*.example.org:8000 ws://*.example.org:8000 data: blob:'
>>> socket_allowed(fence, "ws://127.0.0.1:8000/live"), socket_allowed(fence, "ws://127.0.0.1:8001/live")
(True, False)
>>> with_policy({"content-type": "text/html", "content-security-policy": "script-src 'self'"}, "connect-src 'none'")["content-security-policy"]
"script-src 'self', connect-src 'none'"
>>> said = "Connecting to 'ws://127.0.0.1:8001/live' violates the following Content Security Policy directive: \\"worker-src blob: data:\\"."
>>> refused_by(meta_policy(fence), said), refused_by("connect-src 'self'", said)
('ws://127.0.0.1:8001/live', None)
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, WebSocketRoute

from ..security.origin import OriginFence

if TYPE_CHECKING:
    from .pool import GuardedContext

__all__ = [
    "NO_WEBRTC_SCRIPT", "REPORT_URL", "fence_policy", "guard_socket", "list_policy_refusals", "meta_policy", "meta_policy_script", "record_report", "refused_by",
    "socket_allowed", "with_policy",
]

#: Where the browser sends the fence policy's violation reports; answered by the fence, never by a network.
REPORT_URL = "http://taskloom-fence.invalid/csp-report"
_SOCKET = {"ws": "http", "wss": "https"}
_PAIR = {"http": "ws", "https": "wss"}
_WORKERS = "worker-src blob: data:"
#: Init script of fenced contexts: no ``RTCPeerConnection`` (so no ICE to any host and port) in any document.
NO_WEBRTC_SCRIPT = """(() => {
  for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection"]) {
    try { Object.defineProperty(globalThis, name, {value: undefined, writable: false, configurable: false}); } catch (e) {}
  }
})();"""
#: Chromium's console text for a refused connection or worker ("Connecting to 'URL' violates…", "Refused to connect to 'URL' because it violates…").
_VIOLATION = re.compile(r"'(?P<url>[^']+)' (?:because it )?violates the following Content Security Policy directive: \"(?P<directive>[^\"]+)\"")


def socket_allowed(fence: OriginFence | None, url: str) -> bool:
    """Whether a WebSocket to ``url`` stays inside ``fence`` (its handshake is an HTTP request to the same host and port)."""
    if fence is None:
        return True
    scheme, sep, rest = url.partition("://")
    http = _SOCKET.get(scheme.lower())
    return bool(sep) and http is not None and fence.allows(f"{http}://{rest}")


def _sources(fence: OriginFence) -> str | None:
    """The fence as CSP source expressions (http(s) and the matching ws(s)); None when one cannot be written."""
    sources: list[str] = []
    for origin in sorted(fence.origins):
        if ":" in origin.host or origin.scheme not in _PAIR:
            return None
        sources += [f"{scheme}://{origin.host}:{origin.port}" for scheme in (origin.scheme, _PAIR[origin.scheme])]
    for rule in sorted(fence.domains):
        if ":" in rule.domain or rule.scheme not in _PAIR:
            return None
        sources += [f"{scheme}://{host}:{rule.port}" for host in (rule.domain, f"*.{rule.domain}") for scheme in (rule.scheme, _PAIR[rule.scheme])]
    return " ".join([*dict.fromkeys(sources), "data:", "blob:"])


def fence_policy(fence: OriginFence | None) -> str | None:
    """The ``Content-Security-Policy`` header that keeps every connection of a page and its workers inside ``fence``; None when it cannot be written."""
    sources = None if fence is None else _sources(fence)
    return None if sources is None else f"connect-src {sources}; report-uri {REPORT_URL}"


def meta_policy_script(fence: OriginFence | None) -> str | None:
    """An init script giving each document the fence's connection policy through a ``<meta>`` element (workers only from blobs).

    The element is added as soon as the document has a ``<head>`` (before the parser runs
    any script of the page) and removed again: the policy stays in force, the page's DOM is
    as the site made it.
    """
    policy = meta_policy(fence)
    if policy is None:
        return None
    return f"""(() => {{
  const put = () => {{
    const meta = document.createElement("meta");
    meta.httpEquiv = "Content-Security-Policy";
    meta.content = {json.dumps(policy)};
    document.head.prepend(meta);
    meta.remove();
  }};
  if (document.head) {{ put(); return; }}
  const watch = new MutationObserver(() => {{ if (document.head) {{ watch.disconnect(); put(); }} }});
  watch.observe(document, {{childList: true, subtree: true}});
}})();"""


def meta_policy(fence: OriginFence | None) -> str | None:
    """The policy :func:`meta_policy_script` puts in each document: connections inside ``fence``, workers only from blobs."""
    sources = None if fence is None else _sources(fence)
    return None if sources is None else f"connect-src {sources}; {_WORKERS}"


def refused_by(policy: str, text: str) -> str | None:
    """The URL a browser log line says ``policy`` (one of its directives) refused, or None for any other line."""
    found = _VIOLATION.search(text)
    ours = {d.strip() for d in policy.split(";")}
    return found["url"] if found and found["directive"] in ours else None


async def list_policy_refusals(guarded: GuardedContext, page: Page) -> None:
    """List on ``guarded`` what the fence's ``<meta>`` policy refuses in ``page`` and its workers, read from its DevTools log.

    Only lines quoting one of the fence's own directives count (a site's own policy is not the fence).
    """
    policy = meta_policy(guarded.fence)
    if policy is None:
        return
    session = await guarded.context.new_cdp_session(page)

    def seen(event: dict[str, Any]) -> None:
        url = refused_by(policy, str(event.get("entry", {}).get("text", "")))
        if url is not None:
            guarded.blocked.append(url)

    session.on("Log.entryAdded", seen)
    await session.send("Log.enable")


def with_policy(headers: dict[str, str], policy: str | None) -> dict[str, str]:
    """``headers`` with ``policy`` enforced beside any policy the site sent (both hold)."""
    if policy is None:
        return headers
    out = {k: v for k, v in headers.items() if k.lower() != "content-security-policy"}
    own = next((v for k, v in headers.items() if k.lower() == "content-security-policy"), None)
    out["content-security-policy"] = f"{own}, {policy}" if own else policy
    return out


def record_report(guarded: GuardedContext, body: str | None) -> None:
    """List the URL a violation report of the fence policy names (a connection the browser refused)."""
    try:
        report = json.loads(body or "{}").get("csp-report", {})
    except (ValueError, AttributeError):
        return
    blocked = str(report.get("blocked-uri") or "") if isinstance(report, dict) else ""
    if blocked.split(":", 1)[0] in (*_SOCKET, *_PAIR):
        guarded.blocked.append(blocked)


async def guard_socket(guarded: GuardedContext, ws: WebSocketRoute) -> None:
    """Connect a page's WebSocket inside the fence; close (and list) one outside it."""
    try:
        if socket_allowed(guarded.fence, ws.url):
            ws.connect_to_server()
            return
        guarded.blocked.append(ws.url)
        await ws.close(code=1008, reason="outside the allowed origins")
    except PlaywrightError:
        return  # the page or its context went away while the socket was checked

