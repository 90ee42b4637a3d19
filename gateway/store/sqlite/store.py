"""The record store: every panel and every seat is a row, every verdict kept with its history.

`SqliteStore` is the default `RecordStore` (one file, WAL): panels, seats, verdicts, gateway
keys, learned context windows and limits. It holds `writer`, a `SqliteWriter` (writer.py): the
connections and the one writer thread, opening and closing the file, and the batched panel and
seat rows. It is its keys (`SqliteKeys`, a `KeyStore`) and its learned limits (`SqliteLimits`,
a `LimitStore`): parts of its own (keys.py), using that same writer. The records' queries are
here, run on the writer's thread (`writer.run`, `writer.db`); the statements are written once
for both engines (gateway/store/statements.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, cast
from zoneinfo import ZoneInfo

from gateway.health import Health
from gateway.store import pages
from gateway.store.rows import (
    call_row,
    load,
    load_verdict,
    panel_row,
    repeats,
    verdict_state,
    verdict_values,
)
from gateway.store.spill import Spill
from gateway.store.sqlite.keys import SqliteKeys, SqliteLimits
from gateway.store.sqlite.suite import SqliteSuite
from gateway.store.sqlite.writer import SqliteWriter
from gateway.store.statements import SQLITE as SQL
from gateway.store.statements import VERDICTS_KEPT

_IN_LIMIT = 500  # calls asked about in one statement: under SQLite's bound-parameter limit


class SqliteStore(SqliteKeys, SqliteLimits, SqliteSuite):
    """The records' queries, with the writer thread (`writer`) they run on; keys and learned
    limits are its parts (keys.py)."""

    def __init__(
        self, path: Path, *, spill: Spill | None = None, health: Health | None = None
    ) -> None:
        """*spill*, *health*: where rows wait while the file cannot write, and what
        `/healthz` is told meanwhile (SqliteWriter says how)."""
        self.writer = SqliteWriter(path, spill=spill, health=health)

    async def open(self) -> None:
        await self.writer.open()

    async def close(self) -> None:
        await self.writer.close()

    def room(self) -> str | None:
        return self.writer.room()

    async def add_panel(self, panel: Mapping[str, Any]) -> None:
        await self.writer.write("panels", panel_row(panel))

    async def add_call(self, call: Mapping[str, Any]) -> None:
        await self.writer.write("calls", call_row(call))

    @property
    def _db(self) -> sqlite3.Connection:
        """The writer thread's connection: only in what `writer.run` runs."""
        return cast(sqlite3.Connection, self.writer.db)

    # Verdicts.

    async def record_verdict(
        self, verdict: dict[str, Any], owner: str | None = None
    ) -> tuple[bool, dict[str, Any] | None] | None:
        """Store a verdict. None: unknown call (or not *owner*'s). Else (written, previous)."""
        return await self.writer.run(self._verdict, verdict, owner)

    def _verdict(
        self, verdict: dict[str, Any], owner: str | None
    ) -> tuple[bool, dict[str, Any] | None] | None:
        if self._db.execute(SQL.owned_call, (verdict["call"], owner, owner)).fetchone() is None:
            return None
        previous = self._current_verdict(verdict["call"])
        if repeats(verdict, previous):
            return False, previous
        self._db.execute(SQL.insert_verdict, verdict_values(verdict, previous))
        self._db.execute(SQL.prune_verdicts, (verdict["call"], verdict["call"], VERDICTS_KEPT))
        return True, previous

    def _current_verdict(self, call_id: str) -> dict[str, Any] | None:
        row = self._db.execute(SQL.current_verdict, (call_id,)).fetchone()
        return None if row is None else load_verdict(row)

    # Reads by primary key, filtered by the panel's key name in the same indexed lookup.

    async def panel(self, panel_id: str, owner: str | None = None) -> dict[str, Any] | None:
        return await self.writer.run(self._panel, panel_id, owner)

    def _panel(self, panel_id: str, owner: str | None) -> dict[str, Any] | None:
        row = self._db.execute(SQL.panel, (panel_id, owner, owner)).fetchone()
        if row is None:
            return None
        panel = load(row)
        calls = self._db.execute(SQL.seats, (panel_id,) * 3).fetchall()
        panel["seats"] = [self._with_verdict(load(c)) for c in calls]
        return panel

    async def call(self, call_id: str, owner: str | None = None) -> dict[str, Any] | None:
        return await self.writer.run(self._call, call_id, owner)

    def _call(self, call_id: str, owner: str | None) -> dict[str, Any] | None:
        row = self._db.execute(SQL.call, (call_id, owner, owner)).fetchone()
        return None if row is None else self._with_verdict(load(row))

    def _with_verdict(self, call: dict[str, Any]) -> dict[str, Any]:
        call["verdict"] = self._current_verdict(call["id"])
        return call

    async def verdict_states(self, call_ids: list[str], owner: str | None = None) -> dict[str, str]:
        return await self.writer.run(self._verdict_states, call_ids, owner)

    def _verdict_states(self, call_ids: list[str], owner: str | None) -> dict[str, str]:
        """Each known call's state: pending (answered, unjudged), judged or unanswered."""
        states: dict[str, str] = {}
        wanted = list(dict.fromkeys(call_ids))
        for start in range(0, len(wanted), _IN_LIMIT):
            chunk = wanted[start : start + _IN_LIMIT]
            sql = SQL.verdict_states(len(chunk))
            for row in self._db.execute(sql, (*chunk, owner, owner)).fetchall():
                states[row["id"]] = verdict_state(row)
        return states

    async def owed(self, owner: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """The newest answered seats that no verdict judges yet (mergers aside)."""
        rows = await self.writer.fetch(SQL.owed, (owner, owner, limit))
        return [dict(row) for row in rows]

    # The dashboard's reads (gateway/store/pages.py says why each stays fast).

    async def panels_page(
        self, limit: int, before: str | None = None, owed: bool = False, owner: str | None = None
    ) -> dict[str, Any]:
        """Raises pages.UnknownCursor when *before* names no panel *owner* can see."""
        return await self.writer.run(self._panels_page, limit, before, owed, owner)

    def _panels_page(
        self, limit: int, before: str | None, owed: bool, owner: str | None
    ) -> dict[str, Any]:
        db, cursor = self._db, None
        if before is not None:
            cursor = db.execute(SQL.cursor, (before, owner, owner)).fetchone()
            if cursor is None:
                raise pages.UnknownCursor(before)
        sql, args = pages.page_query(SQL, limit=limit, cursor=cursor, owed=owed, owner=owner)
        panels = db.execute(sql, args).fetchall()
        ids = [row["id"] for row in panels[:limit]]
        seats = db.execute(SQL.seats_of(len(ids)), ids).fetchall() if ids else []
        found = pages.page(panels, seats, limit)
        horizon = [] if owner is None else [owner]
        counted = db.execute(SQL.owed_count(owner is not None), [*horizon, pages.OWED_HORIZON])
        found["owed"], found["owed_capped"] = pages.owed(counted.fetchone())
        return found

    async def change_marker(self) -> tuple[int, int, int]:
        """What a dashboard compares to know something new was written: the newest panel, seat
        and verdict rows (rowids only grow)."""
        (row,) = await self.writer.fetch(SQL.change_marker)
        return (row["panels"] or 0, row["calls"] or 0, row["verdicts"] or 0)

    async def standings(self) -> dict[str, Any]:
        """Per alias: seated, answered, last seated; per (alias, shape): useful and judged, and
        how many of each were given blind."""
        seats = await self.writer.fetch(SQL.seated)
        verdicts = await self.writer.fetch(SQL.judged)
        return {"seats": [dict(r) for r in seats], "verdicts": [dict(r) for r in verdicts]}

    # The usage, read from the calls themselves (a seat not called, `cooling`, spent nothing).

    async def day_counts(self, since: float) -> list[dict[str, Any]]:
        """Calls started since *since* (the day's start), per model and connection."""
        return [dict(r) for r in await self.writer.fetch(SQL.day_counts, (since,))]

    async def usage(
        self, start: float, end: float, time_zone: str, owner: str | None = None
    ) -> list[dict[str, Any]]:
        """Calls, tokens in/out and errors per day (in *time_zone*), model, connection and key."""

        def read() -> list[dict[str, Any]]:
            self._db.create_function("bench_day", 2, _day, deterministic=True)
            rows = self._db.execute(SQL.usage, (time_zone, start, end, owner, owner))
            return [dict(r) for r in rows.fetchall()]

        return await self.writer.run(read)


def _day(seconds: float, time_zone: str) -> str:
    return datetime.fromtimestamp(seconds, _zone(time_zone)).date().isoformat()


@lru_cache(maxsize=16)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)
