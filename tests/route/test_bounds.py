"""A route stream's bounds: a member that stalls mid-answer (`gateway.stall_s`), a stream that
goes on too long (`gateway.route_stream_max_s`), an answer too large (`gateway.max_answer_bytes`,
plain and streamed, read piece by piece while `/healthz` keeps answering). Through the official
SDKs, against the real gateway and litellm calling the simulated upstream."""

from __future__ import annotations

import time

import httpx
import openai
import pytest

from tests.helpers.bench import bench_raw, while_polling_health
from tests.helpers.clocks import wait_until

# CPU-heavy, and timed against /healthz: no other worker runs a test meanwhile (conftest.py)
pytestmark = pytest.mark.alone

ANSWER = "one two three four five six seven eight nine ten eleven twelve"
MODEL = "bench/crew:route"
QUESTION = [{"role": "user", "content": "Count to twelve."}]
HEALTH_S = 1.0  # /healthz answers within this, whatever a turn's member sends


@pytest.fixture
def crew_with(make_gateway, sim):
    def make(**gateway):
        settings = {"route_explore": 0, "first_token_s": 2, "keepalive_s": 0.2, **gateway}
        raw = bench_raw(sim.url, **settings)
        raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}
        for served in ("sim-alpha", "sim-gamma", "sim-delta"):
            sim.set(served, answer=ANSWER, latency_s=0.01)
        return make_gateway(raw)

    return make


def _stream(gw, seen: list[str] | None = None) -> tuple[str, dict]:
    """A streamed chat turn through the SDK: its text and its `bench`; *seen* gets its
    conversation as soon as its headers are in (the turn may then end with an error)."""
    raw = gw.client.chat.completions.with_raw_response.create(
        model=MODEL, messages=QUESTION, stream=True
    )
    if seen is not None:
        seen.append(raw.headers["x-bench-conversation"])
    text, bench = "", {}
    for chunk in raw.parse():
        text += "".join(c.delta.content or "" for c in chunk.choices)
        bench = (chunk.model_extra or {}).get("bench") or bench
    return text, bench


def _turns(gw, conversation: str) -> list[dict]:
    for _ in range(100):  # a streamed turn is recorded as its stream ends
        turns = gw.http.get(f"/bench/conversations/{conversation}").json().get("turns")
        if turns:
            return turns
        time.sleep(0.05)
    raise AssertionError("the turn was not recorded")


def test_a_member_that_stalls_mid_answer_is_continued_after_stall_s(crew_with, sim):
    gw = crew_with(stall_s=0.5)
    sim.set("sim-alpha", answer=ANSWER, stream_stall_after=1)
    began = time.monotonic()
    text, bench = _stream(gw)
    assert text == ANSWER and bench["continued_by"] == "gamma"
    assert 0.5 <= time.monotonic() - began < 3
    assert "stalled mid-answer: nothing within 0.5 s" in bench["failed_over"][0]["error"]
    wait_until(lambda: sim.log("sim-alpha")[0]["outcome"] == "stalled")  # its stream closed


def test_a_stall_nobody_continues_is_recorded_with_the_wait_it_was_given(crew_with, sim):
    gw = crew_with(stall_s=0.5)
    sim.set("sim-alpha", answer=ANSWER, stream_stall_after=1)
    for other in ("sim-gamma", "sim-delta"):
        sim.set(other, status=500)
    seen: list[str] = []
    with pytest.raises(openai.APIError, match="nothing within 0.5 s"):
        _stream(gw, seen)
    (turn,) = _turns(gw, *seen)
    assert turn["status"] == "error" and "nothing within 0.5 s" in turn["error"]
    assert "within 0 s" not in turn["error"] and turn["answer"] == "one two three "


def test_a_read_litellm_times_out_mid_stream_names_the_calls_timeout(crew_with, sim):
    gw = crew_with(seat_timeout_s=1, stall_s=30)  # litellm's own read timeout comes first
    sim.set("sim-alpha", answer=ANSWER, stream_stall_after=1)
    for other in ("sim-gamma", "sim-delta"):
        sim.set(other, status=500)
    seen: list[str] = []
    with pytest.raises(openai.APIError):
        _stream(gw, seen)
    (turn,) = _turns(gw, *seen)
    assert "nothing within 1 s" in turn["error"] and "within 0 s" not in turn["error"]


def test_a_route_stream_past_route_stream_max_s_ends_with_an_error(crew_with, sim):
    gw = crew_with(route_stream_max_s=1, stall_s=5)
    sim.set("sim-alpha", answer=" ".join(["word"] * 90), chunk_delay_s=0.2)  # 6 s of chunks
    began = time.monotonic()
    seen: list[str] = []
    with pytest.raises(openai.APIError, match="route_stream_max_s"):
        _stream(gw, seen)
    assert time.monotonic() - began < 2.5
    assert sim.log("sim-gamma") == []  # the client's bound: nobody continues it
    (turn,) = _turns(gw, *seen)
    assert turn["status"] == "error" and "route_stream_max_s" in turn["error"]


def test_a_streamed_answer_over_max_answer_bytes_ends_there_and_health_answers(crew_with, sim):
    gw = crew_with()  # max_answer_bytes: 4,000,000 by default
    sim.set("sim-alpha", answer_bytes=50_000_000, piece_bytes=65536)
    body = {"model": MODEL, "messages": QUESTION, "stream": True}

    def send() -> httpx.Response:
        return httpx.post(f"{gw.url}/v1/chat/completions", json=body, timeout=60)

    response, worst = while_polling_health(gw, send)
    assert worst < HEALTH_S
    assert "over the limit of 4000000 bytes" in response.text
    relayed = response.text.count("All work and no play.")
    assert 0 < relayed * 22 <= 4_000_000 + 65536  # read no further than the limit
    # not read to its end: the gateway hung up on it (a simulator that was never hung up on
    # would wait on a full socket forever: the limit only bounds how long a loaded machine takes)
    wait_until(lambda: sim.log("sim-alpha")[0]["outcome"] == "client_disconnected", timeout=30)
    assert sim.log("sim-gamma") == []
    (turn,) = _turns(gw, response.headers["x-bench-conversation"])
    assert turn["status"] == "error" and len(turn["answer"]) <= 4_000_000


def test_a_plain_answer_over_max_answer_bytes_is_left_for_the_next_member(crew_with, sim):
    gw = crew_with()
    sim.set("sim-alpha", answer_bytes=50_000_000, piece_bytes=65536)

    def send() -> httpx.Response:
        body = {"model": MODEL, "messages": QUESTION}
        return httpx.post(f"{gw.url}/v1/chat/completions", json=body, timeout=60)

    response, worst = while_polling_health(gw, send)
    assert worst < HEALTH_S and response.status_code == 200
    reply = response.json()
    assert reply["model"] == "gamma" and reply["choices"][0]["message"]["content"] == ANSWER
    (broke,) = reply["bench"]["failed_over"]
    assert broke["alias"] == "alpha" and "over the limit of 4000000 bytes" in broke["error"]
    wait_until(lambda: sim.log("sim-alpha")[0]["outcome"] == "client_disconnected", timeout=30)


def test_max_answer_bytes_holds_in_a_streamed_turn_of_small_pieces(crew_with, sim):
    gw = crew_with(max_answer_bytes=20)
    with pytest.raises(openai.APIError, match="over the limit of 20 bytes"):
        _stream(gw)
    for other in ("sim-gamma", "sim-delta"):
        sim.set(other, answer="short")
    text = gw.client.chat.completions.create(model=MODEL, messages=QUESTION)
    assert text.choices[0].message.content == "short" and text.model == "gamma"
