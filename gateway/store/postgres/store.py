"""The record store on PostgreSQL, for several gateway replicas sharing one set of records.

`PostgresStore` keeps the `SqliteStore`'s meaning row for row (the same tables, JSON fields as
text, verdicts with their history, owner-scoped reads); only the engine changes. It holds its
two parts rather than inheriting them:
- `link`, a `PostgresLink` (gateway/store/postgres/link.py): the pool, opening and closing, the
  batched seat rows kept on disk through an outage, and the way a read turns one into a 503;
- `keys_and_limits`, a `PostgresKeysAndLimits` (gateway/store/postgres/keys.py): gateway keys, and
  the context windows and cooldowns learned from providers, handed the same link.
The queries on the records are here, run through the link (`link.connection`, `link.fetch`).
Every `RecordStore` method is defined here (the parts' as one-line delegations), so each is
found from the store.
"""

from __future__ import annotations

from psycopg import AsyncConnection

from gateway.health import Health
from gateway.store.interface import CALL_FIELDS, PANEL_FIELDS
from gateway.store.postgres import pages as pg_pages
from gateway.store.postgres.keys import PostgresKeysAndLimits
from gateway.store.postgres.link import POOL_SIZE, PostgresLink
from gateway.store.postgres.writes import GATHER_S, PATIENCE
from gateway.store.rows import (
    CURRENT_VERDICT,
    Row,
    insert_verdict,
    load,
    load_verdict,
    prune_verdicts,
    repeats,
)
from gateway.store.spill import Spill

_CALL_COLUMNS = ", ".join(f'c."{name}"' for name in CALL_FIELDS)
_PANEL_COLUMNS = ", ".join(f'"{name}"' for name in PANEL_FIELDS)


class PostgresStore:
    """The records' queries, with the link (`link`: the pool and seat writes) they run through
    and the keys and learned limits (`keys_and_limits`) beside them."""

    def __init__(
        self,
        url: str,
        pool_size: int = POOL_SIZE,
        *,
        spill: Spill | None = None,
        health: Health | None = None,
        patience: int = PATIENCE,
        gather_s: float = GATHER_S,
    ) -> None:
        """The link's arguments (PostgresLink says what each is for)."""
        self.link = PostgresLink(
            url, pool_size, spill=spill, health=health, patience=patience, gather_s=gather_s
        )
        self.keys_and_limits = PostgresKeysAndLimits(self.link)

    # Opening, closing and the batched rows: the link's.

    async def open(self) -> None:
        """Migrate, and write back rows spilled by a process that is gone (PostgresLink.open)."""
        await self.link.open()

    async def close(self) -> None:
        await self.link.close()

    def room(self) -> str | None:
        return self.link.room()

    async def add_panel(self, panel: Row) -> None:
        await self.link.add_panel(panel)

    async def add_call(self, call: Row) -> None:
        await self.link.add_call(call)

    # Verdicts: the call's row is locked while its current verdict is compared, so two verdicts
    # on one seat arriving on two replicas are written one after the other, as SQLite's are.

    async def record_verdict(
        self, verdict: Row, owner: str | None = None
    ) -> tuple[bool, Row | None] | None:
        """Store a verdict. None: unknown call (or not *owner*'s). Else (written, previous)."""
        async with self.link.connection() as db, db.transaction():
            found = await db.execute(
                "SELECT 1 FROM calls c JOIN panels p ON p.id = c.panel_id "
                "WHERE c.id = %s AND (%s::text IS NULL OR p.key_name = %s) FOR UPDATE OF c",
                (verdict["call"], owner, owner),
            )
            if await found.fetchone() is None:
                return None
            previous = await _current_verdict(db, verdict["call"])
            if repeats(verdict, previous):
                return False, previous
            await db.execute(*insert_verdict(verdict, previous, "%s"))
            await db.execute(*prune_verdicts(verdict["call"], "%s"))
            return True, previous

    # Reads by primary key, filtered by the panel's key name in the same indexed lookup.

    async def panel(self, panel_id: str, owner: str | None = None) -> Row | None:
        async with self.link.connection() as db:
            found = await db.execute(
                f"SELECT {_PANEL_COLUMNS} FROM panels "
                "WHERE id = %s AND (%s::text IS NULL OR key_name = %s)",
                (panel_id, owner, owner),
            )
            row = await found.fetchone()
            if row is None:
                return None
            panel = load(row)
            calls = await db.execute(
                f"SELECT {_CALL_COLUMNS} FROM calls c WHERE {pg_pages.seat_range('%s::text')} "
                "ORDER BY c.started, c.seq",
                (panel_id,) * 3,
            )
            panel["seats"] = [await _with_verdict(db, load(c)) for c in await calls.fetchall()]
            return panel

    async def call(self, call_id: str, owner: str | None = None) -> Row | None:
        async with self.link.connection() as db:
            found = await db.execute(
                f"SELECT {_CALL_COLUMNS}, p.collection AS collection FROM calls c "
                "JOIN panels p ON p.id = c.panel_id "
                "WHERE c.id = %s AND (%s::text IS NULL OR p.key_name = %s)",
                (call_id, owner, owner),
            )
            row = await found.fetchone()
            return None if row is None else await _with_verdict(db, load(row))

    async def verdict_states(self, call_ids: list[str], owner: str | None = None) -> dict[str, str]:
        """Each known call's state: pending (answered, unjudged), judged or unanswered."""
        async with self.link.connection() as db:
            found = await db.execute(
                "SELECT c.id, c.status, EXISTS (SELECT 1 FROM verdicts v WHERE v.call_id = c.id) "
                "AS judged FROM calls c JOIN panels p ON p.id = c.panel_id "
                "WHERE c.id = ANY(%s) AND (%s::text IS NULL OR p.key_name = %s)",
                (list(dict.fromkeys(call_ids)), owner, owner),
            )
            rows = await found.fetchall()
        states: dict[str, str] = {}
        for row in rows:
            judged, answered = row["judged"], row["status"] == "ok"
            states[row["id"]] = "judged" if judged else "pending" if answered else "unanswered"
        return states

    async def owed(self, owner: str | None = None, limit: int = 50) -> list[Row]:
        """The newest answered seats that no verdict judges yet (mergers aside)."""
        async with self.link.connection() as db:
            found = await db.execute(
                "SELECT c.id AS call, c.panel_id AS panel, c.seat, c.alias, c.finished, "
                "p.collection FROM calls c JOIN panels p ON p.id = c.panel_id "
                "WHERE c.status = 'ok' AND c.seat != 'merger' "
                "AND (%s::text IS NULL OR p.key_name = %s) "
                "AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.call_id = c.id) "
                "ORDER BY c.started DESC LIMIT %s",
                (owner, owner, limit),
            )
            return [dict(row) for row in await found.fetchall()]

    # The dashboard's reads (gateway/store/postgres/pages.py).

    async def panels_page(
        self, limit: int, before: str | None = None, owed: bool = False, owner: str | None = None
    ) -> Row:
        """Raises pages.UnknownCursor when *before* names no panel *owner* can see."""
        async with self.link.connection() as db:
            found = await pg_pages.panels_page(
                db, limit=limit, before=before, owed=owed, owner=owner
            )
            found["owed"], found["owed_capped"] = await pg_pages.owed_count(db, owner)
            return found

    async def change_marker(self) -> tuple[int, int, int]:
        async with self.link.connection() as db:
            return await pg_pages.change_marker(db)

    async def standings(self) -> Row:
        """Per alias: seated, answered, last seated; per (alias, shape): useful and judged, and
        how many of each were given blind."""
        async with self.link.connection() as db:
            seats = await db.execute(
                "SELECT alias, COUNT(*) AS seated, COUNT(*) FILTER (WHERE status = 'ok') "
                "AS answered, MAX(started) AS last_seated FROM calls WHERE seat != 'merger' "
                "GROUP BY alias"
            )
            verdicts = await db.execute(
                "SELECT c.alias, c.shape, SUM(v.useful) AS useful, COUNT(*) AS judged, "
                "SUM(v.blind) AS blind_judged, SUM(v.useful * v.blind) AS blind_useful "
                "FROM verdicts v JOIN calls c ON c.id = v.call_id "
                "WHERE v.id IN (SELECT MAX(id) FROM verdicts GROUP BY call_id) "
                "GROUP BY c.alias, c.shape"
            )
            return {"seats": await seats.fetchall(), "verdicts": await verdicts.fetchall()}

    # Gateway keys, learned context windows and cooldowns: the keys_and_limits'.

    async def add_key(self, key: Row) -> bool:
        return await self.keys_and_limits.add_key(key)

    async def keys(self) -> list[Row]:
        return await self.keys_and_limits.keys()

    async def key_by_digest(self, digest: str) -> Row | None:
        """Never cached; during an outage, as last seen (PostgresKeysAndLimits.key_by_digest)."""
        return await self.keys_and_limits.key_by_digest(digest)

    async def revoke_key(self, name: str) -> bool:
        return await self.keys_and_limits.revoke_key(name)

    async def touch_key(self, name: str, when: float) -> None:
        """Best effort: skipped while PostgreSQL cannot be reached."""
        await self.keys_and_limits.touch_key(name, when)

    async def learn_window(self, alias: str, window: int) -> None:
        await self.keys_and_limits.learn_window(alias, window)

    async def learned_windows(self) -> dict[str, int]:
        return await self.keys_and_limits.learned_windows()

    async def learn_limit(self, limit: Row) -> None:
        await self.keys_and_limits.learn_limit(limit)

    async def keep_health(self, row: Row, event: Row | None) -> None:
        await self.keys_and_limits.keep_health(row, event)

    async def health_rows(self) -> tuple[list[Row], list[Row]]:
        return await self.keys_and_limits.health_rows()

    async def learned_limits(self, now: float) -> list[Row]:
        return await self.keys_and_limits.learned_limits(now)

    # The usage, read from the calls themselves.

    async def day_counts(self, since: float) -> list[Row]:
        """Calls started since *since* (the day's start), per model and connection."""
        return await self.link.fetch(
            "SELECT alias, connection, COUNT(*) AS calls FROM calls "
            "WHERE started >= %s AND status != 'cooling' GROUP BY alias, connection",
            (since,),
        )

    async def usage(
        self, start: float, end: float, time_zone: str, owner: str | None = None
    ) -> list[Row]:
        """Calls, tokens in/out and errors per day (in *time_zone*), model, connection and key."""
        return await self.link.fetch(
            "SELECT to_char(to_timestamp(c.started) AT TIME ZONE %s, 'YYYY-MM-DD') AS day, "
            "c.alias, c.connection, p.key_name AS key, COUNT(*) AS calls, "
            "COALESCE(SUM(c.tokens_in), 0)::bigint AS tokens_in, "
            "COALESCE(SUM(c.tokens_out), 0)::bigint AS tokens_out, "
            "COUNT(*) FILTER (WHERE c.status NOT IN ('ok', 'empty')) AS errors "
            "FROM calls c JOIN panels p ON p.id = c.panel_id "
            "WHERE c.started >= %s AND c.started < %s AND c.status != 'cooling' "
            "AND (%s::text IS NULL OR p.key_name = %s) "
            'GROUP BY 1, c.alias, c.connection, p.key_name ORDER BY 1, c.alias COLLATE "C", '
            'c.connection COLLATE "C", p.key_name COLLATE "C"',
            (time_zone, start, end, owner, owner),
        )


async def _current_verdict(db: AsyncConnection[Row], call_id: str) -> Row | None:
    found = await db.execute(
        CURRENT_VERDICT + "WHERE call_id = %s ORDER BY id DESC LIMIT 1",
        (call_id,),
    )
    row = await found.fetchone()
    return None if row is None else load_verdict(row)


async def _with_verdict(db: AsyncConnection[Row], call: Row) -> Row:
    call["verdict"] = await _current_verdict(db, call["id"])
    return call
