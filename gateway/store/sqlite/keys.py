"""What the SQLite store keeps besides the records: gateway keys (`SqliteKeys`, a `KeyStore`),
and the context windows and rate limits learned from providers, kept across restarts
(`SqliteLimits`, a `LimitStore`).

Both are parts of `SqliteStore` (store.py), which is each of them: they use only its `writer`
(writer.py), running their statements (gateway/store/statements.py) on its thread
(`writer.fetch`, `writer.execute`); a key lookup reads the writer's
`key_reader` on the event loop's thread.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import Iterator
from typing import Any, cast

from gateway.errors import RecordsUnavailable
from gateway.store.health_rows import (
    SELECT_EVENTS,
    SELECT_HEALTH,
    insert_event,
    news,
    stored_health,
    upsert_health,
)
from gateway.store.rows import key_values, load_key
from gateway.store.sqlite.writer import SqliteWriter
from gateway.store.statements import SQLITE as SQL

log = logging.getLogger("bench.records")


class SqliteKeys:
    """Gateway keys in the file the writer holds."""

    writer: SqliteWriter

    async def add_key(self, key: dict[str, Any]) -> bool:
        try:
            return await self.writer.execute(SQL.insert_key, key_values(key)) == 1
        except sqlite3.IntegrityError:
            return False

    async def keys(self) -> list[dict[str, Any]]:
        return [load_key(r) for r in await self.writer.fetch(SQL.keys)]

    async def key_by_digest(self, digest: str) -> dict[str, Any] | None:
        """Asked on every keyed request, and never cached (a revoked key is refused at once, in
        every worker). One read of a UNIQUE index on a small table that stays in memory, so it is
        read right here, on a connection of its own: ~10 us, where a trip through the writer
        thread costs ~0.1-0.2 ms and waits behind whatever records are being written. Should
        the store be busy (WAL readers rarely are), the writer thread reads it instead."""
        reader = self.writer.key_reader
        try:
            if reader is None:  # (a moved file being put back)
                raise sqlite3.OperationalError("no reader")
            found = reader.execute(SQL.key_by_digest, (digest,)).fetchall()
        except sqlite3.Error:
            found = await self.writer.fetch(SQL.key_by_digest, (digest,))
        return load_key(found[0]) if found else None

    async def revoke_key(self, name: str) -> bool:
        return await self.writer.execute(SQL.revoke_key, (time.time(), name)) > 0

    async def touch_key(self, name: str, when: float) -> None:
        """Best effort: skipped while the file cannot write (the key is still served)."""
        with _unless_faulty("a key's last use"):
            await self.writer.execute(SQL.touch_key, (when, name))


class SqliteLimits:
    """Context windows learned from providers' "maximum context length is N" errors, and
    cooldowns; the usage is read from the calls themselves (SqliteStore.day_counts)."""

    writer: SqliteWriter

    async def learn_window(self, alias: str, window: int) -> None:
        """Skipped while the file cannot write (it is on the board meanwhile: live, not kept)."""
        with _unless_faulty("a learned context window"):
            await self.writer.execute(SQL.learn_window, (alias, window, time.time()))

    async def learned_windows(self) -> dict[str, int]:
        return {alias: window for alias, window in await self.writer.fetch(SQL.learned_windows)}

    async def learn_limit(self, limit: dict[str, Any]) -> None:
        """Skipped while the file cannot write (it is on the board meanwhile: live, not kept)."""
        values = (limit["alias"], limit["until"], limit["why"], limit["source"], time.time())
        with _unless_faulty("a learned limit"):
            await self.writer.execute(SQL.learn_limit, values)

    async def learned_limits(self, now: float) -> list[dict[str, Any]]:
        return [dict(r) for r in await self.writer.fetch(SQL.learned_limits, (now,))]

    # Model health (contract §18): each model's record, and its changes as events.

    async def keep_health(self, row: dict[str, Any], event: dict[str, Any] | None) -> None:
        """Skipped while the file cannot write (the board has it meanwhile: live, not kept)."""

        def keep() -> None:
            db = cast(sqlite3.Connection, self.writer.db)
            db.execute("BEGIN IMMEDIATE")  # (other workers' writes waited out: busy_timeout)
            try:
                stored = db.execute(stored_health("?"), (row["alias"],)).fetchone()
                db.execute(*upsert_health(row, "?"))
                if news(event, stored):
                    db.execute(*insert_event(cast(dict[str, Any], event), "?"))
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                raise

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
