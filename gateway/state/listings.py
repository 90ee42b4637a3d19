"""What the providers' listings say of each bench model (contract §19), on the board.

Why the board: every worker must seat and show by the same listing facts (an unlisted model is
not explored by any worker), so one worker reads the listings and writes what they say here,
where the others read it; with Redis each cell goes on as a `set` (the journal) to every
replica's board, as health does. A gateway's workers share one read: the worker that takes the
lease reads, and the next read is due for all of them at once. (With Redis each worker keeps a
board of its own, so each reads for itself: one small GET every `lifecycle.listing_s`.)

Not kept in the store: a start reads the listings again within moments, and what a listing
decided that must outlast a restart (an expired model's retirement) is kept by the health
records. Cells, per bench model and per connection:

- `listing:A`       (listed: 1 yes, 2 no; free: 1 yes, 2 no, 0 unstated)  its expiry date or ""
- `listing-said:C`  (when it last failed, 0)                              why it last failed
- `listing-due`, `listing-lease`: when the next read is due; who reads now (until when)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gateway.board import Board

_DUE, _LEASE = "listing-due", "listing-lease"
_YES, _NO = 1.0, 2.0


@dataclass(frozen=True)
class Listed:
    """One bench model as its connection's listing states it; None where no listing is read
    (or none has been read yet)."""

    listed: bool | None = None
    free: bool | None = None
    expires: str | None = None  # YYYY-MM-DD


def _code(value: bool | None) -> float:
    return 0.0 if value is None else _YES if value else _NO


def _flag(code: float) -> bool | None:
    return None if code == 0.0 else code == _YES


class ListingFacts:
    def __init__(
        self,
        board: Board,
        aliases: Iterable[str],
        clock: Callable[[], float],
        journal: list[list[Any]] | None = None,
    ) -> None:
        self.board, self.clock, self.journal = board, clock, journal
        self.aliases = tuple(aliases)

    def of(self, alias: str) -> Listed:
        with self.board.locked():
            listed, free = self.board.numbers(f"listing:{alias}")
            expires = self.board.text(f"listing:{alias}")
        return Listed(_flag(listed), _flag(free), expires or None)

    def put(self, alias: str, listed: Listed) -> None:
        self._write(
            f"listing:{alias}", _code(listed.listed), _code(listed.free), listed.expires or ""
        )

    def unlisted(self) -> frozenset[str]:
        """The models a listing lacks: not explored (routing/choose.py)."""
        return frozenset(a for a in self.aliases if self.of(a).listed is False)

    def said(self, connection: str, why: str | None) -> bool:
        """Note *connection*'s listing failed for *why* (None: it was read); True when that is
        news (it was read before, or failed for another reason), so it is logged once."""
        cell = f"listing-said:{connection}"
        before = self.board.text(cell) or None
        if before == why:
            return False
        self._write(cell, self.clock() if why else 0.0, 0.0, why or "")
        return True

    # --- one read at a time, for every worker ------------------------------------------------

    def take(self, lease_s: float) -> bool:
        """The read, if it is due and no other worker is reading: then this one is."""
        now = self.clock()
        board = self.board
        with board.locked():
            if board.numbers(_DUE)[0] > now or board.numbers(_LEASE)[0] > now:
                return False
            board.write(_LEASE, now + lease_s)
        return True

    def done(self, every_s: float) -> None:
        """The read is over: the next is due *every_s* from now."""
        with self.board.locked():
            self.board.write(_DUE, self.clock() + every_s)
            self.board.write(_LEASE, 0.0)

    def _write(self, name: str, a: float, b: float, text: str) -> None:
        self.board.write(name, a, b, text=text)
        if self.journal is not None:
            self.journal.append(["set", name, a, b, text])
