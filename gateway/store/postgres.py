"""The record store on PostgreSQL, for several gateway replicas sharing one set of records.

`PostgresStore` keeps the `SqliteStore`'s meaning row for row (the same tables, JSON fields as
text, verdicts with their history, owner-scoped reads); only the engine changes. psycopg 3 talks
to it asynchronously from a small pool, so the event loop never waits on the network. Panel and
seat rows are batched, and kept on local disk while PostgreSQL is down (gateway/store/pg_writes.py);
everything else needs PostgreSQL, and while it cannot be reached is a 503 (RecordsUnavailable)
after WAIT_S at most, never a hang or a 500.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from gateway.errors import RecordsUnavailable
from gateway.health import Health
from gateway.store import pg_pages
from gateway.store.pg_migrations import migrate
from gateway.store.pg_writes import (
    GATHER_S,
    JSON_FIELDS,
    PATIENCE,
    WAIT_S,
    SeatWrites,
    dump,
    unavailable,
)
from gateway.store.protocol import CALL_FIELDS, PANEL_FIELDS
from gateway.store.spill import Spill

POOL_SIZE = 8  # per worker process; most requests need one connection for one statement
KNOWN_KEYS = 1024  # keys remembered as last seen, for an outage
# libpq: give up connecting after 5 s, and on a connection whose sent data goes unacknowledged
# for 10 s (a network gone, not a server that is slow), rather than wait for TCP's minutes
CONNECTING: dict[str, Any] = {"connect_timeout": 5, "tcp_user_timeout": 10_000}

Row = dict[str, Any]

_CALL_COLUMNS = ", ".join(f'c."{name}"' for name in CALL_FIELDS)
_PANEL_COLUMNS = ", ".join(f'"{name}"' for name in PANEL_FIELDS)
_KEY_COLUMNS = "name, digest, last4, collections, rpm, created, last_used, revoked"


class PostgresStore:
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
        spilled seat waits for its panel (pg_writes.PATIENCE); *gather_s*: how long the first
        row of a batch waits for more (pg_writes.GATHER_S)."""
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
        self._known_keys: OrderedDict[str, Row] = OrderedDict()

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
    async def _connection(self) -> AsyncIterator[AsyncConnection[Row]]:
        """A pooled connection; PostgreSQL unreachable is a 503 after WAIT_S at most."""
        try:
            async with self.pool.connection() as db:
                yield db
        except psycopg.OperationalError as exc:
            self.writes.noticed(exc)
            raise unavailable() from exc

    # Batched writes of panel and seat rows (gateway/store/pg_writes.py).

    async def add_panel(self, panel: Row) -> None:
        await self.writes.write("panels", panel)

    async def add_call(self, call: Row) -> None:
        await self.writes.write("calls", call)

    # Verdicts: the call's row is locked while its current verdict is compared, so two verdicts
    # on one seat arriving on two replicas are written one after the other, as SQLite's are.

    async def record_verdict(
        self, verdict: Row, owner: str | None = None
    ) -> tuple[bool, Row | None] | None:
        """Store a verdict. None: unknown call (or not *owner*'s). Else (written, previous)."""
        async with self._connection() as db, db.transaction():
            found = await db.execute(
                "SELECT 1 FROM calls c JOIN panels p ON p.id = c.panel_id "
                "WHERE c.id = %s AND (%s::text IS NULL OR p.key_name = %s) FOR UPDATE OF c",
                (verdict["call"], owner, owner),
            )
            if await found.fetchone() is None:
                return None
            previous = await _current_verdict(db, verdict["call"])
            fresh = {k: verdict.get(k) for k in ("useful", "note", "real", "false")}
            if previous is not None and {k: previous[k] for k in fresh} == fresh:
                return False, previous
            await db.execute(
                'INSERT INTO verdicts (call_id, useful, note, "real", "false", created, key_name) '
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    verdict["call"],
                    int(bool(verdict["useful"])),
                    verdict.get("note"),
                    dump("real", verdict.get("real")),
                    dump("false", verdict.get("false")),
                    time.time(),
                    verdict.get("key_name"),
                ),
            )
            return True, previous

    # Reads by primary key, filtered by the panel's key name in the same indexed lookup.

    async def panel(self, panel_id: str, owner: str | None = None) -> Row | None:
        async with self._connection() as db:
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
        async with self._connection() as db:
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
        async with self._connection() as db:
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
        async with self._connection() as db:
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

    # The dashboard's reads (gateway/store/pg_pages.py).

    async def panels_page(
        self, limit: int, before: str | None = None, owed: bool = False, owner: str | None = None
    ) -> Row:
        """Raises pages.UnknownCursor when *before* names no panel *owner* can see."""
        async with self._connection() as db:
            found = await pg_pages.panels_page(
                db, limit=limit, before=before, owed=owed, owner=owner
            )
            found["owed"], found["owed_capped"] = await pg_pages.owed_count(db, owner)
            return found

    async def change_marker(self) -> tuple[int, int, int]:
        async with self._connection() as db:
            return await pg_pages.change_marker(db)

    async def standings(self) -> Row:
        """Per alias: seated, answered, last seated; per (alias, shape): useful and judged."""
        async with self._connection() as db:
            seats = await db.execute(
                "SELECT alias, COUNT(*) AS seated, COUNT(*) FILTER (WHERE status = 'ok') "
                "AS answered, MAX(started) AS last_seated FROM calls WHERE seat != 'merger' "
                "GROUP BY alias"
            )
            verdicts = await db.execute(
                "SELECT c.alias, c.shape, SUM(v.useful) AS useful, COUNT(*) AS judged "
                "FROM verdicts v JOIN calls c ON c.id = v.call_id "
                "WHERE v.id IN (SELECT MAX(id) FROM verdicts GROUP BY call_id) "
                "GROUP BY c.alias, c.shape"
            )
            return {"seats": await seats.fetchall(), "verdicts": await verdicts.fetchall()}

    # Gateway keys: only the SHA-256 of a key is ever stored.

    async def add_key(self, key: Row) -> bool:
        async with self._connection() as db:
            added = await db.execute(
                "INSERT INTO gateway_keys (name, digest, last4, collections, rpm, created) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (
                    key["name"],
                    key["digest"],
                    key["last4"],
                    None if key["collections"] is None else json.dumps(key["collections"]),
                    key["rpm"],
                    key["created"],
                ),
            )
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
        async with self._connection() as db:
            rows = await db.execute(
                f"SELECT {_KEY_COLUMNS} FROM gateway_keys WHERE {where} ORDER BY created".encode(),
                args,
            )
            return [_key(r) for r in await rows.fetchall()]

    async def revoke_key(self, name: str) -> bool:
        async with self._connection() as db:
            revoked = await db.execute(
                "UPDATE gateway_keys SET revoked = %s WHERE name = %s AND revoked IS NULL",
                (time.time(), name),
            )
            return revoked.rowcount > 0

    async def touch_key(self, name: str, when: float) -> None:
        """Best effort: while PostgreSQL cannot be reached (`/healthz` says so), a key's last
        use is not updated, and its request is served all the same."""
        with contextlib.suppress(RecordsUnavailable):
            await self._execute(
                "UPDATE gateway_keys SET last_used = %s WHERE name = %s", (when, name)
            )

    # Context windows and limits learned from providers.

    async def learn_window(self, alias: str, window: int) -> None:
        await self._execute(
            "INSERT INTO learned_windows VALUES (%s, %s, %s) ON CONFLICT (alias) DO UPDATE SET "
            "context_window = LEAST(learned_windows.context_window, excluded.context_window), "
            "learned = excluded.learned",
            (alias, window, time.time()),
        )

    async def learned_windows(self) -> dict[str, int]:
        rows = await self._fetch("SELECT alias, context_window FROM learned_windows", ())
        return {r["alias"]: r["context_window"] for r in rows}

    async def learn_limit(self, limit: Row) -> None:
        await self._execute(
            "INSERT INTO learned_limits VALUES (%s, %s, %s, %s, %s) ON CONFLICT (alias) DO UPDATE "
            "SET until = excluded.until, why = excluded.why, source = excluded.source, "
            "learned = excluded.learned",
            (limit["alias"], limit["until"], limit["why"], limit["source"], time.time()),
        )

    async def learned_limits(self, now: float) -> list[Row]:
        return await self._fetch(
            "SELECT alias, until, why, source FROM learned_limits WHERE until > %s", (now,)
        )

    async def day_counts(self, since: float) -> list[Row]:
        """Calls started since *since* (the day's start), per model and connection."""
        return await self._fetch(
            "SELECT alias, connection, COUNT(*) AS calls FROM calls "
            "WHERE started >= %s AND status != 'cooling' GROUP BY alias, connection",
            (since,),
        )

    async def usage(
        self, start: float, end: float, time_zone: str, owner: str | None = None
    ) -> list[Row]:
        """Calls, tokens in/out and errors per day (in *time_zone*), model, connection and key."""
        return await self._fetch(
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

    async def _execute(self, sql: str, args: tuple[Any, ...]) -> None:
        async with self._connection() as db:
            await db.execute(sql.encode(), args)

    async def _fetch(self, sql: str, args: tuple[Any, ...]) -> list[Row]:
        async with self._connection() as db:
            rows = await db.execute(sql.encode(), args)
            return await rows.fetchall()


async def _current_verdict(db: AsyncConnection[Row], call_id: str) -> Row | None:
    found = await db.execute(
        'SELECT useful, note, "real", "false", created FROM verdicts '
        "WHERE call_id = %s ORDER BY id DESC LIMIT 1",
        (call_id,),
    )
    row = await found.fetchone()
    if row is None:
        return None
    verdict = load(row)
    verdict["useful"] = bool(verdict["useful"])
    return verdict


async def _with_verdict(db: AsyncConnection[Row], call: Row) -> Row:
    call["verdict"] = await _current_verdict(db, call["id"])
    return call


def load(row: Row) -> Row:
    found = dict(row)
    for name in JSON_FIELDS:
        if isinstance(found.get(name), str):
            found[name] = json.loads(found[name])
    return found


def _key(row: Row) -> Row:
    found = dict(row)
    if found["collections"] is not None:
        found["collections"] = json.loads(found["collections"])
    return found
