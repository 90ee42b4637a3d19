"""A route turn's body is read as a panel's is: a heavy one parsed in the body reader's child
process while the gateway keeps answering others, junk `tools` refused, and a prompt no
member's context window can hold refused with 413 before any member is called. Through the
real gateway on uvicorn, the simulated upstream's request log the witness."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import openai
import pytest

from tests.helpers.bench import assert_openai_error, bench_raw, nothing_happened

MODEL = "bench/crew:route"
QUESTION = [{"role": "user", "content": "hi"}]


@pytest.fixture
def crew_of(make_gateway, sim):
    """A gateway whose `crew` (alpha, gamma, delta) answers in route mode; *windows*: each
    member's configured context window, if any."""

    def make(**windows: int):
        raw = bench_raw(sim.url, route_explore=0, first_token_s=2, keepalive_s=0.2)
        raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}
        for model in raw["model_list"]:
            if model["model_name"] in windows:
                model["bench"]["context_window"] = windows[model["model_name"]]
        return make_gateway(raw)

    return make


def _chunks(body: bytes, sent: threading.Event) -> Iterator[bytes]:
    """*body* a megabyte at a time; *sent* is set once the last one has been written."""
    for start in range(0, len(body), 1_000_000):
        yield body[start : start + 1_000_000]
    sent.set()


def test_a_heavy_route_body_is_read_off_the_loop_while_healthz_is_answered(crew_of, sim):
    gw = crew_of()
    zeros = b",".join([b"0"] * 4_000_000)
    body = b'{"model": "' + MODEL.encode() + b'", "messages": [{"role": "user", "content": '
    body += b'"hi"}], "tools": [' + zeros + b"]}"
    assert len(body) > 8_000_000
    sent = threading.Event()
    order: list[str] = []
    replies: list[httpx.Response] = []

    def turn() -> None:
        headers = {"Content-Type": "application/json"}
        with httpx.Client(base_url=gw.url, timeout=120) as client:
            replies.append(
                client.post("/v1/chat/completions", content=_chunks(body, sent), headers=headers)
            )
        order.append("turn")

    sender = threading.Thread(target=turn)
    sender.start()
    assert sent.wait(120), "the body was never sent"
    with httpx.Client(base_url=gw.url, timeout=120) as health:
        while sender.is_alive():
            assert health.get("/healthz").status_code == 200
            order.append("health")
    sender.join()
    # A /healthz asked once the whole body was in was answered before the turn's reply: the
    # body was parsed elsewhere while the event loop went on answering.
    assert "health" in order and order.index("health") < order.index("turn"), order
    error = assert_openai_error(replies[0], 400)
    assert error["param"] == "tools"
    nothing_happened(sim, gw)


@pytest.mark.parametrize(
    "tools",
    [
        pytest.param("search", id="a string"),
        pytest.param([0, 1], id="numbers"),
        pytest.param(
            [{"type": "function", "function": {"name": f"f{i}"}} for i in range(129)],
            id="129 of them",
        ),
    ],
)
def test_junk_tools_on_a_turn_are_refused_before_any_member_is_called(crew_of, sim, tools):
    gw = crew_of()
    body = {"model": MODEL, "messages": QUESTION, "tools": tools}
    error = assert_openai_error(gw.http.post("/v1/chat/completions", json=body), 400)
    assert error["param"] == "tools"
    assert "128" in error["message"]
    nothing_happened(sim, gw)


def test_more_messages_than_max_messages_on_a_turn_are_refused(make_gateway, sim):
    raw = bench_raw(sim.url, max_messages=5, route_explore=0)
    raw["collections"]["crew"] = {"members": ["alpha", "gamma"], "reply": "route"}
    gw = make_gateway(raw)
    body = {"model": MODEL, "messages": QUESTION * 6}
    error = assert_openai_error(gw.http.post("/v1/chat/completions", json=body), 400)
    assert error["param"] == "messages"
    nothing_happened(sim, gw)


def test_a_prompt_no_members_window_holds_is_a_413_and_calls_nobody(crew_of, sim):
    gw = crew_of(alpha=1000, gamma=1000, delta=2000)
    long = "word " * 4000  # ~5,500 tokens as the gateway estimates them
    with pytest.raises(openai.APIStatusError) as caught:
        gw.ask(MODEL, long)
    assert caught.value.status_code == 413
    message = caught.value.message
    assert "fits no member of crew" in message
    assert "alpha: context window 1000 tokens" in message
    assert "delta: context window 2000 tokens" in message
    nothing_happened(sim, gw)


def test_a_prompt_one_member_can_hold_is_still_answered(crew_of, sim):
    gw = crew_of(alpha=1000, gamma=1000)  # delta's window is not known: it may hold it
    sim.set("sim-alpha", answer="from alpha")
    completion, _ = gw.ask(MODEL, "word " * 4000)
    assert completion.choices[0].message.content
    assert len(sim.log()) >= 1
