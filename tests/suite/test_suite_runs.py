"""The suite run inside a real gateway (contract §20): models asked the tasks through a seat's
path, scored from the saved answers, one run at a time, within `suite.share` of a model's
limits, each call on the record with its caller `suite` and counted apart in the usage."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

from gateway.suite.tasks import load
from tests.helpers.bench import assert_openai_error, bench_raw, served
from tests.helpers.clocks import ManualClock
from tests.helpers.waiting import wait_for
from tests.openapi.test_openapi import check
from tests.suite.known import write_tasks

TASKS = ["t-mean-bug", "t-mean-control", "t-mean-claim"]


def suite_raw(sim_url: str, tmp_path: Path, **suite) -> dict:
    raw = bench_raw(sim_url)
    raw["suite"] = {"dir": str(write_tasks(tmp_path / "tasks")), **suite}
    return raw


def run(gw, **body) -> str:
    started = gw.http.post("/bench/suite/run", json=body)
    assert started.status_code == 202, started.text
    return started.json()["run"]


def finished(gw, run_id: str) -> dict:
    def done() -> bool:
        runs = gw.http.get("/bench/suite").json()["runs"]
        return any(r["id"] == run_id and r["state"] != "running" for r in runs)

    wait_for(f"suite run {run_id}", done)
    body = gw.http.get("/bench/suite").json()
    return next(r for r in body["runs"] if r["id"] == run_id)


def suite_calls(tmp_path: Path) -> list[str]:
    with sqlite3.connect(tmp_path / "records.db") as db:
        return [r[0] for r in db.execute("SELECT call_id FROM suite_answers ORDER BY id")]


def test_a_run_over_two_models_scores_each_from_its_answers(make_gateway, sim, tmp_path):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    sim.set(served("alpha"), answer="Line 2 adds one.\n**FAULT: line 2**")
    sim.set(served("gamma"), answer="Looks fine to me.\nNO FAULT")
    done = finished(gw, run(gw, models=["alpha", "gamma"], tasks=TASKS))
    assert (done["state"], done["asked"], done["answered"], done["total"]) == ("done", 6, 6, 6)
    assert done["notes"] == [] and done["models"] == ["alpha", "gamma"]
    body = gw.http.get("/bench/suite").json()
    assert body["running"] is False and body["tasks"] >= 5
    alpha, gamma = body["models"]["alpha"]["review"], body["models"]["gamma"]["review"]
    # alpha: found the bug, a false alarm on the control; the claim had no VERDICT line
    assert (alpha["found"], alpha["of"], alpha["false_alarms"], alpha["clean"]) == (1, 1, 1, 0)
    assert (alpha["confidently_wrong"], alpha["answered"], alpha["accuracy"]) == (1, 2, 0.5)
    assert (gamma["found"], gamma["of"], gamma["clean"], gamma["confidently_wrong"]) == (0, 1, 1, 0)
    assert gamma["scored_at"] is not None and alpha["claims_of"] == 0
    spec = gw.http.get("/openapi.json").json()
    check(spec, "/bench/suite", "get", 200, body)
    check(spec, "/bench/models", "get", 200, gw.http.get("/bench/models").json())
    asked = sim.log(served("alpha"))
    assert len(asked) == 3 and "   2 |     return sum(xs) / len(xs) + 1" in str(asked[0])


def test_each_suite_call_is_a_record_with_caller_suite_counted_apart_in_the_usage(
    make_gateway, sim, tmp_path
):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    sim.set(served("alpha"), answer="NO FAULT")
    finished(gw, run(gw, models=["alpha"], tasks=["t-mean-control"]))
    gw.ask("bench/solo")
    (call,) = suite_calls(tmp_path)
    record = gw.http.get(f"/bench/calls/{call}").json()
    assert (record["caller"], record["seat"], record["alias"], record["status"]) == (
        "suite", "suite", "alpha", "ok",
    )  # fmt: skip
    assert record["answer"] == "NO FAULT" and record["collection"] == "suite"
    usage = gw.http.get("/bench/usage").json()
    keys = {(row["key"], row["alias"]): row["calls"] for row in _usage_rows(usage)}
    assert keys[("suite", "alpha")] == 1 and keys[("local", "alpha")] == 1
    model = next(m for m in gw.http.get("/bench/models").json()["models"] if m["alias"] == "alpha")
    assert model["seated"] == 1  # the panel's seat; the suite's call is not a panel seat
    assert model["suite"]["review"]["clean"] == 1


def _usage_rows(usage: dict) -> list[dict]:
    return usage["rows"]


def test_a_second_run_is_refused_while_one_runs(make_gateway, sim, tmp_path):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    sim.set(served("alpha"), answer="NO FAULT", latency_s=1.0)
    first = run(gw, models=["alpha"], tasks=TASKS)
    assert gw.http.get("/bench/suite").json()["running"] is True
    second = gw.http.post("/bench/suite/run", json={"models": ["gamma"]})
    error = assert_openai_error(second, 409)
    check(gw.http.get("/openapi.json").json(), "/bench/suite/run", "post", 409, second.json())
    assert first in error["message"] and "one runs at a time" in error["message"]
    finished(gw, first)
    assert gw.http.get("/bench/suite").json()["running"] is False
    finished(gw, run(gw, models=["gamma"], tasks=["t-mean-bug"]))


def test_a_run_takes_no_more_than_its_share_of_a_models_daily_cap(make_gateway, sim, tmp_path):
    raw = suite_raw(sim.url, tmp_path)
    alpha = next(m for m in raw["model_list"] if m["model_name"] == "alpha")
    alpha["bench"]["rpd"] = 4
    gw = make_gateway(raw)
    sim.set(served("alpha"), answer="NO FAULT")
    tasks = [*TASKS, "t-last-bug", "t-sum-claim"]
    done = finished(gw, run(gw, models=["alpha", "gamma"], tasks=tasks))
    assert (done["asked"], done["total"]) == (2 + 5, 10)
    (note,) = done["notes"]
    assert note.startswith("alpha: 3 task(s) skipped: the suite's share of the daily cap")
    assert "(2 of 4/day at suite.share 0.5)" in note
    assert len(sim.log(served("alpha"))) == 2


def test_a_changed_key_rescores_the_saved_answers_with_no_new_call(make_gateway, sim, tmp_path):
    raw = suite_raw(sim.url, tmp_path)
    mine = tmp_path / "tasks" / "mine.yaml"
    mine.write_text("kind: bug\ncode: |\n  a = 1\n  b = a / 0\n  c = b\nlines: [3]\n")
    gw = make_gateway(raw)
    sim.set(served("alpha"), answer="FAULT: line 2")
    finished(gw, run(gw, models=["alpha"], tasks=["mine"]))
    before = gw.http.get("/bench/suite").json()["models"]["alpha"]["review"]
    assert (before["found"], before["wrong_line"], before["accuracy"]) == (0, 1, 0.0)
    gw.close()
    mine.write_text(mine.read_text().replace("lines: [3]", "lines: [2]"))
    calls = len(sim.log())
    again = make_gateway(raw, store=tmp_path / "records.db")
    after = again.http.get("/bench/suite").json()["models"]["alpha"]["review"]
    assert (after["found"], after["wrong_line"], after["accuracy"]) == (1, 0, 1.0)
    assert len(sim.log()) == calls


def test_a_run_naming_an_unknown_model_or_task_is_refused_and_runs_nothing(
    make_gateway, sim, tmp_path
):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    error = assert_openai_error(gw.http.post("/bench/suite/run", json={"models": ["nobody"]}), 404)
    assert error["param"] == "models" and "nobody" in error["message"]
    error = assert_openai_error(gw.http.post("/bench/suite/run", json={"tasks": ["nope"]}), 404)
    assert error["param"] == "tasks"
    assert_openai_error(gw.http.post("/bench/suite/run", json={"quick": "yes"}), 400)
    assert gw.http.get("/bench/suite").json()["runs"] == [] and sim.log() == []


def test_a_malformed_task_file_is_named_at_start_and_the_rest_run(make_gateway, sim, tmp_path):
    raw = suite_raw(sim.url, tmp_path)
    (tmp_path / "tasks" / "broken.yaml").write_text("kind: bug\ncode: x\n")
    gw = make_gateway(raw)
    body = gw.http.get("/bench/suite").json()
    (problem,) = body["problems"]
    assert "broken.yaml: a bug task needs lines" in problem and body["tasks"] >= 5


def test_a_retired_model_is_not_asked_and_the_run_says_why(make_gateway, sim, tmp_path):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    retired = gw.http.post("/bench/models/alpha/retire", json={"why": "withdrawn upstream"})
    assert retired.status_code == 200
    done = finished(gw, run(gw, models=["alpha", "gamma"], tasks=TASKS))
    assert (done["asked"], done["notes"]) == (
        3,
        ["alpha: 3 task(s) skipped: retired: withdrawn upstream"],
    )
    assert sim.log(served("alpha")) == [] and len(sim.log(served("gamma"))) == 3


def test_a_failed_call_is_classified_on_its_record_and_scores_nothing(make_gateway, sim, tmp_path):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    sim.set(served("alpha"), status=404, error_message="The model does not exist.")
    done = finished(gw, run(gw, models=["alpha"], tasks=["t-mean-bug"]))
    assert (done["asked"], done["answered"]) == (1, 0)
    (call,) = suite_calls(tmp_path)
    record = gw.http.get(f"/bench/calls/{call}").json()
    assert (record["status"], record["failure"], record["caller"]) == ("error", "gone", "suite")
    assert "alpha" not in gw.http.get("/bench/suite").json()["models"]


def test_the_schedule_runs_the_suite_by_itself(make_gateway, sim, tmp_path):
    gw = make_gateway(suite_raw(sim.url, tmp_path, schedule_s=0.2))
    sim.set(served("alpha"), answer="NO FAULT")

    def ran() -> bool:
        return any(r["state"] == "done" for r in gw.http.get("/bench/suite").json()["runs"])

    wait_for("a scheduled suite run", ran)
    runs = gw.http.get("/bench/suite").json()["runs"]
    first = next(r for r in runs if r["state"] == "done")
    assert set(first["models"]) == {"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}
    assert gw.http.get("/bench/suite").json()["models"]["alpha"]["review"]["clean"] >= 1


def test_a_runs_figures_are_put_where_routing_reads_its_evidence(make_gateway, sim, tmp_path):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    sim.set(served("alpha"), answer="FAULT: line 2")
    assert gw.runtime.figures.suite_on("alpha", "review") is None
    finished(gw, run(gw, models=["alpha"], tasks=["t-mean-bug", "t-mean-control"]))
    assert gw.runtime.figures.suite_on("alpha", "review") == (0.5, 2)
    gw.close()
    again = make_gateway(suite_raw(sim.url, tmp_path), store=tmp_path / "records.db")
    assert again.runtime.figures.suite_on("alpha", "review") == (0.5, 2)  # published at start


def test_a_gateway_stopping_mid_run_stops_it_and_frees_the_lock(make_gateway, sim, tmp_path):
    raw = suite_raw(sim.url, tmp_path)
    gw = make_gateway(raw)
    sim.set(served("alpha"), answer="NO FAULT", latency_s=5.0)
    going = run(gw, models=["alpha"], tasks=TASKS)
    wait_for("the first call", lambda: len(sim.log(served("alpha"))) == 1)
    gw.close()
    again = make_gateway(raw, store=tmp_path / "records.db")
    body = again.http.get("/bench/suite").json()
    assert body["running"] is False
    stopped = next(r for r in body["runs"] if r["id"] == going)
    assert (stopped["state"], stopped["asked"]) == ("stopped", 0)


def test_the_quick_set_is_suite_quick_tasks_spread_over_the_kinds(make_gateway, sim, tmp_path):
    gw = make_gateway(suite_raw(sim.url, tmp_path, quick=3))
    sim.set(served("alpha"), answer="NO FAULT")
    done = finished(gw, run(gw, models=["alpha"], quick=True))
    assert done["quick"] is True and len(done["tasks"]) == 3 == done["asked"]
    known = load(tmp_path / "tasks").by_id
    assert sorted(known[t].kind for t in done["tasks"]) == ["bug", "claim", "control"]


def test_a_full_rpm_share_makes_the_next_task_wait_and_the_run_says_so(make_gateway, sim, tmp_path):
    raw = suite_raw(sim.url, tmp_path)
    alpha = next(m for m in raw["model_list"] if m["model_name"] == "alpha")
    alpha["bench"]["rpm"] = 2  # the suite's share: one call a minute
    clock = ManualClock(time.time())
    gw = make_gateway(raw, clock=clock.now)
    sim.set(served("alpha"), answer="NO FAULT")
    going = run(gw, models=["alpha"], tasks=["t-mean-bug", "t-mean-control"])

    def waiting() -> bool:
        runs = gw.http.get("/bench/suite").json()["runs"]
        return any(r["id"] == going and r["notes"] for r in runs)

    wait_for("the run to wait for its rpm share", waiting)
    assert len(sim.log(served("alpha"))) == 1
    clock.advance(61)
    done = finished(gw, going)
    assert done["asked"] == 2 and len(sim.log(served("alpha"))) == 2
    assert done["notes"] == [
        "alpha: tasks waited for the suite's share of its rpm (suite.share 0.5)"
    ]


def onboard(gw, aliases: list[str], wait_s: float = 0.0) -> str | None:
    """Suite.onboard, the one call for models new to a running bench, in the gateway's loop."""
    suite = gw.server.server.config.app.state.suite
    loop = gw.server.server._loop
    return asyncio.run_coroutine_threadsafe(suite.onboard(aliases, wait_s), loop).result(60)


def test_onboarding_runs_the_quick_set_for_the_new_models_unless_it_is_off(
    make_gateway, sim, tmp_path
):
    gw = make_gateway(suite_raw(sim.url, tmp_path, quick=2))
    sim.set(served("zeta"), answer="NO FAULT")
    started = onboard(gw, ["zeta"])
    done = finished(gw, started)
    assert (done["models"], done["quick"], done["asked"]) == (["zeta"], True, 2)
    off = make_gateway(suite_raw(sim.url, tmp_path, onboard=False), store=tmp_path / "off.db")
    assert onboard(off, ["zeta"]) is None
    assert off.http.get("/bench/suite").json()["runs"] == []


def test_onboarding_waits_for_a_run_holding_the_lock_then_runs_its_quick_set(
    make_gateway, sim, tmp_path
):
    gw = make_gateway(suite_raw(sim.url, tmp_path, quick=2))
    sim.set(served("alpha"), answer="NO FAULT", latency_s=1.0)
    sim.set(served("zeta"), answer="NO FAULT")
    going = run(gw, models=["alpha"], tasks=TASKS)
    assert onboard(gw, ["zeta"]) is None  # not waiting: left to the schedule, as before
    started = onboard(gw, ["zeta"], wait_s=60)  # a reload's onboarding waits for the lock
    assert started is not None and started != going
    assert finished(gw, going)["state"] == "done"  # the first ended before the quick set began
    done = finished(gw, started)
    assert (done["models"], done["quick"], done["asked"]) == (["zeta"], True, 2)
