"""The record store: every panel and every seat is a row, every verdict kept with its history.

`SqliteStore` is the default `RecordStore` (one file, WAL): panels, seats, verdicts, gateway
keys, learned context windows and limits. It holds its two parts rather than inheriting them:
- `writer`, a `SqliteWriter` (gateway/store/sqlite/writer.py): the connections and the one
  writer thread, opening and closing the file, and the batched panel and seat rows;
- `keys_and_limits`, a `SqliteKeysAndLimits` (gateway/store/sqlite/keys.py): gateway keys, and
  the context windows and cooldowns learned from providers, handed the same writer.
The records' queries are here, run on the writer's thread (`writer.run`, `writer.db`). Every
`RecordStore` method is defined here (the parts' as one-line delegations), so each is found
from the store.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any, cast
from zoneinfo import ZoneInfo

from gateway.health import Health
from gateway.store import pages
from gateway.store.rows import (
    CURRENT_VERDICT,
    insert_verdict,
    load,
    load_verdict,
    prune_verdicts,
    repeats,
)
from gateway.store.spill import Spill
from gateway.store.sqlite.keys import SqliteKeysAndLimits
from gateway.store.sqlite.writer import SqliteWriter


class SqliteStore:
    """The records' queries, with the writer thread (`writer`) they run on and the keys and
    learned limits (`keys_and_limits`) beside them."""

    def __init__(
        self, path: Path, *, spill: Spill | None = None, health: Health | None = None
    ) -> None:
        """*spill*, *health*: where rows wait while the file cannot write, and what
        `/healthz` is told meanwhile (SqliteWriter says how)."""
        self.writer = SqliteWriter(path, spill=spill, health=health)
        self.keys_and_limits = SqliteKeysAndLimits(self.writer)

    # Opening, closing and the batched rows: the writer's.

    async def open(self) -> None:
        await self.writer.open()

    async def close(self) -> None:
        await self.writer.close()

    def room(self) -> str | None:
        return self.writer.room()

    async def add_panel(self, panel: dict[str, Any]) -> None:
        await self.writer.add_panel(panel)

    async def add_call(self, call: dict[str, Any]) -> None:
        await self.writer.add_call(call)

    # Verdicts.

    async def record_verdict(
        self, verdict: dict[str, Any], owner: str | None = None
    ) -> tuple[bool, dict[str, Any] | None] | None:
        """Store a verdict. None: unknown call (or not *owner*'s). Else (written, previous)."""
        return await self.writer.run(self._verdict, verdict, owner)

    def _verdict(
        self, verdict: dict[str, Any], owner: str | None
    ) -> tuple[bool, dict[str, Any] | None] | None:
        db = self.writer.db
        assert db is not None
        found = db.execute(
            "SELECT 1 FROM calls c JOIN panels p ON p.id = c.panel_id "
            "WHERE c.id = ? AND (? IS NULL OR p.key_name = ?)",
            (verdict["call"], owner, owner),
        ).fetchone()
        if found is None:
            return None
        previous = self._current_verdict(verdict["call"])
        if repeats(verdict, previous):
            return False, previous
        db.execute(*insert_verdict(verdict, previous, "?"))
        db.execute(*prune_verdicts(verdict["call"], "?"))
        return True, previous

    def _current_verdict(self, call_id: str) -> dict[str, Any] | None:
        assert self.writer.db is not None
        row = self.writer.db.execute(
            CURRENT_VERDICT + "WHERE call_id = ? ORDER BY id DESC LIMIT 1",
            (call_id,),
        ).fetchone()
        return None if row is None else load_verdict(row)

    # Reads by primary key, filtered by the panel's key name in the same indexed lookup: another
    # key's record costs what an unknown one does and is never loaded.

    async def panel(self, panel_id: str, owner: str | None = None) -> dict[str, Any] | None:
        return await self.writer.run(self._panel, panel_id, owner)

    def _panel(self, panel_id: str, owner: str | None) -> dict[str, Any] | None:
        assert self.writer.db is not None
        row = self.writer.db.execute(
            "SELECT * FROM panels WHERE id = ? AND (? IS NULL OR key_name = ?)",
            (panel_id, owner, owner),
        ).fetchone()
        if row is None:
            return None
        panel = load(row)
        calls = self.writer.db.execute(
            f"SELECT * FROM calls c WHERE {pages.seat_range('?')} ORDER BY c.started, c.rowid",
            (panel_id,) * 3,
        ).fetchall()
        panel["seats"] = [self._with_verdict(load(c)) for c in calls]
        return panel

    async def call(self, call_id: str, owner: str | None = None) -> dict[str, Any] | None:
        return await self.writer.run(self._call, call_id, owner)

    def _call(self, call_id: str, owner: str | None) -> dict[str, Any] | None:
        assert self.writer.db is not None
        row = self.writer.db.execute(
            "SELECT c.*, p.collection AS collection FROM calls c "
            "JOIN panels p ON p.id = c.panel_id WHERE c.id = ? AND (? IS NULL OR p.key_name = ?)",
            (call_id, owner, owner),
        ).fetchone()
        return None if row is None else self._with_verdict(load(row))

    def _with_verdict(self, call: dict[str, Any]) -> dict[str, Any]:
        call["verdict"] = self._current_verdict(call["id"])
        return call

    async def verdict_states(self, call_ids: list[str], owner: str | None = None) -> dict[str, str]:
        return await self.writer.run(self._verdict_states, call_ids, owner)

    def _verdict_states(self, call_ids: list[str], owner: str | None) -> dict[str, str]:
        """Each known call's state: pending (answered, unjudged), judged or unanswered."""
        assert self.writer.db is not None
        states: dict[str, str] = {}
        wanted = list(dict.fromkeys(call_ids))
        for start in range(0, len(wanted), 500):  # under SQLite's bound-parameter limit
            chunk = wanted[start : start + 500]
            rows = self.writer.db.execute(
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
        return await self.writer.run(self._owed, owner, limit)

    def _owed(self, owner: str | None, limit: int) -> list[dict[str, Any]]:
        """The newest answered seats that no verdict judges yet (mergers aside)."""
        assert self.writer.db is not None
        rows = self.writer.db.execute(
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
            db = self.writer.db
            assert db is not None
            found = pages.panels_page(db, limit=limit, before=before, owed=owed, owner=owner)
            found["owed"], found["owed_capped"] = pages.owed_count(db, owner)
            return found

        return await self.writer.run(read)

    async def change_marker(self) -> tuple[int, int, int]:
        return await self.writer.run(
            lambda: pages.change_marker(cast(sqlite3.Connection, self.writer.db))
        )

    async def standings(self) -> dict[str, Any]:
        return await self.writer.run(self._standings)

    def _standings(self) -> dict[str, Any]:
        """Per alias: seated, answered, last seated; per (alias, shape): useful and judged, and
        how many of each were given blind."""
        db = self.writer.db
        assert db is not None
        seats = db.execute(
            "SELECT alias, COUNT(*) AS seated, SUM(status = 'ok') AS answered, "
            "MAX(started) AS last_seated FROM calls WHERE seat != 'merger' GROUP BY alias"
        ).fetchall()
        verdicts = db.execute(
            "SELECT c.alias, c.shape, SUM(v.useful) AS useful, COUNT(*) AS judged, "
            "SUM(v.blind) AS blind_judged, SUM(v.useful * v.blind) AS blind_useful "
            "FROM verdicts v JOIN calls c ON c.id = v.call_id "
            "WHERE v.id IN (SELECT MAX(id) FROM verdicts GROUP BY call_id) "
            "GROUP BY c.alias, c.shape"
        ).fetchall()
        return {"seats": [dict(r) for r in seats], "verdicts": [dict(r) for r in verdicts]}

    # Gateway keys, learned context windows and cooldowns: the keys_and_limits'.

    async def add_key(self, key: dict[str, Any]) -> bool:
        return await self.keys_and_limits.add_key(key)

    async def keys(self) -> list[dict[str, Any]]:
        return await self.keys_and_limits.keys()

    async def key_by_digest(self, digest: str) -> dict[str, Any] | None:
        """Never cached, and read on the event loop's thread on a connection of its own
        (SqliteKeysAndLimits.key_by_digest says why)."""
        return await self.keys_and_limits.key_by_digest(digest)

    async def revoke_key(self, name: str) -> bool:
        return await self.keys_and_limits.revoke_key(name)

    async def touch_key(self, name: str, when: float) -> None:
        await self.keys_and_limits.touch_key(name, when)

    async def learn_window(self, alias: str, window: int) -> None:
        await self.keys_and_limits.learn_window(alias, window)

    async def learned_windows(self) -> dict[str, int]:
        return await self.keys_and_limits.learned_windows()

    async def learn_limit(self, limit: dict[str, Any]) -> None:
        await self.keys_and_limits.learn_limit(limit)

    async def keep_health(self, row: dict[str, Any], event: dict[str, Any] | None) -> None:
        await self.keys_and_limits.keep_health(row, event)

    async def health_rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return await self.keys_and_limits.health_rows()

    async def learned_limits(self, now: float) -> list[dict[str, Any]]:
        return await self.keys_and_limits.learned_limits(now)

    # The usage, read from the calls themselves (a seat not called, `cooling`, spent
    # nothing).

    async def day_counts(self, since: float) -> list[dict[str, Any]]:
        """Calls started since *since* (the day's start), per model and connection."""
        rows = await self.writer.run(
            lambda: (
                cast(sqlite3.Connection, self.writer.db)
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
        return await self.writer.run(self._usage, start, end, time_zone, owner)

    def _usage(
        self, start: float, end: float, time_zone: str, owner: str | None
    ) -> list[dict[str, Any]]:
        """Calls, tokens in/out and errors per day (in *time_zone*), model, connection and key."""
        db = self.writer.db
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
