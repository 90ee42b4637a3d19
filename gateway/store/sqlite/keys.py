"""What the SQLite store keeps besides the records: gateway keys, and the context windows and
rate limits learned from providers (kept across restarts).

`SqliteKeysAndLimits` holds only the `SqliteWriter` it is handed (gateway/store/sqlite/writer.py,
which the store holds too): its queries run on that writer's thread (`writer.run`) against its
connection (`writer.db`), and a key lookup reads the writer's `key_reader` on the event loop's
thread. `SqliteStore` (store.py) delegates its key and learned-limit methods here.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import Iterator
from typing import Any, cast

from gateway.errors import RecordsUnavailable
from gateway.store.health_rows import SELECT_EVENTS, SELECT_HEALTH, insert_event, upsert_health
from gateway.store.rows import KEY_COLUMNS, insert_key, load_key
from gateway.store.sqlite.writer import SqliteWriter

log = logging.getLogger("bench.records")


class SqliteKeysAndLimits:
    """Gateway keys (only the SHA-256 of a key is ever stored), and the context windows and
    cooldowns learned from providers, in the file the writer holds."""

    def __init__(self, writer: SqliteWriter) -> None:
        self.writer = writer

    # Gateway keys.

    async def add_key(self, key: dict[str, Any]) -> bool:
        return await self.writer.run(self._add_key, key)

    def _add_key(self, key: dict[str, Any]) -> bool:
        assert self.writer.db is not None
        try:
            self.writer.db.execute(*insert_key(key, "?"))
        except sqlite3.IntegrityError:
            return False
        return True

    async def keys(self) -> list[dict[str, Any]]:
        return await self.writer.run(self._select_keys, "1 = 1", ())

    async def key_by_digest(self, digest: str) -> dict[str, Any] | None:
        """Asked on every keyed request, and never cached (a revoked key is refused at once, in
        every worker). One read of a UNIQUE index on a small table that stays in memory, so it is
        read right here, on a connection of its own: ~10 us, where a trip through the writer
        thread costs ~0.1-0.2 ms and waits behind whatever records are being written. Should
        the store be busy (WAL readers rarely are), the writer thread reads it instead."""
        where, args = "digest = ? AND revoked IS NULL", (digest,)
        reader = self.writer.key_reader
        try:
            if reader is None:  # (a moved file being put back)
                raise sqlite3.OperationalError("no reader")
            found = self._select_keys(where, args, reader)
        except sqlite3.Error:
            found = await self.writer.run(self._select_keys, where, args)
        return found[0] if found else None

    def _select_keys(
        self, where: str, args: tuple[Any, ...], db: sqlite3.Connection | None = None
    ) -> list[dict[str, Any]]:
        db = db or self.writer.db
        assert db is not None
        rows = db.execute(
            f"SELECT {KEY_COLUMNS} FROM gateway_keys WHERE {where} ORDER BY created",
            args,
        ).fetchall()
        return [load_key(r) for r in rows]

    async def revoke_key(self, name: str) -> bool:
        return await self.writer.run(self._revoke_key, name)

    def _revoke_key(self, name: str) -> bool:
        assert self.writer.db is not None
        cursor = self.writer.db.execute(
            "UPDATE gateway_keys SET revoked = ? WHERE name = ? AND revoked IS NULL",
            (time.time(), name),
        )
        return cursor.rowcount > 0

    async def touch_key(self, name: str, when: float) -> None:
        """Best effort: skipped while the file cannot write (the key is still served)."""
        with _unless_faulty("a key's last use"):
            await self.writer.run(
                lambda: cast(sqlite3.Connection, self.writer.db).execute(
                    "UPDATE gateway_keys SET last_used = ? WHERE name = ?", (when, name)
                )
            )

    # Context windows learned from providers' "maximum context length is N" errors.

    async def learn_window(self, alias: str, window: int) -> None:
        """Skipped while the file cannot write (it is on the board meanwhile: live, not kept)."""
        with _unless_faulty("a learned context window"):
            await self.writer.run(
                lambda: cast(sqlite3.Connection, self.writer.db).execute(
                    "INSERT INTO learned_windows VALUES (?, ?, ?) ON CONFLICT (alias) DO UPDATE "
                    "SET context_window = MIN(context_window, excluded.context_window), "
                    "learned = excluded.learned",
                    (alias, window, time.time()),
                )
            )

    async def learned_windows(self) -> dict[str, int]:
        rows = await self.writer.run(
            lambda: (
                cast(sqlite3.Connection, self.writer.db)
                .execute("SELECT alias, context_window FROM learned_windows")
                .fetchall()
            )
        )
        return {alias: window for alias, window in rows}

    # Quotas: cooldowns learned from providers (kept across restarts); the usage is read
    # from the calls themselves (SqliteStore.day_counts).

    async def learn_limit(self, limit: dict[str, Any]) -> None:
        """Skipped while the file cannot write (it is on the board meanwhile: live, not kept)."""
        with _unless_faulty("a learned limit"):
            await self.writer.run(
                lambda: cast(sqlite3.Connection, self.writer.db).execute(
                    "INSERT INTO learned_limits VALUES (?, ?, ?, ?, ?) ON CONFLICT (alias) DO "
                    "UPDATE SET until = excluded.until, why = excluded.why, "
                    "source = excluded.source, learned = excluded.learned",
                    (limit["alias"], limit["until"], limit["why"], limit["source"], time.time()),
                )
            )

    async def learned_limits(self, now: float) -> list[dict[str, Any]]:
        rows = await self.writer.run(
            lambda: (
                cast(sqlite3.Connection, self.writer.db)
                .execute(
                    "SELECT alias, until, why, source FROM learned_limits WHERE until > ?", (now,)
                )
                .fetchall()
            )
        )
        return [dict(r) for r in rows]

    # Model health (contract §18): each model's record, and its changes as events.

    async def keep_health(self, row: dict[str, Any], event: dict[str, Any] | None) -> None:
        """Skipped while the file cannot write (the board has it meanwhile: live, not kept)."""

        def keep() -> None:
            db = cast(sqlite3.Connection, self.writer.db)
            db.execute(*upsert_health(row, "?"))
            if event is not None:
                db.execute(*insert_event(event, "?"))

        with _unless_faulty("a model's health"):
            await self.writer.run(keep)

    async def health_rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        def read() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            db = cast(sqlite3.Connection, self.writer.db)
            rows = [dict(r) for r in db.execute(SELECT_HEALTH).fetchall()]
            return rows, [dict(r) for r in db.execute(SELECT_EVENTS).fetchall()]

        return await self.writer.run(read)


@contextlib.contextmanager
def _unless_faulty(what: str) -> Iterator[None]:
    """A write the gateway can serve without: while the file cannot write, skipped (the store
    reports why, once, on /healthz and in the log)."""
    try:
        yield
    except RecordsUnavailable:
        log.info("%s is not kept: the record store cannot write now", what)
