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

import contextlib
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from gateway.store.sqlite.migrations import MIGRATIONS, migrate

QUICK_CHECK_S = 900.0  # every page read this often (a big store costs seconds of reading)
MAGIC = b"SQLite format 3\x00"
_DAMAGED = frozenset({11, 26})  # SQLite's CORRUPT and NOTADB: the file, not a moment of contention
# The tables holding records, copied in this order (foreign keys are not checked on the copy).
TABLES = (
    "panels",
    "calls",
    "verdicts",
    "gateway_keys",
    "learned_windows",
    "learned_limits",
    "model_health",
    "health_events",
    "suite_runs",
    "suite_answers",
    "suite_drafts",
)  # not suite_lock: a lock held in the damaged file means nothing in the copy
_CHUNK = 1_000


def page_size_of(header: bytes) -> int:
    size = int.from_bytes(header[16:18], "big")
    return 65536 if size == 1 else size


def damaged(
    path: Path, header: bytes, page_size: int, birth: float | None, *, deep: bool = False
) -> str | None:
    """Why the file at *path*, whose first bytes on disk are *header* (read through the
    descriptor held on it: file.py says why), is not the store that was opened there (its
    header, schema or ledger unreadable or another's), or None while it reads as it should.
    *deep*: read every page too. A file that is busy is not called damaged here (it is tried
    again)."""
    name = path.name
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


def page_one(found: bytes, page_size: int) -> bytes | None:
    """*found* (the file's first page as it is on disk) if its header is SQLite's: kept while
    the file is healthy, to read a copy of the file with, should garbage be written over it
    (`salvage`)."""
    ok = len(found) == page_size and found.startswith(MAGIC) and page_size_of(found) == page_size
    return found if ok else None


class Unreadable(Exception):
    """Records the open connection cannot read, nor a copy of the file mended with its first
    page as last seen: the store is not put back (an emptier store would replace it)."""


def salvage(
    source: sqlite3.Connection,
    draft: Path,
    ledger: list[tuple[str, float]],
    path: Path,
    held: int,
    first_page: bytes | None,
) -> None:
    """Every record *source* still reads, row by row, into a new file at *draft* with the same
    schema (the migrations, recorded with *ledger*'s names and times, so the copy carries the
    store's birth mark). A table it cannot read whole (the garbage is over pages only the file
    holds: the first, say, after a checkpoint) is read from a copy of the file at *path* (read
    through *held*, the descriptor held on it) and its WAL with *first_page* (as last seen
    healthy) written over the first. Raises Unreadable
    when a table cannot be read whole either way."""
    draft.unlink(missing_ok=True)
    target = sqlite3.connect(draft, isolation_level=None)
    try:
        migrate(target)
        target.execute("BEGIN")
        target.execute("DELETE FROM migrations")
        target.executemany("INSERT INTO migrations VALUES (?, ?)", ledger)
        failed = {table: why for table in TABLES if (why := _copy_table(source, target, table))}
        if failed and first_page is not None:
            with _mended_copy(path, held, draft, first_page) as mended:
                failed = {t: why for t in failed if (why := _copy_table(mended, target, t))}
        if failed:
            raise Unreadable(", ".join(f"{table}: {why}" for table, why in failed.items()))
        target.execute("COMMIT")
    finally:
        target.close()


@contextlib.contextmanager
def _mended_copy(
    path: Path, held: int, draft: Path, first_page: bytes
) -> Iterator[sqlite3.Connection]:
    """A copy of the file at *path* and its WAL, *first_page* written over its first page with
    its stated size voided (SQLite then takes the file's), read on a connection of its own."""
    copy = draft.with_name(draft.name + ".mended")
    for suffix in ("", "-wal", "-shm"):
        copy.with_name(copy.name + suffix).unlink(missing_ok=True)
    with open(copy, "wb") as out:
        offset = 0
        while chunk := os.pread(held, 1 << 20, offset):
            out.write(chunk)
            offset += len(chunk)
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
    page = bytearray(first_page)
    page[92:96] = (int.from_bytes(page[24:28], "big") + 1 & 0xFFFFFFFF).to_bytes(4, "big")
    with open(copy, "r+b") as file:
        file.write(page)
    db = sqlite3.connect(copy, isolation_level=None)
    try:
        yield db
    finally:
        db.close()
        for suffix in ("", "-wal", "-shm"):
            copy.with_name(copy.name + suffix).unlink(missing_ok=True)


def _copy_table(source: sqlite3.Connection, target: sqlite3.Connection, table: str) -> str | None:
    """*table*'s rows in rowid order, rowids kept (the order seats and the change marker read),
    a row already copied skipped; None once every row is copied, else why not."""
    info = target.execute(f"PRAGMA table_info({table})").fetchall()
    names = [row[1] for row in info]
    has_rowid_alias = any(row[5] and row[2].upper() == "INTEGER" for row in info)
    columns = ", ".join(f'"{name}"' for name in names)
    if not has_rowid_alias:
        columns = f"rowid, {columns}"
    marks = ", ".join("?" * (len(names) + (0 if has_rowid_alias else 1)))
    insert = f"INSERT OR IGNORE INTO {table} ({columns}) VALUES ({marks})"
    try:
        rows = source.execute(f"SELECT {columns} FROM {table} ORDER BY rowid")
        while chunk := rows.fetchmany(_CHUNK):
            target.executemany(insert, [tuple(row) for row in chunk])
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None
