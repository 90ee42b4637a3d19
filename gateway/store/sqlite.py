"""The record store: every panel and every seat is a row, every verdict kept with its history.

`SqliteStore` is the default `RecordStore` (one file, WAL): panels, seats, verdicts, gateway keys
learned context windows and limits. SQLite calls are blocking, so they run on one dedicated writer
thread: the event loop never waits on the disk, and one thread owning the connection keeps
transactions short and serial.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar, cast
from zoneinfo import ZoneInfo

from gateway.store import pages
from gateway.store.migrations import migrate
from gateway.store.protocol import CALL_FIELDS, PANEL_FIELDS

log = logging.getLogger("bench.records")

_T = TypeVar("_T")
# A row waiting for the writer: table, fields, row, and the future its writer awaits
_Pending = tuple[str, tuple[str, ...], dict[str, Any], asyncio.Future[None]]

_JSON_FIELDS = ("skipped", "notes", "reserves", "real", "false", "failed_over")


class SqliteStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="records")
        self._db: sqlite3.Connection | None = None
        self._keys: sqlite3.Connection | None = None  # key lookups, on the event loop's thread
        # Rows waiting for the writer thread: seats finishing together are written in one
        # transaction, and each caller is answered only once its own row is committed.
        self._pending: list[_Pending] = []
        self._flushing = False
        self._lock = threading.Lock()

    async def _run(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def open(self) -> None:
        await self._run(self._open)

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The records hold prompts: the file is the owner's alone, and SQLite gives its -wal and
        # -shm files the same mode as the database file.
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA busy_timeout=10000")
        # Switching a new file to WAL takes a lock SQLite does not wait for: two workers opening
        # the same new store at once can get 'database is locked' here.
        _while_locked(db, "PRAGMA journal_mode=WAL", tries=50, pause_s=0.1)
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        migrate(db)
        self._db = db
        keys = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        keys.execute("PRAGMA busy_timeout=0")  # never wait on the loop: busy goes to the writer
        keys.execute("PRAGMA query_only=ON")
        keys.row_factory = sqlite3.Row
        self._keys = keys

    async def close(self) -> None:
        if self._keys is not None:
            self._keys.close()
            self._keys = None
        if self._db is not None:
            await self._run(self._db.close)
            self._db = None
        self._pool.shutdown(wait=True)

    def room(self) -> str | None:
        return None  # a local file takes every row at once: nothing waits

    async def add_panel(self, panel: dict[str, Any]) -> None:
        await self._write("panels", PANEL_FIELDS, panel)

    async def add_call(self, call: dict[str, Any]) -> None:
        await self._write("calls", CALL_FIELDS, call)

    async def _write(self, table: str, fields: tuple[str, ...], row: dict[str, Any]) -> None:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        with self._lock:
            self._pending.append((table, fields, row, done))
            start, self._flushing = not self._flushing, True
        if start:
            flushing = loop.run_in_executor(self._pool, self._flush, loop)
            flushing.add_done_callback(_log_failure)
        await done

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the writer thread: write what is pending, a transaction a batch, until none is.

        Every write taken is answered, whatever goes wrong: a writer waiting on a batch that was
        never answered would wait forever, and every write after it too."""
        batch: list[Any] = []
        try:
            while True:
                with self._lock:
                    batch, self._pending = self._pending, []
                    if not batch:
                        self._flushing = False
                        return
                outcomes = self._insert_batch(batch)
                loop.call_soon_threadsafe(_settle, [item[3] for item in batch], outcomes)
                batch = []
        except BaseException as exc:  # not a bad row: the writer itself broke
            with self._lock:
                batch, self._pending = [*batch, *self._pending], []
                self._flushing = False
            if batch:
                failed: list[BaseException | None] = [exc] * len(batch)
                loop.call_soon_threadsafe(_settle, [item[3] for item in batch], failed)
            raise

    def _insert_batch(self, batch: list[_Pending]) -> list[BaseException | None]:
        """One transaction for the batch; if it fails, each row alone, so only a bad row fails."""
        try:
            self._insert_all(batch)
        except Exception:
            return [self._insert_one(item) for item in batch]
        return [None] * len(batch)

    def _insert_all(self, batch: list[_Pending], tries: int = 20) -> None:
        """One transaction for the batch. It takes the write lock up front (BEGIN IMMEDIATE, which
        waits out another worker's writes for busy_timeout), and tries again for a while if the
        store stays locked: an answered seat is never dropped for a moment of contention."""
        db = self._db
        assert db is not None
        _while_locked(db, "BEGIN IMMEDIATE", tries=tries, pause_s=0.05)
        try:
            for table, fields, row, _ in batch:
                db.execute(_INSERTS[table], [_dump(name, row.get(name)) for name in fields])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _insert_one(self, item: _Pending) -> BaseException | None:
        try:
            self._insert_all([item])
        except Exception as exc:  # a value SQLite cannot bind raises more than sqlite3.Error
            log.error("could not write a row to %s: %s: %s", item[0], type(exc).__name__, exc)
            return exc
        return None

    async def record_verdict(
        self, verdict: dict[str, Any], owner: str | None = None
    ) -> tuple[bool, dict[str, Any] | None] | None:
        """Store a verdict. None: unknown call (or not *owner*'s). Else (written, previous)."""
        return await self._run(self._verdict, verdict, owner)

    def _verdict(
        self, verdict: dict[str, Any], owner: str | None
    ) -> tuple[bool, dict[str, Any] | None] | None:
        db = self._db
        assert db is not None
        found = db.execute(
            "SELECT 1 FROM calls c JOIN panels p ON p.id = c.panel_id "
            "WHERE c.id = ? AND (? IS NULL OR p.key_name = ?)",
            (verdict["call"], owner, owner),
        ).fetchone()
        if found is None:
            return None
        previous = self._current_verdict(verdict["call"])
        fresh = {k: verdict.get(k) for k in ("useful", "note", "real", "false")}
        if previous is not None and {k: previous[k] for k in fresh} == fresh:
            return False, previous
        db.execute(
            'INSERT INTO verdicts (call_id, useful, note, "real", "false", created, key_name) '
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                verdict["call"],
                int(bool(verdict["useful"])),
                verdict.get("note"),
                _dump("real", verdict.get("real")),
                _dump("false", verdict.get("false")),
                time.time(),
                verdict.get("key_name"),
            ),
        )
        return True, previous

    def _current_verdict(self, call_id: str) -> dict[str, Any] | None:
        assert self._db is not None
        row = self._db.execute(
            'SELECT useful, note, "real", "false", created FROM verdicts '
            "WHERE call_id = ? ORDER BY id DESC LIMIT 1",
            (call_id,),
        ).fetchone()
        if row is None:
            return None
        found = _load(row)
        found["useful"] = bool(found["useful"])
        return found

    # Reads by primary key, filtered by the panel's key name in the same indexed lookup: another
    # key's record costs what an unknown one does and is never loaded.

    async def panel(self, panel_id: str, owner: str | None = None) -> dict[str, Any] | None:
        return await self._run(self._panel, panel_id, owner)

    def _panel(self, panel_id: str, owner: str | None) -> dict[str, Any] | None:
        assert self._db is not None
        row = self._db.execute(
            "SELECT * FROM panels WHERE id = ? AND (? IS NULL OR key_name = ?)",
            (panel_id, owner, owner),
        ).fetchone()
        if row is None:
            return None
        panel = _load(row)
        calls = self._db.execute(
            "SELECT * FROM calls WHERE panel_id = ? ORDER BY started, rowid", (panel_id,)
        ).fetchall()
        panel["seats"] = [self._with_verdict(_load(c)) for c in calls]
        return panel

    async def call(self, call_id: str, owner: str | None = None) -> dict[str, Any] | None:
        return await self._run(self._call, call_id, owner)

    def _call(self, call_id: str, owner: str | None) -> dict[str, Any] | None:
        assert self._db is not None
        row = self._db.execute(
            "SELECT c.*, p.collection AS collection FROM calls c "
            "JOIN panels p ON p.id = c.panel_id WHERE c.id = ? AND (? IS NULL OR p.key_name = ?)",
            (call_id, owner, owner),
        ).fetchone()
        return None if row is None else self._with_verdict(_load(row))

    def _with_verdict(self, call: dict[str, Any]) -> dict[str, Any]:
        call["verdict"] = self._current_verdict(call["id"])
        return call

    async def verdict_states(self, call_ids: list[str], owner: str | None = None) -> dict[str, str]:
        return await self._run(self._verdict_states, call_ids, owner)

    def _verdict_states(self, call_ids: list[str], owner: str | None) -> dict[str, str]:
        """Each known call's state: pending (answered, unjudged), judged or unanswered."""
        assert self._db is not None
        states: dict[str, str] = {}
        wanted = list(dict.fromkeys(call_ids))
        for start in range(0, len(wanted), 500):  # under SQLite's bound-parameter limit
            chunk = wanted[start : start + 500]
            rows = self._db.execute(
                "SELECT c.id, c.status, EXISTS (SELECT 1 FROM verdicts v WHERE v.call_id = c.id) "
                "AS judged FROM calls c JOIN panels p ON p.id = c.panel_id "
                f"WHERE c.id IN ({', '.join('?' * len(chunk))}) "
                "AND (? IS NULL OR p.key_name = ?)",
                (*chunk, owner, owner),
            ).fetchall()
            for row in rows:
                judged, answered = row["judged"], row["status"] == "ok"
                states[row["id"]] = "judged" if judged else "pending" if answered else "unanswered"
        return states

    async def owed(self, owner: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        return await self._run(self._owed, owner, limit)

    def _owed(self, owner: str | None, limit: int) -> list[dict[str, Any]]:
        """The newest answered seats that no verdict judges yet (mergers aside)."""
        assert self._db is not None
        rows = self._db.execute(
            "SELECT c.id AS call, c.panel_id AS panel, c.seat, c.alias, c.finished, "
            "p.collection FROM calls c JOIN panels p ON p.id = c.panel_id "
            "WHERE c.status = 'ok' AND c.seat != 'merger' AND (? IS NULL OR p.key_name = ?) "
            "AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.call_id = c.id) "
            "ORDER BY c.started DESC LIMIT ?",
            (owner, owner, limit),
        ).fetchall()
        return [dict(row) for row in rows]

    # The dashboard's reads (gateway/store/pages.py says why each stays fast).

    async def panels_page(
        self, limit: int, before: str | None = None, owed: bool = False, owner: str | None = None
    ) -> dict[str, Any]:
        """Raises pages.UnknownCursor when *before* names no panel *owner* can see."""

        def read() -> dict[str, Any]:
            assert self._db is not None
            found = pages.panels_page(self._db, limit=limit, before=before, owed=owed, owner=owner)
            found["owed"], found["owed_capped"] = pages.owed_count(self._db, owner)
            return found

        return await self._run(read)

    async def change_marker(self) -> tuple[int, int, int]:
        return await self._run(lambda: pages.change_marker(cast(sqlite3.Connection, self._db)))

    async def standings(self) -> dict[str, Any]:
        return await self._run(self._standings)

    def _standings(self) -> dict[str, Any]:
        """Per alias: seated, answered, last seated; per (alias, shape): useful and judged."""
        db = self._db
        assert db is not None
        seats = db.execute(
            "SELECT alias, COUNT(*) AS seated, SUM(status = 'ok') AS answered, "
            "MAX(started) AS last_seated FROM calls WHERE seat != 'merger' GROUP BY alias"
        ).fetchall()
        verdicts = db.execute(
            "SELECT c.alias, c.shape, SUM(v.useful) AS useful, COUNT(*) AS judged "
            "FROM verdicts v JOIN calls c ON c.id = v.call_id "
            "WHERE v.id IN (SELECT MAX(id) FROM verdicts GROUP BY call_id) "
            "GROUP BY c.alias, c.shape"
        ).fetchall()
        return {"seats": [dict(r) for r in seats], "verdicts": [dict(r) for r in verdicts]}

    # Gateway keys: only the SHA-256 of a key is ever stored.

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
        """Asked on every keyed request, and never cached (a revoked key is refused at once, in
        every worker). One read of a UNIQUE index on a small table that stays in memory, so it is
        read right here, on a connection of its own: ~10 us, where a trip through the writer
        thread costs ~0.1-0.2 ms and waits behind whatever records are being written. Should
        the store be busy (WAL readers rarely are), the writer thread reads it instead."""
        where, args = "digest = ? AND revoked IS NULL", (digest,)
        try:
            found = self._select_keys(where, args, self._keys)
        except sqlite3.OperationalError:
            found = await self._run(self._select_keys, where, args)
        return found[0] if found else None

    def _select_keys(
        self, where: str, args: tuple[Any, ...], db: sqlite3.Connection | None = None
    ) -> list[dict[str, Any]]:
        db = db or self._db
        assert db is not None
        rows = db.execute(
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
            lambda: cast(sqlite3.Connection, self._db).execute(
                "UPDATE gateway_keys SET last_used = ? WHERE name = ?", (when, name)
            )
        )

    # Context windows learned from providers' "maximum context length is N" errors.

    async def learn_window(self, alias: str, window: int) -> None:
        await self._run(
            lambda: cast(sqlite3.Connection, self._db).execute(
                "INSERT INTO learned_windows VALUES (?, ?, ?) ON CONFLICT (alias) DO UPDATE SET "
                "context_window = MIN(context_window, excluded.context_window), "
                "learned = excluded.learned",
                (alias, window, time.time()),
            )
        )

    async def learned_windows(self) -> dict[str, int]:
        rows = await self._run(
            lambda: (
                cast(sqlite3.Connection, self._db)
                .execute("SELECT alias, context_window FROM learned_windows")
                .fetchall()
            )
        )
        return {alias: window for alias, window in rows}

    # Quotas: cooldowns learned from providers (kept across restarts) and the usage ledger, read
    # from the calls themselves (a seat not called, `cooling`, spent nothing).

    async def learn_limit(self, limit: dict[str, Any]) -> None:
        await self._run(
            lambda: cast(sqlite3.Connection, self._db).execute(
                "INSERT INTO learned_limits VALUES (?, ?, ?, ?, ?) ON CONFLICT (alias) DO UPDATE "
                "SET until = excluded.until, why = excluded.why, source = excluded.source, "
                "learned = excluded.learned",
                (limit["alias"], limit["until"], limit["why"], limit["source"], time.time()),
            )
        )

    async def learned_limits(self, now: float) -> list[dict[str, Any]]:
        rows = await self._run(
            lambda: (
                cast(sqlite3.Connection, self._db)
                .execute(
                    "SELECT alias, until, why, source FROM learned_limits WHERE until > ?", (now,)
                )
                .fetchall()
            )
        )
        return [dict(r) for r in rows]

    async def day_counts(self, since: float) -> list[dict[str, Any]]:
        """Calls started since *since* (the day's start), per model and connection."""
        rows = await self._run(
            lambda: (
                cast(sqlite3.Connection, self._db)
                .execute(
                    "SELECT alias, connection, COUNT(*) AS calls FROM calls "
                    "WHERE started >= ? AND status != 'cooling' GROUP BY alias, connection",
                    (since,),
                )
                .fetchall()
            )
        )
        return [dict(r) for r in rows]

    async def usage(
        self, start: float, end: float, time_zone: str, owner: str | None = None
    ) -> list[dict[str, Any]]:
        return await self._run(self._usage, start, end, time_zone, owner)

    def _usage(
        self, start: float, end: float, time_zone: str, owner: str | None
    ) -> list[dict[str, Any]]:
        """Calls, tokens in/out and errors per day (in *time_zone*), model, connection and key."""
        db = self._db
        assert db is not None
        zone = ZoneInfo(time_zone)
        db.create_function(
            "bench_day",
            1,
            lambda t: datetime.fromtimestamp(t, zone).date().isoformat(),
            deterministic=True,
        )
        rows = db.execute(
            "SELECT bench_day(c.started) AS day, c.alias, c.connection, p.key_name AS key, "
            "COUNT(*) AS calls, COALESCE(SUM(c.tokens_in), 0) AS tokens_in, "
            "COALESCE(SUM(c.tokens_out), 0) AS tokens_out, "
            "SUM(c.status NOT IN ('ok', 'empty')) AS errors "
            "FROM calls c JOIN panels p ON p.id = c.panel_id "
            "WHERE c.started >= ? AND c.started < ? AND c.status != 'cooling' "
            "AND (? IS NULL OR p.key_name = ?) "
            "GROUP BY day, c.alias, c.connection, p.key_name "
            "ORDER BY day, c.alias, c.connection, p.key_name",
            (start, end, owner, owner),
        ).fetchall()
        return [dict(r) for r in rows]


def _while_locked(db: sqlite3.Connection, sql: str, *, tries: int, pause_s: float) -> None:
    """Run *sql*, trying again after *pause_s* while another worker keeps the store locked."""
    for attempt in range(tries):
        try:
            db.execute(sql)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == tries - 1:
                raise
            time.sleep(pause_s)


def _insert_sql(table: str, fields: tuple[str, ...]) -> str:
    names = ", ".join(f'"{name}"' for name in fields)
    return f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(fields))})"


_INSERTS = {
    "panels": _insert_sql("panels", PANEL_FIELDS),
    "calls": _insert_sql("calls", CALL_FIELDS),
}


def _log_failure(flushing: asyncio.Future[None]) -> None:
    if not flushing.cancelled() and flushing.exception() is not None:
        log.error("the record writer failed", exc_info=flushing.exception())


def _settle(futures: list[asyncio.Future[None]], outcomes: list[BaseException | None]) -> None:
    for future, outcome in zip(futures, outcomes, strict=True):
        if future.done():
            continue
        if outcome is None:
            future.set_result(None)
        else:
            future.set_exception(outcome)


def _dump(name: str, value: Any) -> Any:
    return json.dumps(value) if name in _JSON_FIELDS and value is not None else value


def _load(row: sqlite3.Row) -> dict[str, Any]:
    found = dict(row)
    for name in _JSON_FIELDS:
        if isinstance(found.get(name), str):
            found[name] = json.loads(found[name])
    return found


def _key(row: sqlite3.Row) -> dict[str, Any]:
    found = dict(row)
    if found["collections"] is not None:
        found["collections"] = json.loads(found["collections"])
    return found
