"""The guard in front of every route: a web page cannot use the gateway behind its user's back.

A keyless gateway on loopback trusts whoever reaches it, and any page in the user's browser can
reach it: by DNS rebinding (the page's own name made to resolve to 127.0.0.1, so the browser sends
`Host: evil.example`), or by a cross-site "simple" request (a form or text/plain POST, which a
browser sends without asking anyone first). So, before any route runs (contract §14):

1. the `Host` must be the gateway's own: a loopback name with the port it is bound to, a name in
   `gateway.allowed_hosts`, or the host of `gateway.public_url`;
2. an `Origin`, when sent, must be in `gateway.allowed_origins` or be the gateway's own, and a
   `Sec-Fetch-Site: cross-site` request must come from such an origin;
3. a POST must say its body is JSON.

CORS headers go to allowed origins only. A refusal comes in the format of the route called (an
Anthropic client gets Anthropic's error shape). A refused request reads no body, reaches no
route, calls nothing and writes nothing. `/healthz` answers before all this, for container
health probes that send whatever Host they like.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.errors import Forbidden, GatewayError, render
from routing.refusals import echo

HEALTH = "/healthz"
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
LOOPBACK_NAMES = frozenset({"localhost", "[::1]"})
EXPOSED = (
    "X-Bench-Panel, X-Bench-Seats, X-Bench-Conversation, X-Bench-Model, X-Bench-Dropped, "
    "X-Panel-Shape, Retry-After"
)
# Request headers a page may send: the gateway's own and those of the client formats it speaks
# (the OpenAI and Anthropic browser SDKs add their x-stainless-* headers to every request).
REQUEST_HEADERS = frozenset(
    {
        "accept",
        "authorization",
        "content-type",
        "x-api-key",
        "x-panel-shape",
        "x-panel-with",
        "x-bench-conversation",
        "openai-organization",
        "openai-project",
        "openai-beta",
        "anthropic-version",
        "anthropic-beta",
        "anthropic-dangerous-direct-browser-access",
        "x-goog-api-key",
        "x-goog-api-client",
    }
)
MAX_AGE_S = 600
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class UnsupportedMediaType(GatewayError):
    status, type, code = 415, "invalid_request_error", "unsupported_media_type"


@dataclass(frozen=True)
class Address:
    """A host name (lower case; an IPv6 address in brackets) and a port, None when not given."""

    name: str
    port: int | None = None


def parse_host(value: str) -> Address | None:
    """`name`, `name:port`, `[v6]` or `[v6]:port`; None for anything else."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value.partition("]")
        name += "]"
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:] if rest else None
    else:
        name, colon, port = value.partition(":")
        port = port if colon else None
    if not name or name == "[]" or any(c in name for c in "/\\@?# ,"):
        return None
    if port is None:
        return Address(name)
    if not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return Address(name, int(port))


def parse_origin(value: str) -> tuple[str, Address] | None:
    """`scheme://host[:port]` as (scheme, address with its port filled in); None otherwise."""
    scheme, sep, rest = value.strip().lower().partition("://")
    if not sep or scheme not in DEFAULT_PORTS or not rest or "/" in rest.rstrip("/"):
        return None
    address = parse_host(rest.rstrip("/"))
    if address is None:
        return None
    return scheme, Address(address.name, address.port or DEFAULT_PORTS[scheme])


def is_loopback(name: str) -> bool:
    if name in LOOPBACK_NAMES:
        return True
    parts = name.split(".")
    return (
        len(parts) == 4 and parts[0] == "127" and all(p.isdigit() and int(p) < 256 for p in parts)
    )


def is_json(content_type: str) -> bool:
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def _openai(path: str) -> Callable[[GatewayError], Response]:
    return render


class Guard:
    """ASGI middleware. Configured from plain values; the bound port comes from each request's
    scope (`server`: the address the connection arrived at), so workers, `--port 0` and tests
    on free ports need no setting. *error_renderer_for*: how a refusal is shown to the clients
    of a path (the app hands it gateway/formats' `error_renderer_for`; OpenAI's shape if not)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        public_url: str | None = None,
        routes: Sequence[BaseRoute] = (),
        error_renderer_for: Callable[[str], Callable[[GatewayError], Response]] = _openai,
    ) -> None:
        self.app = app
        self.error_renderer_for = error_renderer_for  # a path -> how its clients see an error
        self.hosts = {a for a in map(parse_host, allowed_hosts) if a is not None}
        self.origins: set[tuple[str, Address] | str] = set()
        for origin in allowed_origins:
            self.origins.add(parse_origin(origin) or origin.strip())  # "null" stays literal
        self.public: tuple[str, Address] | None = None
        if public_url:  # its path, if any, does not matter here
            parts = urlsplit(public_url)
            self.public = parse_origin(f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}")
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        method = scope.get("method", "GET")
        if scope["path"] == HEALTH and method in ("GET", "HEAD"):
            return await self.app(scope, receive, send)
        headers: dict[str, list[str]] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name.decode("latin-1"), []).append(value.decode("latin-1"))
        refusal = self.refusal(scope, headers)
        if refusal is not None:
            if scope["type"] == "websocket":
                return await send({"type": "websocket.close", "code": 1008})
            return await self.error_renderer_for(scope["path"])(refusal)(scope, receive, send)
        origin = _one(headers, "origin")
        if method == "OPTIONS":
            return await self._options(scope, receive, send, headers, origin)
        if origin is not None:
            send = _with_cors(send, origin)
        content_type = _one(headers, "content-type")
        if method in _BODY_METHODS and content_type is not None and not is_json(content_type):
            error = UnsupportedMediaType(
                f"The request body must be JSON (Content-Type: application/json), "
                f"not {echo(content_type)!r}.",
            )
            return await self.error_renderer_for(scope["path"])(error)(scope, receive, send)
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope, headers: dict[str, list[str]]) -> GatewayError | None:
        """Why this request may not go on (a 403), or None."""
        scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
        server = scope.get("server")
        bound = server[1] if server else None
        hosts = headers.get("host", [])
        host = parse_host(hosts[0]) if len(hosts) == 1 else None
        if host is None or not self.host_allowed(host, scheme, bound):
            shown = f"The Host {echo(hosts[0])!r} is" if len(hosts) == 1 else "No single Host is"
            served = f"loopback on port {bound}" if bound else "loopback"
            return Forbidden(
                f"{shown} not one this gateway answers to ({served}, gateway.allowed_hosts, "
                "gateway.public_url): to serve that name, add it to gateway.allowed_hosts.",
                code="host_not_allowed",
            )
        origin = _one(headers, "origin")
        if origin is not None and not self.origin_allowed(origin, scheme, bound):
            return Forbidden(
                f"Web pages from {echo(origin)!r} may not use this gateway: "
                "to let them, add that origin to gateway.allowed_origins.",
                code="origin_not_allowed",
            )
        if origin is None and _one(headers, "sec-fetch-site") == "cross-site":
            return Forbidden(
                "A cross-site request without an allowed Origin is refused: "
                "to let a web page use this gateway, add its origin to gateway.allowed_origins.",
                code="origin_not_allowed",
            )
        return None

    def host_allowed(self, host: Address, scheme: str, bound: int | None) -> bool:
        # Listed names first: a proxy on this machine (nginx on 127.0.0.1:8124 in front of a
        # replica bound to 8123) passes on its own loopback Host, listed in gateway.allowed_hosts.
        if Address(host.name) in self.hosts or host in self.hosts:
            return True
        if is_loopback(host.name):
            # Without a bound port (a Unix socket) no web page can reach the gateway anyway.
            return bound is None or (host.port or DEFAULT_PORTS[scheme]) == bound
        if self.public is not None:
            public_scheme, public = self.public
            port = host.port or DEFAULT_PORTS[public_scheme]
            return host.name == public.name and port == public.port
        return False

    def origin_allowed(self, value: str, scheme: str, bound: int | None) -> bool:
        """In gateway.allowed_origins, or the gateway's own: the scheme, host and port of an
        allowed Host."""
        origin = parse_origin(value)
        if origin is None:
            return value.strip() in self.origins
        if origin in self.origins or origin == self.public:
            return True
        origin_scheme, address = origin
        if Address(address.name) in self.hosts or address in self.hosts:
            return True
        return is_loopback(address.name) and origin_scheme == scheme and address.port == bound

    async def _options(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, list[str]],
        origin: str | None,
    ) -> None:
        """OPTIONS on a route: its `Allow`, and for an allowed origin's preflight, CORS."""
        methods = self._methods(scope)
        if methods is None:
            return await self.app(scope, receive, send)  # no such route: the app's 404
        allow = ", ".join(sorted(methods | {"OPTIONS"}))
        reply = Response(status_code=204, headers={"Allow": allow})
        wanted = _one(headers, "access-control-request-method")
        if origin is not None and wanted is not None:
            asked = (_one(headers, "access-control-request-headers") or "").split(",")
            sent = [h for h in (a.strip().lower() for a in asked) if _sendable(h)]
            reply.headers.update(
                {
                    "Access-Control-Allow-Origin": origin,
                    "Access-Control-Allow-Methods": allow,
                    "Access-Control-Max-Age": str(MAX_AGE_S),
                }
            )
            if sent:
                reply.headers["Access-Control-Allow-Headers"] = ", ".join(sent)
            reply.headers["Vary"] = (
                "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
            )
        await reply(scope, receive, send)

    def _methods(self, scope: Scope) -> set[str] | None:
        """The methods the route at this path answers, or None when no route has the path."""
        found: set[str] = set()
        matched = False
        for route in self.routes:
            match, _ = route.matches(scope)
            if match != Match.NONE:
                matched = True
                found |= set(getattr(route, "methods", None) or ())
        return found if matched else None


def _one(headers: dict[str, list[str]], name: str) -> str | None:
    values = headers.get(name)
    return values[0] if values else None


def _sendable(header: str) -> bool:
    return header in REQUEST_HEADERS or header.startswith("x-stainless-")


def _with_cors(send: Send, origin: str) -> Send:
    """`send`, adding to the response the CORS headers an allowed origin needs to read it."""

    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            message.setdefault("headers", [])
            headers = MutableHeaders(scope=message)
            headers["Access-Control-Allow-Origin"] = origin
            headers["Access-Control-Expose-Headers"] = EXPOSED
            headers.add_vary_header("Origin")
        await send(message)

    return sender
