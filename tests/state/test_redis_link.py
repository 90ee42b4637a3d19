"""Group commit of seat finishes (gateway/state/redis_link.py `commit` and `later`): a finish that
went well waits for no round trip, riding the next step or, within a moment, one of its own with
every other such finish; finishes that learned something (a cooldown) and land in one turn of the
event loop, or while a round trip is in flight, share one step, and each `flush` of those returns
only once its changes are in Redis; Redis lost with a batch waiting keeps the journal. A step that
only ends seats publishes nothing: the others hear it with their next reply.

Real Runtimes on the test's own Redis database, times from a clock the test moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as redis

from gateway.runtime import Runtime
from gateway.state.limits import Permit
from tests.helpers.clocks import ManualClock
from tests.helpers.replicas import replicas, run

FINISHES = 8


@contextlib.asynccontextmanager
async def listening(url: str) -> AsyncIterator[Any]:
    """A subscription to the replicas' publications, as another replica's listener has."""
    listener = redis.Redis.from_url(url, decode_responses=True)
    pubsub = listener.pubsub(ignore_subscribe_messages=True)
    await pubsub.subscribe("bench:changes")
    try:
        yield pubsub
    finally:
        await pubsub.aclose()
        await listener.aclose()


def test_finishes_that_went_well_wait_for_no_round_trip_and_go_together_a_moment_later(
    redis_url, tmp_path
):
    clock = ManualClock()

    async def body(a: Runtime, b: Runtime) -> None:
        async def finish() -> None:
            a.figures.answered("alpha")
            await a.live.flush()

        await asyncio.gather(*(finish() for _ in range(FINISHES)))
        figures = a.live.round_trips()
        assert set(figures["by_cause"]) == {"start"}  # every flush returned without a round trip
        assert figures["seat_finishes"] == figures["queued"] == FINISHES
        await b.live.refresh()
        assert b.figures.row("alpha")["answered"] == 0  # not in Redis yet: on their way
        for _ in range(200):  # no step went: they go in one of their own, all together
            await b.live.refresh()
            if b.figures.row("alpha")["answered"] == FINISHES:
                break
            await asyncio.sleep(0.01)
        assert b.figures.row("alpha")["answered"] == FINISHES
        figures = a.live.round_trips()
        assert figures["by_cause"]["finish"] == 1 and not figures["queued"]

    run(replicas(2, redis_url, tmp_path, clock), body)


def test_a_finish_that_went_well_rides_the_next_step_sent_for_another_reason(redis_url, tmp_path):
    clock = ManualClock()

    async def body(a: Runtime, b: Runtime) -> None:
        a.figures.answered("alpha")
        await a.live.flush()
        await a.live.acquire("gamma")  # a seat's slot: its step carries the finish
        figures = a.live.round_trips()
        assert "finish" not in figures["by_cause"] and figures["by_cause"]["acquire"] == 1
        assert not figures["queued"]
        await b.live.refresh()
        assert b.figures.row("alpha")["answered"] == 1
        await asyncio.sleep(0.1)  # and no step of its own follows
        assert "finish" not in a.live.round_trips()["by_cause"]

    run(replicas(2, redis_url, tmp_path, clock), body)


def test_a_finish_rides_on_the_next_seating_step_without_a_round_trip_of_its_own(
    redis_url, tmp_path
):
    clock = ManualClock()

    async def body(a: Runtime, b: Runtime) -> None:
        async def finish() -> None:
            a.rate_limits.cool("beta", 30, "rate limited (429)")
            await a.live.flush()

        # a slot in flight; the finish queues behind it; the next slot's step carries it
        await asyncio.gather(a.live.acquire("alpha"), finish(), a.live.acquire("gamma"))
        figures = a.live.round_trips()
        assert "finish" not in figures["by_cause"] and figures["joined"] == {"finish": 1}
        assert figures["by_cause"]["acquire"] == 2
        refused = await b.live.acquire("beta")
        assert refused == "cooling for 30.0 s more (rate limited (429))"

    run(replicas(2, redis_url, tmp_path, clock), body)


def test_redis_lost_with_a_batch_waiting_keeps_the_journal_and_sends_it_once_back(
    own_redis,
    tmp_path,
):
    clock = ManualClock()
    url = own_redis.url(0)

    async def body(a: Runtime) -> None:
        pauser = redis.Redis.from_url(url)
        await pauser.execute_command("CLIENT", "PAUSE", "30000", "ALL")
        await pauser.aclose()
        flying = asyncio.ensure_future(a.live.acquire("alpha"))  # held by the pause
        await asyncio.sleep(0.05)
        assert a.live.link._flying == 1

        async def finish() -> None:
            a.figures.answered("gamma")
            await a.live.flush()

        await asyncio.wait_for(asyncio.gather(*(finish() for _ in range(3))), 1)  # no wait
        await asyncio.sleep(0.1)  # their own step is due: it waits to join the next one
        assert a.live.link._sending
        own_redis.stop()  # the step in flight fails: Redis is down
        await asyncio.wait_for(a.live.link.settle(), 5)  # nobody hangs on Redis
        assert not isinstance(await flying, str)  # served on the board instead
        assert a.health.status()["status"] == "degraded"
        queued = [op for op in a.live.link.journal if op[0] == "add"]
        assert len(queued) == 3  # the batch kept for later, not lost
        assert "finish" not in a.live.round_trips()["by_cause"]
        own_redis.start()  # empty: the watcher seeds it from the board, which counted them
        for _ in range(200):
            if a.health.status() == {"status": "ok"}:
                break
            await asyncio.sleep(0.05)
        assert a.health.status() == {"status": "ok"}
        (b,) = replicas(1, url, tmp_path, clock)
        await b.live.start()
        try:
            assert b.figures.row("gamma")["answered"] == 3
        finally:
            await b.live.close()

    run(replicas(1, url, tmp_path, clock), body)


def test_a_worker_skips_its_own_steps_news_unread_and_another_takes_it(redis_url, tmp_path):
    clock = ManualClock()

    async def body(a: Runtime, b: Runtime) -> None:
        async with listening(redis_url) as pubsub:
            a.rate_limits.cool("beta", 30, "rate limited (429)")
            await a.live.flush()
            message = None
            for _ in range(100):
                message = await pubsub.get_message(timeout=0.05)
                if message is not None:
                    break
            assert message is not None
            news: str = message["data"]
            garbled = news.replace('"cells":[', '"cells":[oops')
            a.live.link.heard(garbled)  # a's own: skipped, not even parsed
            with pytest.raises(json.JSONDecodeError):
                b.live.link.heard(garbled)  # another's: read
            b.live.link.heard(news)  # (unless b's own listener took it first)
            assert b.rate_limits.cooldown_of("beta") is not None

    run(replicas(2, redis_url, tmp_path, clock), body)


def test_finishes_a_turn_apart_while_the_first_is_in_flight_ride_the_next_step(redis_url, tmp_path):
    clock = ManualClock()

    async def body(a: Runtime, b: Runtime) -> None:
        async def finish(turns: int, alias: str) -> None:
            for _ in range(turns):
                await asyncio.sleep(0)
            a.rate_limits.cool(alias, 30, "rate limited (429)")  # learned: must be in Redis
            await a.live.flush()

        # the first gathers for one turn and sends; the others queue behind the step in flight
        later = ("beta", "gamma", "delta")
        await asyncio.gather(finish(0, "alpha"), *(finish(2, alias) for alias in later))
        figures = a.live.round_trips()
        assert figures["by_cause"]["finish"] == 2 and figures["joined"]["finish"] == 2
        await b.live.refresh()
        for alias in ("alpha", *later):
            assert b.rate_limits.cooldown_of(alias) is not None, alias

    run(replicas(2, redis_url, tmp_path, clock), body)


def test_a_step_that_only_ends_seats_publishes_nothing_and_reaches_others_by_their_reply(
    redis_url, tmp_path
):
    clock = ManualClock()

    async def body(a: Runtime, b: Runtime) -> None:
        async with listening(redis_url) as pubsub:
            permit = await a.live.acquire("alpha")  # published: a seat took a capped slot
            assert isinstance(permit, Permit)
            permit.release()
            a.figures.answered("alpha")
            await a.live.flush()  # the seat's end: its slot released, its answer counted
            assert a.live.round_trips()["by_cause"]["finish"] == 1  # a step of its own
            a.rate_limits.cool("beta", 30, "rate limited (429)")
            await a.live.flush()  # news the others must hear at once
            heard = []
            for _ in range(100):  # (a None: the subscription's own confirmation, skipped)
                message = await pubsub.get_message(timeout=0.05)
                if message is not None:
                    heard.append(json.loads(message["data"]))
                if len(heard) == 2:
                    break
            assert len(heard) == 2
            # in order: the seating's step and the cooldown's; the seat's end came between, unsent
            assert heard[1]["seq"] == heard[0]["seq"] + 2
            assert not any("answered" in cell for news in heard for cell in news["cells"])
            assert any("cool" in cell for cell in heard[1]["cells"])
            await b.live.refresh()  # any step of b's: its reply brings what it did not hear
            assert b.figures.row("alpha")["answered"] == 1
            assert b.rate_limits.cooldown_of("beta") is not None

    run(replicas(2, redis_url, tmp_path, clock, rpm=5), body)
