"""One call's set-up at a time, first come first served, until its request has left.

Why: litellm's set-up of a call (building the request, the SDK's client and headers) is a
couple of milliseconds of CPU on the event loop, split by several awaits. Started together,
five seats interleave their set-ups step by step, so none is sent before the fifth is ready, all
five answers come back at once and wait to be read in turn; a thousand panels at once do the same
on a larger scale, and every panel's seats leave late. Through the queue, set-ups run one after
another in arrival order: each request leaves as soon as it is ready, answers come back spread
out and are read as they arrive, and the first panels in are the first out.

A passage is held until its request leaves (the HTTP session's trace hook calls `leave`) or for
at most `hold_s`, 5 ms: an idle loop sets a call up in about 2 ms, so panels are served in turn;
a loop busy with many panels stretches each set-up over many of its steps, and then the next
set-up starts after 5 ms anyway, so the queue never leaves the CPU idle under load. A model whose
calls are sent some other way and never say so is let through without queueing once one of its
calls has succeeded in silence. The turn is handed straight to the longest waiter, so a call
arriving later can never take it first (no waiter starves).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator


class Passage:
    """One call's turn at the queue; `leave` ends the turn (the request is on its way)."""

    def __init__(self, queue: SetupQueue | None) -> None:
        self._queue = queue
        self.left = False
        self.timer: asyncio.TimerHandle | None = None

    def leave(self) -> None:
        self.left = True
        self.end()

    def end(self) -> None:
        queue, self._queue = self._queue, None
        if self.timer is not None:
            self.timer.cancel()
        if queue is not None:
            queue._hand_on()


class SetupQueue:
    def __init__(self, hold_s: float = 0.005) -> None:
        self.hold_s = hold_s
        self.silent: set[str] = set()  # models whose requests never report leaving
        self._busy = False
        self._waiting: deque[asyncio.Future[None]] = deque()

    @contextlib.asynccontextmanager
    async def passage(self, key: str) -> AsyncIterator[Passage]:
        """Wait for the turn of *key*'s call, then hold it while the caller sets the call up.
        The caller reports success with `succeeded`, so that silence can be learned."""
        if key in self.silent:
            yield Passage(None)
            return
        passage = await self.enter()
        try:
            yield passage
        finally:
            passage.end()

    async def enter(self) -> Passage:
        """Wait for a turn and take it; it ends with `end()`, or by itself after `hold_s`."""
        await self._turn()
        passage = Passage(self)
        passage.timer = asyncio.get_running_loop().call_later(self.hold_s, passage.end)
        return passage

    def succeeded(self, key: str, passage: Passage) -> None:
        """A call that succeeded without ever saying its request left is sent another way."""
        if not passage.left:
            self.silent.add(key)

    async def _turn(self) -> None:
        if not self._busy and not self._waiting:
            self._busy = True
            return
        turn = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._hand_on()  # handed the turn just as we were cancelled: pass it on
            elif turn in self._waiting:  # (a hand-on may already have dropped it)
                self._waiting.remove(turn)
            raise

    def _hand_on(self) -> None:
        while self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)  # the turn passes straight to the longest waiter
                return
        self._busy = False
