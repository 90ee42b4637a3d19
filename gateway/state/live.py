"""The live state's interface (`LiveState`), what one seating hands back (`Seating`), and how
a panel is chosen inside it (`Choose`): the board (state/local.py) and Redis
(state/redis_state.py) both implement it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from gateway.request.client import Client
from gateway.state.conversations import Key, Turn
from gateway.state.limits import Permit, Refused
from routing import Evidence, Panel


@dataclass(frozen=True)
class Seating:
    plan: Panel
    # seat name -> its rpm slot, taken as the panel was seated; a seat not here asks `acquire`
    permits: dict[str, Permit | Refused] = field(default_factory=dict)


# a panel from the evidence (routing.Choice), or a routing.Refusal raised
Choose = Callable[[Evidence], Panel]


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

    async def begin_turn(
        self, key: Key, members: tuple[str, ...], client: Client, fresh: bool = False
    ) -> Turn:
        """A route conversation's next turn (and *client*'s rpm, for a shared state); *fresh*:
        the request continues no conversation, so it starts one whatever *key* holds."""

    def settle_turn(self, key: Key, members: tuple[str, ...], member: str) -> None: ...

    def round_trips(self) -> dict[str, Any] | None:
        """Round trips and their causes, for `/healthz` and the benchmarks; None on the board."""
