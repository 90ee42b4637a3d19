"""The dashboard's reads of the record store: a page of recent panels with their seats, the count
of owed verdicts, and a cheap marker of what changed.

Each read is bounded, whatever the size of the store: a page walks the `(created, id)` index
backwards from its cursor and stops at `limit`; the owed count looks at the newest answered seats
only (OWED_HORIZON of them); the change marker is three MAX(rowid)-style lookups SQLite answers
from the end of a b-tree. benchmarks/measure_pages.py times them on 1,000,000 seats.
"""

from __future__ import annotations

import sqlite3
from typing import Any

MAX_LIMIT = 100
OWED_HORIZON = 2_000  # the newest answered seats the owed count looks at

# A seat is owed a verdict when it answered and nobody judged it.
_OWED_SEAT = (
    "c.status = 'ok' AND c.seat != 'merger' "
    "AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.call_id = c.id)"
)


def seat_range(panel: str) -> str:
    """The condition that a call `c` is a seat of the panel *panel* (an SQL expression), read as
    a range of the calls' primary key: a seat's id is `<panel>.<seat>` and '/' follows '.' in
    byte order, so the ids from `<panel>.` up to `<panel>/` hold the panel's seats, side by
    side in the key's b-tree. `panel_id` is compared as well: the gateway's panel ids hold no
    '.', but were one `<panel>.x`, its seats would be in that range too."""
    return f"c.id >= {panel} || '.' AND c.id < {panel} || '/' AND c.panel_id = {panel}"


class UnknownCursor(LookupError):
    """`before` names no panel this reader can see."""


def panels_page(
    db: sqlite3.Connection,
    *,
    limit: int,
    before: str | None = None,
    owed: bool = False,
    owner: str | None = None,
) -> dict[str, Any]:
    """Up to *limit* panels, newest first, older than the panel *before*; each with its seats
    and their current verdicts. `next` is the cursor of the following page, or None."""
    where: list[str] = []
    args: list[Any] = []
    if owner is not None:
        where.append("p.key_name = ?")
        args.append(owner)
    if before is not None:
        row = db.execute(
            "SELECT created, id FROM panels WHERE id = ?"
            + (" AND key_name = ?" if owner is not None else ""),
            (before, owner) if owner is not None else (before,),
        ).fetchone()
        if row is None:
            raise UnknownCursor(before)
        where.append("(p.created, p.id) < (?, ?)")
        args += [row[0], row[1]]
    if owed:
        where.append(f"EXISTS (SELECT 1 FROM calls c WHERE {seat_range('p.id')} AND {_OWED_SEAT})")
    sql = "SELECT p.* FROM panels p"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY p.created DESC, p.id DESC LIMIT ?"
    rows = db.execute(sql, [*args, limit + 1]).fetchall()
    panels = [dict(r) for r in rows[:limit]]
    seats = _seats_of(db, [p["id"] for p in panels])
    for panel in panels:
        panel["seats"] = seats.get(panel["id"], [])
    more = len(rows) > limit
    return {"panels": panels, "next": panels[-1]["id"] if more and panels else None}


def _seats_of(db: sqlite3.Connection, panel_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Every seat of these panels (a range of the calls' primary key per panel), each with its
    latest verdict or None."""
    if not panel_ids:
        return {}
    marks = ", ".join(["(?)"] * len(panel_ids))
    rows = db.execute(  # CROSS JOIN: SQLite keeps that order, each wanted id then its range
        f"WITH wanted(id) AS (VALUES {marks}) "
        "SELECT c.id, c.panel_id, c.seat, c.alias, c.connection, c.status, c.error, c.seconds, "
        "c.answer, c.replaces, c.replaced_by, c.started, v.useful AS v_useful, v.note AS v_note, "
        "v.blind AS v_blind "
        f"FROM wanted w CROSS JOIN calls c ON {seat_range('w.id')} "
        "LEFT JOIN verdicts v ON v.id = (SELECT MAX(id) FROM verdicts WHERE call_id = c.id) "
        "ORDER BY c.started, c.rowid",
        panel_ids,
    ).fetchall()
    found: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        seat = dict(row)
        useful, note, blind = seat.pop("v_useful"), seat.pop("v_note"), seat.pop("v_blind")
        seat["call"] = seat.pop("id")
        seat["verdict"] = (
            None if useful is None else {"useful": bool(useful), "note": note, "blind": bool(blind)}
        )
        seat["owed"] = seat["status"] == "ok" and seat["seat"] != "merger" and useful is None
        found.setdefault(seat["panel_id"], []).append(seat)
    return found


def owed_count(db: sqlite3.Connection, owner: str | None = None) -> tuple[int, bool]:
    """(answered, unjudged seats among the newest OWED_HORIZON answered ones, whether the
    horizon was reached: older ones were not looked at)."""
    join, args = "", []
    if owner is not None:
        join = " JOIN panels p ON p.id = c.panel_id AND p.key_name = ?"
        args.append(owner)
    newest = (
        f"SELECT c.id, c.seat FROM calls c{join} WHERE c.status = 'ok' "
        "ORDER BY c.started DESC LIMIT ?"
    )
    row = db.execute(
        f"SELECT COUNT(*), SUM(c.seat != 'merger' AND NOT EXISTS "
        f"(SELECT 1 FROM verdicts v WHERE v.call_id = c.id)) FROM ({newest}) c",
        [*args, OWED_HORIZON],
    ).fetchone()
    return int(row[1] or 0), int(row[0]) >= OWED_HORIZON


def change_marker(db: sqlite3.Connection) -> tuple[int, int, int]:
    """What a dashboard compares to know something new was written: the newest panel, seat and
    verdict rows (rowids only grow)."""
    row = db.execute(
        "SELECT (SELECT MAX(rowid) FROM panels), (SELECT MAX(rowid) FROM calls), "
        "(SELECT MAX(id) FROM verdicts)"
    ).fetchone()
    return (row[0] or 0, row[1] or 0, row[2] or 0)
