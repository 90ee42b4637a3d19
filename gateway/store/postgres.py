"""The record store on PostgreSQL, for several gateway replicas sharing one set of records.

`PostgresStore` keeps the `SqliteStore`'s meaning row for row (the same tables, JSON fields as
text, verdicts with their history, owner-scoped reads); only the engine changes. psycopg 3 talks
to it asynchronously from a small pool, so the event loop never waits on the network. Seat rows
are batched as SQLite's are: writes arriving while a batch is in flight go in the next one, each
batch one short transaction, and each caller is answered once its own row is committed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from gateway.store import pg_pages
from gateway.store.pg_migrations import migrate
from gateway.store.protocol import CALL_FIELDS, PANEL_FIELDS

log = logging.getLogger("bench.records")

JSON_FIELDS = ("skipped", "notes", "reserves", "real", "false")
POOL_SIZE = 8  # per worker process; most requests need one connection for one statement

Row = dict[str, Any]
_Pending = tuple[str, Row, "asyncio.Future[None]"]


def insert_sql(table: str, fields: tuple[str, ...], *, skip_existing: bool = False) -> str:
    names = ", ".join(f'"{name}"' for name in fields)
    sql = f"INSERT INTO {table} ({names}) VALUES ({', '.join(['%s'] * len(fields))})"
    return sql + (" ON CONFLICT DO NOTHING" if skip_existing else "")


_INSERTS = {"panels": insert_sql("panels", PANEL_FIELDS), "calls": insert_sql("calls", CALL_FIELDS)}
_FIELDS = {"panels": PANEL_FIELDS, "calls": CALL_FIELDS}
_CALL_COLUMNS = ", ".join(f'c."{name}"' for name in CALL_FIELDS)
_PANEL_COLUMNS = ", ".join(f'"{name}"' for name in PANEL_FIELDS)
_KEY_COLUMNS = "name, digest, last4, collections, rpm, created, last_used, revoked"


class PostgresStore:
    def __init__(self, url: str, pool_size: int = POOL_SIZE) -> None:
        self.url = url
        self.pool: AsyncConnectionPool[AsyncConnection[Row]] = AsyncConnectionPool(
            url,
            connection_class=AsyncConnection[Row],
            min_size=1,
            max_size=pool_size,
            open=False,
            kwargs={"autocommit": True, "row_factory": dict_row},
        )
        self._pending: list[_Pending] = []
        self._flusher: asyncio.Task[None] | None = None

    async def open(self) -> None:
        await self.pool.open(wait=True)
        async with self.pool.connection() as db:
            await migrate(db)

    async def close(self) -> None:
        if self._flusher is not None:
            await asyncio.gather(self._flusher, return_exceptions=True)
        await self.pool.close()

    # Batched writes of panel and seat rows.

    async def add_panel(self, panel: Row) -> None:
        await self._write("panels", panel)

    async def add_call(self, call: Row) -> None:
        await self._write("calls", call)

    async def _write(self, table: str, row: Row) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((table, row, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        # a caller giving up (its request cancelled) does not cancel the batch it is in
        await asyncio.shield(done)

    async def _flush(self) -> None:
        """Write what is pending, a transaction a batch, until none is. Every write taken is
        answered, whatever goes wrong, or its writer would wait forever."""
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                outcomes = await self._insert_batch(batch)
            except BaseException as exc:  # not a bad row: the writer itself broke
                outcomes = [exc] * len(batch)
                if not isinstance(exc, Exception):
                    _settle(batch, outcomes)
                    raise
            _settle(batch, outcomes)

    async def _insert_batch(self, batch: list[_Pending]) -> list[BaseException | None]:
        """One transaction for the batch; if it fails, each row alone, so only a bad row fails."""
        try:
            await self._insert_all(batch)
        except Exception:
            return [await self._insert_one(item) for item in batch]
        return [None] * len(batch)

    async def _insert_all(self, batch: list[_Pending]) -> None:
        async with self.pool.connection() as db, db.transaction(), db.cursor() as cursor:
            # consecutive rows of one table go in one executemany (one pipelined round trip)
            start = 0
            while start < len(batch):
                table = batch[start][0]
                end = start
                while end < len(batch) and batch[end][0] == table:
                    end += 1
                rows = [_values(table, row) for _, row, _ in batch[start:end]]
                await cursor.executemany(_INSERTS[table].encode(), rows)
                start = end

    async def _insert_one(self, item: _Pending) -> BaseException | None:
        try:
            await self._insert_all([item])
        except Exception as exc:
            log.error("could not write a row to %s: %s: %s", item[0], type(exc).__name__, exc)
            return exc
        return None

    # Verdicts: the call's row is locked while its current verdict is compared, so two verdicts
    # on one seat arriving on two replicas are written one after the other, as SQLite's are.

    async def record_verdict(
        self, verdict: Row, owner: str | None = None
    ) -> tuple[bool, Row | None] | None:
        """Store a verdict. None: unknown call (or not *owner*'s). Else (written, previous)."""
        async with self.pool.connection() as db, db.transaction():
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
        async with self.pool.connection() as db:
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
                f"SELECT {_CALL_COLUMNS} FROM calls c WHERE c.panel_id = %s "
                "ORDER BY c.started, c.seq",
                (panel_id,),
            )
            panel["seats"] = [await _with_verdict(db, load(c)) for c in await calls.fetchall()]
            return panel

    async def call(self, call_id: str, owner: str | None = None) -> Row | None:
        async with self.pool.connection() as db:
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
        async with self.pool.connection() as db:
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
        async with self.pool.connection() as db:
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
        async with self.pool.connection() as db:
            found = await pg_pages.panels_page(
                db, limit=limit, before=before, owed=owed, owner=owner
            )
            found["owed"], found["owed_capped"] = await pg_pages.owed_count(db, owner)
            return found

    async def change_marker(self) -> tuple[int, int, int]:
        async with self.pool.connection() as db:
            return await pg_pages.change_marker(db)

    async def standings(self) -> Row:
        """Per alias: seated, answered, last seated; per (alias, shape): useful and judged."""
        async with self.pool.connection() as db:
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
        async with self.pool.connection() as db:
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
        """Asked on every keyed request, and never cached: a revoked key is refused at once."""
        found = await self._select_keys("digest = %s AND revoked IS NULL", (digest,))
        return found[0] if found else None

    async def _select_keys(self, where: str, args: tuple[Any, ...]) -> list[Row]:
        async with self.pool.connection() as db:
            rows = await db.execute(
                f"SELECT {_KEY_COLUMNS} FROM gateway_keys WHERE {where} ORDER BY created".encode(),
                args,
            )
            return [_key(r) for r in await rows.fetchall()]

    async def revoke_key(self, name: str) -> bool:
        async with self.pool.connection() as db:
            revoked = await db.execute(
                "UPDATE gateway_keys SET revoked = %s WHERE name = %s AND revoked IS NULL",
                (time.time(), name),
            )
            return revoked.rowcount > 0

    async def touch_key(self, name: str, when: float) -> None:
        await self._execute("UPDATE gateway_keys SET last_used = %s WHERE name = %s", (when, name))

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
        async with self.pool.connection() as db:
            await db.execute(sql.encode(), args)

    async def _fetch(self, sql: str, args: tuple[Any, ...]) -> list[Row]:
        async with self.pool.connection() as db:
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


def _settle(batch: list[_Pending], outcomes: list[BaseException | None]) -> None:
    for (_, _, future), outcome in zip(batch, outcomes, strict=True):
        if future.done():
            continue
        if outcome is None:
            future.set_result(None)
        else:
            future.set_exception(outcome)


def _values(table: str, row: Row) -> list[Any]:
    return [dump(name, row.get(name)) for name in _FIELDS[table]]


def dump(name: str, value: Any) -> Any:
    return json.dumps(value) if name in JSON_FIELDS and value is not None else value


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
