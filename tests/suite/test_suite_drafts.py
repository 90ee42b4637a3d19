"""Claims become tasks (contract §20): a verdict's `real` and `false` claims are draft claim
tasks, listed, approved or rejected by the admin (API and command), named in /bench/health's
actions while they wait; an approved draft runs like a task and is scored by its truth."""

from __future__ import annotations

from tests.cli.test_client import bench
from tests.helpers.bench import assert_openai_error, served
from tests.openapi.test_openapi import check
from tests.suite.test_suite_runs import finished, run, suite_raw


def judged_with_claims(gw) -> str:
    completion, _ = gw.ask("bench/solo", "def half(n):\n    return n // 2")
    call = completion.model_extra["bench"]["seats"][0]["call"]
    verdict = {"call": call, "useful": True, "real": ["half(3) is 1"], "false": ["half(4) is 3"]}
    assert gw.http.post("/bench/verdict", json=verdict).status_code == 200
    return call


def test_a_verdicts_claims_become_drafts_that_wait_in_the_health_actions(
    make_gateway, sim, tmp_path
):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    call = judged_with_claims(gw)
    body = gw.http.get("/bench/suite/drafts").json()
    check(gw.http.get("/openapi.json").json(), "/bench/suite/drafts", "get", 200, body)
    by_claim = {d["claim"]: d for d in body["drafts"]}
    assert set(by_claim) == {"half(3) is 1", "half(4) is 3"}
    assert (by_claim["half(3) is 1"]["truth"], by_claim["half(4) is 3"]["truth"]) == (True, False)
    real = by_claim["half(3) is 1"]
    assert (real["call"], real["shape"]) == (call, "design")
    assert real["code"].endswith("def half(n):\n    return n // 2")
    actions = gw.http.get("/bench/health").json()["actions"]
    assert any(a.startswith("2 suite draft(s) from verdicts' claims wait") for a in actions)


def test_an_approved_draft_runs_like_a_task_and_a_rejected_one_is_gone(make_gateway, sim, tmp_path):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    judged_with_claims(gw)
    drafts = {d["claim"]: d["id"] for d in gw.http.get("/bench/suite/drafts").json()["drafts"]}
    approved = gw.http.post(f"/bench/suite/drafts/{drafts['half(4) is 3']}/approve")
    assert approved.status_code == 200 and approved.json()["state"] == "approved"
    rejected = gw.http.post(f"/bench/suite/drafts/{drafts['half(3) is 1']}/reject")
    assert rejected.json() == {"id": drafts["half(3) is 1"], "state": "rejected"}
    assert gw.http.get("/bench/suite/drafts").json()["drafts"] == []
    assert not any("suite draft" in a for a in gw.http.get("/bench/health").json()["actions"])
    again = gw.http.post(f"/bench/suite/drafts/{drafts['half(3) is 1']}/approve")
    assert assert_openai_error(again, 404)["param"] == "draft"
    sim.set(served("gamma"), answer="half(4) is 2.\nVERDICT: FALSE")
    finished(gw, run(gw, models=["gamma"], tasks=[drafts["half(4) is 3"]]))
    design = gw.http.get("/bench/suite").json()["models"]["gamma"]["design"]
    assert (design["claims_right"], design["claims_of"], design["accuracy"]) == (1, 1, 1.0)


def test_the_command_lists_and_approves_every_draft(make_gateway, sim, tmp_path):
    gw = make_gateway(suite_raw(sim.url, tmp_path))
    judged_with_claims(gw)
    listed = bench("suite", "drafts", url=gw.url)
    assert listed.returncode == 0, listed.stderr
    assert "FALSE  'half(4) is 3'" in listed.stdout and "TRUE   'half(3) is 1'" in listed.stdout
    approved = bench("suite", "approve", "--all", url=gw.url)
    assert approved.returncode == 0, approved.stderr
    assert [line.split()[-1] for line in approved.stdout.splitlines()] == ["approved"] * 2
    assert gw.http.get("/bench/suite/drafts").json()["drafts"] == []
    assert bench("suite", "approve", url=gw.url).returncode == 2


def test_drafts_are_made_approved_and_run_in_postgresql_too(make_gateway, sim, tmp_path, pg_url):
    gw = make_gateway(suite_raw(sim.url, tmp_path), store=pg_url)
    judged_with_claims(gw)
    drafts = {d["claim"]: d for d in gw.http.get("/bench/suite/drafts").json()["drafts"]}
    assert (drafts["half(3) is 1"]["truth"], drafts["half(4) is 3"]["truth"]) == (True, False)
    draft = drafts["half(3) is 1"]["id"]
    assert gw.http.post(f"/bench/suite/drafts/{draft}/approve").json()["state"] == "approved"
    sim.set(served("gamma"), answer="**VERDICT: TRUE**")
    finished(gw, run(gw, models=["gamma"], tasks=[draft]))
    design = gw.http.get("/bench/suite").json()["models"]["gamma"]["design"]
    assert (design["claims_right"], design["claims_of"]) == (1, 1)
    assert [d["claim"] for d in gw.http.get("/bench/suite/drafts").json()["drafts"]] == [
        "half(4) is 3"
    ]
