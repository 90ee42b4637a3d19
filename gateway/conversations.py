"""Route mode's conversations, on the board every worker shares: which member has one, its id,
how many turns it has had.

Why on the board: an agent's next turn may land on any worker, and it must find the same member
and the next turn number there. A conversation is known by (collection, key, system text, first
user text), which an agent resends every turn; it is forgotten after an hour idle.

Board cells are never freed, so the table is a fixed number of buckets, each holding one
conversation (the digest of its key, its id, its turns; its member as an index into the
collection's members, and when it was last used). A new conversation whose bucket holds a live
other one takes the bucket over: the older loses its stickiness, never its records.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway.board import Board

BUCKETS = 1024
IDLE_S = 3600.0


@dataclass(frozen=True)
class Turn:
    conversation: str
    turn: int
    member: str | None  # the member that has the conversation; None for a new one
    new: bool
    digest: str  # of the conversation's key: where it lives on the board


class Conversations:
    def __init__(self, board: Board, clock: Callable[[], float]) -> None:
        self.board, self.clock = board, clock

    def begin(self, key: tuple[str, str, str, str], members: Sequence[str]) -> Turn:
        """The conversation *key* belongs to (a new one if none is live), and its next turn."""
        digest = _digest(key)
        cell = _cell(digest)
        now = self.clock()
        with self.board.locked():
            index, last = self.board.numbers(cell)
            held = self.board.text(cell).split(" ")
            if len(held) == 3 and held[0] == digest and now - last < IDLE_S:
                turn = int(held[2]) + 1
                member = members[int(index) - 1] if 0 < index <= len(members) else None
                self.board.write(cell, index, now, text=f"{digest} {held[1]} {turn}")
                return Turn(held[1], turn, member, new=False, digest=digest)
            conversation = "c" + secrets.token_hex(6)
            self.board.write(cell, 0, now, text=f"{digest} {conversation} 1")
            return Turn(conversation, 1, None, new=True, digest=digest)

    def settle(self, turn: Turn, members: Sequence[str], member: str) -> None:
        """The conversation now belongs to *member* (the one that answered its turn)."""
        cell = _cell(turn.digest)
        with self.board.locked():
            if self.board.text(cell).split(" ")[0] == turn.digest and member in members:
                self.board.write(cell, members.index(member) + 1, self.clock())


def _digest(key: tuple[str, str, str, str]) -> str:
    return hashlib.sha256("\x1f".join(key).encode("utf-8", "replace")).hexdigest()[:24]


def _cell(digest: str) -> str:
    return f"route:{int(digest, 16) % BUCKETS}"
