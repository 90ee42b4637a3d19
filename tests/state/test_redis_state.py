"""The live state in Redis (contract §15), replica against replica in one test process: rpm
windows taken atomically, cooldowns and day caps seen by every replica, conversations that carry
on, rotation across gateways, and what a replica does while Redis is gone.

Each "replica" is a real Runtime (or a real gateway on a loopback port) on the test's own Redis
database; times come from a clock the test moves, so nothing waits on wall-clock margins.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from typing import Any

import httpx

from gateway.config.settings import parse_config
from gateway.request.client import EVERYONE
from gateway.runtime import Runtime
from gateway.state.limits import Permit, Refused
from gateway.store.open import open_store
from routing import Evidence, Panel, PanelRequest, choose_panel
from tests.helpers.bench import POOL, explorers, pool_raw
from tests.helpers.clocks import ManualClock
from tests.helpers.replicas import _Never, replicas, run


def test_rpm_slots_are_taken_atomically_by_replicas_asking_at_once(redis_url, tmp_path):
    clock = ManualClock()

    async def body(a: Runtime, b: Runtime) -> None:
        asks = [r.live.acquire("alpha") for r in (a, b) * 20]
        got = await asyncio.gather(*asks)
        permits = [p for p in got if not isinstance(p, Refused)]
        assert len(permits) == 5
        refused = [p for p in got if isinstance(p, Refused)]
        assert all("over its rpm cap (5/min on the model)" in p for p in refused)
        for permit in permits:
            permit.release()
        await a.live.flush()
        assert isinstance(await b.live.acquire("alpha"), Refused)  # ended, not yet a minute old
        clock.advance(61)
        assert isinstance(await b.live.acquire("alpha"), Permit)

    run(replicas(2, redis_url, tmp_path, clock, rpm=5), body)


def test_a_call_in_flight_holds_its_slot_past_the_minute(redis_url, tmp_path):
    clock = ManualClock()

    async def body(a: Runtime, b: Runtime) -> None:
        held = [await a.live.acquire("alpha") for _ in range(2)]
        clock.advance(120)
        refused = await b.live.acquire("alpha")
        assert isinstance(refused, Refused) and refused.frees_in is None  # nothing frees by age
        held[0].release()
        await a.live.flush()
        assert isinstance(await b.live.acquire("alpha"), Permit)

    run(replicas(2, redis_url, tmp_path, clock, rpm=2), body)


def test_a_cooldown_one_replica_learned_refuses_the_other_until_it_ends(redis_url, tmp_path):
    clock = ManualClock()

    async def body(a: Runtime, b: Runtime) -> None:
        a.rate_limits.cool("alpha", 30, "rate limited (429)")
        await a.live.flush()
        refused = await b.live.acquire("alpha")
        assert refused == "cooling for 30.0 s more (rate limited (429))"
        cooldown = b.rate_limits.cooldown_of("alpha")  # the reply brought it to b's board too
        assert cooldown is not None and cooldown.until == clock.now() + 30
        clock.advance(30.5)
        assert isinstance(await b.live.acquire("alpha"), Permit)

    run(replicas(2, redis_url, tmp_path, clock), body)


def test_a_daily_cap_counts_the_calls_of_every_replica(redis_url, tmp_path):
    clock = ManualClock()

    async def body(a: Runtime, b: Runtime) -> None:
        for runtime in (a, b, a):
            assert isinstance(await runtime.live.acquire("alpha"), Permit)
        refused = await b.live.acquire("alpha")
        assert isinstance(refused, Refused) and "daily cap spent (3/day on the model" in refused
        assert b.rate_limits.used_today("alpha") == 3

    run(replicas(2, redis_url, tmp_path, clock, rpd=3), body)


def test_a_verdict_and_a_conversation_carry_over_to_the_other_replica(redis_url, tmp_path):
    clock = ManualClock()
    members = ("alpha", "gamma", "delta")
    key = ("trio", "local", "", "plan the trip")

    async def body(a: Runtime, b: Runtime) -> None:
        first = await a.live.begin_turn(key, members, EVERYONE)
        assert first.new and first.turn == 1
        a.live.settle_turn(key, members, "gamma")
        a.figures.verdict("gamma", "general", True, None)
        await a.live.flush("verdict")
        later = await b.live.begin_turn(key, members, EVERYONE)
        assert (later.conversation, later.turn, later.member, later.new) == (
            first.conversation, 2, "gamma", False,
        )  # fmt: skip
        assert b.figures.row("gamma")["useful"] == 1 and b.figures.row("gamma")["judged"] == 1

    run(replicas(2, redis_url, tmp_path, clock), body)


def test_a_fresh_turn_starts_a_new_conversation_on_every_replica(redis_url, tmp_path):
    """Two sessions opened with one prompt are two conversations (contract §11): a request that
    continues none takes the key's bucket over; one that carries earlier turns continues it."""
    clock = ManualClock()
    members = ("alpha", "gamma", "delta")
    key = ("trio", "local", "", "plan the trip")

    async def body(a: Runtime, b: Runtime) -> None:
        first = await a.live.begin_turn(key, members, EVERYONE, fresh=True)
        a.live.settle_turn(key, members, "gamma")
        await a.live.flush("turn end")
        second = await b.live.begin_turn(key, members, EVERYONE, fresh=True)
        assert second.new and second.conversation != first.conversation
        assert second.member is None  # a new conversation: the members in order again
        later = await a.live.begin_turn(key, members, EVERYONE)
        assert (later.conversation, later.turn, later.new) == (second.conversation, 2, False)

    run(replicas(2, redis_url, tmp_path, clock), body)


def test_explorers_rotate_across_two_gateways_in_one_round_trip_per_panel(
    make_gateway, sim, redis_url, tmp_path
):
    raw = pool_raw(sim.url)
    a = make_gateway(raw, state=redis_url)
    b = make_gateway(raw, state=redis_url, store=a.config.store)
    seen = [explorers(gw.ask("bench/anchored")[0]) for gw in (a, b, a)]
    assert sorted(alias for pair in seen for alias in pair) == sorted(POOL)
    for gw in (a, b):
        figures = httpx.get(f"{gw.url}/healthz").json()["state"]
        causes = figures["by_cause"]
        assert causes["seat"] == figures["panels"]  # one round trip seats a panel
        # a seat's end that only counts its answer rides a later step: none of its own needed
        assert causes.get("finish", 0) <= figures["seat_finishes"] == 3 * figures["panels"]


def test_a_replica_whose_board_is_behind_still_seats_explorers_no_one_just_took(
    redis_url, sim, tmp_path
):
    """b has not heard of a's panel (it does not listen here): the step gives b's explorer
    chairs to the next ones routing ranked, in the same round trip."""
    clock = ManualClock()
    config = parse_config({**pool_raw(sim.url), "state": redis_url}, base=tmp_path)
    a, b = (
        Runtime(config, store=open_store(config.store), upstream=_Never(), clock=clock.now)
        for _ in range(2)
    )
    ask = PanelRequest(collection="anchored", shape="general")

    def choose(evidence: Evidence) -> Panel:
        return choose_panel(ask, config.catalog, evidence, clock.now())

    def chosen(seating: Any) -> set[str]:
        return {s.alias for s in seating.plan.seats if s.name.startswith("explorer")}

    async def body() -> None:
        await a.live.start()
        await b.live.link.step([], "start")  # up, but not listening
        try:
            first = chosen(await a.live.seat(choose, "general", (), EVERYONE, clock.now()))
            second = await b.live.seat(choose, "general", (), EVERYONE, clock.now())
            assert not chosen(second) & first and len(chosen(second)) == 2
            assert not set(second.plan.reserves) & chosen(second)
            figures = b.live.round_trips()
            assert (figures["by_cause"]["seat"], figures["explorers_swapped"]) == (1, 1)
            assert {b.figures.row(alias)["seated"] for alias in first | chosen(second)} == {1}
        finally:
            await a.live.close()
            await b.live.close()

    asyncio.run(body())


def test_without_redis_a_replica_serves_on_its_own_state_and_reseeds_redis_when_back(
    own_redis, tmp_path, caplog
):
    clock = ManualClock()
    url = own_redis.url(0)

    async def body(a: Runtime) -> None:
        await a.live.acquire("alpha")
        own_redis.stop()
        with caplog.at_level(logging.WARNING, logger="bench.health"):
            assert isinstance(await a.live.acquire("alpha"), Permit)  # on its own board
            asked = dict(a.live.round_trips()["by_cause"])
            assert isinstance(await a.live.acquire("alpha"), Permit)
            a.rate_limits.cool("beta", 300, "rate limited (429)")
            await a.live.flush()
        causes = a.live.round_trips()["by_cause"]  # nobody waits on a Redis known gone:
        assert (causes["acquire"], causes.get("finish")) == (asked["acquire"], asked.get("finish"))
        assert a.health.status()["status"] == "degraded"
        assert "unreachable" in a.health.faults["state"]
        assert sum("state degraded" in r.getMessage() for r in caplog.records) == 1
        own_redis.start()  # empty, on the same port
        for _ in range(200):  # the watcher tries again every few seconds
            if a.health.status() == {"status": "ok"}:
                break
            await asyncio.sleep(0.05)
        assert a.health.status() == {"status": "ok"}
        (b,) = replicas(1, url, tmp_path, clock)
        await b.live.start()
        try:  # what a learned while Redis was gone seeded it again
            assert (await b.live.acquire("beta")).startswith("cooling for 300.0 s more")
        finally:
            await b.live.close()

    run(replicas(1, url, tmp_path, clock, rpm=50), body)


def test_calls_counted_while_redis_was_unreachable_reach_its_day_counts(own_redis, tmp_path):
    """Redis frozen, not emptied (a partition): the day counts a replica made on its own are
    added to Redis's when it answers again, not overwritten by them."""
    clock = ManualClock()
    url = own_redis.url(0)
    assert own_redis.proc is not None

    async def body(a: Runtime) -> None:
        assert isinstance(await a.live.acquire("alpha"), Permit)  # counted in Redis
        os.kill(own_redis.proc.pid, signal.SIGSTOP)
        try:
            await a.live.refresh()  # a read only (a step that timed out may still be run)
            for _ in range(2):  # on its own board
                assert isinstance(await a.live.acquire("alpha"), Permit)
            assert a.health.status()["status"] == "degraded"
        finally:
            os.kill(own_redis.proc.pid, signal.SIGCONT)
        for _ in range(200):  # the watcher tries again every few seconds
            if a.health.status() == {"status": "ok"}:
                break
            await asyncio.sleep(0.05)
        assert a.health.status() == {"status": "ok"}
        (b,) = replicas(1, url, tmp_path, clock, rpd=5)
        await b.live.start()
        try:
            assert isinstance(await b.live.acquire("alpha"), Permit)
            assert b.rate_limits.used_today("alpha") == 4  # 1 in Redis, 2 away from it, b's
            assert isinstance(await b.live.acquire("alpha"), Permit)
            refused = await b.live.acquire("alpha")
            assert isinstance(refused, Refused) and "daily cap spent (5/day" in refused
        finally:
            await b.live.close()

    run(replicas(1, url, tmp_path, clock, rpd=5), body)


def test_a_replica_starts_and_serves_when_redis_is_not_there(tmp_path):
    clock = ManualClock()
    (a,) = replicas(1, "redis://127.0.0.1:9/0", tmp_path, clock)

    async def body(a: Runtime) -> None:
        assert a.health.faults["state"].startswith("redis at 127.0.0.1:9 unreachable")
        assert isinstance(await a.live.acquire("alpha"), Permit)

    run([a], body)
