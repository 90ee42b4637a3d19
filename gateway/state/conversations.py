"""Route mode's conversations, on the board every worker shares: which member has one, its id,
how many turns it has had.

Why on the board: an agent's next turn may land on any worker, and it must find the same member
and the next turn number there. A conversation is known by (collection, key, and either the
session the client names or the conversation's system and first user text, which an agent
resends every turn); it is forgotten after an hour idle. A request that continues no
conversation (no session named, no earlier turn in it) starts a new one even when its text
equals a live one's (`fresh`): two sessions opened with one prompt are two conversations.

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
from typing import Any

from gateway.board import Board

BUCKETS = 1024
IDLE_S = 3600.0


@dataclass(frozen=True)
class Turn:
    conversation: str
    turn: int
    member: str | None  # the member that has the conversation; None for a new one
    new: bool


Key = tuple[str, str, str, str]


class Conversations:
    def __init__(
        self, board: Board, clock: Callable[[], float], journal: list[list[Any]] | None = None
    ) -> None:
        self.board, self.clock = board, clock
        self.journal = journal  # a shared live state (gateway/state) sends `settle` on

    def begin(self, key: Key, members: Sequence[str], fresh: bool = False) -> Turn:
        """The conversation *key* belongs to (a new one if none is live, or if *fresh*: the
        request continues none), and its next turn."""
        digest, cell = _digest(key), _cell(key)
        now = self.clock()
        with self.board.locked():
            index, last = self.board.numbers(cell)
            held = self.board.text(cell).split(" ")
            if not fresh and len(held) == 3 and held[0] == digest and now - last < IDLE_S:
                turn = int(held[2]) + 1
                member = members[int(index) - 1] if 0 < index <= len(members) else None
                self.board.write(cell, index, now, text=f"{digest} {held[1]} {turn}")
                return Turn(held[1], turn, member, new=False)
            conversation = new_conversation()
            self.board.write(cell, 0, now, text=f"{digest} {conversation} 1")
            return Turn(conversation, 1, None, new=True)

    def settle(self, key: Key, members: Sequence[str], member: str) -> None:
        """The conversation now belongs to *member* (the one that answered its turn)."""
        digest, cell = _digest(key), _cell(key)
        if member not in members:
            return
        if self.journal is not None:
            self.journal.append(["settle", cell, digest, members.index(member) + 1])
        with self.board.locked():
            if self.board.text(cell).split(" ")[0] == digest:
                self.board.write(cell, members.index(member) + 1, self.clock())


def new_conversation() -> str:
    return "c" + secrets.token_hex(6)


def converse_op(key: Key, conversation: str, fresh: bool = False) -> list[Any]:
    """The shared state's operation for `begin` (gateway/state/live.lua): *conversation* is
    the id a new conversation takes; *fresh*, begin's."""
    return ["converse", _cell(key), _digest(key), IDLE_S, conversation, fresh]


def turn_of(reply: list[str], members: Sequence[str]) -> Turn:
    """The Turn a `converse` operation's reply names."""
    _, conversation, turn, index = reply
    at = int(float(index))
    member = members[at - 1] if 0 < at <= len(members) else None
    return Turn(conversation, int(turn), member, new=reply[0] == "new")


def _digest(key: Key) -> str:
    return hashlib.sha256("\x1f".join(key).encode("utf-8", "replace")).hexdigest()[:24]


def _cell(key: Key) -> str:
    return f"route:{int(_digest(key), 16) % BUCKETS}"
