"""A failed seat's class (contract §18) through the real gateway and the simulated upstream: on
the seat in `bench.seats[]`, on its record, in the serve log; and a member whose failure is
not the request's nor a timeout gives its chair to the next reserve."""

from __future__ import annotations

import logging

import pytest

from tests.helpers.bench import bench_raw, served
from tests.helpers.clocks import ManualClock

TIMEOUT_S = 2


def duo_raw(sim_url: str, reserves: int = 0, **gateway):
    raw = bench_raw(
        sim_url, max_explorers=0, reserves=reserves, seat_timeout_s=TIMEOUT_S, **gateway
    )
    raw["collections"]["duo"] = {"members": ["alpha", "gamma"]}
    return raw


def answers(status: int, message: str) -> dict:
    return {"status": status, "error_message": message}


# case: (alpha's behaviour, its seat's status, its class)
CASES = {
    "a withdrawn model's 404": (answers(404, "The model `gone` does not exist"), "error", "gone"),
    "OpenRouter's data policy 404": (
        answers(404, "No endpoints found matching your data policy (Free model publication)"),
        "error",
        "entitlement",
    ),
    "OpenRouter's withdrawn slug": (
        answers(404, "No endpoints found for sim/alpha:free."),
        "error",
        "gone",
    ),
    "NVIDIA's 410": (
        answers(410, "The model 'sim/alpha' has reached its end of life on 2025-05-01."),
        "error",
        "gone",
    ),
    "a free period that ended": (
        answers(
            400,
            "The free Sim Alpha period has ended. To keep using it, migrate to the paid slug "
            "sim/alpha.",
        ),
        "error",
        "paywalled",
    ),
    "a 402 on insufficient credit": (
        answers(402, "Insufficient credit: add credits to continue."),
        "error",
        "entitlement",
    ),
    "a 401": (answers(401, "Unauthorized"), "error", "signin"),
    "a 403 naming the key": (answers(403, "This API key has been disabled."), "error", "signin"),
    "a content filter's 400": (
        answers(400, "Output blocked by the provider's content filtering policy."),
        "error",
        "refused",
    ),
    "a 429": ({"status": 429, "retry_after": 5}, "rate_limited", "rate_limited"),
    "a 503": ({"status": 503}, "error", "capacity"),
    "a reset connection": ({"reset": True}, "error", "capacity"),
    "no answer in time": ({"hang": True}, "timeout", "timeout"),
    "a 200 with no text": ({"empty": True}, "empty", "empty"),
    "a 409": (answers(409, "Conflict"), "error", "other"),
}


@pytest.mark.parametrize("reader", ["direct", "litellm"])
@pytest.mark.parametrize("case", CASES)
def test_each_failure_class_is_on_the_seat_and_its_record(make_gateway, sim, case, reader):
    behaviour, status, failure = CASES[case]
    gw = make_gateway(duo_raw(sim.url, upstream_reader=reader))
    sim.set(served("alpha"), **behaviour)
    completion, raw = gw.ask("bench/duo")
    assert raw.status_code == 200
    alpha, gamma = completion.model_extra["bench"]["seats"]
    assert (alpha["status"], alpha["failure"]) == (status, failure)
    assert (gamma["status"], gamma["failure"]) == ("ok", None)
    record = gw.http.get(f"/bench/calls/{alpha['call']}").json()
    assert (record["status"], record["failure"]) == (status, failure)
    assert gw.http.get(f"/bench/calls/{gamma['call']}").json()["failure"] is None
    panel = gw.http.get(f"/bench/panels/{completion.model_extra['bench']['panel']}").json()
    assert [s["failure"] for s in panel["seats"]] == [failure, None]


def test_a_member_answering_404_is_replaced_by_a_reserve_in_the_same_panel(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url, reserves=3))
    sim.set(served("alpha"), **answers(404, "The model `sim-alpha` does not exist"))
    completion, raw = gw.ask("bench/duo")
    assert raw.status_code == 200
    seats = completion.model_extra["bench"]["seats"]
    assert [(s["seat"], s["status"], s["failure"]) for s in seats] == [
        ("member1", "error", "gone"),
        ("reserve1", "ok", None),
        ("member2", "ok", None),
    ]
    member1, reserve1 = seats[0], seats[1]
    assert member1["replaced_by"] == "reserve1" and reserve1["replaces"] == "member1"
    assert reserve1["alias"] not in ("alpha", "gamma")
    recorded = gw.http.get(f"/bench/calls/{member1['call']}").json()
    assert (recorded["failure"], recorded["replaced_by"]) == ("gone", "reserve1")
    assert len(sim.log(served("alpha"))) == 1  # never asked again in the panel


@pytest.mark.parametrize(
    ("behaviour", "status", "failure"),
    [
        (answers(400, "Invalid parameter: temperature"), "error", "refused"),
        ({"hang": True}, "timeout", "timeout"),
    ],
    ids=["a refusal", "a timeout"],
)
def test_a_refused_or_timed_out_member_keeps_its_chair(
    make_gateway, sim, behaviour, status, failure
):
    gw = make_gateway(duo_raw(sim.url, reserves=3))
    sim.set(served("alpha"), **behaviour)
    completion, _ = gw.ask("bench/duo")
    seats = completion.model_extra["bench"]["seats"]
    assert [(s["seat"], s["status"], s["failure"]) for s in seats] == [
        ("member1", status, failure),
        ("member2", "ok", None),
    ]
    assert seats[0]["replaced_by"] is None


def test_the_class_is_in_bench_in_every_format_that_carries_it(make_gateway, sim):
    clock = ManualClock()
    gw = make_gateway(duo_raw(sim.url), clock=clock.now)
    sim.set(served("alpha"), **answers(404, "The model `gone` does not exist"))
    asked = [{"role": "user", "content": "hi"}]
    requests = {
        "chat": ("/v1/chat/completions", {"model": "bench/duo", "messages": asked}),
        "completions": ("/v1/completions", {"model": "bench/duo", "prompt": "hi"}),
        "responses": ("/v1/responses", {"model": "bench/duo", "input": "hi"}),
        "anthropic": ("/v1/messages", {"model": "bench/duo", "max_tokens": 50, "messages": asked}),
        "ollama": ("/api/chat", {"model": "bench/duo", "messages": asked, "stream": False}),
    }
    replies = {}
    for name, (path, body) in requests.items():
        # benched by the last 404, it awaits its confirmation and no panel calls it: put back
        # by hand (the admin's restore), it is called again
        assert gw.http.post("/bench/models/alpha/restore").status_code == 200
        replies[name] = gw.http.post(path, json=body)
    for name, reply in replies.items():
        assert reply.status_code == 200, (name, reply.text)
        seats = reply.json()["bench"]["seats"]
        assert [s["failure"] for s in seats] == ["gone", None], name


def test_a_streamed_panels_last_chunk_carries_the_class(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), **answers(410, "Gone for good"))
    stream = gw.client.chat.completions.create(
        model="bench/duo", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    last = [chunk for chunk in stream][-1]
    seats = last.model_extra["bench"]["seats"]
    assert [s["failure"] for s in seats] == ["gone", None]


def test_a_panel_where_every_seat_failed_names_each_class(make_gateway, sim):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), **answers(404, "No endpoints found for sim/alpha."))
    sim.set(served("gamma"), **answers(401, "Invalid API key"))
    reply = gw.http.post(
        "/v1/chat/completions",
        json={"model": "bench/duo", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert reply.status_code == 502
    seats = reply.json()["bench"]["seats"]
    assert [(s["alias"], s["failure"]) for s in seats] == [("alpha", "gone"), ("gamma", "signin")]


def test_each_failed_seat_is_one_warning_in_the_log_with_its_secrets_masked(
    make_gateway, sim, caplog
):
    gw = make_gateway(duo_raw(sim.url))
    sim.set(served("alpha"), **answers(403, "Incorrect API key provided: sim-key."))
    with caplog.at_level(logging.WARNING, logger="bench"):
        completion, _ = gw.ask("bench/duo")
    alpha = completion.model_extra["bench"]["seats"][0]
    lines = [r for r in caplog.records if r.name == "bench.fanout" and "failed" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    said = lines[0].getMessage()
    for part in (alpha["call"], "alpha", "sim-alpha", "connection one", "signin", "Incorrect API"):
        assert part in said
    assert "sim-key" not in caplog.text
