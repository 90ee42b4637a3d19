"""The record store's gateway keys and learned context windows (SQLite).

Only the SHA-256 of a gateway key is ever stored. A mixin of SqliteStore: it runs on the same
writer thread and connection.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any


class KeyRows:
    """Needs the host's `_db` connection and `_run(fn)`, which runs fn on the writer thread."""

    _db: sqlite3.Connection | None

    async def add_key(self, key: dict[str, Any]) -> bool:
        return await self._run(self._add_key, key)

    def _add_key(self, key: dict[str, Any]) -> bool:
        assert self._db is not None
        try:
            self._db.execute(
                "INSERT INTO gateway_keys (name, digest, last4, collections, rpm, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key["name"],
                    key["digest"],
                    key["last4"],
                    None if key["collections"] is None else json.dumps(key["collections"]),
                    key["rpm"],
                    key["created"],
                ),
            )
        except sqlite3.IntegrityError:
            return False
        return True

    async def keys(self) -> list[dict[str, Any]]:
        return await self._run(self._select_keys, "1 = 1", ())

    async def key_by_digest(self, digest: str) -> dict[str, Any] | None:
        found = await self._run(self._select_keys, "digest = ? AND revoked IS NULL", (digest,))
        return found[0] if found else None

    def _select_keys(self, where: str, args: tuple) -> list[dict[str, Any]]:
        assert self._db is not None
        rows = self._db.execute(
            f"SELECT name, digest, last4, collections, rpm, created, last_used, revoked "
            f"FROM gateway_keys WHERE {where} ORDER BY created",
            args,
        ).fetchall()
        return [_key(r) for r in rows]

    async def revoke_key(self, name: str) -> bool:
        return await self._run(self._revoke_key, name)

    def _revoke_key(self, name: str) -> bool:
        assert self._db is not None
        cursor = self._db.execute(
            "UPDATE gateway_keys SET revoked = ? WHERE name = ? AND revoked IS NULL",
            (time.time(), name),
        )
        return cursor.rowcount > 0

    async def touch_key(self, name: str, when: float) -> None:
        await self._run(
            lambda: self._db.execute(
                "UPDATE gateway_keys SET last_used = ? WHERE name = ?", (when, name)
            )
        )

    # Context windows learned from providers' "maximum context length is N" errors.

    async def learn_window(self, alias: str, window: int) -> None:
        await self._run(
            lambda: self._db.execute(
                "INSERT INTO learned_windows VALUES (?, ?, ?) ON CONFLICT (alias) DO UPDATE SET "
                "context_window = MIN(context_window, excluded.context_window), "
                "learned = excluded.learned",
                (alias, window, time.time()),
            )
        )

    async def learned_windows(self) -> dict[str, int]:
        rows = await self._run(
            lambda: self._db.execute("SELECT alias, context_window FROM learned_windows").fetchall()
        )
        return {alias: window for alias, window in rows}


def _key(row: sqlite3.Row) -> dict[str, Any]:
    found = dict(row)
    if found["collections"] is not None:
        found["collections"] = json.loads(found["collections"])
    return found
