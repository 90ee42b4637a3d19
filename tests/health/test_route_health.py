"""Route mode obeys health (contract §18): a retired member is never tried; a benched one goes
after every other member until its next trial, when it takes its own place again."""

from __future__ import annotations

from tests.health.test_bench_keeps_itself import answers, health_of
from tests.helpers.bench import bench_raw, served
from tests.helpers.clocks import ManualClock

MODEL = "bench/crew:route"


def crew(make_gateway, sim, clock):
    raw = bench_raw(sim.url, route_explore=0, first_token_s=2)
    raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}
    return make_gateway(raw, clock=clock.now)


def turn(gw, text: str = "hello") -> str:
    raw = gw.client.chat.completions.with_raw_response.create(
        model=MODEL, messages=[{"role": "user", "content": text}]
    )
    return raw.headers["x-bench-model"]


def test_a_retired_member_is_never_tried(make_gateway, sim):
    clock = ManualClock()
    gw = crew(make_gateway, sim, clock)
    sim.set(served("alpha"), **answers(410, "Gone."))
    assert turn(gw, "one") == "gamma"  # alpha failed over, and is retired
    assert health_of(gw, "alpha") == "retired"
    sim.set(served("alpha"))  # even were it back, it is not tried until restored or re-probed
    assert turn(gw, "two") == "gamma"
    assert len(sim.log(served("alpha"))) == 1


def test_a_benched_member_goes_last_until_its_trial_then_takes_its_place(make_gateway, sim):
    clock = ManualClock()
    gw = crew(make_gateway, sim, clock)
    sim.set(served("alpha"), **answers(401, "Unauthorized"))
    assert turn(gw, "one") == "gamma"
    assert health_of(gw, "alpha") == "benched"
    sim.set(served("alpha"))
    assert turn(gw, "two") == "gamma"  # benched: last
    assert len(sim.log(served("alpha"))) == 1
    clock.advance(5)
    assert turn(gw, "three") == "alpha"  # its trial, first again, answers
    assert health_of(gw, "alpha") == "ok"
