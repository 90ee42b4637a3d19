"""A stream's items as they come, with a `Quiet` whenever none came for a while: what route
mode's formats turn into keep-alives (a `: keep-alive` comment, an Anthropic `ping`).

Why a reader task: the wait for the next item must end at the keep-alive time without
cancelling the read (a cancelled read would lose the chunk it was taking). Wrapping each read in
a task of its own, and each wait in `asyncio.wait`, cost a task, a timer and several futures per
chunk, and a turn of the event loop before each chunk went out, the first included. Here one
task reads for the whole stream and hands items over through a small buffer: a consumer that is
waiting is handed each item as soon as it is read, and one that is busy sending finds the items
read meanwhile ready, without a wait; only a wait costs a future and a timer.

The reader reads at most `AHEAD` items ahead of the consumer, so a client that stops reading
stops the upstream being read too, as before. When the consumer stops (the stream ends, fails or
is closed because the client left), the reader is cancelled and waited for, so the source is
closed (and route mode's record written) before the consumer's own `finally` ends.

Items the source already holds (route mode's chunks held until the first piece, `in_hand`) are
taken by the consumer itself before the reader starts: no task hop and no turn of the loop
between the response's headers and the first text, so they leave in one write.

What one network read brought arrives together: a source that says its next item is read
already (`ready`: the direct reader parses a whole read at once) is read on without a turn of
the loop between its items, and `batched` hands the consumer every item ready at once as one
list, so a format can send them in one write instead of a `send()` each.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

AHEAD = 32


class Quiet:
    """Nothing came for the keep-alive time."""


class _End:
    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


async def with_keepalive(
    items: AsyncIterator[Any],
    seconds: float,
    in_hand: Callable[[], bool] | None = None,
    *,
    ready: Callable[[], bool] | None = None,
    batched: bool = False,
) -> AsyncIterator[Any]:
    """*items* as they come, and a `Quiet` whenever none came for *seconds*. *in_hand*: True
    while the source's next item is one it holds already (taken at once, with no wait);
    *ready*: True while the source's next item is read already (read on at once); *batched*:
    yield lists of the items ready at once instead of one item at a time."""
    loop = asyncio.get_running_loop()
    ready_items: deque[Any] = deque()
    wake: list[asyncio.Future[None]] = []  # the consumer's wait, while the buffer is empty
    room: list[asyncio.Future[None]] = []  # the reader's wait, while the buffer is full

    def hand_over(item: Any) -> bool:
        """Buffer *item*; True if that woke the consumer."""
        ready_items.append(item)
        if wake and not wake[0].done():
            wake[0].set_result(None)
            return True
        return False

    async def read() -> None:
        try:
            async for item in items:
                if hand_over(item) and not (ready is not None and ready()):
                    # Let the consumer send it before the next is read: a source whose next
                    # items are already in (a whole answer in one network read) would
                    # otherwise be read to its end, or AHEAD, before the first went out.
                    # (A source whose next item is parsed already is read on: those go out
                    # together.)
                    await asyncio.sleep(0)
                elif len(ready_items) >= AHEAD:
                    room.append(loop.create_future())
                    await room[0]
                    room.clear()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # handed to the consumer, raised there
            hand_over(_End(exc))
            return
        finally:  # a source stopped between two items is closed too, not left to the GC
            closing = getattr(items, "aclose", None)
            if closing is not None:
                await closing()
        hand_over(_End())

    reader: asyncio.Task[None] | None = None
    try:
        held: list[Any] = []
        while in_hand is not None and in_hand():
            try:
                item = await anext(items)
            except StopAsyncIteration:
                if held:
                    yield held
                return
            if batched:
                held.append(item)
            else:
                yield item
        if held:
            yield held
        reader = loop.create_task(read())
        while True:
            if not ready_items:
                waiting = loop.create_future()
                wake.append(waiting)
                timer = loop.call_later(seconds, _quiet, waiting)
                try:
                    await waiting
                finally:
                    timer.cancel()
                    wake.clear()
                if not ready_items:
                    yield Quiet()
                    continue
            item = ready_items.popleft()
            if room and not room[0].done():
                room[0].set_result(None)
            if isinstance(item, _End):
                if item.error is not None:
                    raise item.error
                return
            if not batched:
                yield item
                continue
            together = [item]
            while ready_items and not isinstance(ready_items[0], _End):
                together.append(ready_items.popleft())
            if room and not room[0].done():
                room[0].set_result(None)
            yield together
    finally:
        if reader is None:  # stopped among the items in hand: the source is closed here
            closing = getattr(items, "aclose", None)
            if closing is not None:
                await closing()
        else:
            if not reader.done():
                reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)


def _quiet(waiting: asyncio.Future[None]) -> None:
    if not waiting.done():
        waiting.set_result(None)
