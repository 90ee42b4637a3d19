"""`bench-gateway store copy --from sqlite:///... --to postgresql://...`: move a SQLite store's
records (panels, seats, verdicts, keys, learned windows and limits, each model's health and its
events) into PostgreSQL; and back (gateway/store/copy_back.py), the same tables by the same
rules (gateway/store/copy_tables.py).

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

from gateway.store.copy_back import copy_back
from gateway.store.copy_tables import ADDED_LATER, CHUNK, tables, with_keys
from gateway.store.open import POSTGRES_SCHEMES
from gateway.store.postgres import PostgresStore
from gateway.store.statements import POSTGRES as SQL


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
