"""The SQLite connections and their one writer thread: the part of `SqliteStore` that opens,
closes and writes the file.

SQLite calls are blocking, so they run on one dedicated writer thread: the event loop never
waits on the disk, and one thread owning the connection keeps transactions short and serial.
Seats finishing together are written in one transaction (`_flush`), and a bad row fails alone.
`SqliteWriter` is held, not inherited: the store (gateway/store/sqlite.py) and its keys and
learned limits (gateway/store/sqlite_keys.py) are each handed it, and run their queries on
its thread (`run`) against its connection (`db`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from gateway.store.interface import CALL_FIELDS, PANEL_FIELDS
from gateway.store.migrations import migrate
from gateway.store.rows import dump

log = logging.getLogger("bench.records")

_T = TypeVar("_T")
# A row waiting for the writer: table, fields, row, and the future its writer awaits
_Pending = tuple[str, tuple[str, ...], dict[str, Any], asyncio.Future[None]]


class SqliteWriter:
    """Opens and closes the file, runs blocking calls on the writer thread (`run`), and writes
    panels and calls in batches. `db` is the writer thread's connection (use it only in what
    `run` runs); `key_reader` a read-only one for key lookups on the event loop's thread. Both
    are None until `open`. The queries live in the parts that hold this one."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="records")
        self.db: sqlite3.Connection | None = None
        self.key_reader: sqlite3.Connection | None = None  # on the event loop's thread
        # Rows waiting for the writer thread: seats finishing together are written in one
        # transaction, and each caller is answered only once its own row is committed.
        self._pending: list[_Pending] = []
        self._flushing = False
        self._lock = threading.Lock()

    async def run(self, fn: Callable[..., _T], *args: Any) -> _T:
        """*fn*(*args*) on the writer thread, the one place `db` is used."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def open(self) -> None:
        await self.run(self._open)

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
        self.db = db
        keys = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        keys.execute("PRAGMA busy_timeout=0")  # never wait on the loop: busy goes to the writer
        keys.execute("PRAGMA query_only=ON")
        keys.row_factory = sqlite3.Row
        self.key_reader = keys

    async def close(self) -> None:
        if self.key_reader is not None:
            self.key_reader.close()
            self.key_reader = None
        if self.db is not None:
            await self.run(self.db.close)
            self.db = None
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
        db = self.db
        assert db is not None
        _while_locked(db, "BEGIN IMMEDIATE", tries=tries, pause_s=0.05)
        try:
            for table, fields, row, _ in batch:
                db.execute(_INSERTS[table], [dump(name, row.get(name)) for name in fields])
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
