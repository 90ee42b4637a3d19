"""The SQLite connections and their one writer thread: the part of `SqliteStore` that opens,
closes and writes the file.

SQLite calls are blocking, so they run on one dedicated writer thread: the event loop never
waits on the disk, and one thread owning the connection keeps transactions short and serial.
Seats finishing together are written in one transaction (`_flush`), and a bad row fails alone.
`SqliteWriter` is held by the store (store.py), whose queries, keys and learned limits (keys.py)
all run on its thread (`run`, `fetch`, `execute`) against its connection (`db`).

A write the file cannot take (a full disk, the file deleted, replaced or overwritten: a
`StoreFault`, file.py; damage.py) fails no panel: its row, and every later one, goes to the
spill (`detour`, detour.py) until the file takes writes again (`mend` puts a moved or damaged
file back: mend.py). A query the file cannot answer is a 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from gateway.health import Health
from gateway.store.rows import values
from gateway.store.spill import Refused, Rows, Spill
from gateway.store.sqlite.detour import Detour, unavailable
from gateway.store.sqlite.file import StoreFault, StoreFile, fault_of
from gateway.store.sqlite.mend import mend, write_back
from gateway.store.sqlite.migrations import migrate
from gateway.store.statements import SQLITE as SQL

log = logging.getLogger("bench.records")

_T = TypeVar("_T")
# A row waiting for the writer: table, row (rows.PanelRow or CallRow), the future its writer awaits
_Pending = tuple[str, Any, asyncio.Future[None]]


class SqliteWriter:
    """Opens and closes the file, runs blocking calls on the writer thread (`run`), and writes
    panels and calls in batches. `db` is the writer thread's connection (use it only in what
    `run` runs); `key_reader` a read-only one for key lookups on the event loop's thread. Both
    are None until `open` (and while a moved file is being put back). The queries live in the
    parts that hold this one."""

    def __init__(
        self, path: Path, *, spill: Spill | None = None, health: Health | None = None
    ) -> None:
        """*spill*: where rows wait while the file cannot take them (none: a panel is refused
        503 then, and a seat's row waits in memory); *health*: what `/healthz` is told."""
        self.path = path
        self.file = StoreFile(path)
        self.detour = Detour(self, spill, health or Health())
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="records")
        self.db: sqlite3.Connection | None = None
        self.key_reader: sqlite3.Connection | None = None  # on the event loop's thread
        # Rows waiting for the writer thread: seats finishing together are written in one
        # transaction, and each caller is answered only once its own row is committed.
        self._pending: list[_Pending] = []
        self._flushing = False
        self._lock = threading.Lock()

    async def run(self, fn: Callable[..., _T], *args: Any) -> _T:
        """*fn*(*args*) on the writer thread, the one place `db` is used. A fault of the file
        (not of the query) is a 503, and starts the detour's recovery."""
        try:
            return await self._on_thread(self._guarded, fn, *args)
        except StoreFault as fault:
            self.detour.noticed(fault.why)
            raise unavailable(fault.why) from None

    async def fetch(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """One statement's rows, on the writer thread (as `run`)."""
        return await self.run(lambda: self._db().execute(sql, args).fetchall())

    async def execute(self, sql: str, args: tuple[Any, ...]) -> int:
        """One statement on the writer thread (as `run`); the rows it changed."""
        return await self.run(lambda: self._db().execute(sql, args).rowcount)

    def _db(self) -> sqlite3.Connection:
        assert self.db is not None  # (`_guarded` raises first while none is open)
        return self.db

    async def _on_thread(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def _guarded(self, fn: Callable[..., _T], *args: Any) -> _T:
        if self.db is None:
            raise StoreFault(f"the store file {self.path.name} is not open")
        try:
            return fn(*args)
        except Exception as exc:
            fault = fault_of(exc, self.path.name)
            if fault is None:
                raise
            raise fault from exc

    async def open(self) -> None:
        await self._on_thread(self._open)
        await self.detour.start()

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The records hold prompts: the file is the owner's alone, and SQLite gives its -wal and
        # -shm files the same mode as the database file. Only a file made here is opened and
        # closed here: closing a descriptor on a file another connection of this process holds
        # drops its locks (file.py).
        with contextlib.suppress(FileExistsError):
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
        self.connect()

    def connect(self) -> None:
        """Open both connections on the file at the path (migrated), and hold the file."""
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA busy_timeout=10000")
        # Switching a new file to WAL takes a lock SQLite does not wait for: two workers opening
        # the same new store at once can get 'database is locked' here.
        _while_locked(db, "PRAGMA journal_mode=WAL", tries=50, pause_s=0.1)
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        migrate(db)
        self.file.opened_now(db)
        self.db = db
        keys = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        keys.execute("PRAGMA busy_timeout=0")  # never wait on the loop: busy goes to the writer
        keys.execute("PRAGMA query_only=ON")
        keys.row_factory = sqlite3.Row
        self.key_reader = keys

    def disconnect(self) -> None:
        """Close both connections and let go of the file (a broken file's errors ignored)."""
        dbs, self.key_reader, self.db = (self.key_reader, self.db), None, None
        for db in dbs:
            if db is not None:
                with contextlib.suppress(sqlite3.Error):
                    db.close()
        self.file.let_go()

    async def close(self) -> None:
        await self.detour.close()
        await self._on_thread(self.disconnect)
        self._pool.shutdown(wait=True)

    def room(self) -> str | None:
        return self.detour.room()

    async def write(self, table: str, row: Any) -> None:
        """Answered once the row is committed, or kept by the detour while the file cannot
        take it (a panel's row that cannot be kept anywhere: 503, nobody called yet)."""
        if self.detour.active:  # behind the rows already kept
            await self.detour.keep(table, row)
            return
        try:
            await self._batched(table, row)
        except StoreFault as fault:
            self.detour.noticed(fault.why)
            await self.detour.keep(table, row)

    async def _batched(self, table: str, row: Any) -> None:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        with self._lock:
            self._pending.append((table, row, done))
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
                loop.call_soon_threadsafe(_settle, [item[2] for item in batch], outcomes)
                batch = []
        except BaseException as exc:  # not a bad row: the writer itself broke
            with self._lock:
                batch, self._pending = [*batch, *self._pending], []
                self._flushing = False
            if batch:
                failed: list[BaseException | None] = [exc] * len(batch)
                loop.call_soon_threadsafe(_settle, [item[2] for item in batch], failed)
            raise

    def _insert_batch(self, batch: list[_Pending]) -> list[BaseException | None]:
        """One transaction for the batch; if it fails, each row alone, so only a bad row fails.
        A fault of the file fails the batch as it stands (its rows go to the detour)."""
        try:
            self.insert([(table, row) for table, row, _ in batch])
        except StoreFault as fault:
            return [fault] * len(batch)
        except Exception:
            return [self._insert_one(item) for item in batch]
        return [None] * len(batch)

    def insert(self, rows: Rows, *, tries: int = 20, skip_existing: bool = False) -> None:
        """One transaction for *rows*. It takes the write lock up front (BEGIN IMMEDIATE, which
        waits out another worker's writes for busy_timeout), and tries again for a while if the
        store stays locked: an answered seat is never dropped for a moment of contention. Under
        the lock, the path must still name the file opened (else StoreFault: deleted or
        replaced, and a row written now would be in a file no restart finds)."""
        db = self.db
        if db is None:
            raise StoreFault(f"the store file {self.path.name} is not open")
        inserts = SQL.insert_skipping if skip_existing else SQL.insert
        try:
            _while_locked(db, "BEGIN IMMEDIATE", tries=tries, pause_s=0.05)
            moved = self.file.changed()
            if moved is not None:
                raise StoreFault(moved)
            for table, row in rows:
                db.execute(inserts[table], values(table, row))
            db.execute("COMMIT")
        except BaseException as exc:
            if db.in_transaction:  # (SQLite rolls back by itself on a full disk)
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            fault = fault_of(exc, self.path.name)
            if fault is None or fault is exc:
                raise
            raise fault from exc

    def _insert_one(self, item: _Pending) -> BaseException | None:
        try:
            self.insert([item[:2]])
        except StoreFault as fault:
            return fault
        except Exception as exc:  # a value SQLite cannot bind raises more than sqlite3.Error
            log.error("could not write a row to %s: %s: %s", item[0], type(exc).__name__, exc)
            return exc
        return None

    # While the file cannot write (the detour calls these): gateway/store/sqlite/mend.py.

    async def mend(self) -> str | None:
        """Put the file back if it moved, then try a write: None once it takes writes."""
        return await self._on_thread(mend, self)

    async def damaged(self, deep: bool) -> str | None:
        """Why the file no longer reads as the store opened (damage.py), or None. Off the
        writer's thread: reading every page of a big store takes seconds."""
        return await asyncio.to_thread(self.file.damaged, deep=deep)

    async def write_back(self, rows: Rows) -> tuple[int, list[Refused]]:
        """Kept rows into the file, skipping any already there: (how many are done, the rows
        it refuses for good). Stops at a fault of the file (the rest wait)."""
        return await self._on_thread(write_back, self, rows)


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
