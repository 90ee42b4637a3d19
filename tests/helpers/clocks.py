"""A clock the test moves by hand, for the gateway (`clock=manual.now`) and the simulator.

Tests that used to wait on wall-clock margins read exact times from it instead: the gateway's
cooldowns end exactly `retry_after` after `now()`, and a simulated pause ends when the test says.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable


class ManualClock:
    def __init__(self, start: float = 1_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self.pausing = 0  # simulated pauses under way: move the clock once they have begun

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds

    async def wait(self, event: asyncio.Event, seconds: float) -> None:
        """A simulated pause: over once the test has moved the clock past its end (or the
        client left). The test thread moves the clock, so the loop looks every few ms."""
        if seconds <= 0:
            return
        end = self.now() + seconds
        with self._lock:
            self.pausing += 1
        try:
            while self.now() < end and not event.is_set():
                await asyncio.sleep(0.002)
        finally:
            with self._lock:
                self.pausing -= 1


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll until `condition()` holds; fail after `timeout` (a limit, never a margin)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true in time"
        time.sleep(0.005)
