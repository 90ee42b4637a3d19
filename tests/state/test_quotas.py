"""Quotas as providers state them (contract §16): daily caps, limits learned from headers and
messages, kept across restarts and across workers, pacing, and the usage."""

from __future__ import annotations

import contextlib
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest

from gateway.board import Board
from gateway.records.usage import usage_lines
from tests.helpers.bench import bench_raw, served
from tests.helpers.clocks import ManualClock, wait_until

NOW = datetime(2025, 3, 6, 22, 0, tzinfo=UTC).timestamp()
MIDNIGHT = datetime(2025, 3, 7, tzinfo=UTC).timestamp()
DAILY = "Rate limit exceeded: free-models-per-day"


def duo_raw(sim_url: str, **gateway):
    """Members alpha (one) and gamma (two); no explorers, so every other model is a reserve."""
    raw = bench_raw(sim_url, **{"max_explorers": 0, "reserves": 3, **gateway})
    raw["collections"]["duo"] = {"members": ["alpha", "gamma"], "shape": "review"}
    return raw


def first_seat(completion) -> dict:
    return completion.model_extra["bench"]["seats"][0]


def model_row(gw, alias) -> dict:
    return next(m for m in gw.http.get("/bench/models").json()["models"] if m["alias"] == alias)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


def test_a_daily_limit_429_cools_until_its_stated_reset_and_is_called_once(
    make_gateway, sim, clock
):
    """The issue's case: no Retry-After, X-RateLimit-Reset two hours ahead (epoch ms), and a
    message naming a daily limit. Not a default minute, and not capped at cooldown_max_s."""
    gw = make_gateway(duo_raw(sim.url, cooldown_max_s=600), clock=clock.now)
    reset = NOW + 7200
    sim.set(
        served("alpha"),
        status=429,
        error_message=DAILY,
        headers={"X-RateLimit-Reset": str(int(reset * 1000))},
    )
    assert first_seat(gw.ask("bench/duo")[0])["status"] == "rate_limited"
    row = model_row(gw, "alpha")
    assert row["cooling_until"] == reset
    assert "daily limit" in row["cooling_why"] and "free-models-per-day" in row["cooling_why"]
    assert row["cooling_source"] == "header x-ratelimit-reset"

    for minutes in (1, 5, 30, 80):  # panel after panel through the two hours
        clock.advance(minutes * 60)
        seat = first_seat(gw.ask("bench/duo")[0])
        assert seat["status"] == "cooling" and "daily limit" in seat["error"]
    assert len(sim.log(served("alpha"))) == 1

    clock.advance(reset - clock.now())  # the stated reset: alpha is asked again
    sim.set(served("alpha"))
    assert first_seat(gw.ask("bench/duo")[0])["status"] == "ok"
    assert len(sim.log(served("alpha"))) == 2


def test_a_daily_limit_429_stating_no_reset_cools_until_the_next_day_in_the_quota_zone(
    make_gateway, sim, clock
):
    gw = make_gateway(duo_raw(sim.url, quota_day_tz="Asia/Tokyo"), clock=clock.now)
    sim.set(served("alpha"), status=429, error_message="You have hit your daily quota (RPD).")
    gw.ask("bench/duo")
    row = model_row(gw, "alpha")
    # 22:00 UTC is 07:00 on the 7th in Tokyo: the day ends at 15:00 UTC on the 7th
    assert row["cooling_until"] == datetime(2025, 3, 7, 15, tzinfo=UTC).timestamp()
    assert row["cooling_source"] == "body" and "Asia/Tokyo" in row["cooling_why"]


def test_a_success_saying_nothing_remains_cools_the_model_before_any_429(make_gateway, sim, clock):
    gw = make_gateway(duo_raw(sim.url), clock=clock.now)
    sim.set(
        served("alpha"),
        headers={"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "45s"},
    )
    assert first_seat(gw.ask("bench/duo")[0])["status"] == "ok"
    row = model_row(gw, "alpha")
    assert row["cooling_until"] == NOW + 45
    assert row["cooling_source"] == "header x-ratelimit-reset-requests"

    completion, _ = gw.ask("bench/duo")
    seat = first_seat(completion)
    assert seat["status"] == "cooling" and "no requests remaining" in seat["error"]
    assert completion.model_extra["bench"]["seats"][1]["replaces"] == "member1"
    assert [r["status"] for r in sim.log(served("alpha"))] == [200]  # never a 429

    clock.advance(45)
    sim.set(served("alpha"), headers={"RateLimit": "limit=10, remaining=0, reset=30"})
    assert first_seat(gw.ask("bench/duo")[0])["status"] == "ok"
    assert model_row(gw, "alpha")["cooling_until"] == clock.now() + 30  # the IETF form too


def test_an_rpd_cap_counts_the_calls_of_two_gateways_on_one_board_and_store(
    make_gateway, sim, clock, tmp_path
):
    raw = duo_raw(sim.url)
    raw["model_list"][0]["bench"]["rpd"] = 2  # alpha
    path = tmp_path / "board"
    Board.create(path)
    one = make_gateway(raw, board=path, clock=clock.now)
    two = make_gateway(raw, board=path, clock=clock.now)
    assert first_seat(one.ask("bench/duo")[0])["status"] == "ok"
    clock.advance(3600)  # an hour apart: no rpm cap at play, only the day's
    assert first_seat(two.ask("bench/duo")[0])["status"] == "ok"
    row = model_row(one, "alpha")
    assert (row["rpd"], row["used_today"]) == (2, 2)

    clock.advance(60)
    completion, _ = one.ask("bench/duo")
    seat = first_seat(completion)
    assert seat["status"] == "cooling" and "daily cap spent (2/day on the model" in seat["error"]
    assert completion.model_extra["bench"]["seats"][1]["status"] == "ok"  # the reserve sat
    assert len(sim.log(served("alpha"))) == 2
    assert model_row(two, "alpha")["cooling_until"] == MIDNIGHT  # it is 23:01 on the 6th

    clock.advance(MIDNIGHT - clock.now())  # a new day in the quota zone
    assert first_seat(two.ask("bench/duo")[0])["status"] == "ok"
    assert model_row(one, "alpha")["used_today"] == 1


def test_a_restart_keeps_the_learned_limits_and_the_days_counts(make_gateway, sim, clock, tmp_path):
    raw = duo_raw(sim.url)
    raw["model_list"][0]["bench"]["rpd"] = 3  # alpha
    store = tmp_path / "kept.db"
    first = make_gateway(raw, store=store, clock=clock.now)
    reset = NOW + 5400
    sim.set(
        served("gamma"), status=429, error_message=DAILY, headers={"X-RateLimit-Reset": str(reset)}
    )
    first.ask("bench/duo")
    clock.advance(120)
    first.ask("bench/duo")
    assert model_row(first, "alpha")["used_today"] == 2
    assert len(sim.log(served("gamma"))) == 1

    again = make_gateway(raw, store=store, clock=clock.now)  # a board of its own: a restart
    row = model_row(again, "gamma")
    assert row["cooling_until"] == reset and row["cooling_source"] == "header x-ratelimit-reset"
    assert model_row(again, "alpha")["used_today"] == 2
    clock.advance(120)
    completion, _ = again.ask("bench/duo")
    seats = completion.model_extra["bench"]["seats"]
    assert seats[0]["status"] == "ok"  # alpha's third call of the day
    gamma = next(s for s in seats if s["alias"] == "gamma")
    assert gamma["status"] == "cooling"
    assert len(sim.log(served("gamma"))) == 1
    clock.advance(120)
    assert "daily cap" in first_seat(again.ask("bench/duo")[0])["error"]


def test_pacing_waits_for_a_members_rpm_slot_instead_of_seating_a_reserve(make_gateway, sim, clock):
    raw = duo_raw(sim.url, pace_wait_s=20)
    raw["model_list"][0]["bench"]["rpm"] = 1  # alpha
    gw = make_gateway(raw, clock=clock.now)
    assert first_seat(gw.ask("bench/duo")[0])["status"] == "ok"
    clock.advance(50)  # alpha's slot frees in 10 s, within pace_wait_s
    with ThreadPoolExecutor(1) as pool:
        asked = pool.submit(gw.ask, "bench/duo")
        # member2 is called once member1 has been refused its slot and has begun to wait
        wait_until(lambda: len(sim.log(served("gamma"))) == 2)
        clock.advance(10)
        completion, _ = asked.result(timeout=30)
    bench = completion.model_extra["bench"]
    assert [(s["seat"], s["alias"], s["status"]) for s in bench["seats"]] == [
        ("member1", "alpha", "ok"),
        ("member2", "gamma", "ok"),
    ]
    assert any("waited 10.0 s for its rpm slot" in note for note in bench["notes"])
    assert len(sim.log(served("alpha"))) == 2

    clock.advance(30)  # the slot frees in 30 s now: longer than pace_wait_s, so a reserve sits
    seats = gw.ask("bench/duo")[0].model_extra["bench"]["seats"]
    assert seats[0]["status"] == "cooling" and seats[1]["replaces"] == "member1"


def test_usage_sums_match_the_records(make_gateway, sim, clock):
    gw = make_gateway(duo_raw(sim.url), clock=clock.now)
    sim.set(served("gamma"), status=500)
    panels = []
    for hours in (0, 1, 3):  # 22:00, 23:00 on the 6th, 02:00 on the 7th
        clock.advance(hours * 3600 - (clock.now() - NOW))
        panels.append(gw.ask("bench/duo", content="tell me " * hours)[0].model_extra["bench"])
    seats = [gw.http.get(f"/bench/calls/{s['call']}").json() for p in panels for s in p["seats"]]
    called = [s for s in seats if s["status"] != "cooling"]
    body = gw.http.get("/bench/usage", params={"month": "2025-03"}).json()
    assert body["month"] == "2025-03" and body["time_zone"] == "UTC"
    assert body["totals"] == {
        "calls": len(called),
        "tokens_in": sum(s["tokens_in"] or 0 for s in called),
        "tokens_out": sum(s["tokens_out"] or 0 for s in called),
        "errors": sum(s["status"] not in ("ok", "empty") for s in called),
    }
    assert body["totals"]["errors"] == 3 and body["totals"]["tokens_in"] > 0
    days = {(r["day"], r["alias"]): r for r in body["rows"]}
    assert days[("2025-03-06", "alpha")]["calls"] == 2
    assert days[("2025-03-07", "alpha")]["calls"] == 1
    assert {r["key"] for r in body["rows"]} == {"local"}
    assert body["rows"][0]["connection"] in ("one", "two", "three")
    alpha = next(m for m in body["models"] if m["alias"] == "alpha")
    assert alpha["calls"] == 3 and alpha["errors"] == 0
    assert usage_lines(body)[0] == "usage 2025-03 (UTC)"

    assert gw.http.get("/bench/usage", params={"month": "2025-02"}).json()["rows"] == []
    bad = gw.http.get("/bench/usage", params={"month": "March"})
    assert bad.status_code == 400 and "YYYY-MM" in bad.json()["error"]["message"]


def test_a_key_sees_only_its_own_usage(make_gateway, sim, tmp_path):
    import subprocess
    import sys

    import yaml

    raw = bench_raw(sim.url, require_keys=True)
    gw = make_gateway(raw)
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump({**raw, "store": f"sqlite:///{tmp_path / 'records.db'}"}))
    keys = {}
    for name in ("ann", "bob"):
        argv = [sys.executable, "-m", "gateway.cli", "keys", "create", name, "--config"]
        made = subprocess.run([*argv, str(config)], capture_output=True, text=True, timeout=60)
        assert made.returncode == 0, made.stderr
        keys[name] = {"authorization": f"Bearer {made.stdout.strip()}"}
    body = {"model": "bench/solo", "messages": [{"role": "user", "content": "hi"}]}
    for name, times in (("ann", 2), ("bob", 1)):
        for _ in range(times):
            assert gw.http.post("/v1/chat/completions", json=body, headers=keys[name]).is_success

    def usage(headers) -> dict:
        return gw.http.get("/bench/usage", headers=headers).json()

    ann, bob = usage(keys["ann"]), usage(keys["bob"])
    assert {r["key"] for r in ann["rows"]} == {"ann"} and {r["key"] for r in bob["rows"]} == {"bob"}
    assert ann["totals"]["calls"] == 2 * bob["totals"]["calls"] > 0
    assert gw.http.get("/bench/usage").status_code == 401


# Believed up to a bound (contract §17): a provider's stated reset does not take a model out for
# good, and the cooldown and the learned limit it is kept as say it was capped.

ABSURD_RESET = "9999999999999"  # epoch ms: the year 2286


def learned_rows(store) -> list[dict]:
    with contextlib.closing(sqlite3.connect(store)) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM learned_limits")]


def test_a_daily_limit_stating_a_reset_in_2286_cools_only_until_the_next_quota_day_plus_an_hour(
    make_gateway, sim, clock, tmp_path
):
    store = tmp_path / "kept.db"
    gw = make_gateway(duo_raw(sim.url), store=store, clock=clock.now)
    sim.set(
        served("alpha"), status=429, error_message=DAILY,
        headers={"X-RateLimit-Reset": ABSURD_RESET},
    )  # fmt: skip
    assert first_seat(gw.ask("bench/duo")[0])["status"] == "rate_limited"
    row = model_row(gw, "alpha")
    assert row["cooling_until"] == MIDNIGHT + 3600  # not the year 2286
    assert "daily limit" in row["cooling_why"]
    assert "capped: the stated end (2286-11-20 17:46 UTC)" in row["cooling_why"]
    (kept,) = learned_rows(store)
    assert kept["until"] == MIDNIGHT + 3600 and "capped" in kept["why"]

    again = make_gateway(duo_raw(sim.url), store=store, clock=clock.now)  # a restart
    assert model_row(again, "alpha")["cooling_until"] == MIDNIGHT + 3600
    clock.advance(MIDNIGHT + 3600 - NOW + 1)
    sim.set(served("alpha"))  # the provider answers again
    assert first_seat(again.ask("bench/duo")[0])["status"] == "ok"


def test_an_ordinary_retry_after_past_cooldown_max_s_is_capped_and_says_so(
    make_gateway, sim, clock
):
    gw = make_gateway(duo_raw(sim.url, cooldown_max_s=900), clock=clock.now)
    sim.set(served("alpha"), status=429, retry_after=10**9)
    assert first_seat(gw.ask("bench/duo")[0])["status"] == "rate_limited"
    row = model_row(gw, "alpha")
    assert row["cooling_until"] == NOW + 900
    assert "capped" in row["cooling_why"] and "gateway.cooldown_max_s (900 s)" in row["cooling_why"]


def test_a_cooldown_kept_from_before_the_bounds_is_held_to_them_at_start(
    make_gateway, sim, clock, tmp_path
):
    store = tmp_path / "kept.db"
    make_gateway(duo_raw(sim.url), store=store, clock=clock.now).close()
    with contextlib.closing(sqlite3.connect(store)) as db, db:
        db.execute(
            "INSERT INTO learned_limits VALUES ('gamma', 9999999999.999, 'daily limit (x)', "
            "'header x-ratelimit-reset', 0)"
        )
    gw = make_gateway(duo_raw(sim.url), store=store, clock=clock.now)
    row = model_row(gw, "gamma")
    april = datetime(2025, 4, 1, tzinfo=UTC).timestamp()
    assert row["cooling_until"] == april + 3600  # the longest any rule allows: a month's
    assert "capped: the kept end (2286-11-20 17:46 UTC)" in row["cooling_why"]
