"""Rate limits: a 429 costs a panel a swap, never a wait; cooldowns and caps stop calls early."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from gateway.serve.server import ServerThread
from simulator import create_sim_app
from tests.helpers.bench import Sim, bench_raw, served
from tests.helpers.clocks import ManualClock, wait_until


def duo_raw(sim_url: str, **gateway):
    """Members alpha (one) and gamma (two); no explorers, so every other model is a reserve."""
    raw = bench_raw(sim_url, **{"max_explorers": 0, "reserves": 3, **gateway})
    raw["collections"]["duo"] = {"members": ["alpha", "gamma"], "shape": "review"}
    return raw


def seats_of(completion_or_body) -> list[dict]:
    if isinstance(completion_or_body, dict):
        return completion_or_body["bench"]["seats"]
    return completion_or_body.model_extra["bench"]["seats"]


def model_row(gw, alias) -> dict:
    return next(m for m in gw.http.get("/bench/models").json()["models"] if m["alias"] == alias)


@pytest.fixture
def held_sim() -> Iterator[tuple[Sim, ManualClock]]:
    """A simulated upstream on a clock the test moves: a call with latency is held until then."""
    clock = ManualClock()
    server = ServerThread(create_sim_app(clock=clock)).start()
    yield Sim(server), clock
    server.stop()


@pytest.fixture
def clock() -> ManualClock:
    """The gateway's clock: it stands still until the test moves it, so cooldowns are exact."""
    return ManualClock()


def test_a_rate_limited_member_is_replaced_by_a_reserve_on_another_connection(
    make_gateway, held_sim
):
    sim, sim_clock = held_sim
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), status=429, retry_after=30)
    sim.set(served("gamma"), latency_s=1)  # member2 is held until the clock moves
    with ThreadPoolExecutor(1) as pool:
        asked = pool.submit(gw.ask, "bench/duo")
        # the reserve is called the moment the 429 is back, while member2 is still out
        wait_until(lambda: len(sim.log(served("epsilon"))) == 1)
        assert sim_clock.pausing == 1 and sim.log(served("gamma"))[0]["ended"] is None
        sim_clock.advance(1)
        completion, _ = asked.result(timeout=30)
    seats = seats_of(completion)
    assert [(s["seat"], s["status"]) for s in seats] == [
        ("member1", "rate_limited"),
        ("reserve1", "ok"),
        ("member2", "ok"),
    ]
    member1, reserve1 = seats[0], seats[1]
    assert member1["replaced_by"] == "reserve1" and reserve1["replaces"] == "member1"
    # alpha's connection is "one", gamma's "two": the reserve comes from the third
    assert reserve1["alias"] == "epsilon" and reserve1["connection"] == "three"

    # the upstream saw exactly one request to alpha (no retry into the limit, Retry-After: 30
    # notwithstanding)
    assert len(sim.log(served("alpha"))) == 1

    # the panel record shows the swap
    recorded = gw.http.get(f"/bench/calls/{member1['call']}").json()
    assert recorded["status"] == "rate_limited" and recorded["replaced_by"] == "reserve1"
    assert recorded["error_class"] == "rate_limit"


def test_a_cooling_member_is_not_called_and_its_reserve_sits_in_before_anything_is_sent(
    make_gateway, sim, clock
):
    gw = make_gateway(duo_raw(sim.url), clock=clock.now)
    sim.set(served("alpha"), status=429, retry_after=30)
    gw.ask("bench/duo")
    row = model_row(gw, "alpha")
    assert row["cooling_until"] == clock.now() + 30
    assert "429" in row["cooling_why"]

    completion, _ = gw.ask("bench/duo")
    seats = seats_of(completion)
    assert (seats[0]["status"], seats[0]["seconds"]) == ("cooling", 0.0)
    assert seats[1]["replaces"] == "member1" and seats[1]["status"] == "ok"
    assert len(sim.log(served("alpha"))) == 1  # still only the first panel's call

    clock.advance(30)  # the cooldown is over: alpha is called again
    completion, _ = gw.ask("bench/duo")
    assert seats_of(completion)[0]["status"] == "rate_limited"
    assert len(sim.log(served("alpha"))) == 2


def test_a_reserve_that_is_also_limited_hands_over_to_the_next(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), status=429, retry_after=30)
    sim.set(served("epsilon"), status=429, retry_after=30)
    completion, _ = gw.ask("bench/duo")
    seats = seats_of(completion)
    assert [(s["seat"], s["status"]) for s in seats[:3]] == [
        ("member1", "rate_limited"),
        ("reserve1", "rate_limited"),
        ("reserve2", "ok"),
    ]
    assert seats[1]["replaced_by"] == "reserve2" and seats[2]["replaces"] == "reserve1"


def test_a_429_without_retry_after_cools_for_the_default(make_gateway, sim, clock):
    gw = make_gateway(duo_raw(sim.url, cooldown_default_s=45), clock=clock.now)
    sim.set(served("alpha"), status=429)
    gw.ask("bench/duo")
    assert model_row(gw, "alpha")["cooling_until"] == clock.now() + 45


def test_retry_after_ms_is_honoured_and_the_cap_applies(make_gateway, sim, clock):
    gw = make_gateway(duo_raw(sim.url, cooldown_max_s=100), clock=clock.now)
    sim.set(served("alpha"), status=429, retry_after_ms=2500)
    sim.set(served("gamma"), status=429, retry_after=99999)
    gw.ask("bench/duo")
    assert model_row(gw, "alpha")["cooling_until"] == clock.now() + 2.5
    assert model_row(gw, "gamma")["cooling_until"] == clock.now() + 100


def test_a_wait_named_only_in_the_error_body_is_honoured(make_gateway, sim, clock):
    gw = make_gateway(duo_raw(sim.url), clock=clock.now)
    sim.set(
        served("alpha"), status=429, error_message="Rate limit reached. Please try again in 20s."
    )
    gw.ask("bench/duo")
    assert model_row(gw, "alpha")["cooling_until"] == clock.now() + 20


def test_cool_together_cools_the_whole_connection(make_gateway, sim):
    raw = duo_raw(sim.url)
    raw["connections"] = {"one": {"cool_together": True}, "two": {}, "three": {}}
    gw = make_gateway(raw)
    sim.set(served("alpha"), status=429, retry_after=30)
    gw.ask("bench/duo")
    beta = model_row(gw, "beta")  # beta shares connection "one" with alpha
    assert beta["cooling_until"] is not None and "via alpha" in beta["cooling_why"]
    assert model_row(gw, "delta")["cooling_until"] is None


def test_an_rpm_cap_on_a_model_refuses_before_sending(make_gateway, sim):
    raw = duo_raw(sim.url)
    raw["model_list"][0]["bench"]["rpm"] = 1  # alpha
    gw = make_gateway(raw)
    gw.ask("bench/duo")
    completion, _ = gw.ask("bench/duo")
    first = seats_of(completion)[0]
    assert first["status"] == "cooling" and "rpm" in first["error"]
    assert first["replaced_by"] is not None
    assert len(sim.log(served("alpha"))) == 1
    assert model_row(gw, "alpha")["rpm_used"] == 1


def test_an_rpm_cap_on_a_connection_refuses_before_sending(make_gateway, sim):
    raw = duo_raw(sim.url)
    raw["connections"] = {"one": {}, "two": {"rpm": 2}, "three": {}}
    gw = make_gateway(raw)
    gw.ask("bench/duo")  # gamma uses one call on connection two
    gw.ask("bench/duo")  # and a second
    completion, _ = gw.ask("bench/duo")
    gamma = next(s for s in seats_of(completion) if s["alias"] == "gamma")
    assert gamma["status"] == "cooling" and "connection two" in gamma["error"]
    assert len(sim.log(served("gamma"))) == 2


def test_every_seat_limited_is_a_429_with_retry_after_and_the_seats(make_gateway, sim, clock):
    gw = make_gateway(duo_raw(sim.url, reserves=0), clock=clock.now)
    sim.set(served("alpha"), status=429, retry_after=12)
    sim.set(served("gamma"), status=429, retry_after=40)
    response = gw.http.post(
        "/v1/chat/completions",
        json={"model": "bench/duo", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "12"  # the soonest cooldown's end
    body = response.json()
    assert body["error"]["type"] == "rate_limit_error"
    assert [s["status"] for s in seats_of(body)] == ["rate_limited", "rate_limited"]
    # and on the next request both are cooling: still 429, nothing sent
    again = gw.http.post(
        "/v1/chat/completions",
        json={"model": "bench/duo", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert again.status_code == 429
    assert [s["status"] for s in seats_of(again.json())] == ["cooling", "cooling"]
    assert len(sim.log()) == 2


def test_concurrent_panels_send_a_limited_member_only_the_calls_already_in_flight(
    make_gateway, held_sim
):
    sim, sim_clock = held_sim
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), status=429, retry_after=30, latency_s=1)  # held till the clock moves
    with ThreadPoolExecutor(4) as pool:
        in_flight = [pool.submit(gw.ask, "bench/duo") for _ in range(4)]
        wait_until(lambda: sim_clock.pausing == 4)  # four calls to alpha out, none answered
        sim_clock.advance(1)  # every 429 comes back
        first = [seats_of(f.result(timeout=30)[0])[0]["status"] for f in in_flight]
        after = [pool.submit(gw.ask, "bench/duo") for _ in range(4)]
        later = [seats_of(f.result(timeout=30)[0])[0]["status"] for f in after]
    assert first == ["rate_limited"] * 4
    assert later == ["cooling"] * 4  # refused before sending
    assert len(sim.log(served("alpha"))) == 4


def test_the_router_panel_primary_follows_verdicts(gateway, sim):
    completion, _ = gateway.ask("bench/panel", extra_headers={"X-Panel-Shape": "review"})
    seats = seats_of(completion)
    chosen = seats[-1]  # an explorer today
    assert chosen["seat"].startswith("explorer")
    gateway.http.post("/bench/verdict", json={"call": chosen["call"], "useful": True})
    completion, _ = gateway.ask("bench/panel", extra_headers={"X-Panel-Shape": "review"})
    primary = seats_of(completion)[0]
    assert (primary["seat"], primary["alias"]) == ("primary", chosen["alias"])
    # the verdict replaced by a "not useful" one: the primary moves on at once
    gateway.http.post("/bench/verdict", json={"call": chosen["call"], "useful": False})
    completion, _ = gateway.ask("bench/panel", extra_headers={"X-Panel-Shape": "review"})
    assert seats_of(completion)[0]["alias"] != chosen["alias"]
