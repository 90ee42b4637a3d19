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
