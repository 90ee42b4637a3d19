"""A quick set is followed up where it leaves the best model in doubt (contract §20's quick set,
routing/follow_up.py), through the real gateway and simulator: the models that could be the best
on a shape are asked the rest of its tasks, the others nothing more; the follow-up is a run like
any other (listed, one at a time, within `suite.share`)."""

from __future__ import annotations

from collections import Counter

from gateway.suite.tasks import load
from tests.helpers.bench import bench_raw, served
from tests.helpers.waiting import wait_for
from tests.suite.test_suite_routing import seats
from tests.suite.test_suite_runs import finished, onboard, run

# two models at the top, the others wrong on every task (the simulator's hidden skill)
SKILL = {"alpha": 0.0, "beta": 0.0, "gamma": 1.0, "delta": 1.0, "epsilon": 0.0, "zeta": 0.0}
SHIPPED = load().by_id
OF_SHAPE = Counter(task.shape for task in SHIPPED.values())


def suite_asks(sim, alias: str) -> int:
    """The suite tasks the simulated *alias* was asked (panels it sat on aside)."""
    return sum("End your answer with exactly one line" in str(r) for r in sim.log(served(alias)))


def follow_ups(gw, quick: str) -> list[dict]:
    """The runs that follow the quick set *quick*, oldest first."""
    runs = gw.http.get("/bench/suite").json()["runs"]
    said = f"follow-up of run {quick}:"
    return sorted(
        (r for r in runs if r["notes"] and r["notes"][0].startswith(said)),
        key=lambda r: r["started"],
    )


def answered(gw) -> dict[str, dict[str, int]]:
    models = gw.http.get("/bench/suite").json()["models"]
    return {
        alias: {s: f["answered"] for s, f in shapes.items()} for alias, shapes in models.items()
    }


def quick_then_follow_up(gw, started: str | None = None) -> tuple[dict, list[dict]]:
    quick = finished(gw, started or run(gw, quick=True))
    assert quick["state"] == "done" and quick["quick"] is True
    wait_for("the follow-up to start", lambda: follow_ups(gw, quick["id"]))
    wait_for("the suite to be idle", lambda: not gw.http.get("/bench/suite").json()["running"])
    return quick, follow_ups(gw, quick["id"])


def test_after_a_quick_set_the_two_best_are_asked_every_task_and_the_others_nothing_more(
    make_gateway, sim
):
    gw = make_gateway(bench_raw(sim.url))
    for alias, skill in SKILL.items():
        sim.set(served(alias), suite_skill=skill)
    quick, (follow_up,) = quick_then_follow_up(gw)

    rest = len(SHIPPED) - len(quick["tasks"])
    assert quick["notes"] == [f"a follow-up follows: gamma, delta asked {rest} more task(s)"]
    assert (follow_up["models"], follow_up["state"], follow_up["quick"]) == (
        ["gamma", "delta"], "done", False,
    )  # fmt: skip
    assert sorted(follow_up["tasks"]) == sorted(set(SHIPPED) - set(quick["tasks"]))
    assert follow_up["asked"] == follow_up["answered"] == 2 * rest
    in_quick = Counter(SHIPPED[t].shape for t in quick["tasks"])
    figures = answered(gw)
    for alias in ("gamma", "delta"):
        assert figures[alias] == dict(OF_SHAPE)  # every task of every shape
        assert suite_asks(sim, alias) == len(SHIPPED)  # each asked once
    for alias in ("alpha", "beta", "epsilon", "zeta"):
        assert figures[alias] == dict(in_quick)  # the quick set only
        assert suite_asks(sim, alias) == len(quick["tasks"])
    assert seats(gw)["primary"]["alias"] in ("gamma", "delta")


def test_a_follow_up_takes_no_more_than_the_suites_share_and_then_ends(make_gateway, sim):
    raw = bench_raw(sim.url)
    delta = next(m for m in raw["model_list"] if m["model_name"] == "delta")
    delta["bench"]["rpd"] = 24  # the suite's share: 12 calls a day, 4 after the quick set
    gw = make_gateway(raw)
    for alias, skill in SKILL.items():
        sim.set(served(alias), suite_skill=skill)
    quick, runs = quick_then_follow_up(gw)
    wait_for("the follow-up to end", lambda: follow_ups(gw, quick["id"])[-1]["models"] == ["delta"])
    wait_for("the suite to be idle", lambda: not gw.http.get("/bench/suite").json()["running"])
    first, again = follow_ups(gw, quick["id"])

    rest = len(SHIPPED) - len(quick["tasks"])
    assert first["models"] == ["gamma", "delta"] and first["asked"] == rest + 4
    assert first["notes"][1] == (
        f"delta: {rest - 4} task(s) skipped: the suite's share of the daily cap on the model is"
        " spent (12 of 24/day at suite.share 0.5)"
    )
    # delta could still be the best and has tasks left: asked again, within the same share
    assert (again["models"], again["asked"], again["state"]) == (["delta"], 0, "done")
    assert again["notes"][1:] == [
        f"delta: {rest - 4} task(s) skipped: the suite's share of the daily cap on the model is"
        " spent (12 of 24/day at suite.share 0.5)"
    ]  # and it names no follow-up: a run that answered nothing ends the chain
    assert suite_asks(sim, "delta") == 12 and suite_asks(sim, "gamma") == len(SHIPPED)
    assert len(follow_ups(gw, quick["id"])) == 2


def test_a_model_onboarded_against_the_primary_is_followed_up_with_it_on_equal_terms(
    make_gateway, sim
):
    gw = make_gateway(bench_raw(sim.url))
    for alias, skill in SKILL.items():
        sim.set(served(alias), suite_skill=skill)
    alone = finished(gw, run(gw, models=["gamma"], quick=True))
    assert alone["notes"] == []  # nobody to tell it from: no follow-up
    assert seats(gw)["primary"]["alias"] == "gamma"

    quick, (follow_up,) = quick_then_follow_up(gw, onboard(gw, ["delta"]))
    assert quick["models"] == ["delta"] and quick["tasks"] == alone["tasks"]
    assert follow_up["models"] == ["gamma", "delta"]  # the primary too: the same tasks
    assert sorted(follow_up["tasks"]) == sorted(set(SHIPPED) - set(quick["tasks"]))
    figures = answered(gw)
    assert figures["gamma"] == figures["delta"] == dict(OF_SHAPE)
    assert suite_asks(sim, "gamma") == suite_asks(sim, "delta") == len(SHIPPED)
