"""Rows the SQLite file cannot take for now, kept in the spill until it can (contract §17).

Why: a store on a full disk failed every panel with a 500 (the first a connection reset) and
lost its rows, and a store file deleted under the gateway took rows no restart would find,
while `/healthz` said `ok`. Now a write the file cannot take (gateway/store/sqlite/file.py says
which) makes `/healthz` say `degraded` with why, and that row and every later one go to the
spill (gateway/store/spill.py: JSON lines, fsync'd, in `gateway.spill_dir`), in order, until
the file takes them again. A background task puts the file back if it was deleted or replaced,
tries a write once a second, writes the spilled rows back (one already there is skipped), and
then `/healthz` says `ok` again. A watch looks at the file's identity once a second, so a file
deleted while nothing is written is noticed too, and at what the file holds (its header, schema
and ledger once a second, every page every QUICK_CHECK_S: damage.py), so garbage written over it
in place is noticed and the file put back the same way.

When the spill cannot take a row either (the same full disk), a panel's row is refused 503
before anyone is called, and new panels are refused at admission (`room`) until the rows of
seats already answered are safe; those wait in memory meanwhile (at most the seats of the
panels in flight when the disk filled) and are written first once the file takes writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Protocol

from gateway.errors import RecordsUnavailable
from gateway.health import Health
from gateway.store.spill import Refused, Rows, Spill
from gateway.store.sqlite.damage import QUICK_CHECK_S
from gateway.store.sqlite.file import StoreFile

log = logging.getLogger("bench.records")

PART = "store"  # as /healthz names it
RETRY_S = 1.0  # the file is tried again this often while it cannot write
WATCH_S = 1.0  # its identity, header, schema and ledger are looked at this often
RETRY_AFTER = {"Retry-After": "5"}


def unavailable(why: str) -> RecordsUnavailable:
    return RecordsUnavailable(
        f"The record store cannot write now ({why}); nobody was called. Try again shortly.",
        headers=RETRY_AFTER,
    )


class Mender(Protocol):
    """What the detour needs of the writer (gateway/store/sqlite/writer.py)."""

    file: StoreFile

    async def mend(self) -> str | None: ...
    async def damaged(self, deep: bool) -> str | None: ...
    async def write_back(self, rows: Rows) -> tuple[int, list[Refused]]: ...


class Detour:
    """The way rows take while the file cannot write: the spill, else memory (bounded by
    admission), and the task that brings them back."""

    def __init__(self, writer: Mender, spill: Spill | None, health: Health) -> None:
        self.writer = writer
        self.spill = spill
        self.health = health
        self.trouble: str | None = None  # why rows do not go straight to the file
        self.held: Rows = []  # rows neither the file nor the spill could take (seats only)
        self._recovery: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None

    @property
    def active(self) -> bool:
        return self.trouble is not None

    async def start(self) -> None:
        """Adopt rows spilled by a process that is gone, write them, and start the watch."""
        if self.spill is not None and self.spill.adopt():
            self.noticed("rows spilled by a process that is gone wait to be written")
            await self.catch_up()
        self._watch = asyncio.create_task(self._watching())

    async def close(self) -> None:
        for task in (self._watch, self._recovery):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if self.active:
            with contextlib.suppress(Exception):
                await self.catch_up()
        if self.held and self.spill is not None:
            with contextlib.suppress(OSError):
                await self.spill.append(self.held)
                self.held = []
        if self.held:
            log.error("%d seat rows could not be kept anywhere and are lost", len(self.held))
        if self.spill is not None:
            self.spill.close()

    def noticed(self, why: str) -> None:
        """The file cannot take writes: say so (once in the log), and try it in the background
        until it takes what waits."""
        if self.trouble is None:
            log.warning("the record store cannot write for now: %s", why)
        self.trouble = why
        self._report()
        if self._recovery is None or self._recovery.done():
            self._recovery = asyncio.create_task(self._recover())

    async def keep(self, table: str, row: dict[str, object]) -> None:
        """Keep *row* until the file can take it: in the spill, behind the rows already
        there; a panel's row the spill cannot take is refused (503, nobody called yet)."""
        why = self.trouble or "the record store cannot write"
        try:
            if self.spill is None or self.held:  # (behind the rows waiting in memory)
                raise OSError("no spill" if self.spill is None else "rows wait in memory")
            await self.spill.append([(table, row)])
        except OSError as exc:
            if table == "panels":
                raise unavailable(why) from None
            if not self.held:
                log.error("the spill cannot keep seat rows either (%s): held in memory", exc)
            self.held.append((table, dict(row)))
        self._report()

    def room(self) -> str | None:
        """Why new panels wait (rows answered have nowhere safe to go), or None."""
        if self.held:
            return (
                f"{len(self.held)} seat rows wait in memory: neither the record store "
                f"({self.trouble}) nor its spill can take them"
            )
        spill = self.spill
        if spill is not None and spill.full():
            return (
                f"{spill.rows} seat rows ({spill.bytes / 1e6:.1f} MB) wait on local disk for the "
                f"record store, the most kept is {spill.max_bytes / 1e6:g} MB"
            )
        return None

    async def catch_up(self) -> bool:
        """Put the file back if it moved, try a write, then write back what waits (the spill
        first: it is older); True once none waits and rows go straight to the file again."""
        why = await self.writer.mend()
        if why is not None:
            if why != self.trouble:
                log.warning("the record store still cannot write: %s", why)
            self.trouble = why
            self._report()
            return False
        if self.held:
            if self.spill is not None and not await self.spill.replay(self._write_back, _no_op):
                return False
            written = await self._write_back(list(self.held))
            del self.held[:written]
            if self.held:
                return False
        if self.spill is None:
            self._caught_up()
            return True
        return await self.spill.replay(self._write_back, self._caught_up)

    async def _write_back(self, rows: Rows) -> int:
        written, rejected = await self.writer.write_back(rows)
        for table, row, why in rejected:
            log.error("the record store refuses %s row %s; set aside: %s", table, row["id"], why)
            if self.spill is not None:
                self.spill.reject(table, row, why)
        return written

    async def _recover(self) -> None:
        while True:
            await asyncio.sleep(RETRY_S)
            try:
                if await self.catch_up():
                    return
            except Exception:  # never give up on rows that wait: log, and try again
                log.exception("writing kept seat rows back failed; trying again")

    async def _watching(self) -> None:
        checked = time.monotonic()  # every page was last read (the store opened: migrated)
        while True:
            await asyncio.sleep(WATCH_S)
            if self.active:
                continue
            deep = time.monotonic() - checked >= QUICK_CHECK_S
            why = self.writer.file.changed() or await self.writer.damaged(deep)
            checked = time.monotonic() if deep else checked
            if why is not None and not self.active:
                self.noticed(why)

    def _caught_up(self) -> None:
        if self.trouble is not None:
            log.warning("the record store writes again; every kept row is in it")
        self.trouble = None
        self.health.recovered(PART)

    def _report(self) -> None:
        waiting = (self.spill.rows if self.spill is not None else 0) + len(self.held)
        kept = "kept in the spill" if not self.held else "waiting (the spill cannot take them)"
        self.health.degraded(PART, f"{self.trouble}; {waiting} rows {kept} until it can")


def _no_op() -> None:
    pass
