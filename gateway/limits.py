"""Cooldowns after rate limits, and rpm caps per model and per connection.

A model that answered 429 is not called again until its cooldown ends: free tiers punish a
client that keeps knocking. A cap is spent by calls started in the last 60 s plus any still in
flight, so a burst of concurrent panels cannot overrun it. Both live on the board
(gateway/board.py), so every worker of one gateway keeps the same cooldowns and caps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gateway.board import Board
from gateway.settings import Config


@dataclass
class Cooldown:
    until: float
    why: str


class Permit:
    """Held while a call is in flight; release it when the call ends."""

    def __init__(self, board: Board, slots: list[int], clock: Callable[[], float]) -> None:
        self._board, self._slots, self._clock = board, slots, clock

    def release(self) -> None:
        if self._slots:
            self._board.release(self._slots, self._clock())
            self._slots = []


class RateLimits:
    """Cooldowns and rpm caps on the board. (How big a panel may be is routing's PanelLimits.)"""

    def __init__(self, config: Config, clock: Callable[[], float], board: Board) -> None:
        self.config = config
        self.clock = clock
        self.board = board
        self._model_caps = dict(config.model_rpm)
        self._connection_caps = {
            name: c.rpm for name, c in config.connections.items() if c.rpm is not None
        }

    def cooling(self, now: float | None = None) -> dict[str, float]:
        """alias -> cooldown end, for every model cooling now."""
        now = self.clock() if now is None else now
        found = {}
        with self.board.locked():
            for model in self.config.catalog.models:
                until = self.board.numbers(_cool(model.alias))[0]
                if until > now:
                    found[model.alias] = until
        return found

    def cooldown_of(self, alias: str) -> Cooldown | None:
        with self.board.locked():
            until = self.board.numbers(_cool(alias))[0]
            if until <= self.clock():
                return None
            return Cooldown(until, self.board.text(_cool(alias)))

    def cool(self, alias: str, retry_after: float | None, why: str) -> float:
        """Cool a model (or its whole connection, if marked cool_together); return the end."""
        settings = self.config.gateway
        wait = settings.cooldown_default_s if retry_after is None else retry_after
        until = self.clock() + min(max(wait, 0.0), settings.cooldown_max_s)
        model = self.config.catalog.model(alias)
        targets = [alias]
        connection = self.config.connections.get(model.connection) if model else None
        if model is not None and connection is not None and connection.cool_together:
            shared = model.connection
            targets = [m.alias for m in self.config.catalog.models if m.connection == shared]
        with self.board.locked():
            for target in targets:
                if self.board.numbers(_cool(target))[0] < until:
                    text = why if target == alias else f"{why} (via {alias})"
                    self.board.write(_cool(target), until, text=text)
        return until

    def acquire(self, alias: str) -> Permit | str:
        """A permit to call `alias` now, or the reason it may not be called."""
        now = self.clock()
        model = self.config.catalog.model(alias)
        rings: list[tuple[str, int]] = []
        if alias in self._model_caps:
            rings.append((f"model:{alias}", self._model_caps[alias]))
        connection = model.connection if model else None
        if connection is not None and connection in self._connection_caps:
            rings.append((f"connection:{connection}", self._connection_caps[connection]))
        with self.board.locked():
            cooldown = self.cooldown_of(alias)
            if cooldown is not None:
                return f"cooling for {cooldown.until - now:.1f} s more ({cooldown.why})"
            taken = self.board.take(rings, now) if rings else []
        if isinstance(taken, str):
            if taken.startswith("model:"):
                return f"over its rpm cap ({self._model_caps[alias]}/min on the model)"
            cap = rings[-1][1]  # the connection's ring, always added last
            return f"over its rpm cap ({cap}/min on the connection {connection})"
        return Permit(self.board, taken, self.clock)

    def rpm_use(self, alias: str) -> int | None:
        cap = self._model_caps.get(alias)
        return self.board.used(f"model:{alias}", cap, self.clock()) if cap is not None else None

    def connection_use(self, name: str) -> tuple[int, int] | None:
        """(calls in the last 60 s or in flight, cap) on a capped connection; None: no cap."""
        cap = self._connection_caps.get(name)
        if cap is None:
            return None
        return self.board.used(f"connection:{name}", cap, self.clock()), cap


def _cool(alias: str) -> str:
    return f"cool:{alias}"
