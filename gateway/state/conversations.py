"""Route mode's conversations, on the board every worker shares: which member has one, its id,
how many turns it has had.

A request continues a conversation only when it says so (earlier turns, or a session it names:
gateway/route/ask.py); one that continues nothing starts a new one (`fresh`), so identical
one-shot requests are each offered to the members in order, a recovered member first again.

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
from typing import Any

from gateway.state.board import Board

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
        """The conversation *key* belongs to (a new one if none is live), and its next turn.
        *fresh*: the request continues nothing, so it starts a new conversation at *key* even
        when one is live there (its next turn, carrying this one, finds the new one)."""
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
    the id a new conversation takes; *fresh*, as for `begin`."""
    return ["converse", _cell(key), _digest(key), IDLE_S, conversation, 1 if fresh else 0]


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
