"""Fetch a document given by http(s) URL into the workspace cache, so it can be ingested like a file."""

from __future__ import annotations

import hashlib
import mimetypes
from pathlib import Path
from urllib.parse import urlparse

import httpx

from ...errors import DocumentError, InputError

__all__ = ["is_url", "fetch_document"]

MAX_BYTES = 100 * 1024 * 1024
_TYPES = {"application/pdf": ".pdf", "text/html": ".html", "text/markdown": ".md", "text/plain": ".txt"}


def is_url(source: str) -> bool:
    """True for http(s) URLs."""
    return urlparse(source).scheme in ("http", "https")


def fetch_document(url: str, cache: Path, timeout: float = 30.0) -> Path:
    """Download ``url`` (at most 100 MiB) into ``cache/downloads`` and return the file's path.

    The suffix comes from the Content-Type, else the URL path; the file name is the
    content hash, so the same document fetched twice is one file.
    """
    if not is_url(url):
        raise InputError(f"{url!r} is not an http(s) URL")
    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=timeout) as response:
            if response.status_code >= 400:
                raise DocumentError(f"GET {url} answered HTTP {response.status_code}; check the URL")
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_BYTES:
                    raise DocumentError(f"{url} is larger than {MAX_BYTES // 2**20} MiB; download it and ingest the file")
                chunks.append(chunk)
            content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    except httpx.HTTPError as exc:
        raise DocumentError(f"could not fetch {url}: {exc}") from exc
    data = b"".join(chunks)
    suffix = _TYPES.get(content_type) or Path(urlparse(url).path).suffix.lower() or mimetypes.guess_extension(content_type) or ".txt"
    target = cache / "downloads" / f"{hashlib.sha256(data).hexdigest()[:16]}{suffix}"
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        tmp = target.with_suffix(target.suffix + ".part")
        tmp.write_bytes(data)
        tmp.replace(target)
    return target
