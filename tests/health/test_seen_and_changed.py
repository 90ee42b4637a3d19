"""Health seen and changed by hand (contract §18): `/bench/models`' health columns,
`GET /bench/health`, and retiring or restoring a model as the dashboard's admin."""

from __future__ import annotations

from tests.health.test_bench_keeps_itself import answers, duo_raw, skipped_alpha
from tests.helpers.bench import bench_raw, served


def row(gw, alias: str) -> dict:
    return next(m for m in gw.http.get("/bench/models").json()["models"] if m["alias"] == alias)


def test_a_benched_model_is_seen_with_why_in_models_and_health(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), **answers(401, "Unauthorized"))
    gw.ask("bench/duo")
    alpha = row(gw, "alpha")
    assert (alpha["health"], alpha["last_failure"]) == ("benched", "signin")
    assert (
        alpha["health_why"].startswith("signin: ") and alpha["next_trial"] > alpha["health_since"]
    )
    assert row(gw, "gamma")["health"] == "ok" and row(gw, "gamma")["health_why"] is None
    body = gw.http.get("/bench/health").json()
    model = next(m for m in body["models"] if m["alias"] == "alpha")
    assert (model["health"], model["last_failure"]) == ("benched", "signin")
    assert {c["name"]: c["health"] for c in body["connections"]}["one"] == "ok"
    assert body["actions"] == []


def test_a_retired_model_still_in_a_collection_is_an_action(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), **answers(410, "Gone."))
    gw.ask("bench/duo")
    actions = gw.http.get("/bench/health").json()["actions"]
    assert any(a.startswith("alpha is retired (gone: ") and "bench/duo" in a for a in actions)


def test_the_admin_retires_and_restores_a_model_by_hand(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    retired = gw.http.post("/bench/models/alpha/retire", json={"why": "withdrawn upstream"})
    assert retired.status_code == 200
    assert (retired.json()["health"], retired.json()["health_why"]) == (
        "retired",
        "withdrawn upstream",
    )
    assert skipped_alpha(gw.ask("bench/duo")[0])["why"] == "retired: withdrawn upstream"
    restored = gw.http.post("/bench/models/alpha/restore")
    assert restored.status_code == 200 and restored.json()["health"] == "ok"
    completion, _ = gw.ask("bench/duo")
    assert "alpha" in [s["alias"] for s in completion.model_extra["bench"]["seats"]]
    assert sim.log(served("alpha"))


def test_retiring_needs_a_why_and_a_known_model(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    assert gw.http.post("/bench/models/alpha/retire", json={}).status_code == 400
    assert gw.http.post("/bench/models/nobody/retire", json={"why": "x"}).status_code == 404
    assert row(gw, "alpha")["health"] == "ok"


def test_a_gateway_key_cannot_retire_a_model(make_gateway, sim, monkeypatch):
    gw = make_gateway(bench_raw(sim.url, require_keys=True))
    reply = gw.http.post(
        "/bench/models/alpha/retire",
        json={"why": "x"},
        headers={"Authorization": "Bearer sk-bench-not-admin"},
    )
    assert reply.status_code == 401
    assert gw.runtime.model_health.book.of("alpha").health == "ok"


def test_a_model_whose_key_variable_is_unset_is_benched_and_the_rest_serve(make_gateway, sim):
    raw = duo_raw(sim.url)
    raw["model_list"][0]["litellm_params"]["api_key"] = "os.environ/BENCH_TEST_UNSET_KEY"
    gw = make_gateway(raw)
    completion, reply = gw.ask("bench/duo")
    assert reply.status_code == 200
    assert skipped_alpha(completion)["why"] == "benched: BENCH_TEST_UNSET_KEY is not set"
    assert row(gw, "alpha")["health_why"] == "BENCH_TEST_UNSET_KEY is not set"
    assert (
        "alpha cannot be called: BENCH_TEST_UNSET_KEY is not set"
        in (gw.http.get("/bench/health").json()["actions"])
    )
    assert not sim.log(served("alpha"))


def test_a_connection_whose_every_model_had_its_key_refused_is_check_key(make_gateway, sim):
    raw = duo_raw(sim.url)
    raw["collections"]["ones"] = {"members": ["alpha", "beta"]}
    gw = make_gateway(raw)
    for alias in ("alpha", "beta"):
        sim.set(served(alias), **answers(401, "Unauthorized"))
    gw.ask("bench/ones")
    body = gw.http.get("/bench/health").json()
    one = next(c for c in body["connections"] if c["name"] == "one")
    assert (one["health"], one["why"]) == ("check_key", "the key for connection one was refused")
    assert "the key for connection one was refused" in body["actions"]
    for alias in ("alpha", "beta"):
        assert row(gw, alias)["health"] == "benched"
        assert row(gw, alias)["health_why"] == "the key for connection one was refused"
