"""Route mode's conversations: a request continues one only when it says so (earlier turns, or a
session it names), so identical one-shot requests each start anew and a member that recovers
gets its turns back at once; the reply's model field names the member that answered."""

from __future__ import annotations

import time

import anthropic
import httpx
import ollama

QUESTION = [{"role": "user", "content": "What is 2 + 2?"}]


def _asked(crew, headers: dict[str, str] | None = None):
    raw = crew.client.chat.completions.with_raw_response.create(
        model="bench/crew:route", messages=QUESTION, extra_headers=headers or {}
    )
    return raw.parse(), raw.headers


def test_identical_one_shot_requests_are_each_a_new_conversation(crew):
    conversations = {_asked(crew)[0].model_extra["bench"]["conversation"] for _ in range(3)}
    assert len(conversations) == 3
    assert all(_asked(crew)[0].model_extra["bench"]["turn"] == 1 for _ in range(2))


def test_a_primary_that_flaps_gets_its_one_shot_turns_back_once_it_recovers(crew, sim):
    """503 for a while, then healthy; identical one-shot requests sent throughout (the field's
    matrix: 503 for 60 s, 20 requests 4 s apart, scaled here to 1.2 s and 0.15 s)."""
    sim.set("sim-alpha", status=503, fail_for_s=1.2, latency_s=0.01)
    began = time.monotonic()
    answered: list[tuple[float, str, str]] = []
    for _ in range(14):
        reply, headers = _asked(crew)
        answered.append((time.monotonic() - began, reply.model, headers["x-bench-model"]))
        time.sleep(0.15)
    assert all(model == header for _, model, header in answered)
    during = [model for at, model, _ in answered if at < 1.1]
    after = [model for at, model, _ in answered if at > 1.3]
    assert during and set(during) == {"gamma"}  # failed over at once while alpha is down
    assert after and set(after) == {"alpha"}  # and alpha answers again once it is up
    assert len({r["body"]["messages"][0]["content"] for r in sim.log("sim-alpha")}) == 1


def test_a_turn_with_earlier_turns_stays_with_its_member(crew, sim):
    sim.set("sim-alpha", status=503, fail_times=1)
    first, _ = _asked(crew)
    assert first.model == "gamma"
    later = crew.client.chat.completions.create(
        model="bench/crew:route",
        messages=[
            *QUESTION,
            {"role": "assistant", "content": first.choices[0].message.content},
            {"role": "user", "content": "And 3 + 3?"},
        ],
    )
    bench = later.model_extra["bench"]
    assert (later.model, bench["turn"]) == ("gamma", 2)  # alpha is up again; gamma has it
    assert bench["conversation"] == first.model_extra["bench"]["conversation"]


def test_a_named_session_is_one_conversation_from_its_first_turn(crew, sim):
    sim.set("sim-alpha", status=503, fail_times=1)
    first, headers = _asked(crew, {"X-Session-Id": "task-7"})
    again, _ = _asked(crew, {"X-Session-Id": "task-7"})
    assert (first.model, again.model) == ("gamma", "gamma")
    bench = again.model_extra["bench"]
    assert (bench["conversation"], bench["turn"]) == (headers["x-bench-conversation"], 2)
    other, _ = _asked(crew, {"X-Session-Id": "task-8"})  # another session: alpha's again
    assert other.model == "alpha" and other.model_extra["bench"]["turn"] == 1


def test_claude_codes_session_header_and_metadata_name_the_conversation(crew, sim):
    client = anthropic.Anthropic(base_url=crew.url, api_key="local", max_retries=0)
    sim.set("sim-alpha", status=503, fail_times=2)
    turns = []
    for headers, metadata in (
        ({"x-claude-code-session-id": "s-1"}, {}),
        ({"x-claude-code-session-id": "s-1"}, {}),
        ({}, {"user_id": '{"session_id": "s-2"}'}),
        ({}, {"user_id": '{"session_id": "s-2"}'}),
    ):
        raw = client.messages.with_raw_response.create(
            model="bench/crew:route",
            max_tokens=100,
            messages=[{"role": "user", "content": "hi"}],
            extra_headers=headers,
            metadata=metadata or anthropic.NOT_GIVEN,
        )
        turns.append((raw.parse().model, raw.headers["x-bench-conversation"]))
    assert [model for model, _ in turns] == ["gamma", "gamma", "gamma", "gamma"]
    assert turns[0][1] == turns[1][1] != turns[2][1] == turns[3][1]


def test_the_model_field_names_the_member_in_the_ollama_format(crew, sim):
    sim.set("sim-alpha", status=500, fail_times=1)
    client = ollama.Client(host=crew.url)
    plain = client.chat(model="bench/crew:route", messages=QUESTION, stream=False)
    assert plain.model == "gamma"
    lines = list(client.chat(model="bench/crew:route", messages=QUESTION, stream=True))
    assert {line.model for line in lines} == {"alpha"}


def test_the_model_field_names_the_member_in_a_streamed_chat_turn(crew, sim):
    sim.set("sim-alpha", status=500)
    body = {"model": "bench/crew:route", "messages": QUESTION, "stream": True}
    with httpx.stream("POST", f"{crew.url}/v1/chat/completions", json=body) as response:
        models = {line for line in response.iter_lines() if '"model":"gamma"' in line}
    assert models
    with crew.client.chat.completions.stream(model="bench/crew:route", messages=QUESTION) as s:
        assert s.get_final_completion().model == "gamma"
