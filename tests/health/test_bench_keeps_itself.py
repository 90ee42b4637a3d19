"""The bench keeps itself (contract §18), through the real gateway and the simulated upstream:
a model that cannot answer is benched or retired and skipped, its chair given to a reserve,
and a benched model's trial after its wait takes it back."""

from __future__ import annotations

import pytest

from gateway.board import Board
from tests.helpers.bench import bench_raw, served
from tests.helpers.clocks import ManualClock, wait_until


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def duo_raw(sim_url: str, **gateway):
    raw = bench_raw(sim_url, max_explorers=0, reserves=2, seat_timeout_s=2, **gateway)
    raw["collections"]["duo"] = {"members": ["alpha", "gamma"]}
    return raw


def answers(status: int, message: str) -> dict:
    return {"status": status, "error_message": message}


def bench_of(completion) -> dict:
    return completion.model_extra["bench"]


def seats(completion) -> list[tuple[str, str, str]]:
    return [(s["seat"], s["alias"], s["status"]) for s in bench_of(completion)["seats"]]


def seat(completion, name: str) -> dict:
    return next(s for s in bench_of(completion)["seats"] if s["seat"] == name)


def skipped_alpha(completion) -> dict:
    return next(s for s in bench_of(completion)["skipped"] if s["alias"] == "alpha")


def health_of(gw, alias: str) -> str:
    return gw.runtime.model_health.book.of(alias).health


def test_a_member_that_does_not_exist_is_benched_then_skipped_and_a_reserve_takes_its_chair(
    make_gateway, sim
):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), **answers(404, "The model `gone` does not exist"))
    first, _ = gw.ask("bench/duo")
    assert bench_of(first)["seats"][0]["failure"] == "gone"
    assert health_of(gw, "alpha") == "benched"

    second, _ = gw.ask("bench/duo")
    skipped = skipped_alpha(second)
    assert skipped["seat"] == "member1"
    assert skipped["why"].startswith("benched (next trial in 5 s): gone: ")
    assert "does not exist" in skipped["why"]
    reserve = seat(second, "reserve1")
    assert (reserve["replaces"], reserve["status"]) == ("member1", "ok")
    assert reserve["alias"] not in ("alpha", "gamma")
    assert len(sim.log(served("alpha"))) == 1  # not called again


def test_a_401_benches_a_model_at_once(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), **answers(401, "Unauthorized"))
    gw.ask("bench/duo")
    second, _ = gw.ask("bench/duo")
    assert "signin" in skipped_alpha(second)["why"]
    assert len(sim.log(served("alpha"))) == 1


def test_three_500s_in_a_row_bench_a_model(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), status=500)
    for _ in range(3):
        completion, _ = gw.ask("bench/duo")
        assert seat(completion, "member1")["alias"] == "alpha"
        assert not bench_of(completion)["skipped"]
    fourth, _ = gw.ask("bench/duo")
    assert skipped_alpha(fourth)["why"].startswith("benched (next trial in 5 s): 3 failures")
    assert len(sim.log(served("alpha"))) == 3


def test_a_benched_models_trial_after_its_wait_that_answers_makes_it_ok(make_gateway, sim, clock):
    gw = make_gateway(duo_raw(sim.url), clock=clock.now)
    sim.set(served("alpha"), **answers(401, "Unauthorized"))
    gw.ask("bench/duo")
    sim.set(served("alpha"))  # its key works again
    clock.advance(4)
    assert skipped_alpha(gw.ask("bench/duo")[0])  # not yet
    clock.advance(1)
    wait_until(lambda: health_of(gw, "alpha") == "ok")  # its trial: the gateway's own probe
    assert len(sim.log(served("alpha"))) == 2
    trial, _ = gw.ask("bench/duo")
    assert ("member1", "alpha", "ok") in seats(trial)
    assert health_of(gw, "alpha") == "ok"
    assert ("member1", "alpha", "ok") in seats(gw.ask("bench/duo")[0])


def test_a_failed_trial_doubles_the_wait(make_gateway, sim, clock):
    gw = make_gateway(duo_raw(sim.url), clock=clock.now)
    sim.set(served("alpha"), **answers(401, "Unauthorized"))
    gw.ask("bench/duo")
    clock.advance(5)
    wait_until(lambda: len(sim.log(served("alpha"))) == 2)  # its trial, the gateway's probe
    wait_until(lambda: gw.runtime.model_health.book.of("alpha").backoff == 10)  # refused
    assert skipped_alpha(gw.ask("bench/duo")[0])["why"].startswith("benched (next trial in 10 s)")


def test_panels_asked_at_once_when_a_trial_is_due_leave_the_benched_model_its_one_probe(
    make_gateway, sim, clock
):
    """The trial is the gateway's probe, not a panel's seat: the panels asked while it is in
    flight all skip the model, and between them and the probe it is called once."""
    from concurrent.futures import ThreadPoolExecutor

    gw = make_gateway(duo_raw(sim.url), clock=clock.now)
    sim.set(served("alpha"), **answers(401, "Unauthorized"))
    gw.ask("bench/duo")
    sim.set(served("alpha"), latency_s=0.5, **answers(401, "Unauthorized"))  # a slow trial
    clock.advance(5)
    with ThreadPoolExecutor(4) as pool:
        panels = list(pool.map(lambda _: gw.ask("bench/duo")[0], range(4)))
    wait_until(lambda: gw.runtime.model_health.book.of("alpha").backoff == 10)  # it was refused
    assert len(sim.log(served("alpha"))) == 2  # the failure that benched it, then one trial
    assert sum("alpha" in [s["alias"] for s in bench_of(p)["seats"]] for p in panels) == 0
    assert sum("alpha" in [s["alias"] for s in bench_of(p)["skipped"]] for p in panels) == 4


def test_a_410_retires_a_model_and_a_nominated_retired_model_is_skipped(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), **answers(410, "The model has reached its end of life."))
    gw.ask("bench/duo")
    assert health_of(gw, "alpha") == "retired"
    completion, _ = gw.ask("bench/solo", extra_body={"with": ["zeta", "alpha"]})
    assert skipped_alpha(completion)["why"].startswith("retired: gone: ")
    assert len(sim.log(served("alpha"))) == 1


def test_explorers_and_reserves_are_never_a_benched_model(make_gateway, sim):
    gw = make_gateway(bench_raw(sim.url, max_explorers=2, reserves=2))
    gw.runtime.model_health.book.put("zeta", _benched())
    for _ in range(4):
        completion, _ = gw.ask("bench/solo")
        assert "zeta" not in [s["alias"] for s in bench_of(completion)["seats"]]
        assert "zeta" not in bench_of(completion).get("reserves", [])
    assert not sim.log(served("zeta"))


def _benched():
    from routing.health import Record

    return Record("benched", "signin: Unauthorized", 0.0, 10.0**12, backoff=5.0)


def test_health_is_shared_by_two_gateways_on_one_board(make_gateway, sim, tmp_path):
    path = tmp_path / "board"
    Board.create(path)
    one = make_gateway(duo_raw(sim.url), board=path)
    two = make_gateway(duo_raw(sim.url), board=path)
    sim.set(served("alpha"), **answers(401, "Unauthorized"))
    one.ask("bench/duo")
    assert "signin" in skipped_alpha(two.ask("bench/duo")[0])["why"]
    assert len(sim.log(served("alpha"))) == 1


def test_a_retirement_is_kept_across_a_restart(make_gateway, sim, tmp_path):
    store = tmp_path / "kept.db"
    first = make_gateway(duo_raw(sim.url), store=store)
    sim.set(served("alpha"), **answers(410, "Gone."))
    first.ask("bench/duo")
    first.close()
    again = make_gateway(duo_raw(sim.url), store=store)
    why = skipped_alpha(again.ask("bench/duo")[0])["why"]
    assert why.startswith("retired: gone: ") and why.endswith("Gone.")
    assert len(sim.log(served("alpha"))) == 1


def test_rate_limits_and_refusals_never_bench_a_model(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url, cooldown_default_s=0))
    sim.set(served("alpha"), **answers(400, "Invalid parameter: temperature"))
    for _ in range(4):
        gw.ask("bench/duo")
    assert health_of(gw, "alpha") == "ok"


def test_health_is_shared_by_two_replicas_through_redis(make_gateway, sim, redis_url, tmp_path):
    one = make_gateway(duo_raw(sim.url), state=redis_url)
    two = make_gateway(duo_raw(sim.url), state=redis_url, store=tmp_path / "two.db")
    sim.set(served("alpha"), **answers(401, "Unauthorized"))
    one.ask("bench/duo")
    wait_until(lambda: health_of(two, "alpha") == "benched")
    assert "signin" in skipped_alpha(two.ask("bench/duo")[0])["why"]
    assert len(sim.log(served("alpha"))) == 1


def test_a_retirement_is_kept_across_a_restart_on_postgresql(make_gateway, sim, pg_url):
    first = make_gateway(duo_raw(sim.url), store=pg_url)
    sim.set(served("alpha"), **answers(410, "Gone."))
    first.ask("bench/duo")
    first.close()
    again = make_gateway(duo_raw(sim.url), store=pg_url)
    assert skipped_alpha(again.ask("bench/duo")[0])["why"].startswith("retired: gone: ")
    assert len(sim.log(served("alpha"))) == 1
