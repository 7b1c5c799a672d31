"""The HTTP guard: Host, Origin and bearer-token checks in front of the MCP endpoint.

A pure ASGI middleware, so any Starlette app (``taskloom serve --http``, or a server the
harness starts for one episode) can put it in front of MCP. Order of checks:

1. ``Host`` must name the bound address, a loopback name (``127.0.0.1``, ``localhost``,
   ``[::1]``) or a configured name, with or without a port; else 403 (DNS rebinding).
2. ``Origin`` must be absent, a loopback origin (``http(s)://127.0.0.1|localhost|[::1]``,
   any port) or a configured origin; else 403 (a web page calling a local server).
3. When the policy has a token, ``Authorization: Bearer <token>`` must match it
   (``secrets.compare_digest``); else 401 with ``WWW-Authenticate: Bearer``. A request
   whose token matched is marked (``scope["state"][BEARER_CHECKED]``), so the MCP layer
   knows its caller holds the token (:mod:`.mcp`: gold needs one over HTTP).

Rejections answer with a short JSON body saying why, before MCP sees the request.
"""

from __future__ import annotations

import ipaddress
import json
import re
import secrets
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import InputError

__all__ = [
    "BEARER_CHECKED",
    "HttpGuard",
    "HttpPolicy",
    "LOOPBACK_NAMES",
    "guard_middleware",
    "is_loopback",
    "choose_token",
    "make_policy",
]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
#: Key in an ASGI scope's ``state`` set on requests whose bearer token the guard checked.
BEARER_CHECKED = "taskloom_bearer_checked"
_NAME = re.compile(r"[a-z0-9]([a-z0-9-]{0,62})(\.[a-z0-9]([a-z0-9-]{0,62}))*\.?")
_TOKEN = re.compile(r"[\x21-\x7e]{8,512}")
_SHOWN = 120  # at most this many characters of a rejected header are echoed back


def is_loopback(host: str) -> bool:
    """Whether a bind address or host name is loopback (``localhost``, 127.0.0.0/8, ``::1``)."""
    name = host.strip().lower().strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, int | None] | None:
    """``name[:port]`` or ``[v6][:port]`` as (lower-case name without brackets, port); None if malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end == -1:
            return None
        name, rest = value[1:end], value[end + 1 :]
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return None
    elif value.count(":") > 1:  # a bare IPv6 address is not a valid Host header
        return None
    else:
        name, colon, port_text = value.partition(":")
        rest = colon + port_text
        if not _NAME.fullmatch(name):
            return None
    if not rest:
        return name, None
    if not rest.startswith(":") or not rest[1:].isdigit() or not 0 < int(rest[1:]) < 65536:
        return None
    return name, int(rest[1:])


def normal_origin(value: str) -> str | None:
    """``scheme://host[:port]`` with the default port dropped and the host lower-cased; None if not an http(s) origin."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        return None
    if parts.query or parts.fragment or parts.username or parts.password:
        return None
    scheme, host = parts.scheme.lower(), parts.hostname.lower()
    shown = f"[{host}]" if ":" in host else host
    default = 80 if scheme == "http" else 443
    return f"{scheme}://{shown}" if port in (None, default) else f"{scheme}://{shown}:{port}"


class HttpPolicy(BaseModel):
    """Who may call over HTTP: the hosts and origins accepted and the bearer token (None: no token needed)."""

    model_config = ConfigDict(frozen=True)

    bind_host: str = Field("127.0.0.1", description="The address the server listens on.")
    allowed_hosts: tuple[str, ...] = Field((), description="Extra Host names accepted (besides loopback and the bound address).")
    allowed_origins: tuple[str, ...] = Field((), description="Extra Origin values accepted (besides loopback origins).")
    token: SecretStr | None = Field(None, description="Bearer token every request must carry; None: none needed.")

    def host_names(self) -> list[str]:
        """The Host values accepted (``name`` or ``name:port``; IPv6 in brackets), any port unless one is given."""
        bound = self.bind_host.strip().lower().strip("[]")
        names = [*LOOPBACK_NAMES, *([bound] if bound and not _unspecified(bound) else [])]
        shown = [f"[{n}]" if ":" in n else n for n in names]
        return list(dict.fromkeys([*shown, *self.allowed_hosts]))

    def host_ok(self, header: str) -> bool:
        """Whether a ``Host`` header names this server."""
        given = split_host(header)
        if given is None:
            return False
        for allowed in self.host_names():
            want = split_host(allowed)
            if want is not None and want[0] == given[0] and want[1] in (None, given[1]):
                return True
        return False

    def origin_ok(self, header: str) -> bool:
        """Whether an ``Origin`` header is a loopback origin or a configured one."""
        origin = normal_origin(header)
        if origin is None:
            return False
        host = urlsplit(origin).hostname or ""
        if host in LOOPBACK_NAMES:
            return True
        return origin in {normal_origin(o) for o in self.allowed_origins}

    def token_ok(self, header: str | None) -> bool:
        """Whether an ``Authorization`` header carries the token (always true when the policy has none)."""
        if self.token is None:
            return True
        scheme, _, given = (header or "").strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        return secrets.compare_digest(given.strip().encode(), self.token.get_secret_value().encode())


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def _shown(value: str) -> str:
    return value if len(value) <= _SHOWN else value[:_SHOWN] + "…"


class HttpGuard:
    """ASGI middleware enforcing an :class:`HttpPolicy` on every HTTP and WebSocket request."""

    def __init__(self, app: ASGIApp, policy: HttpPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        rejection = self.check(scope)
        if rejection is None:
            state = scope.setdefault("state", {})
            state[BEARER_CHECKED] = self.policy.token is not None
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": rejection[1][:100]})
        else:
            await _respond(send, *rejection)

    def check(self, scope: Scope) -> tuple[int, str] | None:
        """(status, reason) when the request must be refused, else None."""
        headers = _headers(scope)
        policy = self.policy
        hosts = headers.get("host", [])
        if len(hosts) != 1 or not policy.host_ok(hosts[0]):
            given = _shown(hosts[0]) if len(hosts) == 1 else f"{len(hosts)} Host headers"
            return 403, (
                f"Host {given!r} is not allowed: this server answers to {', '.join(policy.host_names())}; "
                "if you reach it by another name, start it with --allowed-host NAME"
            )
        origins = headers.get("origin", [])
        if len(origins) > 1 or (origins and not policy.origin_ok(origins[0])):
            return 403, (
                f"Origin {_shown(origins[0])!r} is not allowed: only loopback origins (http://127.0.0.1, http://localhost, "
                "http://[::1], any port) and origins given with --allowed-origin may call this server"
            )
        authorization = headers.get("authorization", [])
        if not policy.token_ok(authorization[0] if len(authorization) == 1 else None):
            what = "missing" if not authorization else "wrong"
            return 401, f"bearer token {what}: send 'Authorization: Bearer <token>' with the token the server printed at start (or set with --token / TASKLOOM_TOKEN)"
        return None


def _headers(scope: Scope) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for key, value in scope.get("headers", []):
        found.setdefault(key.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return found


async def _respond(send: Send, status: int, reason: str) -> None:
    body = json.dumps({"error": "unauthorized" if status == 401 else "forbidden", "reason": reason}).encode()
    headers: list[tuple[bytes, bytes]] = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="taskloom"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def choose_token(bind_host: str, given: str | SecretStr | None) -> tuple[str | None, bool]:
    """(the token to require, whether it was generated here).

    A given token is always required. Without one, a server bound off loopback gets a
    fresh random token (256 bits, URL-safe) and a loopback server asks for none.
    """
    secret = given.get_secret_value() if isinstance(given, SecretStr) else given
    if secret:
        return secret, False
    if is_loopback(bind_host):
        return None, False
    return secrets.token_urlsafe(32), True


def make_policy(
    bind_host: str,
    token: str | SecretStr | None = None,
    allowed_hosts: list[str] | tuple[str, ...] = (),
    allowed_origins: list[str] | tuple[str, ...] = (),
) -> HttpPolicy:
    """A validated policy; with ``token`` None no token is asked for (see :func:`choose_token`).

    Raises :class:`InputError` naming the bad ``--allowed-host``, ``--allowed-origin`` or ``--token``.
    """
    secret = token.get_secret_value() if isinstance(token, SecretStr) else token
    if secret is not None and not _TOKEN.fullmatch(secret):
        raise InputError("--token (or TASKLOOM_TOKEN) must be 8 to 512 printable ASCII characters without spaces; omit it to have one generated")
    hosts: list[str] = []
    for host in allowed_hosts:
        bare = host.strip().lower()
        if bare.count(":") > 1 and not bare.startswith("["):
            bare = f"[{bare}]"  # a bare IPv6 address
        if split_host(bare) is None:
            raise InputError(f"--allowed-host {host!r} is not a host name (e.g. myhost.lan or myhost.lan:8765)")
        hosts.append(bare)
    origins: list[str] = []
    for origin in allowed_origins:
        normal = normal_origin(origin)
        if normal is None:
            raise InputError(f"--allowed-origin {origin!r} is not an origin; use scheme://host[:port], e.g. https://app.example:8443")
        origins.append(normal)
    return HttpPolicy(bind_host=bind_host, allowed_hosts=tuple(hosts), allowed_origins=tuple(origins), token=SecretStr(secret) if secret else None)


def guard_middleware(policy: HttpPolicy) -> Middleware:
    """The guard as a Starlette ``Middleware``, for ``FastMCP.run(transport="http", middleware=[...])`` or ``http_app``."""
    options: dict[str, Any] = {"policy": policy}
    return Middleware(HttpGuard, **options)
