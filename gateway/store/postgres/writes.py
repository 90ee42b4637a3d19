"""Seat rows into PostgreSQL: batched, and kept on local disk while PostgreSQL cannot take them.

Rows are batched as SQLite's are: writes arriving while a batch is in flight go in the next one,
each batch one short transaction, each writer answered once its own row is committed. A seat row
that starts a batch also waits up to `GATHER_S` for others: PostgreSQL is a round trip away, and
each statement costs this process and the server more than the rows in it (under load, seats of
several panels share one). A panel row never waits (its seats are called only once it is
written): it ends the window, taking the seat rows gathered so far with it. When
PostgreSQL cannot take a row for now (unreachable, shut down, no connection within WAIT_S, or a
seat whose panel another worker still holds on its disk), that row and every later one go to the
spill (gateway/store/spill.py) instead, in order, and their writers are answered once the rows
are on disk. So a panel's reply waits on a dead database for WAIT_S at most, and only the first
batch to find it dead waits at all. A background task tries PostgreSQL again with backoff,
writes the spilled rows back in order (a row already there is skipped: the primary keys), and,
once none waits, sends rows straight in again and tells `/healthz` the store has recovered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.errors import ForeignKeyViolation
from psycopg_pool import AsyncConnectionPool

from gateway.errors import RecordsUnavailable
from gateway.health import Health
from gateway.store.postgres.batch import statements
from gateway.store.postgres.migrations import migrate
from gateway.store.spill import Rows, Spill

log = logging.getLogger("bench.records")

WAIT_S = 2.0  # for a connection from the pool, before PostgreSQL counts as unreachable
RETRY_S = (0.25, 4.0)  # PostgreSQL is tried again after the first, doubling up to the second
# Tries a seat's row waits for its panel (about ten minutes, at RETRY_S's pace) before it is set
# aside in the spill's rejected file: its panel may have been refused as a bad row, and one such
# seat must not hold up every row behind it for good.
PATIENCE = 150
GATHER_S = 0.01  # a seat row starting a batch waits this long for more (rows per statement)
PART = "store"  # as /healthz names it
RETRY_AFTER = {"Retry-After": "5"}

Row = dict[str, Any]
_Pending = tuple[str, Mapping[str, Any], "asyncio.Future[None]"]


def unavailable() -> RecordsUnavailable:
    return RecordsUnavailable(
        "The record store is unreachable; try again shortly. Panels are still answered, and "
        "their records are written once it is back.",
        headers=RETRY_AFTER,
    )


class SeatWrites:
    """The panel and seat rows of one process, on their way to PostgreSQL. Without a spill
    (the command line's stores) a row PostgreSQL cannot take is an error, as it always was."""

    def __init__(
        self,
        pool: AsyncConnectionPool[AsyncConnection[Row]],
        spill: Spill | None,
        health: Health,
        patience: int = PATIENCE,
        gather_s: float = GATHER_S,
    ) -> None:
        self.pool = pool
        self.gather_s = gather_s
        self.spill = spill
        self.health = health
        self.patience = patience
        self._refused: dict[str, int] = {}  # seat row id -> tries its panel was missing
        self.trouble: str | None = None  # why rows go to the spill rather than straight in
        self.migrated = False
        self._pending: list[_Pending] = []
        self._urgent = asyncio.Event()  # a panel row waits: the window ends
        self._flusher: asyncio.Task[None] | None = None
        self._recovery: asyncio.Task[None] | None = None

    async def write(self, table: str, row: Mapping[str, Any]) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((table, row, done))
        if table == "panels":
            self._urgent.set()
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        # a caller giving up (its request cancelled) does not cancel the batch it is in
        await asyncio.shield(done)

    def room(self) -> str | None:
        """None while new panels may be seated; else why not (the spill is at its bound)."""
        spill = self.spill
        if spill is None or not spill.full():
            return None
        return (
            f"{spill.rows} seat rows ({spill.bytes / 1e6:.1f} MB) wait on local disk for the "
            f"record store, the most kept is {spill.max_bytes / 1e6:g} MB"
        )

    def noticed(self, exc: BaseException) -> None:
        """PostgreSQL could not take a row or answer a read, for now: say so (the details in
        the log, once), and try it again in the background until it takes what waits."""
        if self.trouble is None:
            log.warning("the record store cannot be used for now: %s: %s", type(exc).__name__, exc)
        self.trouble = _why(exc)
        if self.spill is None:
            return
        self._report()
        if self._recovery is None or self._recovery.done():
            self._recovery = asyncio.create_task(self._recover())

    async def catch_up(self) -> bool:
        """Try PostgreSQL now: migrate it if that was never done, write back every spilled
        row; True once none waits and rows go straight in again."""
        assert self.spill is not None
        try:
            await self.pool.check()  # connections broken by a restart are replaced, not used
            async with self.pool.connection(timeout=WAIT_S) as db:
                if not self.migrated:
                    await migrate(db)
                    self.migrated = True
                else:
                    await db.execute("SELECT 1")
        except psycopg.OperationalError as exc:
            self.noticed(exc)
            return False
        return await self.spill.replay(self._write_back, self._caught_up)

    async def close(self) -> None:
        """Let every write taken finish (on disk, if PostgreSQL is down); spilled rows left
        stay in their file for the next start."""
        if self._flusher is not None:
            await asyncio.gather(self._flusher, return_exceptions=True)
        if self._recovery is not None:
            self._recovery.cancel()
            await asyncio.gather(self._recovery, return_exceptions=True)
        if self.spill is not None:
            self.spill.close()

    async def _flush(self) -> None:
        """Write what is pending, a batch at a time, until none is. Every write taken is
        answered, whatever goes wrong, or its writer would wait forever. The first batch
        waits up to `gather_s` for rows to join it (no panel row waits); the later ones
        gathered while one was in flight."""
        if self.gather_s > 0 and not self._urgent.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._urgent.wait(), self.gather_s)
        while self._pending:
            self._urgent.clear()
            batch, self._pending = self._pending, []
            try:
                if self.trouble is not None and self.spill is not None:
                    outcomes = await self._keep(batch)  # behind the rows already waiting
                else:
                    outcomes = await self._insert_batch(batch)
            except BaseException as exc:  # not a bad row: the writer itself broke
                outcomes = [exc] * len(batch)
                if not isinstance(exc, Exception):
                    _settle(batch, outcomes)
                    raise
            _settle(batch, outcomes)

    async def _insert_batch(self, batch: list[_Pending]) -> list[BaseException | None]:
        """One transaction for the batch; if a row fails it, each row alone, so only a bad row
        fails. From the first row PostgreSQL cannot take for now, the rest is kept on disk."""
        try:
            await self._insert([(table, row) for table, row, _ in batch])
            return [None] * len(batch)
        except psycopg.OperationalError as exc:
            return await self._set_aside(batch, exc)
        except Exception:
            pass  # some row: find which
        outcomes: list[BaseException | None] = []
        for i, (table, row, _) in enumerate(batch):
            try:
                await self._insert([(table, row)])
            except Exception as exc:
                if self.spill is not None and _passing(exc):
                    return outcomes + await self._set_aside(batch[i:], exc)
                log.error("could not write a row to %s: %s: %s", table, type(exc).__name__, exc)
                outcomes.append(exc)
                continue
            outcomes.append(None)
        return outcomes

    async def _set_aside(
        self, items: list[_Pending], exc: BaseException
    ) -> list[BaseException | None]:
        self.noticed(exc)
        if self.spill is None:  # (unreachable: a seat's panel missing is a bad row then)
            return [unavailable()] * len(items)
        return await self._keep(items)

    async def _keep(self, items: list[_Pending]) -> list[BaseException | None]:
        """On disk, in order; their writers are answered once the rows are there."""
        assert self.spill is not None
        try:
            await self.spill.append([(table, row) for table, row, _ in items])
        except OSError as exc:
            log.error("could not keep %d seat rows on local disk: %s", len(items), exc)
            return [exc] * len(items)
        if self.trouble is None:  # written back in full while these were being appended
            self.trouble = "seat rows kept on local disk are being written back"
        self._report()
        if self._recovery is None or self._recovery.done():
            self._recovery = asyncio.create_task(self._recover())
        return [None] * len(items)

    async def _recover(self) -> None:
        delay = RETRY_S[0]
        while True:
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_S[1])
            try:
                if await self.catch_up():
                    return
            except Exception:  # never give up on rows that wait: log, and try again
                log.exception("writing spilled seat rows back failed; trying again")

    async def _write_back(self, rows: Rows) -> int:
        """Spilled rows into PostgreSQL, skipping any already there; how many are done."""
        try:
            await self._insert(rows, skip_existing=True)
            return len(rows)
        except psycopg.OperationalError as exc:
            self.noticed(exc)
            return 0
        except Exception:
            pass  # some row: find which
        for i, (table, row) in enumerate(rows):
            try:
                await self._insert([(table, row)], skip_existing=True)
            except Exception as exc:
                if isinstance(exc, psycopg.OperationalError) or (
                    isinstance(exc, ForeignKeyViolation) and self._may_wait(row)
                ):
                    self.noticed(exc)
                    return i
                self._reject(table, row, exc)
            self._refused.pop(str(row.get("id")), None)
        return len(rows)

    def _may_wait(self, row: Mapping[str, Any]) -> bool:
        """A seat whose panel is missing waits for it up to `patience` tries."""
        key = str(row.get("id"))
        self._refused[key] = tries = self._refused.get(key, 0) + 1
        return tries < self.patience

    def _reject(self, table: str, row: Mapping[str, Any], exc: BaseException) -> None:
        why = f"{type(exc).__name__}: {exc}"
        log.error(
            "PostgreSQL refuses %s row %s; set aside, not written: %s", table, row.get("id"), why
        )
        assert self.spill is not None
        self.spill.reject(table, row, why)

    def _caught_up(self) -> None:
        self.trouble = None
        self.health.recovered(PART)

    def _report(self) -> None:
        rows = self.spill.rows if self.spill is not None else 0
        self.health.degraded(
            PART, f"{self.trouble}; {rows} seat rows kept on local disk until it takes them"
        )

    async def _insert(self, rows: Rows, *, skip_existing: bool = False) -> None:
        """The rows in one statement (gateway/store/postgres/batch.py), its own transaction on this
        autocommit connection; a batch too big for one, several in one transaction."""
        sent = statements(rows, skip_existing=skip_existing)
        async with self.pool.connection(timeout=WAIT_S) as db:
            if len(sent) == 1:
                await db.execute(*sent[0])
                return
            async with db.transaction():
                for sql, params in sent:
                    await db.execute(sql, params)


def _passing(exc: BaseException) -> bool:
    """PostgreSQL cannot take the row now but will: it is unreachable, or the row is a seat
    whose panel is not there yet (another worker or replica still holds it on its disk)."""
    return isinstance(exc, (psycopg.OperationalError, ForeignKeyViolation))


def _why(exc: BaseException) -> str:
    """For /healthz, which anyone may read: the kind of fault, not its details (in the log)."""
    if isinstance(exc, ForeignKeyViolation):
        return "seat rows wait for their panel (another worker or replica still holds it)"
    return f"PostgreSQL unreachable ({type(exc).__name__})"


def _settle(batch: list[_Pending], outcomes: list[BaseException | None]) -> None:
    for (_, _, future), outcome in zip(batch, outcomes, strict=True):
        if future.done():
            continue
        if outcome is None:
            future.set_result(None)
        else:
            future.set_exception(outcome)
