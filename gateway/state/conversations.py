"""Route mode's conversations, on the board every worker shares: which member has one, its id,
how many turns it has had.

Why on the board: an agent's next turn may land on any worker, and it must find the same member
and the next turn number there. A conversation is known by (collection, key, and either the
session the client names or the conversation's system and first user text, which an agent
resends every turn); it is forgotten after an hour idle. A request that continues no
conversation (no session named, no earlier turn in it) starts a new one even when its text
equals a live one's (`fresh`): two sessions opened with one prompt are two conversations.

Board cells are never freed, so the table is a fixed number of sets of `WAYS` cells, each cell
holding one conversation (its gateway key's digest, the digest of its whole key, its id, its
turns; its member as an index into the collection's members, and when it was last used). A new
conversation takes a free cell of its set (empty, or idle an hour), else evicts one: the
oldest of its own key's, unless another key holds more of the set than its own key does, and
then that key's oldest. So one key's flood of new conversations evicts its own, never those of
a key holding less of the set than it does (a key keeps at least half of each set against one
flooding key). Who is evicted loses its stickiness, never its records. Redis applies the same
rule in one step (gateway/state/conversations.lua, `converse`).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gateway.board import Board

SETS = 128
WAYS = 8
BUCKETS = SETS * WAYS  # the board's cells the table takes (gateway/runtime.py board_size)
IDLE_S = 3600.0


@dataclass(frozen=True)
class Turn:
    conversation: str
    turn: int
    member: str | None  # the member that has the conversation; None for a new one
    new: bool


Key = tuple[str, str, str, str]  # (collection, gateway key's name, system or SESSION, text)
Row = tuple[float, float, str]  # a cell: (member index, last used, text)


class Conversations:
    def __init__(
        self, board: Board, clock: Callable[[], float], journal: list[list[Any]] | None = None
    ) -> None:
        self.board, self.clock = board, clock
        self.journal = journal  # a shared live state (gateway/state) sends `settle` on

    def begin(self, key: Key, members: Sequence[str], fresh: bool = False) -> Turn:
        """The conversation *key* belongs to (a new one if none is live, or if *fresh*: the
        request continues none), and its next turn."""
        owner, digest, cells = _owner(key), _digest(key), cells_of(key)
        now = self.clock()
        with self.board.locked():
            rows = [(*self.board.numbers(cell), self.board.text(cell)) for cell in cells]
            way, held = place(rows, owner, digest, now, fresh)
            cell = cells[way]
            if held:
                index, _, text = rows[way]
                _, _, conversation, turns = text.split(" ")
                turn = int(turns) + 1
                member = members[int(index) - 1] if 0 < index <= len(members) else None
                self.board.write(cell, index, now, text=f"{owner} {digest} {conversation} {turn}")
                return Turn(conversation, turn, member, new=False)
            conversation = new_conversation()
            self.board.write(cell, 0, now, text=f"{owner} {digest} {conversation} 1")
            return Turn(conversation, 1, None, new=True)

    def settle(self, key: Key, members: Sequence[str], member: str) -> None:
        """The conversation now belongs to *member* (the one that answered its turn)."""
        digest, cells = _digest(key), cells_of(key)
        if member not in members:
            return
        index = members.index(member) + 1
        if self.journal is not None:
            self.journal.append(["settle", cells, digest, index])
        with self.board.locked():
            for cell in cells:
                if _fields(self.board.text(cell))[1:2] == [digest]:
                    self.board.write(cell, index, self.clock())
                    return


def place(
    rows: Sequence[Row], owner: str, digest: str, now: float, fresh: bool
) -> tuple[int, bool]:
    """(the way a turn of *digest* goes to in its set, whether it continues the conversation
    held there). The cell already holding *digest*; else a free one; else the oldest of the
    key that holds the most of the set, *owner*'s own when it holds as many as any other."""
    live: list[tuple[int, str, float]] = []  # (way, owner, last used)
    free = None
    for way, (_, last, text) in enumerate(rows):
        held = _fields(text)
        alive = len(held) == 4 and now - last < IDLE_S
        if len(held) == 4 and held[1] == digest:
            return way, alive and not fresh
        if alive:
            live.append((way, held[0], last))
        elif free is None:
            free = way
    if free is not None:
        return free, False
    counts: dict[str, int] = {}
    for _, holder, _ in live:
        counts[holder] = counts.get(holder, 0) + 1
    mine = counts.get(owner, 0)
    most = max((n for holder, n in counts.items() if holder != owner), default=0)
    evict = {owner} if mine >= most else {h for h, n in counts.items() if n == most and h != owner}
    way, _, _ = min((c for c in live if c[1] in evict), key=lambda c: (c[2], c[0]))
    return way, False


def new_conversation() -> str:
    return "c" + secrets.token_hex(6)


def converse_op(key: Key, conversation: str, fresh: bool = False) -> list[Any]:
    """The shared state's operation for `begin` (gateway/state/conversations.lua):
    *conversation* is the id a new conversation takes; *fresh*, begin's."""
    return ["converse", cells_of(key), _owner(key), _digest(key), IDLE_S, conversation, fresh]


def turn_of(reply: list[str], members: Sequence[str]) -> Turn:
    """The Turn a `converse` operation's reply names."""
    _, conversation, turn, index = reply
    at = int(float(index))
    member = members[at - 1] if 0 < at <= len(members) else None
    return Turn(conversation, int(turn), member, new=reply[0] == "new")


def cells_of(key: Key) -> list[str]:
    """The cells of *key*'s set."""
    where = int(_digest(key), 16) % SETS
    return [f"route:{where}.{way}" for way in range(WAYS)]


def _fields(text: str) -> list[str]:
    return text.split(" ") if text else []


def _digest(key: Key) -> str:
    return hashlib.sha256("\x1f".join(key).encode("utf-8", "replace")).hexdigest()[:24]


def _owner(key: Key) -> str:
    """The digest of the gateway key a conversation belongs to: a key's share is counted by it."""
    return hashlib.sha256(key[1].encode("utf-8", "replace")).hexdigest()[:12]
