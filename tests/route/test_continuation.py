"""A stream that breaks after its first piece is continued on the next member, so the client gets
one whole answer in its own format: through the official SDKs, against the real gateway and
litellm calling the simulated upstream."""

from __future__ import annotations

import json

import anthropic
import ollama
import openai
import pytest
from google import genai
from google.genai import types

from tests.helpers.bench import bench_raw
from tests.helpers.route import CALL, WEATHER

ANSWER = "one two three four five six seven eight nine ten eleven twelve"
MODEL = "bench/crew:route"
QUESTION = [{"role": "user", "content": "Count to twelve."}]


@pytest.fixture
def relay(make_gateway, sim):
    """`crew` in route mode, members alpha, gamma, delta all giving ANSWER; gamma takes an
    assistant prefill (its model_info says so), delta does not (litellm does not know it)."""
    raw = bench_raw(sim.url, route_explore=0, first_token_s=2, keepalive_s=0.2)
    raw["collections"]["crew"] = {"members": ["alpha", "gamma", "delta"], "reply": "route"}
    for entry in raw["model_list"]:
        if entry["model_name"] == "gamma":
            entry["model_info"] = {"supports_assistant_prefill": True}
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, answer=ANSWER, latency_s=0.01)
    return make_gateway(raw)


def _streamed_text(gw, **kw) -> tuple[str, dict]:
    """The text of a streamed chat turn, through the SDK, and its last chunk's `bench`."""
    text, bench = "", {}
    for chunk in gw.client.chat.completions.create(
        model=MODEL, messages=QUESTION, stream=True, **kw
    ):
        text += "".join(c.delta.content or "" for c in chunk.choices)
        bench = (chunk.model_extra or {}).get("bench") or bench
    return text, bench


def _turn(gw, bench: dict) -> dict:
    (turn,) = gw.http.get(f"/bench/conversations/{bench['conversation']}").json()["turns"]
    return turn


@pytest.mark.parametrize(
    "fault",
    [{"stream_cut_after": 1}, {"malformed_chunk": True}, {"error_after": 1}],
    ids=["cut", "invalid chunk", "error event"],
)
def test_a_stream_that_breaks_mid_answer_is_continued_with_a_prefill(relay, sim, fault):
    sim.set("sim-alpha", answer=ANSWER, **fault)
    text, bench = _streamed_text(relay)
    assert text == ANSWER  # one whole answer, nothing repeated
    assert (bench["alias"], bench["continued_by"]) == ("alpha", "gamma")
    (broke,) = bench["failed_over"]
    assert broke["alias"] == "alpha" and "continued by gamma" in broke["error"]
    sent = sim.log("sim-gamma")[0]["body"]["messages"]
    assert sent[:-1] == QUESTION  # the text already sent, as the assistant's prefill
    assert sent[-1] == {"role": "assistant", "content": "one two three ", "prefix": True}
    turn = _turn(relay, bench)
    assert (turn["alias"], turn["status"], turn["answer"]) == ("alpha", "ok", ANSWER)
    assert "continued by gamma" in turn["failed_over"][0]["error"]


def test_a_member_without_prefill_is_told_to_continue_exactly(relay, sim):
    sim.set("sim-alpha", answer=ANSWER, stream_cut_after=2)
    sim.set("sim-gamma", status=503)
    text, bench = _streamed_text(relay)
    assert text == ANSWER and bench["continued_by"] == "delta"
    sent = sim.log("sim-delta")[0]["body"]["messages"]
    assert sent[-2] == {"role": "assistant", "content": "one two three four five six "}
    assert sent[-1]["role"] == "user" and "Continue it exactly" in sent[-1]["content"]
    assert [f["alias"] for f in bench["failed_over"]] == ["alpha", "gamma"]


def test_a_fallback_that_refuses_the_prefill_is_told_instead(relay, sim):
    sim.set("sim-alpha", answer=ANSWER, stream_cut_after=1)
    sim.set("sim-gamma", answer=ANSWER, refuses_prefill=True)
    text, bench = _streamed_text(relay)
    assert text == ANSWER and bench["continued_by"] == "gamma"  # its refusal is not the client's
    prefill, told = (r["body"]["messages"] for r in sim.log("sim-gamma"))
    assert prefill[-1]["role"] == "assistant" and told[-1]["role"] == "user"
    assert [r["status"] for r in sim.log("sim-gamma")] == [400, 200]
    assert "refused the prefill" in bench["failed_over"][1]["error"]
    assert sim.log("sim-delta") == []


def test_a_continuation_that_starts_over_is_relayed_without_the_repeat(relay, sim):
    sim.set("sim-alpha", answer=ANSWER, stream_cut_after=2)
    sim.set("sim-gamma", status=500)
    sim.set("sim-delta", answer=ANSWER, repeats_prefix=True)  # it answers whole again
    text, bench = _streamed_text(relay)
    assert text == ANSWER and bench["continued_by"] == "delta"
    assert _turn(relay, bench)["answer"] == ANSWER


def test_a_break_inside_a_tool_calls_arguments_is_an_error_never_a_short_call(relay, sim):
    sim.set("sim-alpha", tool_call=CALL, stream_cut_after=2)  # the call's head, half its args
    with pytest.raises(openai.APIError, match="tool call"):
        with relay.client.chat.completions.stream(
            model=MODEL, messages=QUESTION, tools=[WEATHER]
        ) as events:
            for _event in events:
                pass
    assert sim.log("sim-gamma") == [] and sim.log("sim-delta") == []


def test_a_plain_turn_whose_member_breaks_is_answered_whole_by_the_next(relay, sim):
    sim.set("sim-alpha", answer=ANSWER, stream_cut_after=1)
    sim.set("sim-gamma", answer="Twelve numbers: one to twelve.")
    raw = relay.client.chat.completions.with_raw_response.create(model=MODEL, messages=QUESTION)
    reply = raw.parse()
    assert reply.choices[0].message.content == "Twelve numbers: one to twelve."
    assert reply.model == raw.headers["x-bench-model"] == "gamma"
    bench = reply.model_extra["bench"]
    assert bench["continued_by"] is None and "handed to gamma" in bench["failed_over"][0]["error"]
    assert sim.log("sim-gamma")[0]["body"]["messages"] == QUESTION  # asked afresh
    assert all(r["stream"] for r in sim.log())  # plain turns read their members as streams


def test_a_plain_tool_call_whose_stream_breaks_is_made_whole_by_the_next(relay, sim):
    sim.set("sim-alpha", tool_call=CALL, stream_cut_after=2)  # nothing was sent: asked afresh
    sim.set("sim-gamma", tool_call=CALL)
    reply = relay.client.chat.completions.create(model=MODEL, messages=QUESTION, tools=[WEATHER])
    (call,) = reply.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == CALL["arguments"] and reply.model == "gamma"


def test_anthropic_messages_stream_gets_one_whole_continued_answer(relay, sim):
    sim.set("sim-alpha", answer=ANSWER, stream_cut_after=1)
    client = anthropic.Anthropic(base_url=relay.url, api_key="local", max_retries=0)
    with client.messages.stream(model=MODEL, max_tokens=100, messages=QUESTION) as events:
        message = events.get_final_message()
    assert [b.text for b in message.content] == [ANSWER]
    assert message.stop_reason == "end_turn" and message.model == "alpha"


def test_a_responses_stream_gets_one_whole_continued_answer(relay, sim):
    sim.set("sim-alpha", answer=ANSWER, stream_cut_after=1)
    with relay.client.responses.stream(model=MODEL, input="Count to twelve.") as events:
        response = events.get_final_response()
    assert response.output_text == ANSWER
    assert response.model_extra["bench"]["continued_by"] == "gamma"


def test_gemini_and_ollama_streams_get_one_whole_continued_answer(relay, sim):
    sim.set("sim-alpha", answer=ANSWER, stream_cut_after=1, fail_times=2)
    options = types.HttpOptions(base_url=relay.url, api_version="v1beta", timeout=30_000)
    gemini = genai.Client(api_key="local", http_options=options)
    chunks = list(gemini.models.generate_content_stream(model=MODEL, contents="Count to twelve."))
    assert "".join(c.text or "" for c in chunks) == ANSWER
    lines = list(ollama.Client(host=relay.url).chat(model=MODEL, messages=QUESTION, stream=True))
    assert "".join(line.message.content for line in lines) == ANSWER and lines[-1].done
