"""A model's life on the simulator's clock: timeline phases, a flaky model, a clock that runs
faster than the wall (simulator/timeline.py, simulator/clock.py)."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from gateway.serve.server import ServerThread
from simulator import SimState, create_sim_app, validate_behaviour
from simulator.clock import ScaledClock
from tests.helpers.clocks import ManualClock, wait_until

MESSAGES = [{"role": "user", "content": "Are you there?"}]
DAY = 86400.0


def _chat(client: httpx.Client, model: str) -> httpx.Response:
    return client.post("/v1/chat/completions", json={"model": model, "messages": MESSAGES})


def test_a_timeline_plays_its_phases_on_the_simulators_clock():
    clock = ManualClock()
    app = create_sim_app(clock=clock)
    state: SimState = app.state.sim
    gone = "The model `comet` does not exist"
    with ServerThread(app) as server, httpx.Client(base_url=server.url) as client:
        state.set(
            "comet",
            answer="here",
            timeline=[
                {"at_s": 3 * DAY, "status": 404, "error_message": gone},
                {"at_s": 10 * DAY},  # back, as its own keys say
            ],
        )
        assert _chat(client, "comet").json()["choices"][0]["message"]["content"] == "here"
        clock.advance(3 * DAY - 1)
        assert _chat(client, "comet").status_code == 200
        clock.advance(1)
        withdrawn = _chat(client, "comet")
        assert withdrawn.status_code == 404
        assert withdrawn.json()["error"]["message"] == gone
        clock.advance(7 * DAY - 1)
        assert _chat(client, "comet").status_code == 404
        clock.advance(1)
        assert _chat(client, "comet").json()["choices"][0]["message"]["content"] == "here"
    statuses = [r["status"] for r in state.log_for("comet")]
    assert statuses == [200, 200, 404, 404, 200]


def test_a_phase_lies_over_the_models_own_keys_and_set_again_starts_again():
    clock = ManualClock()
    app = create_sim_app(clock=clock)
    state: SimState = app.state.sim
    with ServerThread(app) as server, httpx.Client(base_url=server.url) as client:
        state.set(
            "keyed",
            status=503,
            error_message="overloaded",
            timeline=[{"at_s": 60, "status": 401, "error_message": "Invalid API key"}],
        )
        first = _chat(client, "keyed")
        assert (first.status_code, first.json()["error"]["message"]) == (503, "overloaded")
        clock.advance(60)
        revoked = _chat(client, "keyed")
        assert (revoked.status_code, revoked.json()["error"]["message"]) == (401, "Invalid API key")
        state.set("keyed", timeline=[{"at_s": 60, "status": 401}])  # the clock starts again
        assert _chat(client, "keyed").status_code == 200


def test_a_flaky_model_fails_every_nth_request_since_it_was_set():
    app = create_sim_app()
    state: SimState = app.state.sim
    with ServerThread(app) as server, httpx.Client(base_url=server.url) as client:
        state.set("flaky", status=500, fail_every=5)
        statuses = [_chat(client, "flaky").status_code for _ in range(10)]
        assert statuses == [200, 200, 200, 200, 500] * 2
        state.set("flaky", fail_every=5)  # no fault to strike with: every request answered
        assert {_chat(client, "flaky").status_code for _ in range(5)} == {200}


@pytest.mark.parametrize(
    ("timeline", "named"),
    [
        ([{"status": 404}], "at_s"),
        ([{"at_s": -1}], "at_s"),
        ([{"at_s": True}], "at_s"),
        ([{"at_s": 10}, {"at_s": 5}], "time order"),
        ([{"at_s": 10, "stauts": 404}], "stauts"),
        ([{"at_s": 10, "status": 99}], "status"),
        ([{"at_s": 10, "timeline": []}], "timeline"),
        (["404 at noon"], "mapping"),
    ],
)
def test_a_timeline_that_cannot_be_played_is_refused_naming_why(timeline, named):
    with pytest.raises(ValueError, match=named):
        validate_behaviour({"timeline": timeline})


def test_fail_every_must_be_one_or_more():
    with pytest.raises(ValueError, match="fail_every"):
        validate_behaviour({"fail_every": 0})


def test_a_scaled_clock_runs_its_speed_times_faster_than_the_wall():
    origin = time.time()
    clock = ScaledClock(3600.0, origin)
    before = time.time()
    now = clock.now()
    after = time.time()
    assert origin + (before - origin) * 3600 <= now <= origin + (after - origin) * 3600
    with pytest.raises(ValueError, match="speed"):
        ScaledClock(0)


def test_a_pause_on_a_scaled_clock_is_shorter_on_the_wall():
    clock = ScaledClock(1000.0)

    async def pause() -> tuple[float, float]:
        started, stamped = time.monotonic(), clock.now()
        await clock.wait(asyncio.Event(), 200.0)  # 200 s on its clock: 0.2 s on the wall
        return time.monotonic() - started, clock.now() - stamped

    wall, simulated = asyncio.run(pause())
    # the loop may wake a timer up to its clock's resolution early: a millisecond's grace
    assert wall >= 0.199 and simulated >= 199.0


def test_an_hours_outage_on_a_fast_clock_ends_by_itself():
    clock = ScaledClock(36000.0)  # an hour in a tenth of a second
    app = create_sim_app(clock=clock)
    state: SimState = app.state.sim
    with ServerThread(app) as server, httpx.Client(base_url=server.url) as client:
        before = clock.now()
        state.set("down", timeline=[{"at_s": 0, "status": 503}, {"at_s": 3600}])
        after = clock.now()
        assert _chat(client, "down").status_code == 503
        wait_until(lambda: _chat(client, "down").status_code == 200)
    log = state.log_for("down")
    assert log[0]["status"] == 503 and log[-1]["status"] == 200
    # the phase turned exactly an hour after the behaviour was set, on the simulator's clock
    assert all(r["started"] < after + 3600 for r in log if r["status"] == 503)
    assert all(r["started"] >= before + 3600 for r in log if r["status"] == 200)
