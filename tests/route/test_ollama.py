"""Route mode in Ollama's format: an agent loop through the official `ollama` client, against the
real gateway and litellm calling the simulated upstream."""

from __future__ import annotations

import json

import ollama
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.route import CALL, WEATHER


def weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name
    """
    return f"sunny in {city}"


TOOLS = {"weather": weather}
QUESTION = {"role": "user", "content": "What is the weather in Oslo?"}


def client_of(gw) -> ollama.Client:
    return ollama.Client(host=gw.url, timeout=30)


def _agent_loop(client: ollama.Client, *, stream: bool) -> list[ollama.Message]:
    """An Ollama tools agent: ask, run each tool the model calls, send the results back, until
    the model answers in words. Returns the model's messages, one a turn."""
    messages: list = [{"role": "system", "content": "You are a weather agent."}, QUESTION]
    said = []
    for _ in range(3):
        if stream:
            content, calls = "", []
            for part in client.chat(
                model="bench/crew:route", messages=messages, tools=[weather], stream=True
            ):
                content += part.message.content or ""
                calls += part.message.tool_calls or []
            message = ollama.Message(role="assistant", content=content, tool_calls=calls or None)
        else:
            message = client.chat(model="bench/crew:route", messages=messages, tools=[weather])
            message = message.message
        said.append(message)
        messages.append(message)
        if not message.tool_calls:
            break
        for call in message.tool_calls:
            result = TOOLS[call.function.name](**call.function.arguments)
            messages.append({"role": "tool", "content": result, "tool_name": call.function.name})
    return said


def test_an_ollama_tools_agent_loop_runs_through_route_mode(crew, sim):
    first, second = _agent_loop(client_of(crew), stream=False)
    (call,) = first.tool_calls
    assert (call.function.name, call.function.arguments) == ("weather", CALL["arguments"])
    assert second.content == "The tool said: sunny in Oslo" and not second.tool_calls
    tools, sent = (sim.log("sim-alpha")[-1]["body"][k] for k in ("tools", "messages"))
    assert tools[0]["function"]["name"] == "weather"  # the client's schema of the function
    assert tools[0]["function"]["parameters"]["properties"]["city"]["type"] == "string"
    assistant, result = sent[-2:]
    assert assistant["tool_calls"][0]["function"] == {
        "name": "weather", "arguments": json.dumps(CALL["arguments"])
    }  # fmt: skip
    assert result == {
        "role": "tool", "tool_call_id": assistant["tool_calls"][0]["id"], "content": "sunny in Oslo"
    }  # fmt: skip


def test_a_streamed_loop_relays_text_as_it_comes_and_bench_is_on_the_done_line(crew, sim):
    first, second = _agent_loop(client_of(crew), stream=True)
    assert first.tool_calls[0].function.arguments == CALL["arguments"]
    assert second.content == "The tool said: sunny in Oslo"
    assert [r["stream"] for r in sim.log("sim-alpha")] == [True, True]
    body = {"model": "bench/crew:route", "messages": [QUESTION]}
    with crew.http.stream("POST", "/api/chat", json=body) as response:
        lines = [json.loads(line) for line in response.iter_lines() if line]
        headers = response.headers
    texts = [line["message"]["content"] for line in lines if not line["done"]]
    assert len([t for t in texts if t]) > 1  # the member's pieces, one line each
    assert "".join(texts) == f"Simulated answer from sim-alpha. You said: {QUESTION['content']}"
    done = lines[-1]
    assert done["done"] is True and done["done_reason"] == "stop" and done["eval_count"] > 0
    assert done["bench"]["alias"] == headers["x-bench-model"] == "alpha"
    assert {line["model"] for line in lines} == {"alpha"}  # the member that answered
    record = crew.http.get(f"/bench/conversations/{done['bench']['conversation']}").json()
    assert [(t["alias"], t["status"]) for t in record["turns"]] == [("alpha", "ok")]


def test_two_calls_of_one_function_are_answered_each_by_its_own_id(crew, sim):
    cities = ("Oslo", "Rome")
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, tool_call=[{"name": "weather", "arguments": {"city": c}} for c in cities])
    first, second = _agent_loop(client_of(crew), stream=False)
    assert [c.function.arguments["city"] for c in first.tool_calls] == list(cities)
    sent = sim.log("sim-alpha")[-1]["body"]["messages"]
    ids = [c["id"] for c in sent[-3]["tool_calls"]]
    assert len(set(ids)) == 2
    assert [(m["tool_call_id"], m["content"]) for m in sent[-2:]] == [
        (ids[0], "sunny in Oslo"),
        (ids[1], "sunny in Rome"),
    ]
    assert second.content == "The tool said: sunny in Rome"


def test_a_rate_limited_member_hands_the_turn_on_before_the_first_line(crew, sim):
    sim.set("sim-alpha", status=429, retry_after=30)
    parts = list(client_of(crew).chat(model="bench/crew:route", messages=[QUESTION], stream=True))
    text = "".join(p.message.content or "" for p in parts)
    assert text.startswith("Simulated answer from sim-gamma.") and parts[-1].done
    assert len(sim.log("sim-alpha")) == 1


def test_an_error_after_the_first_line_is_an_error_never_a_short_success(crew, sim):
    sim.set("sim-alpha", error_after=1, answer="one two three four five six seven")
    for other in ("sim-gamma", "sim-delta"):  # and nobody can continue it
        sim.set(other, status=500)
    seen = []
    with pytest.raises(ollama.ResponseError) as caught:
        for part in client_of(crew).chat(
            model="bench/crew:route", messages=[QUESTION], stream=True
        ):
            seen.append(part)
    assert "mid-stream" in caught.value.error
    texts = [p.message.content for p in seen if p.message.content]  # keep-alive lines are ""
    assert texts == ["one two three "] and not seen[-1].done
    assert [len(sim.log(m)) for m in ("sim-gamma", "sim-delta")] == [1, 1]  # asked to go on


def test_a_tool_result_that_answers_no_call_is_refused_and_nothing_is_called(crew, sim):
    client = client_of(crew)
    orphan = {"role": "tool", "content": "sunny", "tool_name": "weather"}
    unanswered = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "weather", "arguments": {"city": "Oslo"}}}],
    }
    for messages in ([QUESTION, orphan], [QUESTION, unanswered, QUESTION]):
        with pytest.raises(ollama.ResponseError) as caught:
            client.chat(model="bench/crew:route", messages=messages)
        assert caught.value.status_code == 400 and "tool" in caught.value.error
    bad = crew.http.post(
        "/api/generate", json={"model": "bench/crew:route", "prompt": "hi", "stream": False}
    )
    assert bad.status_code == 400 and "/api/chat" in bad.json()["error"]
    assert sim.log() == []
    assert crew.http.get("/bench/panels").json()["panels"] == []


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)
_CALL = st.fixed_dictionaries(
    {},
    optional={
        "function": st.fixed_dictionaries(
            {},
            optional={
                "name": st.just("weather") | _JSON,
                "arguments": st.just({"city": "Oslo"}) | _JSON,
            },
        )
        | _JSON,
        "id": _JSON,
    },
)
_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system", "x"])},
    optional={
        "content": st.text(max_size=5) | _JSON,
        "tool_calls": st.lists(_CALL, max_size=2) | _JSON,
        "tool_name": st.just("weather") | _JSON,
    },
)
_BODY = st.fixed_dictionaries(
    {"model": st.just("bench/crew:route"), "messages": st.lists(_MESSAGE, min_size=1, max_size=3)},
    optional={
        "tools": st.just([WEATHER]) | st.lists(_JSON, max_size=1),
        "stream": st.booleans(),
        "options": st.just({"temperature": 0.2}) | _JSON,
    },
) | st.dictionaries(st.sampled_from(["model", "messages", "think", "tools"]), _JSON)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=_BODY)
def test_any_route_body_gets_a_turn_or_an_ollama_error_and_a_refusal_calls_nothing(crew, sim, body):
    called = len(sim.log())
    r = crew.http.post("/api/chat", json=body)
    assert r.status_code in (200, 400), r.text
    if r.status_code == 400:
        assert isinstance(r.json()["error"], str) and len(sim.log()) == called
    elif body.get("stream") is False:
        assert r.json()["done"] is True
    else:
        lines = [json.loads(line) for line in r.text.splitlines()]
        assert lines[-1]["done"] is True
