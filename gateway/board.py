"""What the gateway's workers share: cooldowns, rpm windows and the live figures routing reads.

Why: `serve --workers N` runs N processes, and the contract holds for the gateway as a whole. A
model that answered 429 is called by no worker until its cooldown ends, an rpm cap counts every
worker's calls, and seats taken in one worker are seen by the next panel in any other (that is
what makes explorers rotate). Those facts live on one board in shared memory: a file the
supervisor makes and every worker maps, changed under an exclusive `flock`, which the kernel
drops if a worker dies holding it. A single process gets the same board in private memory.

The board holds named cells and rings, and both are only ever added, so each process remembers
where a name lives:
- a cell is two numbers and a short text (a count and a time, a cooldown's end and why);
- a ring is an rpm window of `cap` slots, each (started, ended, pid): a cap is spent by calls
  started in the last 60 s plus older ones still in flight, and a slot whose worker has died is
  free again. A start later than now means the wall clock was set back (every worker reads the
  same one): that call is counted from now, so a window lasts a minute, not until the clock
  catches up with it (a day, for a clock set back a day).

Every method runs on the event loop and never across an await, so the lock is held for
microseconds; `locked()` nests, for a few steps that must be seen together.

A module of its own, below every package: the live state (gateway/state) keeps cooldowns and
figures on it, and access (gateway/access) counts key rpm and wrong admin tokens on it, while the
live state knows the caller from access. It imports nothing of the gateway.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import mmap
import os
import struct
from collections.abc import Iterator
from pathlib import Path

WINDOW_S = 60.0
_MAGIC = b"BENCHBD1"
_HEADER = struct.Struct("<8sIIII")  # magic, cells used, cells in all, slots used, slots in all
_HEADER_SIZE = 64
_NAME = 112
_CELL = struct.Struct(f"<{_NAME}sdd128s")  # name, a, b, text: 256 bytes
_NUMBERS = struct.Struct("<dd")
_SLOT = struct.Struct("<ddd")  # started, ended (0 while in flight), pid


class BoardFull(RuntimeError):
    pass


class Board:
    def __init__(self, buffer: mmap.mmap, fd: int | None) -> None:
        magic, _, cells, _, slots = _HEADER.unpack_from(buffer, 0)
        self.cells, self.slots = int(cells), int(slots)
        if magic != _MAGIC:
            raise ValueError("not a gateway board")
        self._buffer, self._fd = buffer, fd
        self._slot_base = _HEADER_SIZE + self.cells * _CELL.size
        self._depth = 0
        self._where: dict[str, int] = {}  # name -> cell, for names this process has used
        self._seen: dict[bytes, int] = {}  # every cell's stored name -> cell, as scanned
        self._scanned = 0
        self._rings: dict[int, struct.Struct] = {}  # cap -> the layout of a whole ring
        self._pid = float(os.getpid())

    @classmethod
    def private(cls, cells: int = 4096, slots: int = 65536) -> Board:
        """A board for one process, in memory no one else maps."""
        buffer = mmap.mmap(-1, _size(cells, slots))
        _HEADER.pack_into(buffer, 0, _MAGIC, 0, cells, 0, slots)
        return cls(buffer, None)

    @staticmethod
    def create(path: Path, cells: int = 4096, slots: int = 65536) -> None:
        """Make an empty board file for the workers to map (the supervisor does this)."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, _size(cells, slots))
            os.pwrite(fd, _HEADER.pack(_MAGIC, 0, cells, 0, slots), 0)
        finally:
            os.close(fd)

    @classmethod
    def attach(cls, path: Path) -> Board:
        fd = os.open(path, os.O_RDWR)
        return cls(mmap.mmap(fd, os.fstat(fd).st_size), fd)

    def close(self) -> None:
        self._buffer.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        if self._depth == 0 and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0 and self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    # --- cells ----------------------------------------------------------------------------------

    def numbers(self, name: str) -> tuple[float, float]:
        """A cell's two numbers; (0, 0) for a cell never written."""
        index = self._cell(name, create=False)
        if index is None:
            return 0.0, 0.0
        with self.locked():
            a, b = _NUMBERS.unpack_from(self._buffer, _cell_at(index) + _NAME)
        return a, b

    def text(self, name: str) -> str:
        index = self._cell(name, create=False)
        if index is None:
            return ""
        with self.locked():
            raw = bytes(_CELL.unpack_from(self._buffer, _cell_at(index))[3])
        return raw.rstrip(b"\0").decode("utf-8", "replace")

    def write(self, name: str, a: float, b: float = 0.0, text: str | None = None) -> None:
        with self.locked():
            at = _cell_at(self._new_cell(name))
            _NUMBERS.pack_into(self._buffer, at + _NAME, a, b)
            if text is not None:
                struct.pack_into("128s", self._buffer, at + _NAME + 16, _clip(text, 128))

    def add(self, name: str, a: float = 0.0, b: float = 0.0) -> tuple[float, float]:
        with self.locked():
            at = _cell_at(self._new_cell(name)) + _NAME
            now_a, now_b = _NUMBERS.unpack_from(self._buffer, at)
            _NUMBERS.pack_into(self._buffer, at, now_a + a, now_b + b)
            return now_a + a, now_b + b

    def named_cells(self) -> list[tuple[str, float, float, str]]:
        """Every cell this process has named: (name, a, b, text). A private board's are all of
        them (a shared live state seeds Redis from them)."""
        with self.locked():
            return [(name, *self.numbers(name), self.text(name)) for name in list(self._where)]

    def _new_cell(self, name: str) -> int:
        """The cell for `name`, made if it is new (or BoardFull)."""
        index = self._cell(name, create=True)
        assert index is not None  # create=True finds the cell, makes it, or raises
        return index

    def _cell(self, name: str, *, create: bool) -> int | None:
        index = self._where.get(name)
        if index is not None:
            return index
        key = _key(name)
        with self.locked():
            used = _HEADER.unpack_from(self._buffer, 0)[1]
            for i in range(self._scanned, used):
                self._seen[_CELL.unpack_from(self._buffer, _cell_at(i))[0].rstrip(b"\0")] = i
            self._scanned = used
            index = self._seen.get(key)
            if index is None and create:
                if used >= self.cells:
                    raise BoardFull(f"the board has no room for {name!r}")
                _CELL.pack_into(self._buffer, _cell_at(used), key, 0.0, 0.0, b"")
                self._set_header(cells_used=used + 1)
                index = self._seen[key] = used
                self._scanned = used + 1
        if index is not None:
            self._where[name] = index
        return index

    # --- rings (rpm windows) --------------------------------------------------------------------

    def take(
        self, rings: list[tuple[str, int]], now: float, *, in_flight: bool = True
    ) -> list[int] | str:
        """A slot in every ring at once, or the name of the first ring that is full.
        Returns the slots to `release` when the call ends (none to release if not in flight)."""
        with self.locked():
            picked: list[int] = []
            for name, cap in rings:
                used, free, _ = self._scan(name, cap, now)
                if used >= cap or free is None:
                    return name
                picked.append(free)
            started = max(now, 1e-9)  # 0 marks a slot never used
            for slot in picked:
                ended = 0.0 if in_flight else started
                _SLOT.pack_into(self._buffer, self._slot_at(slot), started, ended, self._pid)
            return picked

    def release(self, slots: list[int], now: float) -> None:
        with self.locked():
            for slot in slots:
                at = self._slot_at(slot)
                started, ended, pid = _SLOT.unpack_from(self._buffer, at)
                if ended == 0.0 and pid == self._pid:
                    _SLOT.pack_into(self._buffer, at, started, max(now, started, 1e-9), pid)

    def forget(self, slots: list[int]) -> None:
        """Give taken slots back as if never taken: a request refused after it was counted."""
        with self.locked():
            for slot in slots:
                _SLOT.pack_into(self._buffer, self._slot_at(slot), 0.0, 0.0, 0.0)

    def used(self, name: str, cap: int, now: float) -> int:
        with self.locked():
            return self._scan(name, cap, now)[0]

    def oldest(self, name: str, cap: int, now: float) -> float | None:
        """When the oldest call that still counts against the ring started."""
        with self.locked():
            return self._scan(name, cap, now)[2]

    def _scan(self, name: str, cap: int, now: float) -> tuple[int, int | None, float | None]:
        """(slots counted against the cap, a free slot, when the oldest counted one started)."""
        first = self._ring(name, cap)
        ring = self._rings.get(cap) or self._rings.setdefault(cap, struct.Struct(f"<{3 * cap}d"))
        values = ring.unpack_from(self._buffer, self._slot_at(first))
        horizon = now - WINDOW_S
        used, free, oldest = 0, None, None
        for i in range(cap):
            started, ended = values[3 * i], values[3 * i + 1]
            if started > now:  # the wall clock went back: the call counts from now, not later
                started = now
                _SLOT.pack_into(
                    self._buffer, self._slot_at(first + i), started, ended, values[3 * i + 2]
                )
            if started and ended == 0.0 and started <= horizon and not _alive(values[3 * i + 2]):
                ended = now  # its worker died with the call in flight
                _SLOT.pack_into(self._buffer, self._slot_at(first + i), started, ended, 0.0)
            if started and (started > horizon or ended == 0.0):
                used += 1
                oldest = started if oldest is None else min(oldest, started)
            elif free is None:
                free = first + i
        return used, free, oldest

    def _ring(self, name: str, cap: int) -> int:
        cell = f"ring:{name}:{cap}"
        first, size = self.numbers(cell)
        if size:
            return int(first)
        with self.locked():
            first, size = self.numbers(cell)
            if size:
                return int(first)
            used = int(_HEADER.unpack_from(self._buffer, 0)[3])
            if used + cap > self.slots:
                raise BoardFull(f"the board has no room for a ring of {cap} for {name!r}")
            self._set_header(slots_used=used + cap)
            self.write(cell, used, cap)
            return used

    def _slot_at(self, slot: int) -> int:
        return self._slot_base + slot * _SLOT.size

    def _set_header(self, *, cells_used: int | None = None, slots_used: int | None = None) -> None:
        magic, cells_now, cells, slots_now, slots = _HEADER.unpack_from(self._buffer, 0)
        _HEADER.pack_into(
            self._buffer,
            0,
            magic,
            cells_now if cells_used is None else cells_used,
            cells,
            slots_now if slots_used is None else slots_used,
            slots,
        )


def _size(cells: int, slots: int) -> int:
    return _HEADER_SIZE + cells * _CELL.size + slots * _SLOT.size


def _cell_at(index: int) -> int:
    return _HEADER_SIZE + index * _CELL.size


def _key(name: str) -> bytes:
    raw = name.encode("utf-8")
    return raw if len(raw) <= _NAME else b"#" + hashlib.sha256(raw).hexdigest().encode()


def _clip(text: str, size: int) -> bytes:
    return text.encode("utf-8")[:size].decode("utf-8", "ignore").encode("utf-8")


def _alive(pid: float) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
