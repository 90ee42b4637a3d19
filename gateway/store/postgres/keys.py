"""What the PostgreSQL store keeps besides the records: gateway keys (`PostgresKeys`, a
`KeyStore`), and the context windows and rate limits learned from providers, kept across restarts
and shared by every replica (`PostgresLimits`, a `LimitStore`).

Both are parts of `PostgresStore` (store.py), which is each of them: they use only its `link`
(link.py), through which they run their statements (gateway/store/statements.py:
`link.connection`, `link.execute`, `link.fetch`), and which keeps the keys as last seen, for an
outage.
"""

from __future__ import annotations

import contextlib
import time

from gateway.errors import RecordsUnavailable
from gateway.store.health_rows import (
    SELECT_EVENTS,
    SELECT_HEALTH,
    insert_event,
    news,
    stored_health,
    upsert_health,
)
from gateway.store.postgres.link import PostgresLink
from gateway.store.rows import Row, key_values, load_key
from gateway.store.statements import POSTGRES as SQL

KNOWN_KEYS = 1024  # keys remembered as last seen, for an outage


LOCK_HEALTH = "SELECT pg_advisory_xact_lock(hashtext(%s))"


class PostgresKeys:
    """Gateway keys in the database the link reaches."""

    link: PostgresLink

    async def add_key(self, key: Row) -> bool:
        async with self.link.connection() as db:
            added = await db.execute(SQL.insert_key, key_values(key))
            return added.rowcount == 1

    async def keys(self) -> list[Row]:
        return [load_key(r) for r in await self.link.fetch(SQL.keys, ())]

    async def key_by_digest(self, digest: str) -> Row | None:
        """Asked on every keyed request, and never cached: a revoked key is refused at once.
        Only while PostgreSQL cannot be reached is a key taken as last seen (nobody can revoke
        one meanwhile; a key never seen is a 503), so panels are still answered."""
        known = self.link.known_keys
        try:
            found = await self.link.fetch(SQL.key_by_digest, (digest,))
        except RecordsUnavailable:
            if digest in known:
                return known[digest]
            raise
        if not found:
            known.pop(digest, None)
            return None
        known[digest] = key = load_key(found[0])
        known.move_to_end(digest)
        if len(known) > KNOWN_KEYS:
            known.popitem(last=False)
        return key

    async def revoke_key(self, name: str) -> bool:
        async with self.link.connection() as db:
            revoked = await db.execute(SQL.revoke_key, (time.time(), name))
            return revoked.rowcount > 0

    async def touch_key(self, name: str, when: float) -> None:
        """Best effort: while PostgreSQL cannot be reached (`/healthz` says so), a key's last
        use is not updated, and its request is served all the same."""
        with contextlib.suppress(RecordsUnavailable):
            await self.link.execute(SQL.touch_key, (when, name))


class PostgresLimits:
    """Context windows and cooldowns learned from providers, in the database the link reaches;
    the usage is read from the calls themselves (PostgresStore.day_counts)."""

    link: PostgresLink

    async def learn_window(self, alias: str, window: int) -> None:
        await self.link.execute(SQL.learn_window, (alias, window, time.time()))

    async def learned_windows(self) -> dict[str, int]:
        rows = await self.link.fetch(SQL.learned_windows, ())
        return {r["alias"]: r["context_window"] for r in rows}

    async def learn_limit(self, limit: Row) -> None:
        values = (limit["alias"], limit["until"], limit["why"], limit["source"], time.time())
        await self.link.execute(SQL.learn_limit, values)

    async def learned_limits(self, now: float) -> list[Row]:
        return await self.link.fetch(SQL.learned_limits, (now,))

    # Model health (contract §18): each model's record, and its changes as events.

    async def keep_health(self, row: Row, event: Row | None) -> None:
        async with self.link.connection() as db, db.transaction():
            # one change at a time per model, across replicas (a row not yet kept has no lock)
            await db.execute(LOCK_HEALTH, (f"health:{row['alias']}",))
            stored = await (await db.execute(stored_health("%s"), (row["alias"],))).fetchone()
            await db.execute(*upsert_health(row, "%s"))
            if event is not None and news(event, stored):
                await db.execute(*insert_event(event, "%s"))

    async def health_rows(self) -> tuple[list[Row], list[Row]]:
        return await self.link.fetch(SELECT_HEALTH, ()), await self.link.fetch(SELECT_EVENTS, ())
