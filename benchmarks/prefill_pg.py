"""A PostgreSQL record store holding a million seats, made in about a minute.

Why inside PostgreSQL: a million seats through the gateway would take hours and measure the
upstream; what matters is what the store's size does to each later panel (its inserts into
larger indexes, the start-up read of standings). So the gateway makes the schema itself (started
once on an empty database, then stopped) and `generate_series` writes the rows server-side in
two statements, 5 seats per panel over 90 days, exactly where the gateway would put them; any
NOT NULL column a later migration adds gets a value by its type. Panel ids are made as the
gateway makes them (the second, then random hex digits), so a later panel's rows land where they
would in a store that grew by use. The load ends with a checkpoint, as a store in use has long
since had one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import targets as t
from context import Ctx
from psycopg import sql
from services import Postgres

SEATS = 5
DATABASE = "bench_full"
ANSWER = "Line 42 shadows `result`; the early return skips the close(). " * 3
_BY_TYPE = {"text": "'x'", "bigint": "0", "integer": "0", "double precision": "0"}


def _columns(pg: Postgres, table: str) -> list[tuple[str, str, bool]]:
    """(name, type, must be given) for each column a plain INSERT may write."""
    with pg.admin(DATABASE) as db:
        rows = db.execute(
            "SELECT column_name, data_type, is_nullable = 'NO' AND column_default IS NULL "
            "AND is_identity = 'NO' FROM information_schema.columns "
            "WHERE table_name = %s AND is_generated = 'NEVER' ORDER BY ordinal_position",
            (table,),
        ).fetchall()
    return [(name, kind, bool(required)) for name, kind, required in rows]


def _select(pg: Postgres, table: str, known: dict[str, str], source: str) -> sql.Composed:
    names, values = [], []
    for name, kind, required in _columns(pg, table):
        if name in known:
            names.append(sql.Identifier(name))
            values.append(sql.SQL(known[name]))
        elif required:
            names.append(sql.Identifier(name))
            values.append(sql.SQL(_BY_TYPE.get(kind, "'x'")))
    return sql.SQL("INSERT INTO {} ({}) SELECT {} FROM {}").format(
        sql.Identifier(table), sql.SQL(", ").join(names), sql.SQL(", ").join(values),
        sql.SQL(source),
    )  # fmt: skip


def prefill(ctx: Ctx, pg: Postgres, config_for: Callable[[str, str | None], Path]) -> str:
    """The database's name: ``ctx.record_rows`` seats in the gateway's own schema."""
    url = pg.new_database(DATABASE)
    proc, _ = t.start_ours(ctx.work, config_for(url, None), workers=1)  # the migrations
    proc.stop()
    began = time.monotonic()
    n = ctx.record_rows // SEATS
    now, span = time.time(), 90 * 86400.0
    created = f"({now - span!r} + {span!r} * i / {n})"
    # new_panel_id()'s shape: the second it was seated, then 12 hex digits scattered as random
    panel_id = f"'p' || lpad(to_hex(floor{created}::bigint), 8, '0') || left(md5(i::text), 12)"
    panels = {
        "id": panel_id,
        "created": created,
        "requested_model": "'bench/five'",
        "collection": "'five'",
        "shape": "'general'",
        "shape_by": "'default'",
        "prompt": "'Review: is retrying forever safe?'",
        "key_name": "'local'",
        "skipped": "'[]'",
        "notes": "'[]'",
        "reserves": "'[]'",
    }
    calls = {
        "id": f"{panel_id} || '.member' || s",
        "panel_id": panel_id,
        "seat": "'member' || s",
        "alias": "'m' || s",
        "model": "'openai/sim-m' || s",
        "connection": "'cm' || s",
        "shape": "'general'",
        "status": "'ok'",
        "seconds": "0.8",
        "first_token_s": "0.3",
        "tokens_in": "12",
        "tokens_out": "40",
        "answer": sql.Literal(ANSWER).as_string(None),
        "started": created,
        "finished": f"{created} + 0.8",
    }
    with pg.admin(DATABASE) as db:
        db.execute(_select(pg, "panels", panels, f"generate_series(0, {n - 1}) AS i ORDER BY i"))
        db.execute(
            _select(
                pg,
                "calls",
                calls,
                f"generate_series(0, {n - 1}) AS i, generate_series(1, {SEATS}) AS s ORDER BY i, s",
            )
        )
        db.execute("VACUUM ANALYZE")  # what autovacuum would have done by then
        db.execute("CHECKPOINT")  # the load's pages on disk, not written during the runs
        count = db.execute("SELECT COUNT(*) FROM calls").fetchone()
        size = db.execute("SELECT pg_database_size(current_database())").fetchone()
    ctx.log(
        f"pre-filled {count[0] if count else 0:,} seats into PostgreSQL in "
        f"{time.monotonic() - began:.0f} s ({(size[0] if size else 0) / 1e6:.0f} MB)"
    )
    return DATABASE
