"""Gateway keys: who may ask which collections, and how often.

A key is `bwk_` + 32 random bytes (URL-safe) and is shown once, at creation; the store keeps only
its SHA-256, its last four characters and its scopes. Keys are looked up by digest and compared
in constant time. Without `gateway.require_keys` every caller is `local`.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from gateway.board import WINDOW_S, Board, BoardFull
from gateway.errors import Forbidden, TooManyRequests, Unauthorized
from routing.errors import echo

log = logging.getLogger("bench.keys")

KEY_PREFIX = "bwk_"
LOCAL = "local"
_SHAPE = re.compile(r"^bwk_[A-Za-z0-9_-]{43}$")
_CACHE_S = 2.0  # how long a looked-up key is trusted before the store is asked again
_TOUCH_S = 60.0  # last_used is written at most this often per key


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_record(name: str, key: str, collections: list[str] | None, rpm: int | None) -> dict:
    return {
        "name": name,
        "digest": digest(key),
        "last4": key[-4:],
        "collections": collections,
        "rpm": rpm,
        "created": time.time(),
    }


@dataclass(frozen=True)
class Client:
    name: str
    collections: frozenset[str] | None = None  # None: every collection

    def may_use(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    def check(self, collection: str) -> None:
        if not self.may_use(collection):
            raise Forbidden(
                f"This gateway key may not use collection {echo(collection)!r}; "
                f"its collections: {', '.join(sorted(self.collections or ()))}.",
                param="model",
            )


EVERYONE = Client(LOCAL)


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


class Gatekeeper:
    """Checks the key on each request; caches lookups briefly so a request costs no store read."""

    def __init__(self, store: Any, required: bool, board: Board, clock=time.time) -> None:
        self.store = store
        self.required = required
        self.board = board  # a key's rpm counts its requests to every worker
        self.clock = clock
        self._cache: dict[str, tuple[dict | None, float]] = {}
        self._touched: dict[str, float] = {}

    async def client(self, request: Request, *, google: bool = False) -> Client:
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
        record = await self._lookup(wanted)
        if record is None or not hmac.compare_digest(record["digest"], wanted):
            raise _unauthorized("Unknown or revoked gateway key.")
        await self._count(record)
        scopes = record["collections"]
        return Client(record["name"], frozenset(scopes) if scopes is not None else None)

    async def _lookup(self, wanted: str) -> dict | None:
        now = self.clock()
        cached = self._cache.get(wanted)
        if cached is not None and now - cached[1] < _CACHE_S:
            return cached[0]
        record = await self.store.key_by_digest(wanted)
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[wanted] = (record, now)
        return record

    async def _count(self, record: dict) -> None:
        now = self.clock()
        name = record["name"]
        cap = record["rpm"]
        if cap:
            ring = f"key:{name}"
            with self.board.locked():
                try:
                    taken = self.board.take([(ring, cap)], now, in_flight=False)
                except BoardFull:  # more keys than the board was sized for: serve, and say so
                    log.error("no room on the board to count key %r's rpm", name)
                    taken = []
                if isinstance(taken, str):
                    oldest = self.board.oldest(ring, cap, now) or now
                    wait = max(1, int(oldest + WINDOW_S - now) + 1)
                    raise TooManyRequests(
                        f"Gateway key {name!r} is over its {cap} requests per minute.",
                        headers={"Retry-After": str(wait)},
                    )
        if now - self._touched.get(name, 0.0) > _TOUCH_S:
            self._touched[name] = now
            await self.store.touch_key(name, now)


def _unauthorized(message: str) -> Unauthorized:
    return Unauthorized(message, headers={"WWW-Authenticate": "Bearer"})
