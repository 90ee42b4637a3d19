"""The simulator's clock: the time its log is stamped with, and the pauses its behaviours take.

Why a seam: a behaviour such as `latency_s` is a pause, and a test that checks it against stamps
taken on another clock needs a margin. Pauses and stamps come from one clock, so a test can hand
the simulator a clock it moves by hand and check the log exactly.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch, as the request log records them."""
        ...

    async def wait(self, event: asyncio.Event, seconds: float) -> None:
        """Return when `event` is set or `seconds` have passed on this clock, whichever is first."""
        ...


class WallClock:
    """Wall-clock stamps (comparable with a client's `time.time()`) and the event loop's timers."""

    def now(self) -> float:
        return time.time()

    async def wait(self, event: asyncio.Event, seconds: float) -> None:
        if seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), seconds)


class ScaledClock(WallClock):
    """A clock that runs *speed* times faster than the wall from *origin* (a wall time; now by
    default): a month of a provider's life played in minutes. Stamps, pauses and timelines all
    read it, so a pause of s seconds takes s / speed on the wall. Whoever knows *origin* and
    *speed* can tell this clock's time from the wall's, to the stamp."""

    def __init__(self, speed: float, origin: float | None = None) -> None:
        if not speed > 0:
            raise ValueError(f"a clock's speed must be above 0, got {speed!r}")
        self.speed = speed
        self.origin = time.time() if origin is None else origin

    def now(self) -> float:
        return self.origin + (time.time() - self.origin) * self.speed

    async def wait(self, event: asyncio.Event, seconds: float) -> None:
        await super().wait(event, seconds / self.speed)
