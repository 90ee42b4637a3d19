"""The live state: where cooldowns, rpm windows, rotation and route conversations are kept.

Why a seam: one gateway keeps them on its board (gateway/state/board.py), in memory its workers share;
several replicas on several machines keep them in Redis (`state: redis://...`, contract §15).
Every reader of the live figures (RateLimits, Ledger, Conversations) reads the board either way:
with Redis, the board is this worker's mirror, refreshed by each round trip, and the few steps
that must see every replica (seating, taking an rpm slot, a conversation's next turn) are one
round trip each. Changes that need no answer (a seat ended, a cooldown learned, a verdict) ride
along on the next one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from gateway.access.keys import Client
from gateway.state.conversations import Key, Turn
from gateway.state.limits import Permit, Refused
from routing import Evidence, Panel


@dataclass(frozen=True)
class Seating:
    plan: Panel
    # seat name -> its rpm slot, taken as the panel was seated; a seat not here asks `acquire`
    permits: dict[str, Permit | Refused] = field(default_factory=dict)


Choose = Callable[[Evidence], Panel]  # a panel from the evidence, or a refusal raised


class LiveState(Protocol):
    async def start(self) -> None:
        """Begin serving; the board already holds what the records say."""

    async def close(self) -> None: ...

    async def seat(
        self, choose: Choose, shape: str, nominees: tuple[str, ...], client: Client, now: float
    ) -> Seating:
        """Choose a panel on the evidence and mark its seats, so the next panel anywhere rotates.
        A shared state also spends *client*'s rpm here (429 over it) and takes the seats' rpm
        slots."""

    async def acquire(self, alias: str) -> Permit | Refused:
        """A permit to call *alias* now, or why not (cooling, over a cap)."""

    async def flush(self, kind: str = "finish") -> None:
        """Send on the changes made since the last round trip (a seat's end, a verdict)."""

    async def refresh(self) -> None:
        """Bring the board up to date before it is shown (`/bench/models`, the dashboard)."""

    async def begin_turn(self, key: Key, members: tuple[str, ...], client: Client) -> Turn:
        """A route conversation's next turn (and *client*'s rpm, for a shared state)."""

    def settle_turn(self, key: Key, members: tuple[str, ...], member: str) -> None: ...

    def figures(self) -> dict[str, Any] | None:
        """Round trips and their causes, for `/healthz` and the benchmarks; None on the board."""
