"""The default live state: the board alone (one gateway, its workers sharing memory).

Every step runs on the event loop without awaiting anything, under the board's lock where it
must be seen whole, exactly as the board's readers and writers always have; the key's rpm is
spent by the Keys around seating.
"""

from __future__ import annotations

from typing import Any

from gateway.board import Board
from gateway.request.client import Client
from gateway.state.conversations import Conversations, Key, Turn
from gateway.state.figures import Figures
from gateway.state.limits import Permit, RateLimits, Refused
from gateway.state.live import Choose, Seating


class LocalState:
    def __init__(
        self, board: Board, figures: Figures, limits: RateLimits, conversations: Conversations
    ) -> None:
        self.board, self.figures, self.limits = board, figures, limits
        self.conversations = conversations

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def seat(
        self, choose: Choose, shape: str, nominees: tuple[str, ...], client: Client, now: float
    ) -> Seating:
        return self.seat_here(choose, shape, now)

    def seat_here(self, choose: Choose, shape: str, now: float) -> Seating:
        """Choose and mark in one step under the board's lock: no other worker seats a panel in
        between, so the next one sees these seats taken."""
        limits = self.limits
        with self.board.locked():
            evidence = self.figures.evidence(limits.cooling(now), shape, limits.scarce(now))
            plan = choose(evidence)
            for chair in plan.seats:
                self.figures.seated(chair.alias, now)
        return Seating(plan)

    async def acquire(self, alias: str) -> Permit | Refused:
        return self.limits.acquire(alias)

    async def flush(self, kind: str = "finish") -> None:
        return None

    async def refresh(self) -> None:
        return None

    async def begin_turn(
        self, key: Key, members: tuple[str, ...], client: Client, fresh: bool = False
    ) -> Turn:
        return self.conversations.begin(key, members, fresh)

    def settle_turn(self, key: Key, members: tuple[str, ...], member: str) -> None:
        self.conversations.settle(key, members, member)

    def round_trips(self) -> dict[str, Any] | None:
        return None
