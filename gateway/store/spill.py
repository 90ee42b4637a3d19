"""Seat rows kept on local disk while PostgreSQL cannot take them, written in order once it can.

Why a file every time, and not a queue in memory first: a row is only safe once it is somewhere
that outlives the process. A seat's writer is answered once its row is committed in PostgreSQL
or, while PostgreSQL cannot take it, appended here and fsync'd (one fsync a batch, so a burst of
seats costs one); a replica killed or restarted meanwhile loses nothing. Memory holds only
counts and how far each file has been written back.

One file per process (`rows-<pid>-<random>.jsonl`: JSON lines, 0600, in a 0700 folder), locked
with flock for as long as the process lives. So the workers and replicas sharing a folder never
write one file, and a file whose lock is free belongs to a process that is gone: the next
gateway to start adopts it and writes its rows back. Rows are written back a chunk at a time and
may be written twice (a crash between the commit and the truncate), so the writer skips rows
already there. The bound (`max_bytes`) is the writer's to enforce: it refuses new panels past
it, and never drops a row it was given.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import secrets
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger("bench.records")

PREFIX, SUFFIX = "rows-", ".jsonl"
REJECTED = "rejected.jsonl"  # rows PostgreSQL will never take, kept for a person to look at
CHUNK_ROWS = 500  # rows handed to the writer at once (one transaction)
CHUNK_BYTES = 4_000_000

# (table, row) in the order they were written: rows.PanelRow and CallRow, or read back as dicts
Rows = list[tuple[str, Mapping[str, Any]]]
Refused = tuple[str, Mapping[str, Any], str]  # a row its store refuses for good: table, row, why
# Writes *rows* in order; returns how many it wrote. Fewer than given: the rest must wait.
Writer = Callable[[Rows], Awaitable[int]]


class _Held:
    """A spill file this process holds the lock of, and how far it has been written back."""

    def __init__(self, path: Path, fd: int, size: int, rows: int) -> None:
        self.path = path
        self.fd = fd
        self.size = size  # bytes of whole rows in the file
        self.rows = rows  # rows not yet written back
        self.done = 0  # bytes written back


class Spill:
    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self._adopted: list[_Held] = []
        self._own: _Held | None = None
        self._lock = asyncio.Lock()  # an append, or the last look before truncating

    @property
    def rows(self) -> int:
        return sum(held.rows for held in self._files())

    @property
    def bytes(self) -> int:
        return sum(held.size - held.done for held in self._files())

    def full(self) -> bool:
        return self.bytes >= self.max_bytes

    def _files(self) -> list[_Held]:
        return [*self._adopted, *([self._own] if self._own is not None else [])]

    def adopt(self) -> int:
        """Take over the files of processes that are gone (their lock is free); rows taken.
        Raises OSError when the folder cannot be made or read: a start-up error."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        taken = 0
        for path in sorted(self.folder.glob(f"{PREFIX}*{SUFFIX}")):
            held = _take(path)
            if held is None:
                continue
            if held.size == 0:
                _discard(held)
                continue
            log.warning("adopted %d spilled seat rows from %s", held.rows, path.name)
            self._adopted.append(held)
            taken += held.rows
        return taken

    async def append(self, rows: Rows) -> None:
        """Append *rows* and fsync; OSError (disk full...) leaves the file as it was."""
        data = b"".join(_line(table, row) for table, row in rows)
        async with self._lock:
            if self._own is None:
                self._own = await asyncio.to_thread(self._create)
            own = self._own
            await asyncio.to_thread(_append, own, data)
            own.size += len(data)
            own.rows += len(rows)

    async def replay(self, write: Writer, when_empty: Callable[[], None]) -> bool:
        """Hand every waiting row to *write*, each file's in order. True once none is left:
        the files are gone or truncated, and *when_empty* was called before any new row could
        arrive. False when *write* stopped short and no file could go further (the rest wait
        for the next try). A file stopped short does not hold up the others: a seat may wait
        for its panel, which another worker (now gone) wrote to another file."""
        while True:
            moved = stopped = False
            for held in self._files():
                before = held.done
                stopped |= not await _write_back(held, write)
                moved |= held.done > before
            for held in [held for held in self._adopted if held.done == held.size]:
                _discard(held)
                self._adopted.remove(held)
            if stopped and not moved:
                return False
            if stopped:
                continue
            async with self._lock:
                own = self._own
                if not self._adopted and (own is None or own.done == own.size):
                    if own is not None and own.size:
                        os.ftruncate(own.fd, 0)
                        own.size = own.done = own.rows = 0
                    when_empty()
                    return True
            # rows were appended while the last ones were written: write those too

    def reject(self, table: str, row: Mapping[str, Any], why: str) -> None:
        """Keep a row PostgreSQL refuses for good in `rejected.jsonl` (shared by the processes
        of the folder: one append a row), rather than drop it."""
        line = json.dumps({"table": table, "row": row, "why": why}, default=str).encode() + b"\n"
        fd = os.open(self.folder / REJECTED, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def close(self) -> None:
        """Let go of every file: one with rows left stays for the next start, an empty one
        of this process's goes."""
        for held in self._adopted:
            os.close(held.fd)
        self._adopted = []
        if self._own is not None:
            if self._own.done == self._own.size:
                _discard(self._own)
            else:
                os.close(self._own.fd)
            self._own = None

    def _create(self) -> _Held:
        """A new file for this process, locked before its name can be seen (made under a name
        `adopt` ignores, then renamed), so no other process can take it while it is empty."""
        name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}{SUFFIX}"
        draft = self.folder / f".{name}.new"
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(draft, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(draft, self.folder / name)
        _sync_folder(self.folder)
        return _Held(self.folder / name, fd, 0, 0)


def _line(table: str, row: Mapping[str, Any]) -> bytes:
    return json.dumps({"table": table, "row": row}, default=str).encode() + b"\n"


def _append(held: _Held, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(held.fd, view) :]
        os.fsync(held.fd)
    except OSError:
        os.ftruncate(held.fd, held.size)  # no half row left for the next append to follow
        raise


def _take(path: Path) -> _Held | None:
    """*path* locked, if its owner is gone and it is still that file; else None."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        found = os.fstat(fd)
        named = os.stat(path)
    except (BlockingIOError, FileNotFoundError):  # alive, or adopted and removed meanwhile
        os.close(fd)
        return None
    if (found.st_dev, found.st_ino) != (named.st_dev, named.st_ino):
        os.close(fd)
        return None
    return _Held(path, fd, found.st_size, _count_rows(fd, found.st_size))


def _count_rows(fd: int, size: int) -> int:
    rows, offset, last = 0, 0, b"\n"
    while offset < size:
        block = os.pread(fd, min(CHUNK_BYTES, size - offset), offset)
        if not block:
            break
        rows += block.count(b"\n")
        offset += len(block)
        last = block[-1:]
    return rows + (last != b"\n")  # an unfinished last row counts (and is reported) too


def _discard(held: _Held) -> None:
    """Remove the file while still holding its lock, so nobody adopts it in between."""
    try:
        held.path.unlink()
    except FileNotFoundError:
        pass
    os.close(held.fd)


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


async def _write_back(held: _Held, write: Writer) -> bool:
    """Write *held*'s waiting rows, a chunk at a time; False when *write* stopped short."""
    while held.done < held.size:
        chunk = await asyncio.to_thread(_read_chunk, held)
        rows: Rows = [item for _, item in chunk if item is not None]
        written = await write(rows) if rows else 0
        taken = consumed = 0
        for length, item in chunk:
            if item is not None:
                if taken == written:
                    break
                taken += 1
            consumed += length
            held.rows -= 1
        held.done += consumed
        if taken < len(rows):
            return False
    return True


def _read_chunk(held: _Held) -> list[tuple[int, tuple[str, dict[str, Any]] | None]]:
    """The next rows after `done`: (bytes, (table, row)), or (bytes, None) for a line that is
    no row (logged: only a process stopped mid-write leaves one, and its writer was never
    answered)."""
    left = held.size - held.done
    want = min(CHUNK_BYTES, left)
    while True:
        block = os.pread(held.fd, want, held.done)
        end = block.rfind(b"\n") + 1
        if end or len(block) >= left:
            break
        want = min(want * 2, left)  # one row longer than a chunk
    lines = block[:end].splitlines(keepends=True)[:CHUNK_ROWS] if end else [block]
    return [(len(line), _parse(line, held.path)) for line in lines]


def _parse(line: bytes, path: Path) -> tuple[str, dict[str, Any]] | None:
    try:
        found = json.loads(line)
        table, row = found["table"], found["row"]
        if isinstance(table, str) and isinstance(row, dict):
            return table, row
    except (ValueError, TypeError, KeyError):
        pass
    log.error("left out a line of %s that is no whole row: %r", path.name, line[:200])
    return None
