"""The record store on PostgreSQL, for several gateway replicas sharing one set of records.

`PostgresStore` keeps the `SqliteStore`'s meaning row for row (the same tables, JSON fields as
text, verdicts with their history, owner-scoped reads, the same statements:
gateway/store/statements.py); only the engine changes. It holds `link`, a `PostgresLink`
(link.py): the pool, opening and closing, the batched seat rows kept on disk through an outage,
and the way a read turns one into a 503. It is its keys (`PostgresKeys`, a `KeyStore`) and its
learned limits (`PostgresLimits`, a `LimitStore`): parts of its own (keys.py), using that same
link. The queries on the records are here, run through the link (`link.connection`,
`link.fetch`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from psycopg import AsyncConnection

from gateway.health import Health
from gateway.store import pages
from gateway.store.postgres.keys import PostgresKeys, PostgresLimits
from gateway.store.postgres.link import POOL_SIZE, PostgresLink
from gateway.store.postgres.suite import PostgresSuite
from gateway.store.postgres.writes import GATHER_S, PATIENCE
from gateway.store.rows import (
    Row,
    call_row,
    load,
    load_verdict,
    panel_row,
    repeats,
    verdict_state,
    verdict_values,
)
from gateway.store.spill import Spill
from gateway.store.statements import POSTGRES as SQL
from gateway.store.statements import VERDICTS_KEPT


class PostgresStore(PostgresKeys, PostgresLimits, PostgresSuite):
    """The records' queries, with the link (`link`: the pool and seat writes) they run through;
    keys and learned limits are its parts (keys.py)."""

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

    async def open(self) -> None:
        """Migrate, and write back rows spilled by a process that is gone (PostgresLink.open)."""
        await self.link.open()

    async def close(self) -> None:
        await self.link.close()

    def room(self) -> str | None:
        return self.link.room()

    async def add_panel(self, panel: Mapping[str, Any]) -> None:
        await self.link.writes.write("panels", panel_row(panel))

    async def add_call(self, call: Mapping[str, Any]) -> None:
        await self.link.writes.write("calls", call_row(call))

    # Verdicts: the call's row is locked while its current verdict is compared, so two verdicts
    # on one seat arriving on two replicas are written one after the other, as SQLite's are.

    async def record_verdict(
        self, verdict: Row, owner: str | None = None
    ) -> tuple[bool, Row | None] | None:
        """Store a verdict. None: unknown call (or not *owner*'s). Else (written, previous)."""
        async with self.link.connection() as db, db.transaction():
            found = await db.execute(SQL.owned_call, (verdict["call"], owner, owner))
            if await found.fetchone() is None:
                return None
            previous = await _current_verdict(db, verdict["call"])
            if repeats(verdict, previous):
                return False, previous
            await db.execute(SQL.insert_verdict, verdict_values(verdict, previous))
            await db.execute(SQL.prune_verdicts, (verdict["call"], verdict["call"], VERDICTS_KEPT))
            return True, previous

    # Reads by primary key, filtered by the panel's key name in the same indexed lookup.

    async def panel(self, panel_id: str, owner: str | None = None) -> Row | None:
        async with self.link.connection() as db:
            found = await db.execute(SQL.panel, (panel_id, owner, owner))
            row = await found.fetchone()
            if row is None:
                return None
            panel = load(row)
            calls = await db.execute(SQL.seats, (panel_id,) * 3)
            panel["seats"] = [await _with_verdict(db, load(c)) for c in await calls.fetchall()]
            return panel

    async def call(self, call_id: str, owner: str | None = None) -> Row | None:
        async with self.link.connection() as db:
            found = await db.execute(SQL.call, (call_id, owner, owner))
            row = await found.fetchone()
            return None if row is None else await _with_verdict(db, load(row))

    async def verdict_states(self, call_ids: list[str], owner: str | None = None) -> dict[str, str]:
        """Each known call's state: pending (answered, unjudged), judged or unanswered."""
        wanted = SQL.dialect.ids(list(dict.fromkeys(call_ids)))
        rows = await self.link.fetch(SQL.verdict_states(1), (*wanted, owner, owner))
        return {row["id"]: verdict_state(row) for row in rows}

    async def owed(self, owner: str | None = None, limit: int = 50) -> list[Row]:
        """The newest answered seats that no verdict judges yet (mergers aside)."""
        return await self.link.fetch(SQL.owed, (owner, owner, limit))

    # The dashboard's reads (gateway/store/pages.py says why each stays fast).

    async def panels_page(
        self, limit: int, before: str | None = None, owed: bool = False, owner: str | None = None
    ) -> Row:
        """Raises pages.UnknownCursor when *before* names no panel *owner* can see."""
        async with self.link.connection() as db:
            cursor = None
            if before is not None:
                cursor = await (await db.execute(SQL.cursor, (before, owner, owner))).fetchone()
                if cursor is None:
                    raise pages.UnknownCursor(before)
            sql, args = pages.page_query(SQL, limit=limit, cursor=cursor, owed=owed, owner=owner)
            panels = await (await db.execute(sql.encode(), args)).fetchall()
            ids = [row["id"] for row in panels[:limit]]
            seats = []
            if ids:
                sql = SQL.seats_of(len(ids))
                seats = await (await db.execute(sql.encode(), SQL.dialect.ids(ids))).fetchall()
            found = pages.page(panels, seats, limit)
            horizon = [] if owner is None else [owner]
            sql = SQL.owed_count(owner is not None)
            counted = await db.execute(sql.encode(), [*horizon, pages.OWED_HORIZON])
            row = await counted.fetchone()
            assert row is not None
            found["owed"], found["owed_capped"] = pages.owed(row)
            return found

    async def change_marker(self) -> tuple[int, int, int]:
        """What a dashboard compares to know something new was written: the newest panel, seat
        and verdict rows."""
        (row,) = await self.link.fetch(SQL.change_marker, ())
        return (row["panels"] or 0, row["calls"] or 0, row["verdicts"] or 0)

    async def standings(self) -> Row:
        """Per alias: seated, answered, last seated; per (alias, shape): useful and judged, and
        how many of each were given blind."""
        async with self.link.connection() as db:
            seats = await db.execute(SQL.seated)
            verdicts = await db.execute(SQL.judged)
            return {"seats": await seats.fetchall(), "verdicts": await verdicts.fetchall()}

    # The usage, read from the calls themselves.

    async def day_counts(self, since: float) -> list[Row]:
        """Calls started since *since* (the day's start), per model and connection."""
        return await self.link.fetch(SQL.day_counts, (since,))

    async def usage(
        self, start: float, end: float, time_zone: str, owner: str | None = None
    ) -> list[Row]:
        """Calls, tokens in/out and errors per day (in *time_zone*), model, connection and key."""
        return await self.link.fetch(SQL.usage, (time_zone, start, end, owner, owner))


async def _current_verdict(db: AsyncConnection[Row], call_id: str) -> Row | None:
    row = await (await db.execute(SQL.current_verdict, (call_id,))).fetchone()
    return None if row is None else load_verdict(row)


async def _with_verdict(db: AsyncConnection[Row], call: Row) -> Row:
    call["verdict"] = await _current_verdict(db, call["id"])
    return call
