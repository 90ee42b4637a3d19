"""Bringing a SQLite store back to writing, on its writer thread: the file put back when it was
deleted, replaced or overwritten in place (damage.py), a write tried, and the rows kept
meanwhile written back.

The detour (gateway/store/sqlite/detour.py) calls these once a second while the file cannot
write, through the writer (`SqliteWriter.mend`, `.write_back`); gateway/store/sqlite/file.py
says why the file is put back in this order when several workers hold it.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path
from typing import Protocol

from gateway.store.spill import Refused, Rows
from gateway.store.sqlite.damage import Unreadable
from gateway.store.sqlite.file import FIRST_MIGRATION, StoreFault, StoreFile, fault_of

log = logging.getLogger("bench.records")


class SqliteWriter(Protocol):
    """What mending needs of the writer (gateway/store/sqlite/writer.py)."""

    path: Path
    file: StoreFile
    db: sqlite3.Connection | None

    def connect(self) -> None: ...
    def disconnect(self) -> None: ...
    def insert(self, rows: Rows, *, tries: int = 20, skip_existing: bool = False) -> None: ...


def mend(writer: SqliteWriter) -> str | None:
    """Put the file back if it moved or was damaged, then try a write: None once the file takes
    writes, else why not (a fault of the file; anything else is raised)."""
    file = writer.file
    try:
        if writer.db is None or file.changed() is not None or _damaged(file):
            why = put_back(writer)
            if why is not None:
                return why
        probe(writer)
    except Exception as exc:
        fault = fault_of(exc, writer.path.name)
        if fault is None:
            raise
        return fault.why
    return None


def probe(writer: SqliteWriter) -> None:
    """A write under the write lock, committed: raises while the file cannot take one."""
    db = writer.db
    assert db is not None
    db.execute("BEGIN IMMEDIATE")
    try:
        moved = writer.file.changed()
        if moved is not None:
            raise StoreFault(moved)
        db.execute("UPDATE migrations SET applied = applied WHERE name = ?", (FIRST_MIGRATION,))
        db.execute("COMMIT")
    finally:
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")


def put_back(writer: SqliteWriter) -> str | None:
    """The file at the path is not the one opened (or none is open). The worker holding the
    folder's lock copies the records it still reads to the path, once every other worker has
    let go of the old file; the others let go and reopen what it put back. None once this
    worker has the store open again, else why not."""
    file = writer.file
    if file.unreadable is not None:  # (found once: reading it all again would not help)
        return file.unreadable
    damage = file.damage if file.changed() is None else None
    moved = file.changed() or damage or f"the store file {writer.path.name} is not open"
    with file.folder_locked(wait=False) as mine:
        if mine and writer.db is not None and (damage is not None or not file.is_ours()):
            if not file.others_let_go():
                return f"{moved}; other workers still hold the old file"
            try:
                draft = file.copy_from(writer.db, row_by_row=damage is not None)
            except Unreadable as exc:
                file.unreadable = why = f"{moved}; not every record can be read ({exc})"
                log.error("%s: the file is left as it is, for repair; new rows wait", why)
                return why
            writer.disconnect()  # before the copy is in place (file.py says why)
            aside = file.put_back(draft, "replaced" if damage is None else "damaged")
            writer.connect()
            kept = f"; what was in its place is kept as {aside}" if aside else ""
            log.warning("%s: put back from the records still open%s", moved, kept)
            return None
        if mine:
            return _reopen(writer, moved)
    writer.disconnect()  # another worker puts it back: let go of the old file, then wait
    with file.folder_locked(wait=True):
        return _reopen(writer, moved)


def _damaged(file: StoreFile) -> bool:
    """The file opened was found damaged (by the watch or now): garbage written over it."""
    return file.damage is not None or file.damaged() is not None


def _reopen(writer: SqliteWriter, moved: str) -> str | None:
    """Open the store at the path, if it is this store (put back by another worker)."""
    if not writer.file.is_ours():
        return f"{moved}; it was not put back"
    writer.disconnect()
    writer.connect()
    return None


def write_back(writer: SqliteWriter, rows: Rows) -> tuple[int, list[Refused]]:
    """Kept rows into the file, skipping any already there, in one transaction (or a row at a
    time when one is refused): (how many are done, the rows refused for good, with why)."""
    try:
        writer.insert(rows, skip_existing=True)
        return len(rows), []
    except StoreFault:
        return 0, []
    except Exception:
        pass  # some row: find which
    refused: list[Refused] = []
    for done, (table, row) in enumerate(rows):
        try:
            writer.insert([(table, row)], skip_existing=True)
        except StoreFault:
            return done, refused
        except Exception as exc:
            refused.append((table, row, f"{type(exc).__name__}: {exc}"))
    return len(rows), refused
