"""gateway/route/keepalive.py: a stream's items as they come, a Quiet while none comes, nothing
lost, and the source closed when the consumer stops. Sources here are driven by events, so no test
waits on a wall-clock margin: a silent source stays silent until the test has seen a Quiet."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from gateway.route.keepalive import AHEAD, Quiet, with_keepalive


class Source:
    """An async stream whose items the test releases, which notes how far it got."""

    def __init__(self, items: list[object], *, gate_before: int | None = None) -> None:
        self.items, self.gate_before = items, gate_before
        self.gate = asyncio.Event()
        self.read = 0
        self.closed = asyncio.Event()

    async def stream(self) -> AsyncIterator[object]:
        try:
            for i, item in enumerate(self.items):
                if i == self.gate_before:
                    await self.gate.wait()
                if isinstance(item, BaseException):
                    raise item
                self.read += 1
                yield item
        finally:
            self.closed.set()


def run(coro):  # one event loop per test, as the gateway has one per worker
    return asyncio.run(coro)


def test_items_come_through_in_order_and_at_once_when_already_there():
    async def main():
        source = Source(["a", "b", "c"])
        return [item async for item in with_keepalive(source.stream(), 60)]

    assert run(main()) == ["a", "b", "c"]


def test_a_waiting_consumer_gets_each_item_before_the_next_is_read():
    """A whole answer may already be in (one network read): its first chunk must not wait for
    the rest to be read and parsed."""

    async def main():
        source = Source(list(range(10)))
        relay = with_keepalive(source.stream(), 60)
        first, read_by_then = await anext(relay), source.read
        return first, read_by_then, [item async for item in relay]

    first, read_by_then, rest = run(main())
    assert (first, rest) == (0, list(range(1, 10)))
    assert read_by_then <= 2


def test_a_silent_source_gets_quiets_and_its_next_item_is_not_lost():
    async def main():
        source = Source(["first", "late"], gate_before=1)
        got: list[object] = []
        async for item in with_keepalive(source.stream(), 0.001):
            got.append(item)
            if isinstance(item, Quiet) and sum(isinstance(g, Quiet) for g in got) == 2:
                source.gate.set()  # the read under way all along now finishes
        return got

    got = run(main())
    assert got[0] == "first" and got[-1] == "late"
    assert all(isinstance(item, Quiet) for item in got[1:-1]) and len(got) >= 4


def test_an_error_from_the_source_comes_after_the_items_before_it():
    async def main():
        source = Source(["a", "b", ValueError("broke off")])
        got = []
        with pytest.raises(ValueError, match="broke off"):
            async for item in with_keepalive(source.stream(), 60):
                got.append(item)
        return got, source.closed.is_set()

    assert run(main()) == (["a", "b"], True)


def test_a_consumer_that_stops_closes_the_source_before_it_is_done():
    async def main():
        source = Source(["a", "b"], gate_before=1)  # the source waits mid-stream
        relay = with_keepalive(source.stream(), 60)
        assert await anext(relay) == "a"
        await relay.aclose()  # the client left
        return source.closed.is_set(), source.read

    assert run(main()) == (True, 1)


def test_a_consumer_that_is_cancelled_closes_the_source():
    async def main():
        source = Source(["a", "b"], gate_before=1)

        async def consume() -> None:
            async for _item in with_keepalive(source.stream(), 60):
                pass

        task = asyncio.create_task(consume())
        while source.read < 1:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return source.closed.is_set()

    assert run(main()) is True


def test_a_consumer_that_does_not_read_holds_the_source_back():
    async def main():
        source = Source(list(range(AHEAD * 3)))
        relay = with_keepalive(source.stream(), 60)
        assert await anext(relay) == 0
        for _ in range(5):
            await asyncio.sleep(0)  # give the reader every chance to run ahead
        ahead = source.read
        rest = [item async for item in relay]
        return ahead, rest

    ahead, rest = run(main())
    assert ahead <= AHEAD + 2
    assert rest == list(range(1, AHEAD * 3))


def test_items_in_hand_come_without_a_turn_of_the_loop():
    """Route mode's held chunks follow the response's headers in the same step, so they leave
    in one write (gateway/serve/connection.py): a callback scheduled before they are taken has
    not run by the time the last of them is out."""

    async def main():
        source = Source(["held", "first text", "later"], gate_before=2)
        taken = 0
        relay = with_keepalive(source.stream(), 60, in_hand=lambda: taken < 2)
        turned: list[bool] = []
        asyncio.get_running_loop().call_soon(turned.append, True)
        got = []
        for _ in range(2):
            got.append(await anext(relay))
            taken += 1
        loop_turned = bool(turned)
        source.gate.set()
        got += [item async for item in relay]
        return got, loop_turned

    got, loop_turned = run(main())
    assert got == ["held", "first text", "later"]
    assert loop_turned is False


def test_a_consumer_that_stops_among_items_in_hand_closes_the_source():
    async def main():
        source = Source(["held", "more"])
        relay = with_keepalive(source.stream(), 60, in_hand=lambda: True)
        first = await anext(relay)
        await relay.aclose()
        return first, source.closed.is_set(), source.read

    assert run(main()) == ("held", True, 1)
