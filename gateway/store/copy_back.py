"""`bench-gateway store copy --from postgresql://... --to sqlite:///...`: the way back, a
PostgreSQL store's records (panels, seats, verdicts, keys, learned windows and limits, each
model's health and its events) into a SQLite file.

Why: leaving replicas for one gateway again, or a copy of the bench to read offline, must not
cost what was learned (a retired model seated again, its events gone). The same tables and
rules as the way there (gateway/store/copy.py; copy_tables.py): idempotent, a row already there
skipped, a model's newer health taken; rows in source order, a chunk a transaction. The source
is only read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg

from gateway.store.copy_tables import ADDED_LATER, CHUNK, tables, with_keys
from gateway.store.sqlite.migrations import migrate
from gateway.store.statements import SQLITE

# how rows are read in the order they were written; tables without one keep no order
_ORDER = {"panels": "seq", "calls": "seq", "verdicts": "id", "health_events": "at"}


async def copy_back(source: str, path: Path) -> dict[str, tuple[int, int]]:
    """Per table: (rows read, rows added). The file's migrations are applied first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    target = sqlite3.connect(path, isolation_level=None)
    copied: dict[str, tuple[int, int]] = {}
    try:
        migrate(target)
        async with await psycopg.AsyncConnection.connect(source) as db:
            for table, fields, sql in tables(SQLITE):
                seen = added = 0
                async for chunk in _chunks(db, table, fields):
                    target.execute("BEGIN IMMEDIATE")
                    try:
                        added += target.executemany(sql, with_keys(table, chunk)).rowcount
                        target.execute("COMMIT")
                    except BaseException:
                        target.execute("ROLLBACK")
                        raise
                    seen += len(chunk)
                copied[table] = (seen, added)
    finally:
        target.close()
    return copied


async def _chunks(
    db: psycopg.AsyncConnection[Any], table: str, fields: tuple[str, ...]
) -> AsyncIterator[list[list[Any]]]:
    found = await db.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s", (table,)
    )
    present = {row[0] for row in await found.fetchall()}
    if not present:  # a store from before the table's migration: nothing to copy
        return
    names = ", ".join(
        f'"{name}"' if name in present else ADDED_LATER.get((table, name), f'"{name}"')
        for name in fields
    )
    order = _ORDER.get(table, "1")
    async with db.transaction(), db.cursor(name=f"copy_{table}") as rows:
        await rows.execute(f"SELECT {names} FROM {table} ORDER BY {order}".encode())
        while chunk := await rows.fetchmany(CHUNK):
            yield [list(row) for row in chunk]
