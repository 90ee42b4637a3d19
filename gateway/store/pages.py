"""The dashboard's reads of the record store, as both stores make them: a page of recent panels
with their seats, the count of owed verdicts, and a cheap marker of what changed.

Each read is bounded, whatever the size of the store: a page walks the `(created, id)` index
backwards from its cursor and stops at `limit`; the owed count looks at the newest answered seats
only (OWED_HORIZON of them); the change marker is three MAX lookups the engine answers from the
end of a b-tree (SQLite's rowid; PostgreSQL's `seq` stands in for it).
benchmarks/measure_pages.py times them on 1,000,000 seats. The statements are in
gateway/store/statements.py; each store runs them (`panels_page` there) and builds the page here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gateway.store.rows import Row, load, seat_view
from gateway.store.statements import OWED_HORIZON, Statements

__all__ = ["MAX_LIMIT", "OWED_HORIZON", "UnknownCursor", "page", "page_query"]

MAX_LIMIT = 100


class UnknownCursor(LookupError):
    """`before` names no panel this reader can see."""


def page_query(
    statements: Statements,
    *,
    limit: int,
    cursor: Mapping[str, Any] | None,
    owed: bool,
    owner: str | None,
) -> tuple[str, list[Any]]:
    """The statement reading up to *limit* + 1 panels, newest first, older than *cursor* (the
    row `statements.cursor` found for `before`), and its parameters."""
    args: list[Any] = [] if owner is None else [owner]
    if cursor is not None:
        args += [cursor["created"], cursor["id"]]
    sql = statements.panels_page(owner=owner is not None, before=cursor is not None, owed=owed)
    return sql, [*args, limit + 1]


def page(panels: Sequence[Mapping[str, Any]], seats: Sequence[Any], limit: int) -> Row:
    """The page: up to *limit* of *panels* (page_query's rows), each with its seats (the rows
    of `statements.seats_of`) and their current verdicts; `next` is the cursor of the
    following page, or None."""
    found = [load(row) for row in panels[:limit]]  # its lists as lists, as /bench/panels/{id}
    by_panel: dict[str, list[Row]] = {}
    for row in seats:
        seat = seat_view(row)
        by_panel.setdefault(seat["panel_id"], []).append(seat)
    for panel in found:
        panel["seats"] = by_panel.get(panel["id"], [])
    more = len(panels) > limit
    return {"panels": found, "next": found[-1]["id"] if more and found else None}


def owed(row: Mapping[str, Any]) -> tuple[int, bool]:
    """(unjudged seats among the newest OWED_HORIZON answered ones, whether the horizon was
    reached: older ones were not looked at), from `statements.owed_count`'s row."""
    return int(row["owed"] or 0), int(row["answered"]) >= OWED_HORIZON
