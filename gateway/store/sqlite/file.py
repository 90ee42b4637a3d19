"""The SQLite store's file: which faults mean "it cannot write now", whether the path still names
the file opened, and putting the file back when it was deleted or replaced while serving.

Why: SQLite reads and writes through the descriptors it opened. A store file deleted, or a file
renamed over it, while the gateway served took every later panel into an inode that no restart
would find, and `/healthz` said `ok`. So the path's identity (st_dev, st_ino) is compared with
the file opened: under the write lock before each batch of rows, and once a second by a watch.
When they differ, the records the open connection still reads are copied to a new file at the
path, whatever was put there is kept beside it (`<name>.replaced-<time>`), and the store is
reopened on the copy. A file written over in place keeps its identity: what it holds is watched
as well (`damaged`, damage.py), and it is put back the same way, kept as `<name>.damaged-<time>`.

Several workers hold one store file. SQLite deletes `<path>-wal` by name when the last
connection to a file closes, and once a copy is in place that name is the copy's: so the copy
goes in only when no worker still holds the old file. Each worker holds a shared `flock` on
the file it opened; the worker that puts the file back (the one holding the folder's lock)
waits for an exclusive one, which it gets once every other worker has noticed and let go of
the old file, then copies and closes its own connections, and only then renames the copy into
place. The other workers wait for the folder's lock and reopen what they find, which carries
the same birth mark (the time the store's first migration was applied): a stranger's file never
passes for the store.

The file's own bytes (its header, its first page, a copy for salvage) are read only through
that one held descriptor, and it is closed only after the connections: closing any descriptor
on a file drops every POSIX lock the process holds on it, SQLite's too. A header read by
`open()` once a second dropped the shared lock each worker's connection holds, so another
worker's connection closing (a reload replacing a worker) took itself for the file's last one,
checkpointed and deleted the `-wal` the first was still writing: "database disk image is
malformed".
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from gateway.store.sqlite import damage

# SQLite's primary result codes that mean the file cannot take a write now, whatever the row:
# BUSY, LOCKED, READONLY (incl. a moved file), IOERR, CORRUPT, FULL, CANTOPEN, PROTOCOL, NOTADB.
_CANNOT_WRITE = frozenset({5, 6, 8, 10, 11, 13, 14, 15, 26})
# What a row itself can be wrong with (a value SQLite cannot bind raises more than these: a bad
# row, all the same, as any error that is neither these nor a fault of the file).
_ROW_ERRORS = (
    sqlite3.IntegrityError,
    sqlite3.ProgrammingError,
    sqlite3.DataError,
    sqlite3.NotSupportedError,
    sqlite3.InterfaceError,
)
LET_GO_S = 30.0  # how long the worker putting the file back waits for the others to let go
FIRST_MIGRATION = "0001_panels_calls_verdicts"


class StoreFault(Exception):
    """The store file cannot take writes for now (disk full, deleted, replaced, I/O errors):
    not a bad row. `why` is what `/healthz` says."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def fault_of(exc: BaseException, name: str) -> StoreFault | None:
    """*exc* as a StoreFault when it is one (None: a bad row, or a bug)."""
    if isinstance(exc, StoreFault):
        return exc
    if isinstance(exc, _ROW_ERRORS):
        return None
    if isinstance(exc, sqlite3.DatabaseError):
        code = getattr(exc, "sqlite_errorcode", None)
        if code is None or code & 0xFF in _CANNOT_WRITE:
            return StoreFault(f"SQLite cannot write to {name}: {exc}")
    if isinstance(exc, OSError):
        return StoreFault(f"the store file {name} cannot be used: {exc.strerror or exc}")
    return None


def identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


def birth_of(db: sqlite3.Connection) -> float | None:
    """When the store's first migration was applied: the same in every copy of one store."""
    row = db.execute("SELECT applied FROM migrations WHERE name = ?", (FIRST_MIGRATION,)).fetchone()
    return None if row is None else float(row[0])


def birth_at(path: Path) -> float | None:
    """The birth mark of the store at *path*; None for no file, or one that is no store. Read
    from the file alone (immutable): a `-wal` beside it may still be the old file's, whose
    pages would make a stranger look like the store."""
    try:
        db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    except sqlite3.Error:
        return None
    try:
        return birth_of(db)
    except sqlite3.Error:
        return None
    finally:
        db.close()


class StoreFile:
    """The file a store opened: its identity, its birth mark, and the shared flock that says
    this process still holds it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.opened: tuple[int, int] | None = None
        self.birth: float | None = None
        self.page_size = 0
        self.ledger: list[tuple[str, float]] = []  # the migrations applied: name, when
        self.damage: str | None = None  # why the file opened was found damaged, until reopened
        self.first_page: bytes | None = None  # as last seen healthy on disk (damage.salvage)
        self.unreadable: str | None = None  # why the damaged file's records cannot all be read
        self._pin: int | None = None

    def opened_now(self, db: sqlite3.Connection) -> None:
        """Note the file *db* was just opened on, and hold it (shared)."""
        pin = os.open(self.path, os.O_RDONLY)
        fcntl.flock(pin, fcntl.LOCK_SH)
        found = os.fstat(pin)
        self.let_go()  # (the file of connections closed before: module docstring)
        self._pin, self.opened = pin, (found.st_dev, found.st_ino)
        self.birth = birth_of(db)
        self.page_size = int(db.execute("PRAGMA page_size").fetchone()[0])
        self.ledger = [(name, applied) for name, applied in db.execute("SELECT * FROM migrations")]
        self.damage = None
        self.first_page = damage.page_one(self.head(self.page_size), self.page_size)

    def head(self, size: int) -> bytes:
        """The first *size* bytes of the file opened, through the descriptor held on it."""
        return b"" if self._pin is None else os.pread(self._pin, size, 0)

    def changed(self) -> str | None:
        """Why the path no longer names the file opened, or None while it does."""
        if self.opened is None:
            return None
        now = identity(self.path)
        if now == self.opened:
            return None
        name = self.path.name
        if now is None:
            return f"the store file {name} was deleted while serving"
        return f"the store file {name} was replaced by another file while serving"

    def damaged(self, *, deep: bool = False) -> str | None:
        """Why the file at the path no longer reads as the store opened (garbage written over
        it in place: damage.py), or None. Blocking: a thread's, not the event loop's."""
        if self.opened is None or self.changed() is not None:
            return None
        if self._pin is None:
            return None
        found = damage.damaged(self.path, self.head(100), self.page_size, self.birth, deep=deep)
        if found is None and self.damage is None:
            page = damage.page_one(self.head(self.page_size), self.page_size)
            self.first_page = page or self.first_page
        self.damage = self.damage or found
        return found

    def let_go(self) -> None:
        """Close the descriptor held: only once this process's connections on it are closed."""
        if self._pin is not None:
            os.close(self._pin)
            self._pin = None

    @contextlib.contextmanager
    def folder_locked(self, wait: bool) -> Iterator[bool]:
        """The folder's lock, held by the one worker putting the file back. True if held."""
        fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)

    def others_let_go(self, within_s: float = LET_GO_S) -> bool:
        """Wait for every other process to let go of the old file (its flock, exclusive)."""
        assert self._pin is not None
        end = time.monotonic() + within_s
        while True:
            try:
                fcntl.flock(self._pin, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() > end:
                    return False
                time.sleep(0.05)

    def is_ours(self) -> bool:
        """Does the path hold this store (the same birth mark), as another worker put back?"""
        return self.birth is not None and birth_at(self.path) == self.birth

    def copy_from(self, source: sqlite3.Connection, *, row_by_row: bool = False) -> Path:
        """The records *source* reads, in a new file beside the path (not yet in place): page
        by page, or *row_by_row* when pages of the file are garbage (damage.salvage, which
        raises damage.Unreadable when it cannot read every record)."""
        draft = self.path.with_name(f".{self.path.name}.restoring")
        if row_by_row:
            assert self._pin is not None
            try:
                damage.salvage(source, draft, self.ledger, self.path, self._pin, self.first_page)
            except BaseException:
                draft.unlink(missing_ok=True)
                raise
        else:
            draft.unlink(missing_ok=True)
            target = sqlite3.connect(draft)
            try:
                source.backup(target)
            finally:
                target.close()
        fd = os.open(draft, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(draft, 0o600)
        return draft

    def put_back(self, draft: Path, aside_as: str = "replaced") -> str | None:
        """Move *draft* to the path; what was there is set aside as `<name>.<aside_as>-<time>`
        (its name returned). Called
        once the old file's connections are closed: the old `-wal` and `-shm` left behind (a
        worker that died holding them) would be read as the copy's, so they go first."""
        aside = None
        if identity(self.path) is not None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            aside = self.path.with_name(f"{self.path.name}.{aside_as}-{stamp}")
            os.rename(self.path, aside)
        for suffix in ("-wal", "-shm"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
        os.rename(draft, self.path)
        folder = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
        return None if aside is None else aside.name
