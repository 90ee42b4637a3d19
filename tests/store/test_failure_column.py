"""A call's failure class (`failure`, migration 0011) on both stores: kept as written, and a
store from before the classes read as no class (SQLite migrated in place; copied to PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import psycopg
import pytest

from gateway.cli.main import main
from gateway.store.postgres import PostgresStore
from gateway.store.sqlite import SqliteStore
from gateway.store.sqlite.migrations import MIGRATIONS
from tests.helpers.records import call, panel

BEFORE = [name for name, _ in MIGRATIONS].index("0011_failure_classes")


def store_before_the_classes(path: Path) -> None:
    """A SQLite store as an earlier version left it: one failed seat, with no class."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied REAL)")
    for name, script in MIGRATIONS[:BEFORE]:
        db.executescript(script)
        db.execute("INSERT INTO migrations VALUES (?, 1.0)", (name,))
    failed = {**call("p0", "member1"), "status": "error", "error": "404", "answer": None}
    for table, row in (("panels", panel(0)), ("calls", failed)):
        names = ", ".join(f'"{k}"' for k in row)
        values = [json.dumps(v) if isinstance(v, list) else v for v in row.values()]
        db.execute(f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(row))})", values)
    db.commit()
    db.close()


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_calls_failure_class_is_kept_as_written(engine, tmp_path, request):
    url = request.getfixturevalue("pg_url") if engine == "postgresql" else None

    async def kept() -> tuple[str | None, str | None]:
        store = PostgresStore(url) if url else SqliteStore(tmp_path / "s.db")
        await store.open()
        try:
            await store.add_panel(panel(1))
            await store.add_call({**call("p1", "member1"), "status": "error", "failure": "gone"})
            await store.add_call(call("p1", "member2"))
            first, second = [await store.call(f"p1.{s}") for s in ("member1", "member2")]
            assert first is not None and second is not None
            return first["failure"], second["failure"]
        finally:
            await store.close()

    assert asyncio.run(kept()) == ("gone", None)


def test_a_sqlite_store_from_before_the_classes_is_migrated_and_reads_as_no_class(tmp_path):
    store_before_the_classes(tmp_path / "before.db")

    async def read() -> dict | None:
        store = SqliteStore(tmp_path / "before.db")
        await store.open()
        try:
            return await store.call("p0.member1")
        finally:
            await store.close()

    found = asyncio.run(read())
    assert found is not None and (found["status"], found["failure"]) == ("error", None)
    with sqlite3.connect(tmp_path / "before.db") as db:
        names = [row[0] for row in db.execute("SELECT name FROM migrations ORDER BY name")]
    assert names[10:12] == ["0011_failure_classes", "0012_model_health"]


def test_a_store_from_before_the_classes_copies_to_postgresql_as_no_class(pg_url, tmp_path):
    store_before_the_classes(tmp_path / "before.db")
    assert main(["store", "copy", "--from", f"sqlite:///{tmp_path}/before.db", "--to", pg_url]) == 0
    with psycopg.connect(pg_url) as db:
        found = db.execute(b"SELECT status, failure FROM calls WHERE id = 'p0.member1'").fetchall()
    assert found == [("error", None)]
