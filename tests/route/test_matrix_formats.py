"""The failover matrix's cells S01 (a short Retry-After), S03 (one 500), S07 (a slow first
token), S13 (a content filter's refusal) and a continued answer's usage (docs/reliability.md,
"The failover matrix"), each asked in every format that has route mode, plain and streamed,
through the format's official SDK, against the real gateway calling the simulated upstream."""

from __future__ import annotations

import json

import httpx
import pytest

from routing import estimate_tokens
from tests.helpers.bench import bench_raw
from tests.helpers.route_formats import FORMATS, ask, refused
from tests.helpers.waiting import wait_for

QUESTION = "What is 2 + 2?"
MEMBERS = ("sim-alpha", "sim-gamma", "sim-delta")

every_format = pytest.mark.parametrize("form", FORMATS)
plain_and_streamed = pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])


def answer_of(served: str, question: str = QUESTION) -> str:
    return f"Simulated answer from {served}. You said: {question}"


@pytest.fixture
def collection(make_gateway, sim):
    """`crew` in route mode (alpha, gamma, delta; no exploring) with the settings a test gives."""

    def make(**gateway):
        raw = bench_raw(sim.url, route_explore=0, keepalive_s=0.2, **gateway)
        raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}
        for served in MEMBERS:
            sim.set(served, latency_s=0.01)
        return make_gateway(raw)

    return make


def last_turn(gw) -> dict:
    """The newest conversation's last turn, as recorded (a stream's once it has ended)."""
    found: list[dict] = []

    def recorded() -> bool:
        (newest,) = gw.http.get("/bench/panels", params={"limit": 1}).json()["panels"]
        found[:] = gw.http.get(f"/bench/conversations/{newest['id']}").json()["turns"]
        return bool(found)

    wait_for("the turn's record", recorded, within=10)
    return found[-1]


@every_format
@plain_and_streamed
def test_a_short_retry_after_on_the_conversations_member_is_waited_out(
    collection, sim, form, stream
):
    """S01: a 429 with `Retry-After: 2` on the member that holds the conversation."""
    gw = collection()
    sim.set("sim-alpha", status=429, retry_after=2, fail_times=1)
    reply = ask(gw, form, stream, QUESTION)
    assert reply.model == "alpha" and reply.text == answer_of("sim-alpha")
    limited, answered = sim.log("sim-alpha")
    assert answered["started"] - limited["started"] >= 2  # the stated wait, waited out
    assert sim.log("sim-gamma") == [] and sim.log("sim-delta") == []
    turn = last_turn(gw)
    assert (turn["alias"], turn["status"]) == ("alpha", "ok")
    (waited,) = turn["failed_over"]
    assert waited["status"] == "rate_limited" and "asked again after" in waited["error"]


@every_format
@plain_and_streamed
def test_one_500_before_the_first_token_is_asked_again_once(collection, sim, form, stream):
    """S03: a provider's one-off 500."""
    gw = collection()
    sim.set("sim-alpha", status=500, fail_times=1)
    reply = ask(gw, form, stream, QUESTION)
    assert reply.model == "alpha" and reply.text == answer_of("sim-alpha")
    assert [r["status"] for r in sim.log("sim-alpha")] == [500, 200]
    assert sim.log("sim-gamma") == []
    assert last_turn(gw)["status"] == "ok"


@every_format
@plain_and_streamed
def test_a_first_token_later_than_first_token_s_is_handed_on(collection, sim, form, stream):
    """S07, scaled: the first piece after 3 s, left at `first_token_s` (1 s here; 10 s by
    default, which tests/route/test_failover.py runs at the real 20 s)."""
    gw = collection(first_token_s=1)
    sim.set("sim-alpha", think_s=3)
    reply = ask(gw, form, stream, QUESTION)
    assert reply.model == "gamma" and reply.text == answer_of("sim-gamma")
    assert len(sim.log("sim-alpha")) == 1  # left, never asked again
    (left,) = last_turn(gw)["failed_over"]
    assert (left["alias"], left["error"]) == ("alpha", "no first piece within 1 s")


CONTENT_FILTER_SSE = {
    "status": 200,
    "content_type": "text/event-stream",
    "parts": [
        'data: {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", '
        '"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, '
        '"finish_reason": null}]}\n\n',
        'data: {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", '
        '"choices": [{"index": 0, "delta": {}, "finish_reason": "content_filter"}]}\n\n',
        "data: [DONE]\n\n",
    ],
}
SAFETY = "Your request was rejected as a result of our safety system."


@every_format
@plain_and_streamed
@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ({"status": 400, "error_message": SAFETY}, "safety system"),
        ({"script": CONTENT_FILTER_SSE}, "finish_reason content_filter"),
    ],
    ids=["400 naming a safety system", "200 finishing content_filter"],
)
def test_a_content_filters_refusal_is_the_clients_400_never_handed_on(
    collection, sim, form, stream, fault, said
):
    """S13: routing round one provider's filter would be a policy bypass."""
    gw = collection()
    sim.set("sim-alpha", **fault)
    refusal = refused(gw, form, stream, QUESTION)
    assert refusal.status == 400
    assert "content policy" in refusal.message and said in refusal.message
    assert len(sim.log("sim-alpha")) == 1 and sim.log("sim-gamma") == sim.log("sim-delta") == []
    turn = last_turn(gw)
    assert (turn["alias"], turn["status"]) == ("alpha", "error")
    assert turn["error_class"] == "content_filter"
    assert said in turn["error"]


ANSWER = "one two three four five six seven eight nine ten eleven twelve"
COUNT = "Count to twelve."


@every_format
def test_a_continued_streams_usage_counts_every_call_that_made_it(make_gateway, sim, form):
    """After a continuation, usage is the sum of the calls: the one that broke off (its own
    report, else the gateway's estimate of what it was sent and said) and the one that
    finished the answer."""
    raw = bench_raw(sim.url, route_explore=0, first_token_s=2, keepalive_s=0.2)
    raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}
    for entry in raw["model_list"]:  # gamma takes a prefill: it writes on from alpha's text
        if entry["model_name"] == "gamma":
            entry["model_info"] = {"supports_assistant_prefill": True}
    gw = make_gateway(raw)
    for served in MEMBERS:
        sim.set(served, answer=ANSWER, latency_s=0.01)
    sim.set("sim-alpha", answer=ANSWER, stream_cut_after=1)
    reply = ask(gw, form, True, COUNT)
    assert reply.text == ANSWER and reply.model == "alpha"
    (continuing,) = sim.log("sim-gamma")
    own = _usage_of(sim, continuing["body"])  # what the simulator counts for gamma's call
    sent = "one two three "  # what alpha said before it broke off, as the client had it
    broke = (estimate_tokens(len(COUNT)), estimate_tokens(len(sent)))
    summed = (own[0] + broke[0], own[1] + broke[1])
    assert reply.tokens == summed
    turn = last_turn(gw)
    assert (turn["tokens_in"], turn["tokens_out"]) == summed


def _usage_of(sim, body: dict) -> tuple[int, int]:
    """The simulator's usage for *body* asked again whole (plain): its own count of that call."""
    again = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    reply = httpx.post(f"{sim.url}/v1/chat/completions", json=again, timeout=10)
    usage = json.loads(reply.content)["usage"]
    return usage["prompt_tokens"], usage["completion_tokens"]
