"""Garbage written over the live store file in place: noticing it, and copying out what the
open connection still reads.

Why: `dd conv=notrunc`, a truncating `open`, `cp` onto the file or a restore tool writes into
the file the gateway holds: its identity (st_dev, st_ino) stays the same, so the watch on the
path (file.py) saw nothing. The open connection kept answering from its cache and the WAL,
`/healthz` said `ok`, and the next start failed with "database disk image is malformed", every
record lost. So the file is looked at, not only its name: once a second its header is read
straight from the disk and a connection of its own reads the schema and the migrations ledger
(what the next start reads first); every QUICK_CHECK_S, `PRAGMA quick_check` reads every page.
A damaged file is then put back as a moved one is (mend.py), from a copy made row by row
through the open connection (`salvage`): a page-by-page copy would carry the garbage over.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from gateway.store.sqlite.migrations import MIGRATIONS, migrate

log = logging.getLogger("bench.records")

QUICK_CHECK_S = 900.0  # every page read this often (a big store costs seconds of reading)
MAGIC = b"SQLite format 3\x00"
_DAMAGED = frozenset({11, 26})  # SQLite's CORRUPT and NOTADB: the file, not a moment of contention
# The tables holding records, copied in this order (foreign keys are not checked on the copy).
TABLES = ("panels", "calls", "verdicts", "gateway_keys", "learned_windows", "learned_limits")
_CHUNK = 1_000


def page_size_of(header: bytes) -> int:
    size = int.from_bytes(header[16:18], "big")
    return 65536 if size == 1 else size


def damaged(path: Path, page_size: int, birth: float | None, *, deep: bool = False) -> str | None:
    """Why the file at *path* is not the store that was opened there (its header, schema or
    ledger unreadable or another's), or None while it reads as it should. *deep*: read every
    page too. A file that is gone or busy is not called damaged here (file.py watches the
    name; a busy file is tried again)."""
    name = path.name
    try:
        with open(path, "rb") as file:
            header = file.read(100)
    except FileNotFoundError:
        return None
    if len(header) < 100 or not header.startswith(MAGIC):
        return f"the store file {name} was overwritten while serving (its header is not SQLite's)"
    if page_size_of(header) != page_size:
        return f"the store file {name} was overwritten while serving (its page size changed)"
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return None
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        first = db.execute(
            "SELECT applied FROM migrations WHERE name = ?", (MIGRATIONS[0][0],)
        ).fetchone()
        if birth is not None and (first is None or first[0] != birth):
            return f"the store file {name} was overwritten while serving (another store's ledger)"
        if deep:
            found = db.execute("PRAGMA quick_check(1)").fetchone()
            if found is None or found[0] != "ok":
                return f"the store file {name} is damaged: {found[0] if found else 'no answer'}"
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", 11) & 0xFF not in _DAMAGED:
            return None
        return f"the store file {name} was damaged while serving ({exc})"
    finally:
        db.close()
    return None


def salvage(source: sqlite3.Connection, draft: Path, ledger: list[tuple[str, float]]) -> None:
    """Every record *source* still reads, row by row, into a new file at *draft* with the same
    schema (the migrations, recorded with *ledger*'s names and times, so the copy carries the
    store's birth mark). A table read only in part is logged as an error naming what was not
    copied; what could not be read stays in the damaged file, kept aside by the caller."""
    draft.unlink(missing_ok=True)
    target = sqlite3.connect(draft, isolation_level=None)
    try:
        migrate(target)
        target.execute("BEGIN")
        target.execute("DELETE FROM migrations")
        target.executemany("INSERT INTO migrations VALUES (?, ?)", ledger)
        for table in TABLES:
            _copy_table(source, target, table)
        target.execute("COMMIT")
    finally:
        target.close()


def _copy_table(source: sqlite3.Connection, target: sqlite3.Connection, table: str) -> None:
    """*table*'s rows in rowid order, rowids kept (the order seats and the change marker read)."""
    info = target.execute(f"PRAGMA table_info({table})").fetchall()
    names = [row[1] for row in info]
    has_rowid_alias = any(row[5] and row[2].upper() == "INTEGER" for row in info)
    columns = ", ".join(f'"{name}"' for name in names)
    if not has_rowid_alias:
        columns = f"rowid, {columns}"
    marks = ", ".join("?" * (len(names) + (0 if has_rowid_alias else 1)))
    insert = f"INSERT INTO {table} ({columns}) VALUES ({marks})"
    copied = 0
    try:
        rows = source.execute(f"SELECT {columns} FROM {table} ORDER BY rowid")
        while chunk := rows.fetchmany(_CHUNK):
            target.executemany(insert, [tuple(row) for row in chunk])
            copied += len(chunk)
    except sqlite3.DatabaseError as exc:
        log.error(
            "the damaged store file: %s rows after the first %d could not be read (%s); "
            "they are left in the file set aside",
            table,
            copied,
            exc,
        )
