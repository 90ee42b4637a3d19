"""Wrong admin tokens, counted per client: after 10 in a minute, sign-in is a 429 (contract §17).

Why: the token comparison is constant-time, but nothing bounded how often one could be tried (300
wrong tokens took 0.19 s, each a plain 401). Now each client address may be wrong 10 times in a
minute; past that every sign-in from it is refused with `Retry-After` until its minute is over,
the right token included (a guesser learns nothing from a lucky guess inside the lockout).

The counts live on the board (gateway/board.py), so every worker of one gateway refuses the
same client. The board only ever adds cells, so they form a small table: a client's count sits in
one of `PROBES` cells picked by a hash of its address, reusing a cell whose minute is over. When
all of them are busy with other clients (thousands of guessing addresses at once), it shares one
with them: their wrong tokens count together, so the bound still holds, at worst a little early.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Callable

from gateway.board import WINDOW_S, Board, BoardFull
from gateway.errors import TooManyRequests

log = logging.getLogger("bench.access")

WRONG_MOST = 10  # wrong tokens a client may send in WINDOW_S
CELLS = 1024  # cells the table may use on the board (board_size reserves them)
PROBES = 8


class SignInThrottle:
    def __init__(self, board: Board, clock: Callable[[], float]) -> None:
        self.board = board
        self.clock = clock

    def check(self, client: str) -> None:
        """429 with Retry-After while *client* has had its wrong tokens for this minute."""
        now = self.clock()
        with self.board.locked():
            count, since = self._numbers(self._cell(client, now), now)
        if count >= WRONG_MOST and since + WINDOW_S > now:
            wait = max(1, math.ceil(since + WINDOW_S - now))
            raise TooManyRequests(
                f"Too many wrong admin tokens from this address ({WRONG_MOST} in a minute): "
                f"try again in {wait} s.",
                code="too_many_sign_ins",
                headers={"Retry-After": str(wait)},
            )

    def wrong(self, client: str) -> None:
        """One more wrong token from *client*."""
        now = self.clock()
        with self.board.locked():
            cell = self._cell(client, now)
            count, since = self._numbers(cell, now)
            if since + WINDOW_S <= now:
                count, since = 0.0, now  # a new minute (or a cell never used)
            try:
                self.board.write(cell, count + 1, since, text=client)
            except BoardFull:  # a board sized without the table: serve, and say so
                log.error("no room on the board to count wrong admin tokens")

    def right(self, client: str) -> None:
        """The right token: the client's count starts again."""
        with self.board.locked():
            cell = self._cell(client, self.clock())
            if self.board.text(cell) == client:
                self.board.write(cell, 0.0, 0.0, text=client)

    def _cell(self, client: str, now: float) -> str:
        """The client's cell: the one holding it, else the first whose minute is over (or that
        was never used), else the first (shared)."""
        start = int.from_bytes(hashlib.sha256(client.encode()).digest()[:4], "big")
        names = [f"signin:{(start + i) % CELLS}" for i in range(PROBES)]
        free = None
        for name in names:
            if self.board.text(name) == client:
                return name
            if free is None and self._numbers(name, now)[1] + WINDOW_S <= now:
                free = name
        return free or names[0]

    def _numbers(self, cell: str, now: float) -> tuple[float, float]:
        """A cell's (count, minute's start); a start later than now means the wall clock was
        set back, and the minute starts now instead (kept so), so a lock-out lasts a minute,
        not until the clock catches up with it."""
        count, since = self.board.numbers(cell)
        if since > now:
            since = now
            self.board.write(cell, count, since)
        return count, since
