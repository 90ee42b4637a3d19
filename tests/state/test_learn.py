"""A route member and a panel seat learn the same from the same upstream answer: the one place
that learns from a call's outcome (gateway/state/learn.py) is all either uses.

Each case sends one scripted reply, byte for byte, once to a panel seat and once to a route
member of two gateways on one clock, then compares what `/bench/models` says of the model and
what a restart on each gateway's records still says."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.helpers.bench import bench_raw, served
from tests.helpers.clocks import ManualClock

NOW = datetime(2025, 3, 6, 22, 0, tzinfo=UTC).timestamp()
COOLING = ("cooling_until", "cooling_why", "cooling_source")

# A free tier's daily limit: no Retry-After, the reset two hours ahead (epoch ms), the limit
# named only in the message.
DAILY_RESET = NOW + 7200
DAILY_429 = {
    "status": 429,
    "headers": {"X-RateLimit-Reset": str(int(DAILY_RESET * 1000))},
    "content_type": "application/json",
    "parts": [
        json.dumps(
            {
                "error": {
                    "message": "Rate limit exceeded: free-models-per-day",
                    "type": "rate_limit_exceeded",
                    "code": 429,
                }
            }
        )
    ],
}


def sse(*chunks: dict[str, Any]) -> list[str]:
    return [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-last",
        "object": "chat.completion.chunk",
        "created": int(NOW),
        "model": "sim-alpha",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


# An answer that says it was the last request of the window, which resets in 45 s.
LAST_REQUEST = {
    "status": 200,
    "headers": {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "45s"},
    "content_type": "text/event-stream",
    "parts": sse(chunk({"role": "assistant", "content": "All clear."}), chunk({}, "stop")),
}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


@pytest.fixture
def pair(make_gateway, sim, clock, tmp_path):
    """Start (or restart, on the same records) a panel gateway and a route gateway: alpha is
    the first member of both `duo` (a panel) and `crew` (route mode). Seats are streamed from
    upstream, as a route member always is, so one scripted reply suits both."""
    raw = bench_raw(sim.url, max_explorers=0, reserves=2, route_explore=0, stream_seats="always")
    raw["collections"]["duo"] = {"members": ["alpha", "gamma"], "shape": "review"}
    raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}

    def start() -> tuple[Any, Any]:
        panel = make_gateway(raw, store=tmp_path / "panel.db", clock=clock.now)
        route = make_gateway(raw, store=tmp_path / "route.db", clock=clock.now)
        return panel, route

    return start


def cooling(gw, alias: str = "alpha") -> dict[str, Any]:
    row = next(m for m in gw.http.get("/bench/models").json()["models"] if m["alias"] == alias)
    return {name: row[name] for name in COOLING}


def ask_both(panel, route) -> tuple[dict[str, Any], dict[str, Any]]:
    """One panel on `duo`, one route turn on `crew`: alpha's seat, and the turn's record."""
    completion, _ = panel.ask("bench/duo")
    seat = completion.model_extra["bench"]["seats"][0]
    turn, _ = route.ask("bench/crew")
    call = route.http.get(f"/bench/calls/{turn.model_extra['bench']['call']}").json()
    return seat, call


def test_a_daily_limit_429_cools_a_route_member_as_it_cools_a_panel_seat(pair, sim, clock):
    panel, route = pair()
    sim.set(served("alpha"), script=DAILY_429)
    seat, turn = ask_both(panel, route)
    assert seat["alias"] == "alpha" and seat["status"] == "rate_limited"
    assert turn["alias"] == "gamma"  # the turn went on to the next member
    failed = turn["failed_over"][0]
    assert failed["alias"] == "alpha" and failed["status"] == "rate_limited"
    assert failed["error"] == seat["error"]  # cooling 7200 s, both

    learned = cooling(panel)
    assert learned["cooling_until"] == DAILY_RESET  # the stated reset, not a default minute
    assert "daily limit" in learned["cooling_why"]
    assert "free-models-per-day" in learned["cooling_why"]
    assert learned["cooling_source"] == "header x-ratelimit-reset"
    assert cooling(route) == learned

    clock.advance(600)
    panel, route = pair()  # a restart of each, on its own records and a board of its own
    assert cooling(panel) == learned
    assert cooling(route) == learned
    seat, turn = ask_both(panel, route)
    assert seat["status"] == "cooling" and "daily limit" in seat["error"]
    assert turn["alias"] == "gamma"  # a cooling member is put last: another takes the turn
    assert len(sim.log(served("alpha"))) == 2  # once by each gateway, never again


def test_an_answer_saying_no_requests_remain_cools_a_route_member_as_a_panel_seat(pair, sim, clock):
    panel, route = pair()
    sim.set(served("alpha"), script=LAST_REQUEST)
    seat, turn = ask_both(panel, route)
    assert (seat["alias"], seat["status"], seat["answer"]) == ("alpha", "ok", "All clear.")
    assert (turn["alias"], turn["status"], turn["failed_over"]) == ("alpha", "ok", [])

    learned = cooling(panel)
    assert learned["cooling_until"] == NOW + 45
    assert learned["cooling_source"] == "header x-ratelimit-reset-requests"
    assert "no requests remaining" in learned["cooling_why"]
    assert cooling(route) == learned

    clock.advance(10)
    panel, route = pair()
    assert cooling(panel) == learned
    assert cooling(route) == learned
    seat, turn = ask_both(panel, route)
    assert seat["status"] == "cooling" and "no requests remaining" in seat["error"]
    assert turn["alias"] == "gamma"
    assert [r["status"] for r in sim.log(served("alpha"))] == [200, 200]  # never a 429


# A provider refusing a prompt over the model's window, which it names.
TOO_LONG_400 = {
    "status": 400,
    "content_type": "application/json",
    "parts": [
        json.dumps(
            {
                "error": {
                    "message": "This model's maximum context length is 60 tokens. However, "
                    "your messages resulted in 90 tokens.",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            }
        )
    ],
}


def test_a_context_window_a_route_member_is_refused_with_is_learned_as_a_panel_seats_is(pair, sim):
    panel, route = pair()
    sim.set(served("alpha"), script=TOO_LONG_400)
    seat, turn = ask_both(panel, route)
    assert (seat["alias"], seat["status"]) == ("alpha", "error")
    assert "maximum context length is 60" in seat["error"]
    assert turn["alias"] == "gamma" and turn["failed_over"][0]["alias"] == "alpha"

    sim.set(served("alpha"))  # healthy again: only the window it named keeps it out
    for gw in pair():  # restarted, on each one's own records
        completion, _ = gw.ask("bench/duo", content="word " * 200)
        skipped = completion.model_extra["bench"]["skipped"]
        assert [s["alias"] for s in skipped] == ["alpha"]
        assert "context window" in skipped[0]["why"]
    assert len(sim.log(served("alpha"))) == 2  # once by each gateway, before the restart
