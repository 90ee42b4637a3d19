"""Rate limits: a 429 costs a panel a swap, never a wait; cooldowns and caps stop calls early."""

from __future__ import annotations

import threading
import time

import pytest

from tests.conftest import bench_raw, served


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


def test_a_rate_limited_member_is_replaced_by_a_reserve_on_another_connection(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), status=429, retry_after=30, latency_s=0.05)
    for alias in ("gamma", "beta", "delta", "epsilon"):
        sim.set(served(alias), latency_s=0.3)
    completion, _ = gw.ask("bench/duo")
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
    # notwithstanding) and the reserve's call began right after the 429 came back
    alpha_calls = sim.log(served("alpha"))
    assert len(alpha_calls) == 1
    reserve_call = sim.log(served("epsilon"))[0]
    assert reserve_call["started"] - alpha_calls[0]["ended"] < 1.0

    # the panel record shows the swap
    recorded = gw.http.get(f"/bench/calls/{member1['call']}").json()
    assert recorded["status"] == "rate_limited" and recorded["replaced_by"] == "reserve1"
    assert recorded["error_class"] == "rate_limit"


def test_a_cooling_member_is_not_called_and_its_reserve_sits_in_before_anything_is_sent(
    make_gateway, sim
):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), status=429, retry_after=30)
    gw.ask("bench/duo")
    row = model_row(gw, "alpha")
    assert row["cooling_until"] - time.time() == pytest.approx(30, abs=3)
    assert "429" in row["cooling_why"]

    completion, _ = gw.ask("bench/duo")
    seats = seats_of(completion)
    assert (seats[0]["status"], seats[0]["seconds"]) == ("cooling", 0.0)
    assert seats[1]["replaces"] == "member1" and seats[1]["status"] == "ok"
    assert len(sim.log(served("alpha"))) == 1  # still only the first panel's call


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


def test_a_429_without_retry_after_cools_for_the_default(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url, cooldown_default_s=45))
    sim.set(served("alpha"), status=429)
    gw.ask("bench/duo")
    assert model_row(gw, "alpha")["cooling_until"] - time.time() == pytest.approx(45, abs=3)


def test_retry_after_ms_is_honoured_and_the_cap_applies(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url, cooldown_max_s=100))
    sim.set(served("alpha"), status=429, retry_after_ms=2500)
    sim.set(served("gamma"), status=429, retry_after=99999)
    gw.ask("bench/duo")
    now = time.time()
    assert model_row(gw, "alpha")["cooling_until"] - now == pytest.approx(2.5, abs=1)
    assert model_row(gw, "gamma")["cooling_until"] - now == pytest.approx(100, abs=3)


def test_a_wait_named_only_in_the_error_body_is_honoured(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(
        served("alpha"), status=429, error_message="Rate limit reached. Please try again in 20s."
    )
    gw.ask("bench/duo")
    assert model_row(gw, "alpha")["cooling_until"] - time.time() == pytest.approx(20, abs=3)


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


def test_every_seat_limited_is_a_429_with_retry_after_and_the_seats(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url, reserves=0))
    sim.set(served("alpha"), status=429, retry_after=12)
    sim.set(served("gamma"), status=429, retry_after=40)
    response = gw.http.post(
        "/v1/chat/completions",
        json={"model": "bench/duo", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert response.status_code == 429
    assert int(response.headers["Retry-After"]) in (11, 12)
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
    make_gateway, sim
):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), status=429, retry_after=30, latency_s=0.3)
    threads = []
    for _ in range(10):
        thread = threading.Thread(target=gw.ask, args=("bench/duo",))
        thread.start()
        threads.append(thread)
        time.sleep(0.08)  # panels keep arriving while the first 429 is on its way back
    for thread in threads:
        thread.join()
    alpha = sim.log(served("alpha"))
    first_back = min(c["ended"] for c in alpha)
    assert all(c["started"] <= first_back + 0.05 for c in alpha)
    assert len(alpha) < 10


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
