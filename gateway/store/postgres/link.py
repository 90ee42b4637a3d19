"""The PostgreSQL store's link to its server: the pool, the seat rows' way in, and outages.

psycopg 3 talks to PostgreSQL asynchronously from a small pool, so the event loop never waits on
the network. Panel and seat rows are batched, and kept on local disk while PostgreSQL is down
(gateway/store/postgres/writes.py); everything else needs PostgreSQL, and while it cannot be reached
is a 503 (RecordsUnavailable) after WAIT_S at most, never a hang or a 500. `PostgresLink` is
held by the store (store.py), whose keys and learned limits (keys.py) run their queries through
it too (`connection`, `execute`, `fetch`), so every read goes through the one place that turns an
outage into a 503.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from gateway.health import Health
from gateway.store.postgres.migrations import migrate
from gateway.store.postgres.writes import GATHER_S, PATIENCE, WAIT_S, SeatWrites, unavailable
from gateway.store.rows import Row
from gateway.store.spill import Spill

POOL_SIZE = 8  # per worker process; most requests need one connection for one statement
# libpq: give up connecting after 5 s, and on a connection whose sent data goes unacknowledged
# for 10 s (a network gone, not a server that is slow), rather than wait for TCP's minutes
CONNECTING: dict[str, Any] = {"connect_timeout": 5, "tcp_user_timeout": 10_000}


class PostgresLink:
    """Opens and closes the store, lends a pooled connection to a read (`connection`, or
    `execute` and `fetch` for one statement), and holds the batched writes of panel and seat
    rows (`writes`, a `SeatWrites`). The queries live in the store and its parts."""

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
        """*spill*: where seat rows wait while PostgreSQL is down (none: they fail, as a
        command line's writes should); *health*: what `/healthz` is told; *patience*: tries a
        spilled seat waits for its panel (writes.PATIENCE); *gather_s*: how long the first
        row of a batch waits for more (writes.GATHER_S)."""
        self.url = url
        self.pool: AsyncConnectionPool[AsyncConnection[Row]] = AsyncConnectionPool(
            url,
            connection_class=AsyncConnection[Row],
            min_size=1,
            max_size=pool_size,
            open=False,
            timeout=WAIT_S,
            reconnect_timeout=10.0,  # give up on a slot soon, so a new try starts at once
            kwargs={"autocommit": True, "row_factory": dict_row, **CONNECTING},
        )
        self.writes = SeatWrites(self.pool, spill, health or Health(), patience, gather_s)
        # Keys as last seen, newest last, for an outage (keys.py: PostgresKeys.key_by_digest).
        self.known_keys: OrderedDict[str, Row] = OrderedDict()

    async def open(self) -> None:
        """Migrate, then write back rows spilled by a process that is gone, before serving.
        PostgreSQL unreachable: with a spill, the rows stay on disk and are written once it is
        back (the store reports `degraded`); without one, the error is raised."""
        await self.pool.open(wait=False)
        if self.writes.spill is not None:
            self.writes.spill.adopt()
        try:
            async with await AsyncConnection.connect(self.url, autocommit=True, **CONNECTING) as db:
                await migrate(db)
            self.writes.migrated = True
        except psycopg.OperationalError as exc:
            if self.writes.spill is None:
                raise
            self.writes.noticed(exc)
            return
        if self.writes.spill is not None and self.writes.spill.rows:
            await self.writes.catch_up()  # what is left, if anything, is retried meanwhile

    async def close(self) -> None:
        await self.writes.close()
        await self.pool.close()

    def room(self) -> str | None:
        return self.writes.room()

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection[Row]]:
        """A pooled connection; PostgreSQL unreachable is a 503 after WAIT_S at most."""
        try:
            async with self.pool.connection() as db:
                yield db
        except psycopg.OperationalError as exc:
            self.writes.noticed(exc)
            raise unavailable() from exc

    async def execute(self, sql: str, args: tuple[Any, ...]) -> None:
        """One statement on a pooled connection (as `connection`: a 503 while unreachable)."""
        async with self.connection() as db:
            await db.execute(sql.encode(), args)

    async def fetch(self, sql: str, args: tuple[Any, ...]) -> list[Row]:
        """One statement's rows (as `connection`: a 503 while unreachable)."""
        async with self.connection() as db:
            rows = await db.execute(sql.encode(), args)
            return await rows.fetchall()
