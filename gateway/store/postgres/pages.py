"""The dashboard's reads of the PostgreSQL store: gateway/store/pages.py's, in PostgreSQL's words.

The same bounds hold: a page walks the `(created, id)` index backwards from its cursor and stops
at `limit`; the owed count looks at the newest OWED_HORIZON answered seats; the change marker is
three MAX lookups answered from the end of an index (`seq` stands in for SQLite's rowid).
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from gateway.store.pages import OWED_HORIZON, UnknownCursor

Row = dict[str, Any]

_OWED_SEAT = (
    "c.status = 'ok' AND c.seat != 'merger' "
    "AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.call_id = c.id)"
)


def seat_range(panel: str) -> str:
    """pages.seat_range in PostgreSQL's words: the panel's range of the calls' primary key,
    with `panel_id` compared by `IS NOT DISTINCT FROM` (`=` on a NOT NULL column), which
    PostgreSQL can neither hash nor merge on. With `=`, joining panels to their seats, it
    would rather hash every seat of the store by panel_id than walk each panel's range."""
    return (
        f"c.id >= {panel} || '.' AND c.id < {panel} || '/' "
        f"AND c.panel_id IS NOT DISTINCT FROM {panel}"
    )


_PANEL_COLUMNS = (
    "p.id, p.created, p.requested_model, p.collection, p.shape, p.shape_by, p.prompt, "
    "p.key_name, p.skipped, p.notes, p.reserves"
)


async def panels_page(
    db: AsyncConnection[Row],
    *,
    limit: int,
    before: str | None = None,
    owed: bool = False,
    owner: str | None = None,
) -> Row:
    """Up to *limit* panels, newest first, older than the panel *before*; each with its seats
    and their current verdicts. `next` is the cursor of the following page, or None."""
    where: list[str] = []
    args: list[Any] = []
    if owner is not None:
        where.append("p.key_name = %s")
        args.append(owner)
    if before is not None:
        found = await db.execute(
            "SELECT created, id FROM panels WHERE id = %s AND (%s::text IS NULL OR key_name = %s)",
            (before, owner, owner),
        )
        cursor = await found.fetchone()
        if cursor is None:
            raise UnknownCursor(before)
        where.append("(p.created, p.id) < (%s, %s)")
        args += [cursor["created"], cursor["id"]]
    if owed:
        where.append(f"EXISTS (SELECT 1 FROM calls c WHERE {seat_range('p.id')} AND {_OWED_SEAT})")
    sql = f"SELECT {_PANEL_COLUMNS} FROM panels p"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY p.created DESC, p.id DESC LIMIT %s"
    rows = await (await db.execute(sql.encode(), [*args, limit + 1])).fetchall()
    panels = [dict(r) for r in rows[:limit]]
    seats = await _seats_of(db, [p["id"] for p in panels])
    for panel in panels:
        panel["seats"] = seats.get(panel["id"], [])
    more = len(rows) > limit
    return {"panels": panels, "next": panels[-1]["id"] if more and panels else None}


async def _seats_of(db: AsyncConnection[Row], panel_ids: list[str]) -> dict[str, list[Row]]:
    """Every seat of these panels (a range of the calls' primary key per panel), each with its
    latest verdict or None."""
    if not panel_ids:
        return {}
    found = await db.execute(
        "SELECT c.id, c.panel_id, c.seat, c.alias, c.connection, c.status, c.error, c.seconds, "
        "c.answer, c.replaces, c.replaced_by, c.started, v.useful AS v_useful, v.note AS v_note, "
        "v.blind AS v_blind "
        f"FROM unnest(%s::text[]) AS w(id) JOIN calls c ON {seat_range('w.id')} "
        "LEFT JOIN verdicts v ON v.id = (SELECT MAX(id) FROM verdicts WHERE call_id = c.id) "
        "ORDER BY c.started, c.seq",
        (panel_ids,),
    )
    seats: dict[str, list[Row]] = {}
    for row in await found.fetchall():
        seat = dict(row)
        useful, note, blind = seat.pop("v_useful"), seat.pop("v_note"), seat.pop("v_blind")
        seat["call"] = seat.pop("id")
        seat["verdict"] = (
            None if useful is None else {"useful": bool(useful), "note": note, "blind": bool(blind)}
        )
        seat["owed"] = seat["status"] == "ok" and seat["seat"] != "merger" and useful is None
        seats.setdefault(seat["panel_id"], []).append(seat)
    return seats


async def owed_count(db: AsyncConnection[Row], owner: str | None = None) -> tuple[int, bool]:
    """(unjudged seats among the newest OWED_HORIZON answered ones, whether the horizon was
    reached: older ones were not looked at)."""
    join, args = "", []
    if owner is not None:
        join = " JOIN panels p ON p.id = c.panel_id AND p.key_name = %s"
        args.append(owner)
    newest = (
        f"SELECT c.id, c.seat FROM calls c{join} WHERE c.status = 'ok' "
        "ORDER BY c.started DESC LIMIT %s"
    )
    found = await db.execute(
        f"SELECT COUNT(*) AS answered, COUNT(*) FILTER (WHERE c.seat != 'merger' AND NOT EXISTS "
        f"(SELECT 1 FROM verdicts v WHERE v.call_id = c.id)) AS owed FROM ({newest}) c".encode(),
        [*args, OWED_HORIZON],
    )
    row = await found.fetchone()
    assert row is not None
    return int(row["owed"]), int(row["answered"]) >= OWED_HORIZON


async def change_marker(db: AsyncConnection[Row]) -> tuple[int, int, int]:
    """What a dashboard compares to know something new was written: the newest panel, seat and
    verdict rows."""
    found = await db.execute(
        "SELECT (SELECT MAX(seq) FROM panels) AS panels, (SELECT MAX(seq) FROM calls) AS calls, "
        "(SELECT MAX(id) FROM verdicts) AS verdicts"
    )
    row = await found.fetchone()
    assert row is not None
    return (row["panels"] or 0, row["calls"] or 0, row["verdicts"] or 0)
