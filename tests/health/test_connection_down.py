"""The connection guard's `down` (contract §18), through the real gateway and the simulated
upstream: when every model of one connection fails capacity/timeout within a minute, the
connection is down, its models are benched naming it, and one trial at a time (not one per
model) finds it back; panels meanwhile lose no chair. The gateway runs on a clock the test
moves, with the contract's lifecycle defaults (first trial after 5 s, doubling)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.health.test_bench_keeps_itself import bench_of, health_of
from tests.helpers.bench import bench_raw, served
from tests.helpers.clocks import ManualClock, wait_until

DOWN = "every model of connection one failed at once"
ONE = ("alpha", "beta")  # connection one's models (tests/helpers/bench.py)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def gw(make_gateway, sim, clock):
    raw = bench_raw(sim.url, max_explorers=0, reserves=2, seat_timeout_s=2)
    raw["collections"]["ones"] = {"members": list(ONE)}
    return make_gateway(raw, clock=clock.now)


def trials_at(gw) -> set[float | None]:
    """When connection one's models are due their next trial (one time: the trial is shared)."""
    return {gw.runtime.model_health.book.of(alias).next_trial for alias in ONE}


def calls_to_one(sim) -> int:
    return sum(len(sim.log(served(alias))) for alias in ONE)


def connection(gw, name: str) -> dict:
    return next(c for c in gw.http.get("/bench/health").json()["connections"] if c["name"] == name)


def asked(gw) -> dict:
    """A panel of bench/ones: its chairs are all answered, whoever sits in them."""
    bench = bench_of(gw.ask("bench/ones")[0])
    answered = [s for s in bench["seats"] if s["status"] == "ok"]
    assert len(answered) == 2, bench["seats"]  # no chair lost
    return bench


def test_a_connection_whose_models_all_fail_at_once_is_down_and_one_trial_at_a_time_finds_it_back(
    gw, sim, clock
):
    for alias in ONE:
        sim.set(served(alias), status=503)
    first = asked(gw)
    assert {s["alias"]: s["failure"] for s in first["seats"] if s["alias"] in ONE} == {
        "alpha": "capacity",
        "beta": "capacity",
    }
    assert (connection(gw, "one")["health"], connection(gw, "one")["why"]) == ("down", DOWN)
    for alias in ONE:
        record = gw.runtime.model_health.book.of(alias)
        assert (record.health, record.why) == ("benched", DOWN)
    assert connection(gw, "two")["health"] == "ok"

    skipped = {s["alias"]: s["why"] for s in asked(gw)["skipped"]}
    assert skipped == {alias: f"benched (next trial in 5 s): {DOWN}" for alias in ONE}
    assert calls_to_one(sim) == 2  # the failures that showed it down, nothing since

    for wait in (5, 10, 20):  # each trial (the gateway's probe) fails, and the wait doubles
        clock.advance(wait)
        before = calls_to_one(sim)
        next_trial = clock.now() + wait * 2  # once its trial has failed
        wait_until(lambda: trials_at(gw) == {next_trial})  # noqa: B023 (used in this turn)
        assert calls_to_one(sim) == before + 1  # one trial, not one per model
        skipped = {s["alias"]: s["why"] for s in asked(gw)["skipped"]}  # no panel trials it
        assert skipped == {alias: f"benched (next trial in {wait * 2} s): {DOWN}" for alias in ONE}
        assert calls_to_one(sim) == before + 1  # and nothing more until the next one is due
        assert connection(gw, "one")["health"] == "down"
    assert calls_to_one(sim) == 2 + 3

    for alias in ONE:  # the provider is back
        sim.set(served(alias))
    clock.advance(40)
    # the trial answers: the connection is back, and the other is due its own trial at once
    wait_until(lambda: {health_of(gw, alias) for alias in ONE} == {"ok"})
    assert calls_to_one(sim) == 2 + 3 + 2
    assert connection(gw, "one")["health"] == "ok"
    again = asked(gw)
    assert sorted(s["alias"] for s in again["seats"]) == sorted(ONE)
    assert not again["skipped"]


def test_one_model_failing_while_its_sibling_answers_leaves_the_connection_ok(gw, sim):
    sim.set(served("alpha"), status=503)
    asked(gw)
    assert connection(gw, "one")["health"] == "ok"
    assert (health_of(gw, "alpha"), health_of(gw, "beta")) == ("ok", "ok")  # one failure of 3


def test_panels_asked_at_once_when_the_trial_is_due_leave_it_to_the_one_probe(gw, sim, clock):
    """The connection's one trial is the gateway's probe: panels asked while it is in flight
    seat neither of its models, and lose no chair."""
    for alias in ONE:
        sim.set(served(alias), status=503)
    asked(gw)
    assert connection(gw, "one")["health"] == "down"
    for alias in ONE:  # still down, and slow to say so: the trial is in flight a while
        sim.set(served(alias), status=503, latency_s=0.5)
    clock.advance(5)
    with ThreadPoolExecutor(4) as pool:
        panels = list(pool.map(lambda _: asked(gw), range(4)))
    wait_until(lambda: trials_at(gw) == {clock.now() + 10})  # the trial failed
    assert calls_to_one(sim) == 2 + 1  # one trial between the panels and the probe
    assert not [s for bench in panels for s in bench["seats"] if s["alias"] in ONE]
    records = [gw.runtime.model_health.book.of(alias) for alias in ONE]
    assert [r.last_failure for r in records] == ["capacity", "capacity"]
    assert connection(gw, "one")["health"] == "down"
