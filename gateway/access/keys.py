"""Gateway keys: who may ask which collections, how often, and whose records they may read.

A key is `bwk_` + 32 random bytes (URL-safe) and is shown once, at creation; the store keeps only
its SHA-256, its last four characters and its scopes. Keys are looked up by digest and compared
in constant time. Without `gateway.require_keys` every caller is `local` and reads every record.

Every request is authenticated against the store itself, with no cache: the store is the one
truth every worker shares (and `keys revoke` runs in a process of its own), so a revoked key is
refused at once everywhere. The lookup is one indexed read (see `Keys.client`).

Only requests that ask models spend a key's rpm, and only once their collection is in scope:
`Keys.admitted` is the one call every panel path makes, after reading what is asked.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from starlette.requests import Request

from gateway.board import WINDOW_S, Board, BoardFull
from gateway.errors import GatewayError, TooManyRequests, Unauthorized
from gateway.request.client import EVERYONE, Client
from routing import Catalog

log = logging.getLogger("bench.keys")

KEY_PREFIX = "bwk_"
KEY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_SHAPE = re.compile(r"^bwk_[A-Za-z0-9_-]{43}$")
_TOUCH_S = 60.0  # last_used is written at most this often per key


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_record(
    name: str, key: str, collections: list[str] | None, rpm: int | None
) -> dict[str, Any]:
    return {
        "name": name,
        "digest": digest(key),
        "last4": key[-4:],
        "collections": collections,
        "rpm": rpm,
        "created": time.time(),
    }


def presented(request: Request, google: bool = False) -> str | None:
    """The key sent: `Authorization: Bearer`, `x-api-key`; on Gemini routes (*google*) also
    `x-goog-api-key` and `?key=`, as Google's SDKs send it (a query string is never logged)."""
    auth = request.headers.get("authorization")
    if auth is not None:
        scheme, _, value = auth.partition(" ")
        return value.strip() if scheme.lower() == "bearer" else auth.strip()
    key = request.headers.get("x-api-key")
    if key is None and google:
        key = request.headers.get("x-goog-api-key") or request.query_params.get("key")
    return key


class Keys:
    """Checks the key on each request (`client`), and spends its rpm on panels (`admitted`)."""

    def __init__(
        self, store: Any, required: bool, board: Board, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.required = required
        self.board = board  # a key's rpm counts its requests to every worker
        self.clock = clock
        self.spends = True  # False: a shared live state spends the rpm as it seats (gateway/state)
        self._touched: dict[str, float] = {}

    async def client(self, request: Request, *, google: bool = False) -> Client:
        """Who is asking: 401 for a missing, malformed, unknown or revoked key. Spends nothing.

        The key is looked up in the store on every request, by its digest (a UNIQUE, so
        indexed, column): about 25 us a request, measured, so no cache that could serve a
        revoked key is worth keeping (SqliteStore.key_by_digest says how)."""
        if not self.required:
            return EVERYONE
        key = presented(request, google)
        if not key:
            raise _unauthorized(
                "No gateway key: send `Authorization: Bearer <key>` or `x-api-key`."
            )
        if not _SHAPE.match(key):
            raise _unauthorized("Malformed gateway key: expected bwk_ followed by 43 characters.")
        wanted = digest(key)
        record = await self.store.key_by_digest(wanted)
        if record is None or not hmac.compare_digest(record["digest"], wanted):
            raise _unauthorized("Unknown or revoked gateway key.")
        name = record["name"]
        request.state.key_name = name  # the access log names the key (gateway/serve/access_log)
        now = self.clock()
        if now - self._touched.get(name, 0.0) > _TOUCH_S:
            self._touched[name] = now
            await self.store.touch_key(name, now)
        scopes = record["collections"]
        return Client(name, frozenset(scopes) if scopes is not None else None, record["rpm"])

    @contextmanager
    def admitted(
        self,
        client: Client,
        collection: str,
        nominees: Iterable[str] = (),
        catalog: Catalog | None = None,
    ) -> Iterator[None]:
        """Around seating a panel: 403 outside the key's scope (its collections, and the models
        of them a panel may nominate), else one request spent from its rpm (429 with
        Retry-After when none is left). A refusal inside (unknown collection, shape or alias, a
        prompt too large, nothing to seat, ...) gives the request back: only requests that
        reach the models count."""
        client.check(collection)
        if catalog is not None:
            client.check_nominees(nominees, catalog)
        slots = self.spend(client) if self.spends else []
        try:
            yield
        except GatewayError:
            if slots:
                self.board.forget(slots)
            raise

    def spend(self, client: Client) -> list[int]:
        """One request from the key's rpm, on the board: the slots taken, or 429."""
        cap = client.rpm
        if not cap:
            return []
        now = self.clock()
        ring = key_ring(client)
        with self.board.locked():
            try:
                taken = self.board.take([(ring, cap)], now, in_flight=False)
            except BoardFull:  # more keys than the board was sized for: serve, and say so
                log.error("no room on the board to count key %r's rpm", client.name)
                return []
            if isinstance(taken, str):
                raise over_rpm(client, self.board.oldest(ring, cap, now), now)
        return taken


def key_ring(client: Client) -> str:
    return f"key:{client.name}"


def over_rpm(client: Client, oldest: float | None, now: float) -> TooManyRequests:
    """429 for a key over its rpm, with the seconds until its oldest request leaves the minute."""
    wait = max(1, int((oldest or now) + WINDOW_S - now) + 1)
    return TooManyRequests(
        f"Gateway key {client.name!r} is over its {client.rpm} requests per minute.",
        headers={"Retry-After": str(wait)},
    )


def _unauthorized(message: str) -> Unauthorized:
    return Unauthorized(message, headers={"WWW-Authenticate": "Bearer"})
