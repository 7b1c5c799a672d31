"""Fetch a document given by http(s) URL into the workspace cache, so it can be ingested like a file.

Redirects are followed by hand, at most :data:`MAX_REDIRECTS` hops, and each hop passes
the same origin fence as a crawl (:class:`~taskloom.tools.security.origin.OriginFence`):
its scheme must be http or https and its origin (scheme, host and port) that of the URL
asked for, or one the caller allows (``allowed_hosts``: a host and its subdomains on the
URL's scheme and port, or a full origin such as ``https://cdn.example.org``). So a URL
cannot bounce the fetch to ``127.0.0.1``, to another port of its own host (another local
service) or to a machine the user did not name. The whole fetch
(connecting, every redirect, headers and body) runs against one deadline, so a
server trickling a byte a second is cut off at ``timeout``; a body larger than
``max_bytes`` is refused as soon as it is announced or read.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import mimetypes
from collections.abc import Collection, Coroutine
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urljoin, urlparse

import httpx

from ...errors import DocumentError, InputError
from ...security.origin import OriginFence

__all__ = ["is_url", "fetch_document", "MAX_REDIRECTS"]

MAX_REDIRECTS = 5
_TYPES = {"application/pdf": ".pdf", "text/html": ".html", "text/markdown": ".md", "text/plain": ".txt"}
T = TypeVar("T")


def is_url(source: str) -> bool:
    """True for http(s) URLs."""
    return urlparse(source).scheme in ("http", "https")


def fetch_document(
    url: str,
    cache: Path,
    timeout: float = 30.0,
    max_bytes: int = 64 * 1024 * 1024,
    allowed_hosts: Collection[str] = (),
) -> Path:
    """Download ``url`` into ``cache/downloads`` and return the file's path; see the module docstring for the limits.

    The suffix comes from the Content-Type, else the URL path; the file name is the
    content hash, so the same document fetched twice is one file.
    """
    if not is_url(url):
        raise InputError(f"{url!r} is not an http(s) URL")
    try:
        final, data, content_type = _run(asyncio.wait_for(_fetch(url, max_bytes, {h.lower() for h in allowed_hosts}), timeout))
    except TimeoutError:
        raise DocumentError(f"fetching {url} took longer than {timeout:g} s (the fetch_timeout setting); the server is too slow — download the file and ingest it") from None
    except httpx.HTTPError as exc:
        raise DocumentError(f"could not fetch {url}: {exc or type(exc).__name__}; check the URL and that the server is up") from None
    suffix = _TYPES.get(content_type) or Path(urlparse(final).path).suffix.lower() or mimetypes.guess_extension(content_type) or ".txt"
    target = cache / "downloads" / f"{hashlib.sha256(data).hexdigest()[:16]}{suffix}"
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        tmp = target.with_suffix(target.suffix + ".part")
        tmp.write_bytes(data)
        tmp.replace(target)
    return target


def redirect_allowed(start: str, target: str, allowed_hosts: Collection[str] = ()) -> str | None:
    """Why a redirect of a fetch that began at ``start`` to ``target`` is refused, or None when it may be followed.

    >>> redirect_allowed("http://example.org/a", "http://example.org/b") is None
    True
    >>> redirect_allowed("https://example.org/a", "http://127.0.0.1:8000/secret")
    'it leaves https://example.org for http://127.0.0.1:8000'
    >>> redirect_allowed("http://127.0.0.1:8000/a", "http://127.0.0.1:8001/secret")
    'it leaves http://127.0.0.1:8000 for http://127.0.0.1:8001'
    >>> redirect_allowed("http://example.org/a", "https://example.org/a")
    'it leaves http://example.org for https://example.org'
    >>> redirect_allowed("https://example.org/a", "https://cdn.example.net/a", {"example.net"}) is None
    True
    >>> redirect_allowed("http://example.org/a", "file:///etc/passwd")
    "its scheme 'file' is not http or https"
    """
    new = urlparse(target)
    if new.scheme not in ("http", "https"):
        return f"its scheme {new.scheme!r} is not http or https"
    if not new.hostname:
        return "it has no host"
    fence = OriginFence.for_site(start, list(allowed_hosts), argument="allowed_hosts")
    if fence.allows(target):
        return None
    return f"it leaves {fence.describe()} for {_origin(target)}"


def _origin(url: str) -> str:
    parts = urlparse(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


async def _fetch(url: str, max_bytes: int, allowed_hosts: set[str]) -> tuple[str, bytes, str]:
    """GET ``url``, following at most MAX_REDIRECTS checked hops; (final URL, body, content type)."""
    current = url
    async with httpx.AsyncClient(follow_redirects=False, timeout=None) as client:
        for _ in range(MAX_REDIRECTS + 1):
            async with client.stream("GET", current) as response:
                if response.is_redirect:
                    target = urljoin(current, response.headers.get("location", ""))
                    reason = redirect_allowed(url, target, allowed_hosts)
                    if reason:
                        raise DocumentError(f"{url} redirects to {target}, which is refused: {reason}; fetch the final URL directly if you trust it")
                    current = target
                    continue
                if response.status_code >= 400:
                    raise DocumentError(f"GET {current} answered HTTP {response.status_code}; check the URL")
                announced = response.headers.get("content-length", "")
                if announced.isdigit() and int(announced) > max_bytes:
                    raise DocumentError(_too_big(url, max_bytes))
                chunks, size = [], 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > max_bytes:
                        raise DocumentError(_too_big(url, max_bytes))
                    chunks.append(chunk)
                content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
                return current, b"".join(chunks), content_type
    raise DocumentError(f"{url} redirects more than {MAX_REDIRECTS} times; fetch the final URL directly")


def _too_big(url: str, max_bytes: int) -> str:
    return f"{url} is larger than {max_bytes} bytes (the fetch_max_bytes setting); download it and ingest the file, or raise the limit"


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code, also when this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
