"""A route stream's two clocks: a member silent for `gateway.stall_s` mid-answer has stalled,
and a stream still going after `gateway.route_stream_max_s` ends.

Why not a timeout around each read: that is a timer made and cancelled per chunk, on the path
every streamed chunk takes. Here one timer looks at when the read under way began and sleeps
until it could stall, so a chunk costs two stores; the timer fires about once per `stall_s`.
Only time spent waiting on the member counts: a client that reads slowly holds the reader back
(gateway/route/keepalive.py reads a few chunks ahead at most), and that is no stall.

A stall is an UpstreamTimeout (the stream is continued on the next member); the stream's end
of time is `RouteStreamOverTime`, never continued: it is the client's bound, not a member's fault.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from gateway.errors import RouteStreamOverTime, UpstreamError, UpstreamTimeout
from gateway.upstream.chunks import Chunk


class Watch:
    def __init__(self, stall_s: float, max_s: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.stall_s, self.max_s = stall_s, max_s
        self.deadline = self.loop.time() + max_s
        self.since: float | None = None  # when the read under way began
        self.task: asyncio.Task[Any] | None = None  # the task reading
        self.fired: UpstreamError | None = None
        self.timer: asyncio.TimerHandle | None = None

    def over(self) -> RouteStreamOverTime:
        return RouteStreamOverTime(
            f"the stream went on past gateway.route_stream_max_s ({self.max_s:g} s)"
        )

    def left(self) -> float:
        """Seconds until the stream's end of time (at least 0)."""
        return max(0.0, self.deadline - self.loop.time())

    async def chunks(self, source: AsyncIterator[Chunk]) -> AsyncIterator[Chunk]:
        """*source*'s chunks, a stall or the end of time raised as the read's error."""
        if self.timer is None:
            first = min(self.loop.time() + self.stall_s, self.deadline)
            self.timer = self.loop.call_at(first, self._check)
        while True:
            if self.loop.time() >= self.deadline:
                raise self.over()
            self.since, self.task = self.loop.time(), asyncio.current_task()
            try:
                chunk = await anext(source)
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                fired, self.fired = self.fired, None
                if fired is not None and self.task is not None and self.task.uncancel() == 0:
                    raise fired from None
                raise
            finally:
                self.since = None
            yield chunk

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()

    def _check(self) -> None:
        now = self.loop.time()
        since = self.since
        if since is not None and self.task is not None:
            if now >= self.deadline:
                self._fire(self.over())
                return
            if now - since >= self.stall_s:
                stalled = f"the stream stalled mid-answer: nothing within {self.stall_s:g} s"
                self._fire(UpstreamTimeout(stalled))
                return
            at = since + self.stall_s
        else:
            at = now + self.stall_s
        self.timer = self.loop.call_at(min(at, self.deadline), self._check)

    def _fire(self, error: UpstreamError) -> None:
        assert self.task is not None
        self.fired = error
        self.task.cancel()
        self.timer = self.loop.call_at(self.loop.time() + self.stall_s, self._check)
