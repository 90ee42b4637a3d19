"""Who may open the dashboard, the admin's session cookie, and the CSRF check on its posts.

The rule (contract §13): the dashboard is open without signing in only when the gateway does
not require keys AND the connection comes from a loopback address AND it asks for a loopback
Host name (`127.0.0.1:<port>`, `localhost:<port>`). Anything else (keys required, or the page
reached through `gateway.public_url` or a name in `gateway.allowed_hosts`, even from this machine)
asks for the admin token, `BENCH_ADMIN_TOKEN`. A gateway key never opens it: keys are for clients
and scripts (`GET /bench/panels` reads with one), the dashboard also creates and revokes them.

A session is a signed cookie (`<expires>.<epoch>.<id>.<mac>`, HMAC-SHA256 under a key derived
from the admin token), HttpOnly and SameSite=Strict, and the signed-in dashboard lives under the
session's own path, `/s/<id>/` (`SessionRoot` serves every dashboard route there too). Why:
browsers send a host's cookies to every port of it, so any other web server the admin opened on
127.0.0.1 received the session and could replay it (a key was created that way). A cookie is
scoped by path though, and the session's is `Path=/s/<id>/`, a path no other server is ever
asked for: the id is random, and only the gateway's own pages know it (the page's script keeps
it in localStorage, which is the origin's alone, port included, to come back to it from `/`).
Signing out ends every admin session on the server: the board's session epoch moves on, and a
cookie of an earlier epoch is refused by every worker (the throttle's board: gateway/access/
throttle.py). Every post also carries a CSRF token: a random value in an HttpOnly, SameSite=Strict
cookie that the page repeats in an `X-CSRF-Token` header (double submit; a page of another
origin can neither read the cookie nor set the header without a preflight the guard refuses).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import re
import secrets
import time
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.access.guard import is_loopback, parse_host
from gateway.access.keys import KEY_PREFIX
from gateway.access.throttle import CELLS, SignInThrottle
from gateway.board import Board
from gateway.errors import Forbidden, Unauthorized

ADMIN_TOKEN_ENV = "BENCH_ADMIN_TOKEN"
SESSION_COOKIE = "bench_session"
CSRF_COOKIE = "bench_csrf"
CSRF_HEADER = "x-csrf-token"
SESSION_S = 12 * 3600
SESSION_ROOT = "/s/"  # a session's pages: /s/<id>/...
_EPOCH = "sessions:epoch"  # the board's cell: sessions made before its number are over
_ID = re.compile(r"[A-Za-z0-9_-]{22}")


class Access:
    def __init__(
        self,
        *,
        require_keys: bool,
        admin_token: str | None = None,
        clock: Callable[[], float] = time.time,
        board: Board | None = None,
    ) -> None:
        """*board*: where wrong admin tokens are counted, shared by the workers (a private
        one if none is given)."""
        self.require_keys = require_keys
        self.admin_token = admin_token or None
        self.clock = clock
        self.throttle = SignInThrottle(board or Board.private(CELLS + 16, 16), clock)
        secret = (self.admin_token or "").encode()
        self._key = hashlib.sha256(b"bench-dashboard-session\x00" + secret).digest()
        # what a blind page's seat ids are keyed with (gateway/dashboard/views.py)
        self.seat_key = hashlib.sha256(b"bench-blind-seats\x00" + secret).digest()

    @classmethod
    def from_environment(
        cls, require_keys: bool, clock: Callable[[], float], board: Board | None = None
    ) -> Access:
        token = os.environ.get(ADMIN_TOKEN_ENV)
        return cls(require_keys=require_keys, admin_token=token, clock=clock, board=board)

    def open_without_sign_in(self, request: Request) -> bool:
        if self.require_keys or request.client is None:
            return False
        try:
            from_loopback = ipaddress.ip_address(request.client.host).is_loopback
        except ValueError:
            return False
        host = parse_host(request.headers.get("host", ""))
        return from_loopback and host is not None and is_loopback(host.name)

    def allowed(self, request: Request) -> bool:
        return self.open_without_sign_in(request) or self.signed_in(request)

    def signed_in(self, request: Request) -> bool:
        """A session cookie of this admin token, not expired, of the current epoch (not signed
        out since), sent to its own path (`/s/<id>/`)."""
        if self.admin_token is None:
            return False
        value = request.cookies.get(SESSION_COOKIE, "")
        payload, _, mac = value.rpartition(".")
        expires, epoch, sid = (payload.split(".") + ["", ""])[:3]
        if not all(p.isascii() and p.isdigit() and len(p) <= 12 for p in (expires, epoch)):
            return False
        if int(expires) < self.clock() or int(epoch) != self._epoch():
            return False
        if sid != session_id(request) or not hmac.compare_digest(mac, self._mac(payload)):
            return False
        return True

    def sign_out(self) -> None:
        """Every admin session ends, in every worker: the board's epoch moves on."""
        with self.throttle.board.locked():
            self.throttle.board.add(_EPOCH, 1.0)

    def _epoch(self) -> int:
        return int(self.throttle.board.numbers(_EPOCH)[0])

    def sign_in(
        self, token: object, request: Request, response: Response, device: object = None
    ) -> tuple[str, str]:
        """Sets the session cookie for the admin token; (the session's root, its pages' path;
        the browser's device token). 401 for anything else, a gateway key included (said so,
        since that is the likely mistake); 429 with Retry-After after 10 wrong tokens in a
        minute from the client (gateway/access/throttle.py). The client is its address, or,
        with *device* (the device token an earlier sign-in gave this browser, which its page
        keeps in localStorage, the origin's alone), that browser: every local process signs
        in from 127.0.0.1, and another's wrong tokens then no longer lock the admin out."""
        if self.admin_token is None:
            raise Forbidden(
                f"No admin token is set: start the gateway with {ADMIN_TOKEN_ENV} set.",
                code="admin_token_not_set",
            )
        known = self._known_device(device)
        client = request.client.host if request.client is not None else "-"
        if known:
            client = f"device:{known}"
        self.throttle.check(client)
        if not isinstance(token, str) or not token:
            raise Unauthorized('Send the admin token as {"token": "..."}.')
        if not hmac.compare_digest(token.encode(), self.admin_token.encode()):
            self.throttle.wrong(client)
            if token.startswith(KEY_PREFIX):
                raise Unauthorized(
                    "A gateway key does not open the dashboard: sign in with the admin token "
                    f"({ADMIN_TOKEN_ENV})."
                )
            raise Unauthorized("That is not the admin token.")
        self.throttle.right(client)
        expires = str(int(self.clock() + SESSION_S))
        sid = secrets.token_urlsafe(16)
        payload = f"{expires}.{self._epoch()}.{sid}"
        response.set_cookie(
            SESSION_COOKIE,
            f"{payload}.{self._mac(payload)}",
            max_age=SESSION_S,
            path=f"{SESSION_ROOT}{sid}/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        made = known or secrets.token_urlsafe(12)
        return f"{SESSION_ROOT}{sid}", f"{made}.{self._mac('device.' + made)}"

    def _known_device(self, device: object) -> str:
        """The id of a device token this gateway gave (under this admin token), or ""."""
        if not isinstance(device, str) or len(device) > 200:
            return ""
        made, _, mac = device.rpartition(".")
        return made if made and hmac.compare_digest(mac, self._mac("device." + made)) else ""

    def _mac(self, payload: str) -> str:
        return hmac.new(self._key, payload.encode(), hashlib.sha256).hexdigest()


def csrf_token(request: Request, response: Response) -> str:
    """The request's CSRF token; a new one is set as a cookie when it has none."""
    token = request.cookies.get(CSRF_COOKIE)
    if not token or len(token) > 100:
        token = secrets.token_urlsafe(24)
        response.set_cookie(
            CSRF_COOKIE,
            token,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
    return token


def check_csrf(request: Request) -> None:
    """403 unless the post repeats its CSRF cookie in the X-CSRF-Token header."""
    cookie = request.cookies.get(CSRF_COOKIE, "")
    sent = request.headers.get(CSRF_HEADER, "")
    if not cookie or not sent or not hmac.compare_digest(cookie.encode(), sent.encode()):
        raise Forbidden(
            "This form post lacks its CSRF token: reload the dashboard and try again.",
            code="csrf_failed",
        )


def session_id(request: Request) -> str:
    """The session id of the path the request came by (`/s/<id>/...`), or ""."""
    return str(request.scope.get("state", {}).get("session", ""))


def dashboard_root(request: Request) -> str:
    """Where this request's dashboard lives: `/s/<id>` under a session, else ``."""
    sid = session_id(request)
    return f"{SESSION_ROOT}{sid}" if sid else ""


class SessionRoot:
    """ASGI middleware: `/s/<id>/<route>` is the dashboard's `/<route>` (the id noted in the
    scope's state for `Access.signed_in`); anything else under /s/ is not found."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path.startswith(SESSION_ROOT):
            sid, slash, rest = path[len(SESSION_ROOT) :].partition("/")
            if _ID.fullmatch(sid) and slash and (rest == "" or rest.startswith(("panels/", "ui/"))):
                root = f"{SESSION_ROOT}{sid}"
                raw = scope.get("raw_path") or path.encode()
                raw = raw[len(root) :] if raw.startswith(root.encode()) else raw
                scope = {**scope, "path": path[len(root) :], "raw_path": raw}
                scope["state"] = {**scope.get("state", {}), "session": sid}
        await self.app(scope, receive, send)
