"""`bench-gateway store copy --from sqlite:///... --to postgresql://...`: move a SQLite store's
records (panels, seats, verdicts, keys, learned windows and limits, each model's health and its
events) into PostgreSQL.

Idempotent, so it can be run again after a replica wrote more to the old file: a row already
there (same primary key; for a verdict, the same seat and time; for a health event, the same
model, health and time) is skipped, never doubled; a model's health is taken when the file's
changed later than the target's. Rows go in source order, a chunk a transaction, so verdict
history keeps its order.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg

from gateway.store.health_rows import COLUMNS as HEALTH_FIELDS
from gateway.store.open import POSTGRES_SCHEMES
from gateway.store.postgres import PostgresStore
from gateway.store.rows import CALL_FIELDS, KEY_FIELDS, PANEL_FIELDS, VERDICT_FIELDS
from gateway.store.statements import POSTGRES as SQL

CHUNK = 1_000

_WINDOW_FIELDS = ("alias", "context_window", "learned")
_LIMIT_FIELDS = ("alias", "until", "why", "source", "learned")
_EVENT_FIELDS = ("alias", "health", "why", "at")
# a model's health: the newer record wins (a benching, retirement or restore since the last copy)
_HEALTH_SQL = SQL.insert_into("model_health", HEALTH_FIELDS) + (
    " ON CONFLICT (alias) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in HEALTH_FIELDS[1:])
    + " WHERE model_health.changed IS NULL OR model_health.changed < excluded.changed"
)

# (table, fields, how a row already copied is recognised); JSON fields stay text on both sides.
_TABLES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("panels", PANEL_FIELDS, SQL.insert_skipping["panels"]),
    ("calls", CALL_FIELDS, SQL.insert_skipping["calls"]),
    (
        "verdicts",
        VERDICT_FIELDS,
        'INSERT INTO verdicts (call_id, useful, note, "real", "false", created, key_name, blind) '
        "SELECT %s, %s, %s, %s, %s, %s, %s, %s WHERE NOT EXISTS "
        "(SELECT 1 FROM verdicts WHERE call_id = %s AND created = %s)",
    ),
    ("gateway_keys", KEY_FIELDS, SQL.insert_into("gateway_keys", KEY_FIELDS, skipping=True)),
    (
        "learned_windows",
        _WINDOW_FIELDS,
        SQL.insert_into("learned_windows", _WINDOW_FIELDS, skipping=True),
    ),
    (
        "learned_limits",
        _LIMIT_FIELDS,
        SQL.insert_into("learned_limits", _LIMIT_FIELDS, skipping=True),
    ),
    ("model_health", HEALTH_FIELDS, _HEALTH_SQL),
    (
        "health_events",
        _EVENT_FIELDS,
        "INSERT INTO health_events (alias, health, why, at) SELECT %s, %s, %s, %s WHERE NOT EXISTS "
        "(SELECT 1 FROM health_events WHERE alias = %s AND health = %s AND at = %s)",
    ),
)


def run_copy(source: str, target: str) -> int:
    """The command: exit 0 with the counts printed, 2 for URLs it cannot copy between."""
    prefix = "sqlite:///"
    if not source.startswith(prefix) or not target.startswith(POSTGRES_SCHEMES):
        print(
            "bench-gateway: store copy goes --from sqlite:///PATH --to postgresql://...",
            file=sys.stderr,
        )
        return 2
    path = Path(source[len(prefix) :])
    if not path.is_file():
        print(f"bench-gateway: no SQLite store at {path}", file=sys.stderr)
        return 1
    try:
        copied = asyncio.run(copy_records(path, target))
    except psycopg.Error as exc:
        print(f"bench-gateway: PostgreSQL: {exc}", file=sys.stderr)
        return 1
    for table, (seen, added) in copied.items():
        print(f"{table:<16} {added:>8} copied  {seen - added:>8} already there")
    return 0


async def copy_records(path: Path, target: str) -> dict[str, tuple[int, int]]:
    """Per table: (rows read, rows added). The target's migrations are applied first."""
    source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    store = PostgresStore(target, pool_size=1)
    await store.open()
    copied: dict[str, tuple[int, int]] = {}
    try:
        for table, fields, sql in _TABLES:
            seen = added = 0
            for chunk in _chunks(source, table, fields):
                if table == "verdicts":
                    chunk = [[*row, row[0], row[5]] for row in chunk]
                elif table == "health_events":
                    chunk = [[*row, row[0], row[1], row[3]] for row in chunk]
                async with store.link.pool.connection() as db, db.transaction(), db.cursor() as cur:
                    await cur.executemany(sql.encode(), chunk)  # (pipelined: few round trips)
                    added += max(cur.rowcount, 0)  # the rows the whole chunk added
                seen += len(chunk)
            copied[table] = (seen, added)
    finally:
        source.close()
        await store.close()
    return copied


# Columns a store not yet opened by this version lacks, and what its rows mean there.
_ADDED_LATER = {
    ("verdicts", "blind"): "0",  # 0009_blind_verdicts: every earlier verdict open
    ("calls", "dropped"): "NULL",  # 0010_dropped_hints: nothing was named dropped before
    ("calls", "failure"): "NULL",  # 0011_failure_classes: earlier failures have no class
}


def _chunks(db: sqlite3.Connection, table: str, fields: tuple[str, ...]) -> Iterator[list[Any]]:
    present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    if not present:  # a store from before its migration (0012_model_health): nothing to copy
        return
    names = ", ".join(
        f'"{name}"' if name in present else _ADDED_LATER.get((table, name), f'"{name}"')
        for name in fields
    )
    rows = db.execute(f"SELECT {names} FROM {table} ORDER BY rowid")
    while chunk := rows.fetchmany(CHUNK):
        yield [list(row) for row in chunk]
