"""What the PostgreSQL store keeps besides the records: gateway keys, and the context windows and
rate limits learned from providers (kept across restarts, shared by every replica).

`PostgresKeysAndLimits` holds the `PostgresLink` it is handed (gateway/store/postgres/link.py, which
the store holds too), through which it reads and writes (`link.connection`, `link.execute`,
`link.fetch`), and the keys as last seen, for an outage. `PostgresStore`
(gateway/store/postgres/store.py) delegates its key and learned-limit methods here.
"""

from __future__ import annotations

import contextlib
import time
from collections import OrderedDict
from typing import Any

from gateway.errors import RecordsUnavailable
from gateway.store.health_rows import SELECT_EVENTS, SELECT_HEALTH, insert_event, upsert_health
from gateway.store.postgres.link import PostgresLink
from gateway.store.rows import KEY_COLUMNS, Row, insert_key, load_key

KNOWN_KEYS = 1024  # keys remembered as last seen, for an outage


class PostgresKeysAndLimits:
    """Gateway keys (only the SHA-256 of a key is ever stored), and the context windows and
    cooldowns learned from providers, in the database the link reaches."""

    def __init__(self, link: PostgresLink) -> None:
        self.link = link
        # Keys as last seen, newest last, for an outage (`key_by_digest`).
        self._known_keys: OrderedDict[str, Row] = OrderedDict()

    # Gateway keys.

    async def add_key(self, key: Row) -> bool:
        sql, values = insert_key(key, "%s")
        async with self.link.connection() as db:
            added = await db.execute(sql + " ON CONFLICT DO NOTHING", values)
            return added.rowcount == 1

    async def keys(self) -> list[Row]:
        return await self._select_keys("TRUE", ())

    async def key_by_digest(self, digest: str) -> Row | None:
        """Asked on every keyed request, and never cached: a revoked key is refused at once.
        Only while PostgreSQL cannot be reached is a key taken as last seen here (nobody can
        revoke one meanwhile; a key never seen is a 503), so panels are still answered."""
        try:
            found = await self._select_keys("digest = %s AND revoked IS NULL", (digest,))
        except RecordsUnavailable:
            if digest in self._known_keys:
                return self._known_keys[digest]
            raise
        if not found:
            self._known_keys.pop(digest, None)
            return None
        self._known_keys[digest] = found[0]
        self._known_keys.move_to_end(digest)
        if len(self._known_keys) > KNOWN_KEYS:
            self._known_keys.popitem(last=False)
        return found[0]

    async def _select_keys(self, where: str, args: tuple[Any, ...]) -> list[Row]:
        rows = await self.link.fetch(
            f"SELECT {KEY_COLUMNS} FROM gateway_keys WHERE {where} ORDER BY created", args
        )
        return [load_key(r) for r in rows]

    async def revoke_key(self, name: str) -> bool:
        async with self.link.connection() as db:
            revoked = await db.execute(
                "UPDATE gateway_keys SET revoked = %s WHERE name = %s AND revoked IS NULL",
                (time.time(), name),
            )
            return revoked.rowcount > 0

    async def touch_key(self, name: str, when: float) -> None:
        """Best effort: while PostgreSQL cannot be reached (`/healthz` says so), a key's last
        use is not updated, and its request is served all the same."""
        with contextlib.suppress(RecordsUnavailable):
            await self.link.execute(
                "UPDATE gateway_keys SET last_used = %s WHERE name = %s", (when, name)
            )

    # Context windows and limits learned from providers.

    async def learn_window(self, alias: str, window: int) -> None:
        await self.link.execute(
            "INSERT INTO learned_windows VALUES (%s, %s, %s) ON CONFLICT (alias) DO UPDATE SET "
            "context_window = LEAST(learned_windows.context_window, excluded.context_window), "
            "learned = excluded.learned",
            (alias, window, time.time()),
        )

    async def learned_windows(self) -> dict[str, int]:
        rows = await self.link.fetch("SELECT alias, context_window FROM learned_windows", ())
        return {r["alias"]: r["context_window"] for r in rows}

    async def learn_limit(self, limit: Row) -> None:
        await self.link.execute(
            "INSERT INTO learned_limits VALUES (%s, %s, %s, %s, %s) ON CONFLICT (alias) DO UPDATE "
            "SET until = excluded.until, why = excluded.why, source = excluded.source, "
            "learned = excluded.learned",
            (limit["alias"], limit["until"], limit["why"], limit["source"], time.time()),
        )

    async def learned_limits(self, now: float) -> list[Row]:
        return await self.link.fetch(
            "SELECT alias, until, why, source FROM learned_limits WHERE until > %s", (now,)
        )

    # Model health (contract §18): each model's record, and its changes as events.

    async def keep_health(self, row: Row, event: Row | None) -> None:
        async with self.link.connection() as db, db.transaction():
            await db.execute(*upsert_health(row, "%s"))
            if event is not None:
                await db.execute(*insert_event(event, "%s"))

    async def health_rows(self) -> tuple[list[Row], list[Row]]:
        return await self.link.fetch(SELECT_HEALTH, ()), await self.link.fetch(SELECT_EVENTS, ())
