"""The router reads the suite (contract §20), through the real gateway and simulator: models with
hidden skills and no verdicts, one quick set, and the router's primary chair and route mode's
first member go to the most skilled; then verdicts take over."""

from __future__ import annotations

from tests.helpers.bench import bench_raw, served
from tests.suite.test_suite_runs import finished, run

# the chance each model answers a suite task right (the simulator's hidden skill)
SKILL = {"alpha": 0.0, "beta": 0.3, "gamma": 1.0, "delta": 0.5, "epsilon": 0.2, "zeta": 0.1}
REVIEW = {"X-Panel-Shape": "review"}


def seats(gw) -> dict[str, dict]:
    """The router panel's seats on a review, by seat name."""
    completion, _ = gw.ask("bench/panel", extra_headers=REVIEW)
    return {s["seat"]: s for s in completion.model_extra["bench"]["seats"]}


def first_member(gw) -> str:
    reply, _ = gw.ask("bench/readers:route")
    return str(reply.model)


def test_the_quick_set_seats_the_most_skilled_model_until_verdicts_say_otherwise(make_gateway, sim):
    raw = bench_raw(sim.url, route_explore=0)
    raw["collections"]["readers"] = {"members": ["alpha", "delta", "gamma"], "shape": "review"}
    gw = make_gateway(raw)
    for alias, skill in SKILL.items():
        sim.set(served(alias), suite_skill=skill)
    assert first_member(gw) == "alpha"  # no evidence: the collection's order

    done = finished(gw, run(gw, quick=True))
    assert done["state"] == "done" and done["quick"] is True
    figures = gw.http.get("/bench/suite").json()["models"]
    review = {alias: figures[alias]["review"]["accuracy"] for alias in SKILL if alias in figures}
    assert review["gamma"] == 1.0 and max(a for m, a in review.items() if m != "gamma") < 1.0
    assert seats(gw)["primary"]["alias"] == "gamma"  # no verdict anywhere: its suite seats it
    assert first_member(gw) == "gamma"

    # gamma aces the suite but the judge finds it useless: its verdicts take over
    verdicts = 0
    while (chairs := seats(gw))["primary"]["alias"] == "gamma":
        assert verdicts < 15, "a model judged useless kept the primary chair"
        judged = gw.http.post(
            "/bench/verdict", json={"call": chairs["primary"]["call"], "useful": False}
        )
        assert judged.status_code == 200, judged.text
        verdicts += 1
    assert 1 <= verdicts <= 15
    assert chairs["primary"]["alias"] != "gamma"
    assert first_member(gw) != "gamma"  # route mode reads the same evidence
