"""Origins (scheme, host, port) and the fences built from them.

A fence allows a URL only when its origin is one of the fence's origins, or when
its host is equal to or under one of the fence's *domains* with the domain's
scheme and port (a domain the user named, e.g. a crawl's ``allowed_domains``,
takes the scheme and port of the start URL unless the user wrote them).
``data:``, ``about:`` and ``blob:`` URLs are always allowed: they reach no server.

Examples
--------
>>> fence = OriginFence.for_site("http://127.0.0.1:8000/index.html")
>>> fence.allows("http://127.0.0.1:8000/search.html?q=a")
True
>>> fence.allows("http://127.0.0.1:8001/tasks/t1.json")
False
>>> fence.allows("https://127.0.0.1:8000/")
False
>>> fence.allows("about:blank")
True
>>> site = OriginFence.for_site("https://example.org/", ["example.org", "http://127.0.0.1:9000"])
>>> site.allows("https://docs.example.org/a"), site.allows("http://docs.example.org/a")
(True, False)
>>> site.allows("http://127.0.0.1:9000/x"), site.allows("http://127.0.0.1:9001/x")
(True, False)
>>> site.describe()
'http://127.0.0.1:9000, https://example.org, example.org and its subdomains on https port 443'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..errors import InputError

__all__ = ["DEFAULT_PORTS", "Origin", "DomainRule", "OriginFence", "origin_of"]

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
#: Schemes that reach no server; a fence never blocks them.
_INERT = ("data", "about", "blob")
#: A host name, an IPv4 address, or an IPv6 address (as urlsplit gives it, without brackets).
_HOST = re.compile(r"[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?|[0-9a-f:.]*:[0-9a-f:.]*")


@dataclass(frozen=True, order=True)
class Origin:
    """A URL's scheme, host and port, with the scheme's default port filled in.

    >>> Origin.parse("HTTP://Example.ORG/a?b")
    Origin(scheme='http', host='example.org', port=80)
    >>> str(Origin.parse("http://127.0.0.1:8000/x")), str(Origin.parse("https://[::1]/"))
    ('http://127.0.0.1:8000', 'https://[::1]')
    """

    scheme: str
    host: str
    port: int

    @classmethod
    def parse(cls, url: str, argument: str = "url") -> Origin:
        """The origin of an http(s)/ws(s) URL; :class:`InputError` naming ``argument`` otherwise."""
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError as exc:
            raise InputError(f"{argument} {url!r} is not a valid URL ({exc}); pass a full address such as http://host:port/path") from None
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS or not parts.hostname:
            raise InputError(f"{argument} {url!r} is not an http(s) URL with a host; pass a full address such as http://host:port/path")
        return cls(scheme, parts.hostname.lower().rstrip("."), port if port is not None else DEFAULT_PORTS[scheme])

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}" if DEFAULT_PORTS.get(self.scheme) == self.port else f"{self.scheme}://{host}:{self.port}"


def origin_of(url: str) -> Origin | None:
    """The origin of ``url``, or None when it has none (``about:blank``, ``file:``, garbage)."""
    try:
        return Origin.parse(url)
    except InputError:
        return None


@dataclass(frozen=True, order=True)
class DomainRule:
    """A host and everything under it, on one scheme and port."""

    scheme: str
    domain: str
    port: int

    def matches(self, origin: Origin) -> bool:
        return origin.scheme == self.scheme and origin.port == self.port and (origin.host == self.domain or origin.host.endswith("." + self.domain))

    def __str__(self) -> str:
        return f"{self.domain} and its subdomains on {self.scheme} port {self.port}"


@dataclass(frozen=True)
class OriginFence:
    """The origins (and domain rules) a browser context or crawl may reach; see the module docstring."""

    origins: frozenset[Origin]
    domains: frozenset[DomainRule] = frozenset()

    @classmethod
    def for_site(cls, start_url: str, allowed: Iterable[str] | None = None, extra_urls: Iterable[str] = (), argument: str = "allowed_domains") -> OriginFence:
        """The fence of a site: the start URL's origin, each ``allowed`` entry, and the origins of ``extra_urls``.

        An ``allowed`` entry is an origin when it has a scheme (``http://127.0.0.1:8001``:
        that origin only), else a domain (``example.org`` or ``example.org:8443``: the host
        and its subdomains, on the start URL's scheme and on its port unless one is written).

        >>> OriginFence.for_site("http://a.test:8000/", ["b.test:9000"]).allows("http://x.b.test:9000/")
        True
        >>> try:
        ...     OriginFence.for_site("http://a.test/", ["::"])
        ... except InputError as exc:
        ...     print(exc)
        allowed_domains entry '::' is not a host name, host:port or origin; write e.g. example.org, example.org:8443 or http://127.0.0.1:8001
        """
        start = Origin.parse(start_url, "start_url")
        origins = {start} | {o for o in (origin_of(u) for u in extra_urls) if o is not None}
        domains: set[DomainRule] = set()
        for entry in allowed or ():
            rule = _entry(entry, start, argument)
            if isinstance(rule, Origin):
                origins.add(rule)
            else:
                domains.add(rule)
        return cls(frozenset(origins), frozenset(domains))

    def allows(self, url: str) -> bool:
        """True when ``url``'s origin is inside the fence (always for data:, about:, blob:)."""
        if url.split(":", 1)[0].strip().lower() in _INERT:
            return True
        origin = origin_of(url)
        return origin is not None and (origin in self.origins or any(rule.matches(origin) for rule in self.domains))

    def describe(self) -> str:
        """The fence in words, for error messages."""
        return ", ".join([*(str(o) for o in sorted(self.origins)), *(str(d) for d in sorted(self.domains))])


def _entry(entry: str, start: Origin, argument: str) -> Origin | DomainRule:
    text = (entry or "").strip().lower()
    if "://" in text:
        return Origin.parse(text, f"{argument} entry")
    bad = InputError(f"{argument} entry {entry!r} is not a host name, host:port or origin; write e.g. example.org, example.org:8443 or http://127.0.0.1:8001")
    try:
        parts = urlsplit("//" + text.removeprefix("*.").lstrip("."))
        host, port = parts.hostname, parts.port
    except ValueError:
        raise bad from None
    if not host or parts.path or parts.query or parts.username or not _HOST.fullmatch(host):
        raise bad
    return DomainRule(start.scheme, host.rstrip("."), port if port is not None else start.port)
