"""How much of a model's limits the suite may take (contract §20: never more than `suite.share`
of its `rpm`/`rpd`, the model's and its connection's), counted apart from what panels spend,
so the suite never starves the traffic the limits are there for.

`Shares` counts the suite's own calls: each start in the last minute (rpm), and today's calls
(rpd), seeded from the records at the run's start. It says, before each call, to go, to wait
(an rpm share full: how long), or to stop (the day's share spent: why)."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

WINDOW_S = 60.0


def allowed(cap: int, share: float) -> int:
    """The suite's part of *cap*: at least one call, never more than *share* of it."""
    return max(1, math.floor(cap * share))


@dataclass(frozen=True)
class Caps:
    """One model's caps, each with the counter it is held to: the model's own and its
    connection's rpm and rpd (None: no cap)."""

    alias: str
    connection: str | None
    rpm: int | None = None
    connection_rpm: int | None = None
    rpd: int | None = None
    connection_rpd: int | None = None


class Shares:
    def __init__(self, share: float, today: Mapping[str, int], connection_of: Mapping[str, str]):
        """*today*: the suite's calls so far today per model (from the records)."""
        self.share = share
        self.recent: dict[str, deque[float]] = {}
        self.today: dict[str, int] = {}
        for alias, calls in today.items():
            self._add(alias, calls)
            connection = connection_of.get(alias)
            if connection is not None:
                self._add(f"connection:{connection}", calls)

    def _add(self, key: str, calls: int) -> None:
        self.today[key] = self.today.get(key, 0) + calls

    def check(self, caps: Caps, now: float) -> float | str | None:
        """None: go; a number: wait that many seconds for an rpm slot; text: the day's share
        is spent (why)."""
        connection = f"connection:{caps.connection}" if caps.connection else None
        for key, cap, where in ((caps.alias, caps.rpd, "the model"),
                                (connection, caps.connection_rpd, "its connection")):  # fmt: skip
            if (
                key is not None
                and cap is not None
                and self.today.get(key, 0) >= allowed(cap, self.share)
            ):
                used = self.today.get(key, 0)
                return (
                    f"the suite's share of the daily cap on {where} is spent "
                    f"({used} of {cap}/day at suite.share {self.share:g})"
                )
        wait = 0.0
        for key, cap in ((caps.alias, caps.rpm), (connection, caps.connection_rpm)):
            if key is None or cap is None:
                continue
            starts = self._window(key, now)
            if len(starts) >= allowed(cap, self.share):
                wait = max(wait, starts[0] + WINDOW_S - now)
        return wait if wait > 0 else None

    def spent(self, caps: Caps, now: float) -> None:
        """A call of *caps.alias* started at *now*."""
        for key in (caps.alias, f"connection:{caps.connection}" if caps.connection else None):
            if key is not None:
                self._window(key, now).append(now)
                self._add(key, 1)

    def _window(self, key: str, now: float) -> deque[float]:
        starts = self.recent.setdefault(key, deque())
        while starts and starts[0] + WINDOW_S <= now:
            starts.popleft()
        return starts
