"""A benched model's trial is the gateway's own probe, never a panel's seat (contract §18), through
the real gateway and the simulated upstream, with the lifecycle's times scaled down: a panel
seats only models that are ok, so a failing trial costs no chair; a refused key costs its one
failure and then only probes until it answers; a model awaiting confirmation of a withdrawal is
asked by the confirmation probe alone. Route mode keeps its trial by traffic
(tests/health/test_route_health.py)."""

from __future__ import annotations

from typing import Any

from gateway.panel.probe import PROMPT, cadence
from tests.health.test_bench_keeps_itself import answers, bench_of, duo_raw, health_of
from tests.helpers.bench import bench_raw, served
from tests.helpers.clocks import ManualClock, wait_until

# every wait a tenth of a second or so: trials come many times within one test
FAST = {"backoff_min_s": 0.1, "backoff_max_s": 0.2, "confirm_after_s": 1.0, "reprobe_s": 3600}


def fast(raw: dict[str, Any], **lifecycle: Any) -> dict[str, Any]:
    raw["lifecycle"] = {**FAST, **lifecycle}
    return raw


def probed(sim, alias: str) -> int:
    """The gateway's own probes of *alias* (its small prompt)."""
    return sum(r["body"]["messages"] == PROMPT for r in sim.log(served(alias)))


def seated(completion) -> list[str]:
    bench = bench_of(completion)
    return [s["alias"] for s in bench["seats"]] + list(bench.get("reserves", []))


def chairs_answered(completion) -> bool:
    """Every member's chair has an answer: its own seat's or a reserve's in its place."""
    seats = bench_of(completion)["seats"]
    chairs = {s["seat"] for s in seats if not s["seat"].startswith("reserve")}
    chairs |= {s["seat"] for s in bench_of(completion)["skipped"] if s.get("seat")}
    answered = {s.get("replaces") or s["seat"] for s in seats if s["status"] == "ok"}
    return chairs <= answered


def test_a_benched_model_due_its_trial_is_never_seated_and_no_chair_is_lost(make_gateway, sim):
    gw = make_gateway(fast(bench_raw(sim.url, max_explorers=2, reserves=2)))
    sim.set(served("zeta"), **answers(401, "Invalid API key provided."))
    gw.ask("bench/solo", extra_body={"with": ["zeta"]})  # its one failure: benched at once
    assert health_of(gw, "zeta") == "benched"
    sim.set(served("alpha"), status=500)  # the member fails every time: a reserve takes it
    for _ in range(6):
        completion, _ = gw.ask("bench/solo")
        assert "zeta" not in seated(completion)  # least used, yet never explored nor a reserve
        assert chairs_answered(completion)
    wait_until(lambda: probed(sim, "zeta") >= 2)  # its trials go on, as the gateway's probes
    assert len(sim.log(served("zeta"))) == 1 + probed(sim, "zeta")
    assert health_of(gw, "zeta") == "benched"


def test_a_refused_key_costs_one_seat_then_probes_until_it_answers(make_gateway, sim):
    gw = make_gateway(fast(duo_raw(sim.url)))
    sim.set(served("alpha"), **answers(401, "Invalid API key provided."))
    first, _ = gw.ask("bench/duo")
    assert "alpha" in seated(first) and chairs_answered(first)
    for _ in range(4):
        completion, _ = gw.ask("bench/duo")
        assert "alpha" not in seated(completion)
        assert chairs_answered(completion)
    wait_until(lambda: probed(sim, "alpha") >= 2)
    sim.set(served("alpha"))  # the key is fixed
    wait_until(lambda: health_of(gw, "alpha") == "ok")  # a probe answered
    back, _ = gw.ask("bench/duo")
    assert ("member1", "alpha", "ok") in [
        (s["seat"], s["alias"], s["status"]) for s in bench_of(back)["seats"]
    ]
    panel_calls = len(sim.log(served("alpha"))) - probed(sim, "alpha")
    assert panel_calls == 2  # its failure, and its seat once back


def test_a_model_awaiting_confirmation_is_asked_by_the_confirmation_probe_alone(make_gateway, sim):
    raw = fast(duo_raw(sim.url), confirm_after_s=2.0)
    raw["collections"]["crew"] = {"members": ["alpha", "gamma"], "reply": "route"}
    gw = make_gateway(raw)
    sim.set(served("alpha"), **answers(404, "The model `sim-alpha` does not exist"))
    gw.ask("bench/duo")  # the failure: benched, awaiting its confirmation
    assert health_of(gw, "alpha") == "benched"
    for _ in range(4):  # panels and route turns while it waits: none tries it
        assert "alpha" not in seated(gw.ask("bench/duo")[0])
        turn = gw.client.chat.completions.with_raw_response.create(
            model="bench/crew:route", messages=[{"role": "user", "content": "hello"}]
        )
        assert turn.headers["x-bench-model"] == "gamma"
    wait_until(lambda: health_of(gw, "alpha") == "retired", timeout=20)
    assert len(sim.log(served("alpha"))) == 2  # the failure and its confirmation
    assert probed(sim, "alpha") == 1


def test_on_a_connection_that_is_down_one_model_at_a_time_is_due_its_trial(make_gateway, sim):
    clock = ManualClock()
    raw = bench_raw(sim.url, max_explorers=0, reserves=2)
    raw["lifecycle"] = {"failures_to_bench": 1}
    gw = make_gateway(raw, clock=clock.now)
    for alias in ("alpha", "beta"):  # connection `one`: both its models
        sim.set(served(alias), **answers(503, "Service Unavailable"))
    gw.ask("bench/solo", extra_body={"with": ["beta"]})
    health = gw.runtime.model_health
    assert health.connection("one").health == "down"
    clock.advance(5)
    assert len(health.probes_due()) == 1  # not one per model
    wait_until(lambda: probed(sim, "alpha") + probed(sim, "beta") >= 1)


def test_the_probe_loop_and_the_guard_follow_the_lifecycle_times(make_gateway, sim):
    scaled = make_gateway(fast(bench_raw(sim.url)))
    assert cadence(scaled.runtime) < 1.0  # trials come close to their time
    assert scaled.runtime.model_health.rules.guard_window_s == FAST["backoff_max_s"]
    default = make_gateway(bench_raw(sim.url))
    assert cadence(default.runtime) == 1.0
    assert default.runtime.model_health.rules.guard_window_s == 60.0  # "within a minute"
