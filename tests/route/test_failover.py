"""The field's failover matrix (docs/reliability.md, "Route mode"), one test per scenario: a
collection of a faulty primary and healthy fallbacks, asked through the official SDKs, against
the real gateway and litellm calling the simulated upstream. Each test asserts what the client
gets (one whole answer in its format, from whom, how soon) or the error it is told."""

from __future__ import annotations

import socket
import time

import httpx
import ollama
import openai
import pytest

from tests.helpers.bench import bench_raw
from tests.helpers.clocks import ManualClock

QUESTION = [{"role": "user", "content": "What is 2 + 2?"}]
MODEL = "bench/crew:route"


def _asked(crew, headers: dict[str, str] | None = None, messages=QUESTION):
    raw = crew.client.chat.completions.with_raw_response.create(
        model=MODEL, messages=messages, extra_headers=headers or {}
    )
    return raw.parse(), raw.headers


def _flapping_crew(make_gateway, sim, clock, **lifecycle):
    """crew in route mode on a clock the test moves, with the contract's lifecycle defaults
    (a benched member's first trial 5 s after, each failed trial doubling it, up to 60 s)
    unless *lifecycle* says otherwise."""
    raw = bench_raw(sim.url, route_explore=0, first_token_s=2, keepalive_s=0.2)
    raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}
    if lifecycle:
        raw["lifecycle"] = lifecycle
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, latency_s=0.01)
    return make_gateway(raw, clock=clock.now)


def _flaps(crew, sim, clock, down_s: float, until_s: float) -> list[tuple[float, str]]:
    """The field's schedule on the gateway's clock: identical one-shot requests 4 s apart,
    alpha answering 503 for the first *down_s* seconds; (when, who answered) of each."""
    answered = []
    at = 0.0
    sim.set("sim-alpha", status=503, latency_s=0.01)
    while at <= until_s:
        if at >= down_s:
            sim.set("sim-alpha", latency_s=0.01)  # it is up again
        reply, headers = _asked(crew)
        assert reply.model == headers["x-bench-model"]
        assert reply.choices[0].message.content.startswith("Simulated answer from ")
        answered.append((at, reply.model))
        clock.advance(4)
        at += 4
    return answered


def test_a_primary_down_for_a_minute_gets_its_one_shot_turns_back_at_its_next_trial(
    make_gateway, sim
):
    """S08 as the field plays it (503 for 60 s, one-shot requests 4 s apart), with the
    contract's default lifecycle: every request is answered at once by the fallback while alpha
    is down; alpha's three failures bench it (at 8 s), its trials at 16, 28 and 48 s fail (the
    wait doubling: 5, 10, 20, 40 s), so it is back at its next trial, 88 s: 28 s after it is up
    (a minute at worst, `lifecycle.backoff_max_s`). docs/reliability.md, S08."""
    clock = ManualClock()
    crew = _flapping_crew(make_gateway, sim, clock)
    answered = _flaps(crew, sim, clock, down_s=60, until_s=100)
    assert {model for at, model in answered if at < 88} == {"gamma"}  # failed over at once
    assert {model for at, model in answered if at >= 88} == {"alpha"}  # back at its trial
    assert len(sim.log("sim-alpha")) == 3 + 3 + 4  # failures, failed trials, then its turns


def test_a_primary_down_for_a_few_seconds_gets_its_turns_back_as_soon_as_it_is_up(
    make_gateway, sim
):
    """The same with a short outage (503 for 6 s): two failures do not bench it, so the first
    request after it is up is its own again."""
    clock = ManualClock()
    crew = _flapping_crew(make_gateway, sim, clock)
    answered = _flaps(crew, sim, clock, down_s=6, until_s=20)
    assert answered == [(0, "gamma"), (4, "gamma"), (8, "alpha"), (12, "alpha"), (16, "alpha"),
                        (20, "alpha")]  # fmt: skip


def test_with_a_backoff_no_longer_than_the_requests_spacing_the_primary_is_back_at_once(
    make_gateway, sim
):
    """S08 as the field plays it, `lifecycle.backoff_max_s: 4` (the requests' spacing): a
    trial on every request while it is down, so the first request after it is up is its own."""
    clock = ManualClock()
    crew = _flapping_crew(make_gateway, sim, clock, backoff_max_s=4)
    answered = _flaps(crew, sim, clock, down_s=60, until_s=76)
    assert {model for at, model in answered if at < 60} == {"gamma"}
    assert {model for at, model in answered if at >= 60} == {"alpha"}


def test_the_reported_model_is_the_member_that_answered_in_every_shape(crew, sim):
    sim.set("sim-alpha", status=500)
    reply, headers = _asked(crew)
    assert reply.model == headers["x-bench-model"] == "gamma"
    body = {"model": MODEL, "messages": QUESTION, "stream": True}
    with httpx.stream("POST", f"{crew.url}/v1/chat/completions", json=body) as response:
        chunks = [line for line in response.iter_lines() if line.startswith("data: {")]
    assert chunks and all('"model":"gamma"' in line for line in chunks)
    client = ollama.Client(host=crew.url)
    assert client.chat(model=MODEL, messages=QUESTION, stream=False).model == "gamma"
    lines = list(client.chat(model=MODEL, messages=QUESTION, stream=True))
    assert {line.model for line in lines} == {"gamma"}


@pytest.fixture
def collection(make_gateway, sim):
    """`crew` in route mode (alpha, gamma, delta) with the gateway settings a test gives."""

    def make(store=None, **gateway):
        raw = bench_raw(sim.url, route_explore=0, keepalive_s=0.2, **gateway)
        raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}
        for served in ("sim-alpha", "sim-gamma", "sim-delta"):
            sim.set(served, latency_s=0.01)
        return make_gateway(raw, store=store)

    return make


def _streamed(gw, messages=QUESTION) -> tuple[str, dict, float]:
    """A streamed chat turn through the SDK: its text, its `bench`, its seconds."""
    began = time.monotonic()
    text, bench = "", {}
    for chunk in gw.client.chat.completions.create(model=MODEL, messages=messages, stream=True):
        text += "".join(c.delta.content or "" for c in chunk.choices)
        bench = (chunk.model_extra or {}).get("bench") or bench
    return text, bench, time.monotonic() - began


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_a_first_token_after_20_s_is_handed_on_at_the_default_first_token_s(
    collection, sim, stream
):
    gw = collection(seat_timeout_s=60)  # first_token_s: its default, 10 s
    sim.set("sim-alpha", think_s=20)  # its stream opens at once, its first piece after 20 s
    began = time.monotonic()
    if stream:
        text, bench, _ = _streamed(gw)
    else:
        reply, _ = _asked(gw)
        text, bench = reply.choices[0].message.content, reply.model_extra["bench"]
    seconds = time.monotonic() - began
    assert text.startswith("Simulated answer from sim-gamma.") and bench["alias"] == "gamma"
    assert bench["failed_over"][0]["error"] == "no first piece within 10 s"
    assert 10 <= seconds < 15  # within the matrix's 15 s, long before the primary's 20 s


def test_a_reasoning_model_thinking_aloud_is_never_left_for_silence(collection, sim):
    gw = collection(first_token_s=1)
    sim.set("sim-alpha", reasoning="Let me add two and two carefully now.", think_s=2.5)
    thoughts = []
    for chunk in gw.client.chat.completions.create(model=MODEL, messages=QUESTION, stream=True):
        thoughts += [c.delta.model_extra.get("reasoning_content") for c in chunk.choices]
    assert "".join(filter(None, thoughts)) == "Let me add two and two carefully now."
    assert [r["model"] for r in sim.log()] == ["sim-alpha"]  # its thinking is its first piece


def test_the_last_member_left_waits_for_its_first_piece(collection, sim):
    gw = collection(first_token_s=1, seat_timeout_s=10)
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, think_s=2)  # all slow: leaving the last early would fail the turn
    text, bench, seconds = _streamed(gw)
    assert bench["alias"] == "delta" and text.startswith("Simulated answer from sim-delta.")
    assert [f["status"] for f in bench["failed_over"]] == ["timeout", "timeout"]
    assert 4 <= seconds < 7


def test_a_long_prompt_is_given_longer_to_its_first_piece(collection, sim):
    gw = collection(first_token_s=1)
    sim.set("sim-alpha", think_s=2)
    long = [{"role": "user", "content": "Read this. " + "word " * 8000}]  # ~11,000 tokens: +2.2 s
    _, bench, _ = _streamed(gw, long)
    assert bench["alias"] == "alpha" and bench["failed_over"] == []
    _, bench, _ = _streamed(gw)  # a short one is left after 1 s
    assert bench["alias"] == "gamma"


def test_a_conversation_keeps_its_member_through_a_short_retry_after(collection, sim):
    gw = collection(first_token_s=2)
    first, headers = _asked(gw)
    assert first.model == "alpha"
    sim.set("sim-alpha", status=429, retry_after=1, fail_times=1, latency_s=0.01)
    later = [*QUESTION, {"role": "assistant", "content": first.choices[0].message.content}]
    later.append({"role": "user", "content": "And 3 + 3?"})
    again = {"X-Bench-Conversation": headers["x-bench-conversation"]}
    reply, headers = _asked(gw, again, later)
    assert reply.model == headers["x-bench-model"] == "alpha"  # the conversation keeps its model
    _, limited, answered = sim.log("sim-alpha")  # its first turn's, then this turn's two
    assert answered["started"] - limited["started"] >= 1
    assert sim.log("sim-gamma") == [] and sim.log("sim-delta") == []


def test_a_retry_after_longer_than_route_wait_s_fails_over_at_once(collection, sim, tmp_path):
    gw = collection(first_token_s=2, route_wait_s=1.5)
    sim.set("sim-alpha", status=429, retry_after=2)
    reply, _ = _asked(gw)
    assert reply.model == "gamma" and len(sim.log("sim-alpha")) == 1
    assert reply.model_extra["bench"]["failed_over"][0]["status"] == "rate_limited"
    # 0: never waits (a store of its own: the first gateway's cooldown of alpha is kept in its)
    waiting = collection(first_token_s=2, route_wait_s=0, store=tmp_path / "other.db")
    sim.state.reset()
    sim.set("sim-alpha", status=429, retry_after=1)
    reply, _ = _asked(waiting)
    assert reply.model == "gamma" and len(sim.log("sim-alpha")) == 1


def test_a_short_retry_after_on_a_member_not_holding_the_conversation_fails_over(collection, sim):
    gw = collection(first_token_s=2)
    sim.set("sim-alpha", status=503)  # the member the conversation was to have
    sim.set("sim-gamma", status=429, retry_after=1)
    reply, _ = _asked(gw)
    assert reply.model == "delta"
    assert [len(sim.log(m)) for m in ("sim-alpha", "sim-gamma", "sim-delta")] == [1, 1, 1]


def test_a_short_retry_after_is_waited_out_only_once_and_a_long_one_never(
    collection, sim, tmp_path
):
    gw = collection(first_token_s=2)
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, status=429, retry_after=1)
    began = time.monotonic()
    with pytest.raises(openai.RateLimitError) as caught:
        _asked(gw)
    assert 1 <= time.monotonic() - began < 3
    assert [len(sim.log(m)) for m in ("sim-alpha", "sim-gamma", "sim-delta")] == [2, 1, 1]
    assert int(caught.value.response.headers["retry-after"]) >= 1
    # a gateway with no cooldowns yet (the first one's are kept in its own store)
    other = collection(first_token_s=2, store=tmp_path / "other.db")
    sim.state.reset()
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, status=429, retry_after=30)
    began = time.monotonic()
    with pytest.raises(openai.RateLimitError):
        _asked(other)
    assert time.monotonic() - began < 1 and len(sim.log("sim-alpha")) == 1


@pytest.mark.parametrize(
    ("fault", "within_s"),
    [
        ({"status": 429, "retry_after": 30}, 1),
        ({"status": 429}, 1),
        ({"status": 503}, 1),
        ({"empty": True}, 1),
        ({"hang": True}, 2.5),  # silent: left after first_token_s (1 s here, 10 s by default)
    ],
    ids=["429 with Retry-After", "429 without", "503", "empty answer", "silent"],
)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_a_primary_that_fails_before_its_first_piece_costs_one_attempt(
    collection, sim, fault, within_s, stream
):
    gw = collection(first_token_s=1)
    sim.set("sim-alpha", **fault)
    began = time.monotonic()
    if stream:
        text, bench, _ = _streamed(gw)
        model = bench["alias"]
    else:
        reply, _ = _asked(gw)
        text, bench, model = (
            reply.choices[0].message.content,
            reply.model_extra["bench"],
            reply.model,
        )
    assert time.monotonic() - began < within_s
    assert model == "gamma" and text == "Simulated answer from sim-gamma. You said: What is 2 + 2?"
    assert [f["alias"] for f in bench["failed_over"]] == ["alpha"]
    assert len(sim.log("sim-alpha")) == 1  # one attempt, no hidden retry


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_a_500_every_time_is_asked_again_once_then_handed_on(collection, sim, stream):
    gw = collection(first_token_s=1)
    sim.set("sim-alpha", status=500)
    if stream:
        text, bench, _ = _streamed(gw)
    else:
        reply, _ = _asked(gw)
        text, bench = reply.choices[0].message.content or "", reply.model_extra["bench"]
    assert bench["alias"] == "gamma" and text.startswith("Simulated answer from sim-gamma.")
    assert [len(sim.log(m)) for m in ("sim-alpha", "sim-gamma")] == [2, 1]  # never a second
    once, twice = bench["failed_over"]
    assert once["alias"] == twice["alias"] == "alpha" and "asked again" in once["error"]


def test_a_500_after_the_first_piece_is_never_asked_again(collection, sim):
    gw = collection(first_token_s=1)
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, answer="one two three four five six")
    sim.set("sim-alpha", error_after=1, answer="one two three four five six")  # a 500 event
    text, bench, _ = _streamed(gw)
    assert text == "one two three four five six" and bench["continued_by"] == "gamma"
    assert len(sim.log("sim-alpha")) == 1  # continued by the next member, not asked again


def test_a_primary_whose_connection_is_refused_costs_one_attempt(make_gateway, sim):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens once it is closed
    raw = bench_raw(sim.url, route_explore=0, first_token_s=1)
    raw["model_list"][0]["litellm_params"]["api_base"] = f"http://127.0.0.1:{port}/v1"
    raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}
    gw = make_gateway(raw)
    began = time.monotonic()
    reply, _ = _asked(gw)
    assert reply.model == "gamma" and time.monotonic() - began < 1
    (refused,) = reply.model_extra["bench"]["failed_over"]
    assert refused["alias"] == "alpha" and refused["status"] == "error"
