"""A member's stream that breaks halfway is a broken stream through either reader, and route mode
continues it on the next member: the body ending cleanly with neither a finish nor `[DONE]`,
the connection reset, the member going silent. Streamed, the client gets one whole answer (the
next member goes on from the text already sent); plain, the next member answers whole. Real
gateways, litellm's reader and the direct one, the official OpenAI SDK as the client."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers.bench import bench_raw

QUESTION = [{"role": "user", "content": "Count to six."}]
FIRST_HALF = "one two three "
REST = "four five six"


def _event(delta: dict[str, Any]) -> str:
    chunk = {"id": "chatcmpl-half", "object": "chat.completion.chunk", "created": 7,
             "model": "scripted", "choices": [{"index": 0, "delta": delta,
                                               "finish_reason": None}]}  # fmt: skip
    return "data: " + json.dumps(chunk) + "\n\n"


HALF = [_event({"role": "assistant", "content": ""}), _event({"content": "one two "}),
        _event({"content": "three "})]  # fmt: skip
SSE = "text/event-stream"
BREAKS: dict[str, dict[str, Any]] = {
    "ends cleanly halfway": {"script": {"parts": HALF}},
    "connection reset": {"flood": {"head": "".join(HALF), "end": "reset", "content_type": SSE}},
    "stalls": {"flood": {"head": "".join(HALF), "end": "stall", "content_type": SSE}},
}


@pytest.fixture(params=["litellm", "direct"])
def crew(request, make_gateway, sim):
    """`crew` in route mode, alpha then gamma (which takes a prefill), read by one reader."""
    raw = bench_raw(sim.url, upstream_reader=request.param, route_explore=0, first_token_s=2,
                    stall_s=0.5, keepalive_s=0.2)  # fmt: skip
    raw["collections"]["crew"] = {"members": ["alpha", "gamma"], "reply": "route"}
    for entry in raw["model_list"]:
        if entry["model_name"] == "gamma":
            entry["model_info"] = {"supports_assistant_prefill": True}
    return make_gateway(raw)


def _turn(gw, conversation: str) -> dict[str, Any]:
    (turn,) = gw.http.get(f"/bench/conversations/{conversation}").json()["turns"]
    return turn


@pytest.mark.parametrize("broken", list(BREAKS))
def test_a_streamed_turn_whose_member_breaks_halfway_is_continued_by_the_next(crew, sim, broken):
    sim.set("sim-alpha", **BREAKS[broken])
    sim.set("sim-gamma", answer=REST)  # asked to go on from the prefill, it says the rest
    text, bench = "", {}
    for chunk in crew.client.chat.completions.create(
        model="bench/crew:route", messages=QUESTION, stream=True
    ):
        text += "".join(c.delta.content or "" for c in chunk.choices)
        bench = (chunk.model_extra or {}).get("bench") or bench
    assert text == FIRST_HALF + REST  # one whole answer
    assert (bench["alias"], bench["continued_by"]) == ("alpha", "gamma")
    (broke,) = bench["failed_over"]
    assert broke["alias"] == "alpha" and "continued by gamma" in broke["error"]
    sent = sim.log("sim-gamma")[0]["body"]["messages"]
    assert sent[-1] == {"role": "assistant", "content": FIRST_HALF, "prefix": True}
    turn = _turn(crew, bench["conversation"])
    assert (turn["status"], turn["answer"]) == ("ok", FIRST_HALF + REST)


@pytest.mark.parametrize("broken", list(BREAKS))
def test_a_plain_turn_whose_member_breaks_halfway_is_answered_whole_by_the_next(crew, sim, broken):
    sim.set("sim-alpha", **BREAKS[broken])
    sim.set("sim-gamma", answer="Six numbers: one to six.")
    raw = crew.client.chat.completions.with_raw_response.create(
        model="bench/crew:route", messages=QUESTION
    )
    reply = raw.parse()
    assert reply.choices[0].message.content == "Six numbers: one to six."
    assert reply.choices[0].finish_reason == "stop"
    bench = reply.model_extra["bench"]
    assert bench["alias"] == "gamma" and raw.headers["x-bench-model"] == "gamma"
    (broke,) = bench["failed_over"]
    assert broke["alias"] == "alpha" and "handed to gamma" in broke["error"]
    sent = sim.log("sim-gamma")[0]["body"]["messages"]
    assert sent == QUESTION  # nothing was sent to the client: no prefill, a fresh answer
    turn = _turn(crew, bench["conversation"])
    assert (turn["alias"], turn["status"]) == ("gamma", "ok")
