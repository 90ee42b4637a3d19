"""One call's set-up at a time, first come first served, until its request has left.

Why: litellm's set-up of a call (building the request, the SDK's client and headers) is a
couple of milliseconds of CPU on the event loop, split by several awaits. Started together,
five seats interleave their set-ups step by step, so none is sent before the fifth is ready, all
five answers come back at once and wait to be read in turn; a thousand panels at once do the same
on a larger scale, and every panel's seats leave late. Through the gate, set-ups run one after
another in arrival order: each request leaves as soon as it is ready, answers come back spread
out and are read as they arrive, and the first panels in are the first out.

A passage is held until its request leaves (the HTTP session's trace hook calls `leave`) or for
at most `hold_s`; a model whose calls are sent some other way and never say so is let through
without queueing once one of its calls has succeeded in silence.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class Passage:
    """One call's turn at the gate; `leave` ends the turn (the request is on its way)."""

    def __init__(self, turn: asyncio.Future | None) -> None:
        self._turn = turn
        self.left = False

    def leave(self) -> None:
        self.left = True
        if self._turn is not None and not self._turn.done():
            self._turn.set_result(None)


class SetupGate:
    def __init__(self, hold_s: float = 0.05) -> None:
        self.hold_s = hold_s
        self.silent: set[str] = set()  # models whose requests never report leaving
        self._slot = asyncio.Semaphore(1)  # waiters are served in arrival order

    @contextlib.asynccontextmanager
    async def passage(self, key: str) -> AsyncIterator[Passage]:
        """Wait for the turn of *key*'s call, then hold it while the caller sets the call up.
        The caller marks success with `succeeded` (on the yielded passage) to teach silence."""
        if key in self.silent:
            yield Passage(None)
            return
        await self._slot.acquire()
        loop = asyncio.get_running_loop()
        turn = loop.create_future()
        turn.add_done_callback(lambda _: self._slot.release())
        passage = Passage(turn)
        timer = loop.call_later(self.hold_s, _end, turn)
        try:
            yield passage
        finally:
            timer.cancel()
            _end(turn)

    def succeeded(self, key: str, passage: Passage) -> None:
        """A call that succeeded without ever saying its request left is sent another way."""
        if not passage.left:
            self.silent.add(key)


def _end(turn: asyncio.Future) -> None:
    if not turn.done():
        turn.set_result(None)
