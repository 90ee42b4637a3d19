"""Cooldowns after rate limits, and rpm caps per model and per connection.

A model that answered 429 is not called again until its cooldown ends: free tiers punish a
client that keeps knocking. A cap is spent by calls started in the last 60 s plus any still in
flight, so a burst of concurrent panels cannot overrun it. All state is in memory, per process,
and changed only from the event loop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from gateway.settings import Config

WINDOW_S = 60.0


@dataclass
class Cooldown:
    until: float
    why: str


class _Slot:
    __slots__ = ("started", "done")

    def __init__(self, started: float) -> None:
        self.started = started
        self.done = False


class Window:
    """Calls started in the last minute, plus older ones still in flight."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.slots: deque[_Slot] = deque()

    def used(self, now: float) -> int:
        while self.slots and self.slots[0].done and self.slots[0].started <= now - WINDOW_S:
            self.slots.popleft()
        return sum(1 for s in self.slots if s.started > now - WINDOW_S or not s.done)

    def take(self, now: float) -> _Slot:
        slot = _Slot(now)
        self.slots.append(slot)
        return slot


class Permit:
    """Held while a call is in flight; release it when the call ends."""

    def __init__(self, slots: list[_Slot]) -> None:
        self._slots = slots

    def release(self) -> None:
        for slot in self._slots:
            slot.done = True


class Limits:
    def __init__(self, config: Config, clock: Callable[[], float]) -> None:
        self.config = config
        self.clock = clock
        self.cooldowns: dict[str, Cooldown] = {}
        self._models = {a: Window(cap) for a, cap in config.model_rpm.items()}
        self._connections = {
            name: Window(c.rpm) for name, c in config.connections.items() if c.rpm is not None
        }

    def cooling(self, now: float | None = None) -> dict[str, float]:
        """alias -> cooldown end, for every model cooling now."""
        now = self.clock() if now is None else now
        return {a: c.until for a, c in self.cooldowns.items() if c.until > now}

    def cooldown_of(self, alias: str) -> Cooldown | None:
        found = self.cooldowns.get(alias)
        return found if found is not None and found.until > self.clock() else None

    def cool(self, alias: str, retry_after: float | None, why: str) -> float:
        """Cool a model (or its whole connection, if marked cool_together); return the end."""
        settings = self.config.gateway
        wait = settings.cooldown_default_s if retry_after is None else retry_after
        until = self.clock() + min(max(wait, 0.0), settings.cooldown_max_s)
        model = self.config.catalog.model(alias)
        targets = [alias]
        connection = self.config.connections.get(model.connection) if model else None
        if connection is not None and connection.cool_together:
            targets = [
                m.alias for m in self.config.catalog.models if m.connection == model.connection
            ]
        for target in targets:
            current = self.cooldowns.get(target)
            if current is None or current.until < until:
                self.cooldowns[target] = Cooldown(
                    until, why if target == alias else f"{why} (via {alias})"
                )
        return until

    def acquire(self, alias: str) -> Permit | str:
        """A permit to call `alias` now, or the reason it may not be called."""
        now = self.clock()
        cooldown = self.cooldown_of(alias)
        if cooldown is not None:
            return f"cooling for {cooldown.until - now:.1f} s more ({cooldown.why})"
        windows: list[Window] = []
        model_window = self._models.get(alias)
        if model_window is not None:
            windows.append(model_window)
        model = self.config.catalog.model(alias)
        connection_window = self._connections.get(model.connection) if model else None
        if connection_window is not None:
            windows.append(connection_window)
        for window in windows:
            if window.used(now) >= window.cap:
                which = "model" if window is model_window else f"connection {model.connection}"
                return f"over its rpm cap ({window.cap}/min on the {which})"
        return Permit([window.take(now) for window in windows])

    def rpm_use(self, alias: str) -> int | None:
        window = self._models.get(alias)
        return window.used(self.clock()) if window is not None else None
