"""`bench-gateway store copy --from sqlite:///... --to postgresql://...`: move a SQLite store's
records (panels, seats, verdicts, keys, learned windows and limits, each model's health and its
events) into PostgreSQL; and back (gateway/store/copy_back.py, the same tables and rules).

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
from gateway.store.statements import Statements

CHUNK = 1_000

_WINDOW_FIELDS = ("alias", "context_window", "learned")
_LIMIT_FIELDS = ("alias", "until", "why", "source", "learned")
_EVENT_FIELDS = ("alias", "health", "why", "at")
Tables = tuple[tuple[str, tuple[str, ...], str], ...]


def tables(sql: Statements) -> Tables:
    """(table, fields, the INSERT that recognises a row already copied), in the order rows must
    go (a seat after its panel, a verdict after its seat), in the target engine's words. JSON
    fields stay text on both sides."""
    m = sql.dialect.mark

    def not_there(table: str, fields: tuple[str, ...], keys: tuple[str, ...]) -> str:
        names = ", ".join(f'"{name}"' for name in fields)
        found = " AND ".join(f'"{key}" = {m}' for key in keys)
        return (
            f"INSERT INTO {table} ({names}) SELECT {', '.join([m] * len(fields))} "
            f"WHERE NOT EXISTS (SELECT 1 FROM {table} WHERE {found})"
        )

    # a model's health: the newer record wins (a benching, retirement or restore since)
    health = sql.insert_into("model_health", HEALTH_FIELDS) + (
        " ON CONFLICT (alias) DO UPDATE SET "
        + ", ".join(f"{c} = excluded.{c}" for c in HEALTH_FIELDS[1:])
        + " WHERE model_health.changed IS NULL OR model_health.changed < excluded.changed"
    )
    return (
        ("panels", PANEL_FIELDS, sql.insert_skipping["panels"]),
        ("calls", CALL_FIELDS, sql.insert_skipping["calls"]),
        ("verdicts", VERDICT_FIELDS, not_there("verdicts", VERDICT_FIELDS, ("call_id", "created"))),
        ("gateway_keys", KEY_FIELDS, sql.insert_into("gateway_keys", KEY_FIELDS, skipping=True)),
        (
            "learned_windows",
            _WINDOW_FIELDS,
            sql.insert_into("learned_windows", _WINDOW_FIELDS, skipping=True),
        ),
        (
            "learned_limits",
            _LIMIT_FIELDS,
            sql.insert_into("learned_limits", _LIMIT_FIELDS, skipping=True),
        ),
        ("model_health", HEALTH_FIELDS, health),
        (
            "health_events",
            _EVENT_FIELDS,
            not_there("health_events", _EVENT_FIELDS, ("alias", "health", "at")),
        ),
    )


# the fields a row's "already there" test repeats (after its own), by table
REPEATED = {"verdicts": (0, 5), "health_events": (0, 1, 3)}


def with_keys(table: str, chunk: list[list[Any]]) -> list[list[Any]]:
    """Each row with the fields its NOT EXISTS test reads again."""
    repeated = REPEATED.get(table)
    if repeated is None:
        return chunk
    return [[*row, *(row[i] for i in repeated)] for row in chunk]


def run_copy(source: str, target: str) -> int:
    """The command: exit 0 with the counts printed, 2 for URLs it cannot copy between."""
    prefix = "sqlite:///"
    there = source.startswith(prefix) and target.startswith(POSTGRES_SCHEMES)
    back = source.startswith(POSTGRES_SCHEMES) and target.startswith(prefix)
    if not (there or back):
        print(
            "bench-gateway: store copy goes --from sqlite:///PATH --to postgresql://..., "
            "or back: --from postgresql://... --to sqlite:///PATH",
            file=sys.stderr,
        )
        return 2
    path = Path((source if there else target)[len(prefix) :])
    if there and not path.is_file():
        print(f"bench-gateway: no SQLite store at {path}", file=sys.stderr)
        return 1
    from gateway.store.copy_back import copy_back  # (it reads this module's tables)

    try:
        copied = asyncio.run(copy_records(path, target) if there else copy_back(source, path))
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
        for table, fields, sql in tables(SQL):
            seen = added = 0
            for chunk in _chunks(source, table, fields):
                chunk = with_keys(table, chunk)
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
ADDED_LATER = {
    ("verdicts", "blind"): "0",  # 0009_blind_verdicts: every earlier verdict open
    ("calls", "dropped"): "NULL",  # 0010_dropped_hints: nothing was named dropped before
    ("calls", "failure"): "NULL",  # 0011_failure_classes: earlier failures have no class
}


def _chunks(db: sqlite3.Connection, table: str, fields: tuple[str, ...]) -> Iterator[list[Any]]:
    present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    if not present:  # a store from before its migration (0012_model_health): nothing to copy
        return
    names = ", ".join(
        f'"{name}"' if name in present else ADDED_LATER.get((table, name), f'"{name}"')
        for name in fields
    )
    rows = db.execute(f"SELECT {names} FROM {table} ORDER BY rowid")
    while chunk := rows.fetchmany(CHUNK):
        yield [list(row) for row in chunk]
