"""The providers' listings (contract §19), through a real gateway reading the simulated
provider's own `GET /v1/models`: what each listing states shown in `/bench/models`, an expired
model retired with the stated date as its why, one expiring soon an action, an unlisted model
never explored yet still seated as a member, and a listing that fails changing nothing."""

from __future__ import annotations

import datetime
import time

import httpx
import pytest

from gateway.app import create_app
from gateway.board import Board
from gateway.config.settings import parse_config
from gateway.serve.server import ServerThread
from simulator import create_sim_app
from tests.helpers.bench import Gateway, bench_raw
from tests.helpers.waiting import wait_for

SPEC = {
    "models": {
        "*": {"latency_s": 0.01},
        "sim-alpha": {"listing": {"free": True, "context_length": 131072, "tools": True}},
        "sim-beta": {"listing": {"free": False}},
        "sim-gamma": {"listing": {"free": True, "expires_in_days": 3}},
        "sim-delta": {"listing": {"free": True, "expires_in_days": -1}},
        "sim-epsilon": {"listing": False},
        "sim-zeta": {},
        "nemotron-nano": {"listing": {"free": True, "context_length": 128000}},
    }
}


def day(offset: int) -> str:
    return (datetime.datetime.now(datetime.UTC).date() + datetime.timedelta(offset)).isoformat()


@pytest.fixture(scope="module")
def sim():
    server = ServerThread(create_sim_app(SPEC)).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gw(sim, tmp_path_factory):
    raw = bench_raw(sim.url, seat_timeout_s=1, max_explorers=2, reserves=0)
    raw["connections"] = {name: {"listing": True} for name in ("one", "two", "three")}
    raw["lifecycle"] = {"listing_s": 0.5}  # read again about every second
    raw["collections"]["eps"] = {"members": ["epsilon"]}
    folder = tmp_path_factory.mktemp("listings")
    raw["store"] = f"sqlite:///{folder / 'records.db'}"
    config = parse_config(raw, base=folder)
    gateway = Gateway(ServerThread(create_app(config)).start(), config)
    wait_for("the first listing", lambda: rows(gateway)["zeta"]["listed"] is not None)
    yield gateway
    gateway.close()


@pytest.fixture
def faulty(sim, gw):
    """Set the listing's reply to fail (`POST /_sim/listing`); put back after the test, and
    read back whole."""

    def fail(**fault) -> None:
        httpx.post(f"{sim.url}/_sim/listing", json=fault).raise_for_status()

    yield fail
    fail()
    wait_for("the listing read again", lambda: gw.runtime.board.text("listing-said:one") == "")


def rows(gw) -> dict[str, dict]:
    return {row["alias"]: row for row in gw.http.get("/bench/models").json()["models"]}


def listing_facts(gw) -> dict[str, tuple]:
    return {a: (r["listed"], r["free"], r["expires"], r["health"]) for a, r in rows(gw).items()}


def actions(gw) -> list[str]:
    return gw.http.get("/bench/health").json()["actions"]


def test_the_listing_read_at_start_says_listed_free_and_expiry_per_model(gw):
    facts = {a: (r["listed"], r["free"], r["expires"]) for a, r in rows(gw).items()}
    assert facts == {
        "alpha": (True, True, None),
        "beta": (True, False, None),
        "gamma": (True, True, day(3)),
        "delta": (True, True, day(-1)),
        "epsilon": (False, None, None),
        "zeta": (True, None, None),
    }


def test_the_listing_is_read_at_start_then_not_again_until_listing_s_has_passed(sim, tmp_path):
    raw = bench_raw(sim.url, seat_timeout_s=1)
    raw["connections"] = {name: {"listing": True} for name in ("one", "two", "three")}
    raw["store"] = f"sqlite:///{tmp_path / 'records.db'}"
    config = parse_config(raw, base=tmp_path)  # lifecycle.listing_s: 21600, the default
    fresh = Gateway(ServerThread(create_app(config)).start(), config)
    try:
        wait_for("the first listing", lambda: rows(fresh)["epsilon"]["listed"] is False)
        due = fresh.runtime.board.numbers("listing-due")[0]
        assert due >= time.time() + 21600 - 60
    finally:
        fresh.close()


def test_workers_sharing_a_board_see_the_same_listing(sim, make_gateway, tmp_path):
    raw = bench_raw(sim.url, seat_timeout_s=1)
    raw["connections"] = {name: {"listing": True} for name in ("one", "two", "three")}
    Board.create(tmp_path / "board")
    one = make_gateway(raw, board=tmp_path / "board")
    two = make_gateway(raw, board=tmp_path / "board")
    wait_for("the listing", lambda: rows(one)["epsilon"]["listed"] is False)
    assert listing_facts(two) == listing_facts(one)
    assert rows(two)["gamma"]["expires"] == day(3)


def test_a_model_past_its_expiration_date_is_retired_with_the_date_as_its_why(gw):
    wait_for("delta retired", lambda: rows(gw)["delta"]["health"] == "retired")
    why = f"expired on {day(-1)}, per the provider's listing"
    assert rows(gw)["delta"]["health_why"] == why
    health = {m["alias"]: m for m in gw.http.get("/bench/health").json()["models"]}
    assert (health["delta"]["health"], health["delta"]["why"]) == ("retired", why)
    assert f"delta is retired ({why}) but still named in bench/trio" in actions(gw)
    completion, _ = gw.ask("bench/trio")
    skipped = completion.model_extra["bench"]["skipped"]
    assert {"alias": "delta", "why": f"retired: {why}"}.items() <= skipped[0].items()


def test_a_model_expiring_within_the_warning_days_is_an_action(gw):
    wanted = f"gamma expires on {day(3)} (in 3 days), per its provider's listing"
    assert wanted in actions(gw)
    assert rows(gw)["gamma"]["health"] == "ok"  # warned of, not retired
    assert not [a for a in actions(gw) if a.startswith(("alpha ", "zeta "))]


def test_an_unlisted_model_is_never_explored_but_is_seated_as_a_member(gw):
    assert rows(gw)["epsilon"]["health"] == "ok"  # unlisted is no reason to retire
    explorers = set()
    for _ in range(3):  # design admits alpha, beta, delta, epsilon: only beta may explore
        completion, _ = gw.ask("bench/solo")
        seats = completion.model_extra["bench"]["seats"]
        explorers |= {s["alias"] for s in seats if s["seat"].startswith("explorer")}
    assert explorers == {"beta"}
    completion, _ = gw.ask("bench/eps")
    seats = completion.model_extra["bench"]["seats"]
    assert (seats[0]["seat"], seats[0]["alias"], seats[0]["status"]) == ("member1", "epsilon", "ok")


@pytest.mark.parametrize(
    ("fault", "why"),
    [
        ({"status": 503}, "was answered with 503, not a listing"),
        ({"status": 401}, "was refused (401): the key was not accepted"),
        ({"body": "<html>not json</html>"}, "is not JSON"),
        ({"body": '{"data": [{"name": "no id"}]}'}, "lists an entry without a model id"),
        ({"body": '{"models": []}'}, 'is not a list of models (no "data" list)'),
        ({"bytes": 20_000_000}, "is over 16000000 bytes"),
        ({"latency_s": 3}, "no complete listing within 1 s"),
    ],
    ids=["503", "401", "not-json", "no-id", "no-data", "huge", "slow"],
)
def test_a_listing_that_fails_changes_nothing_and_says_why_once(gw, faulty, caplog, fault, why):
    before = listing_facts(gw)
    caplog.set_level("WARNING", logger="bench.listing")
    faulty(**fault)
    wait_for("the failed read", lambda: gw.runtime.board.text("listing-said:one") == why)
    read = gw.runtime.board.numbers("listing-due")[0]
    wait_for("a read after", lambda: gw.runtime.board.numbers("listing-due")[0] > read)
    assert listing_facts(gw) == before
    said = [r.getMessage() for r in caplog.records if "connection one" in r.getMessage()]
    url = gw.config.litellm_params["alpha"]["api_base"] + "/models"
    assert said == [f"the listing of connection one ({url}) {why}; nothing changed"]
    assert f"gamma expires on {day(3)} (in 3 days), per its provider's listing" in actions(gw)


def test_a_model_whose_listing_no_longer_says_it_expired_is_restored(gw, sim):
    wait_for("delta retired", lambda: rows(gw)["delta"]["health"] == "retired")
    state = sim.server.config.app.state.sim
    state.set("sim-delta", listing={"free": True, "expires_in_days": 20})
    try:
        wait_for("delta restored", lambda: rows(gw)["delta"]["health"] == "ok")
        assert rows(gw)["delta"]["expires"] == day(20)
    finally:
        state.set("sim-delta", listing={"free": True, "expires_in_days": -1})
    wait_for("delta retired again", lambda: rows(gw)["delta"]["health"] == "retired")
