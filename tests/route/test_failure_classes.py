"""A route turn's failures carry their class (contract §18): each member that failed the turn
in `failed_over`, and the turn's own record when no member answered."""

from __future__ import annotations

from tests.helpers.bench import bench_raw

MODEL = "bench/crew:route"
QUESTION = [{"role": "user", "content": "What is 2 + 2?"}]


def crew(make_gateway, sim):
    raw = bench_raw(sim.url, route_explore=0, keepalive_s=0.2, first_token_s=1)
    raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, latency_s=0.01)
    return make_gateway(raw)


def turns_of(gw, conversation: str) -> list[dict]:
    return gw.http.get(f"/bench/conversations/{conversation}").json()["turns"]


def test_each_member_that_failed_a_turn_is_named_with_its_class(make_gateway, sim):
    gw = crew(make_gateway, sim)
    sim.set("sim-alpha", status=404, error_message="The model `sim-alpha` does not exist")
    sim.set("sim-gamma", status=404, error_message="No endpoints found matching your data policy")
    raw = gw.client.chat.completions.with_raw_response.create(model=MODEL, messages=QUESTION)
    reply = raw.parse()
    assert reply.model == "delta"
    failed = reply.model_extra["bench"]["failed_over"]
    assert [(f["alias"], f["failure"]) for f in failed] == [
        ("alpha", "gone"),
        ("gamma", "entitlement"),
    ]
    (turn,) = turns_of(gw, raw.headers["x-bench-conversation"])
    assert turn["failure"] is None  # delta answered
    assert [f["failure"] for f in turn["failed_over"]] == ["gone", "entitlement"]


def test_a_turn_no_member_answered_records_the_last_ones_class(make_gateway, sim):
    gw = crew(make_gateway, sim)
    sim.set("sim-alpha", status=503)
    sim.set("sim-gamma", status=401, error_message="Invalid API key")
    sim.set("sim-delta", status=410, error_message="This model has reached its end of life")
    reply = gw.http.post("/v1/chat/completions", json={"model": MODEL, "messages": QUESTION})
    assert reply.status_code == 502
    failed = reply.json()["bench"]["failed_over"]
    assert [(f["alias"], f["failure"]) for f in failed] == [
        ("alpha", "capacity"),
        ("gamma", "signin"),
        ("delta", "gone"),
    ]
    (turn,) = turns_of(gw, reply.headers["x-bench-conversation"])
    assert (turn["alias"], turn["status"], turn["failure"]) == ("delta", "error", "gone")
    assert [f["failure"] for f in turn["failed_over"]] == ["capacity", "signin"]
