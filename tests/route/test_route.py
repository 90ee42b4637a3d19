"""Route mode: a collection as a tool-calling agent's model, through the official SDKs, against
the real gateway and litellm calling the simulated upstream."""

from __future__ import annotations

import json
import socket
import time

import anthropic
import openai
import pytest

from tests.helpers.route import CALL, WEATHER


def _agent_loop(client: openai.OpenAI, model: str, *, stream: bool) -> list:
    """An OpenAI-tools agent: ask, run the tool the model calls, send its result back."""
    messages: list = [
        {"role": "system", "content": "You are a weather agent."},
        {"role": "user", "content": "What is the weather in Oslo?"},
    ]
    replies = []
    for _ in range(2):
        if stream:
            with client.chat.completions.stream(
                model=model, messages=messages, tools=[WEATHER]
            ) as events:
                for _event in events:
                    pass
                reply = events.get_final_completion()
        else:
            reply = client.chat.completions.create(model=model, messages=messages, tools=[WEATHER])
        replies.append(reply)
        message = reply.choices[0].message
        if not message.tool_calls:
            break
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            args = json.loads(call.function.arguments)
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": f"sunny in {args['city']}"}
            )
    return replies


def test_an_openai_tools_agent_loop_runs_through_route_mode(crew, sim):
    first, second = _agent_loop(crew.client, "bench/crew:route", stream=False)
    call = first.choices[0].message.tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "weather",
        CALL["arguments"],
    )
    assert first.model == "alpha"  # the member that answered, as X-Bench-Model names it
    assert second.choices[0].message.content == "The tool said: sunny in Oslo"
    sent = sim.log("sim-alpha")[-1]["body"]
    assert sent["tools"] == [WEATHER]  # passed through untouched
    assert sent["messages"][-1] == {
        "role": "tool", "tool_call_id": call.id, "content": "sunny in Oslo"
    }  # fmt: skip
    bench = second.model_extra["bench"]
    assert bench["turn"] == 2 and bench["alias"] == "alpha" and bench["failed_over"] == []
    assert bench["call"] == f"{bench['conversation']}.2"


def test_a_streamed_agent_loop_assembles_the_tool_call_deltas(crew, sim):
    first, second = _agent_loop(crew.client, "bench/crew", stream=True)  # reply: route
    call = first.choices[0].message.tool_calls[0]
    assert json.loads(call.function.arguments) == {"city": "Oslo"}
    assert call.id.startswith("call_") and first.choices[0].finish_reason == "tool_calls"
    assert second.choices[0].message.content == "The tool said: sunny in Oslo"
    assert [r["stream"] for r in sim.log("sim-alpha")] == [True, True]


def test_the_bench_field_and_headers_of_a_streamed_turn(crew):
    with crew.http.stream(
        "POST",
        "/v1/chat/completions",
        json={
            "model": "bench/crew",
            "stream": True,
            "bench": {"reply": "route"},
            "messages": [{"role": "user", "content": "hello"}],
        },
    ) as response:
        lines = [line for line in response.iter_lines() if line.startswith("data: ")]
        headers = response.headers
    assert lines[-1] == "data: [DONE]"
    last = json.loads(lines[-2][6:])
    assert last["bench"]["alias"] == headers["x-bench-model"] == "alpha"
    assert last["bench"]["conversation"] == headers["x-bench-conversation"]
    text = "".join(
        c["delta"].get("content") or ""
        for line in lines[:-2]
        for c in json.loads(line[6:])["choices"]
    )
    assert text == "Simulated answer from sim-alpha. You said: hello"
    assert all(json.loads(line[6:])["model"] == "alpha" for line in lines[:-1])


def test_a_rate_limited_member_hands_the_turn_on_before_the_agent_sees_it(crew, sim):
    sim.set("sim-alpha", status=429, retry_after=30)
    reply, raw = crew.ask("bench/crew:route", "hi")
    assert raw.headers["x-bench-model"] == "gamma"
    bench = reply.model_extra["bench"]
    assert [f["alias"] for f in bench["failed_over"]] == ["alpha"]
    assert bench["failed_over"][0]["status"] == "rate_limited"
    assert len(sim.log("sim-alpha")) == 1
    assert crew.runtime.rate_limits.cooldown_of("alpha") is not None
    # a new conversation skips the cooling member without calling it
    again, raw = crew.ask("bench/crew:route", "another task")
    assert raw.headers["x-bench-model"] == "gamma"
    assert again.model_extra["bench"]["failed_over"] == []
    assert len(sim.log("sim-alpha")) == 1


def test_a_member_that_hangs_before_its_first_piece_hands_the_turn_on(crew, sim):
    sim.set("sim-alpha", hang=True)
    with crew.client.chat.completions.stream(
        model="bench/crew:route", messages=[{"role": "user", "content": "hi"}]
    ) as events:
        text = "".join(e.delta for e in events if e.type == "content.delta")
    assert text == "Simulated answer from sim-gamma. You said: hi"
    assert len(sim.log("sim-alpha")) == 1


def test_a_conversation_stays_with_its_member_across_turns(crew, sim):
    sim.set("sim-alpha", status=503, fail_times=1)  # the first turn goes to gamma
    messages = [{"role": "user", "content": "plan the trip"}]
    reply = crew.client.chat.completions.create(model="bench/crew:route", messages=messages)
    assert reply.model_extra["bench"]["alias"] == "gamma"
    messages += [
        {"role": "assistant", "content": reply.choices[0].message.content},
        {"role": "user", "content": "and the hotel?"},
    ]
    later = crew.client.chat.completions.create(model="bench/crew:route", messages=messages)
    bench = later.model_extra["bench"]
    assert (bench["alias"], bench["turn"]) == ("gamma", 2)
    assert bench["conversation"] == reply.model_extra["bench"]["conversation"]
    record = crew.http.get(f"/bench/conversations/{bench['conversation']}").json()
    assert [t["alias"] for t in record["turns"]] == ["gamma", "gamma"]
    assert record["turns"][0]["failed_over"][0]["alias"] == "alpha"
    verdict = crew.http.post("/bench/verdict", json={"call": bench["call"], "useful": True})
    assert verdict.json() == {"call": bench["call"], "recorded": True}
    gamma = next(
        m for m in crew.http.get("/bench/models").json()["models"] if m["alias"] == "gamma"
    )
    assert (gamma["seated"], gamma["answered"], gamma["useful"]) == (2, 2, 1)


def test_an_error_after_the_first_piece_nobody_can_continue_is_an_error_event(crew, sim):
    sim.set("sim-alpha", error_after=1, answer="one two three four five six seven")
    for other in ("sim-gamma", "sim-delta"):  # and nobody can continue it
        sim.set(other, status=500)
    with pytest.raises(openai.APIError):
        with crew.client.chat.completions.stream(
            model="bench/crew:route", messages=[{"role": "user", "content": "hi"}]
        ) as events:
            for _event in events:
                pass
    assert [len(sim.log(m)) for m in ("sim-gamma", "sim-delta")] == [1, 1]  # asked to go on


def test_every_member_limited_is_a_429_with_retry_after(crew, sim):
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, status=429, retry_after=20)
    with pytest.raises(openai.RateLimitError) as caught:
        crew.ask("bench/crew:route", "hi")
    assert int(caught.value.response.headers["retry-after"]) >= 1
    assert "alpha" in caught.value.message and "delta" in caught.value.message


def test_a_panel_demanding_a_tool_call_is_refused_naming_route(crew, sim):
    with pytest.raises(openai.BadRequestError) as caught:
        crew.client.chat.completions.create(
            model="bench/trio",
            messages=[{"role": "user", "content": "hi"}],
            tools=[WEATHER],
            tool_choice="required",
        )
    assert ":route" in caught.value.message
    assert sim.log() == []


def test_an_anthropic_tool_use_round_trip(crew, sim):
    client = anthropic.Anthropic(base_url=crew.url, api_key="local", max_retries=0)
    tools = [
        {
            "name": "weather",
            "description": "The weather in a city",
            "input_schema": WEATHER["function"]["parameters"],
        }
    ]
    messages: list = [{"role": "user", "content": "Weather in Oslo?"}]
    first = client.messages.create(
        model="bench/crew:route", max_tokens=200, messages=messages, tools=tools
    )
    use = next(b for b in first.content if b.type == "tool_use")
    assert (use.name, use.input, first.stop_reason) == ("weather", {"city": "Oslo"}, "tool_use")
    messages += [
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "rainy"}],
        },
    ]
    with client.messages.stream(
        model="bench/crew:route", max_tokens=200, messages=messages, tools=tools
    ) as events:
        second = events.get_final_message()
    assert second.content[0].text == "The tool said: rainy"
    sent = sim.log("sim-alpha")[-1]["body"]["messages"]
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == use.id


def test_a_responses_function_call_round_trip(crew, sim):
    tool = {"type": "function", **WEATHER["function"]}
    first = crew.client.responses.create(
        model="bench/crew:route", input="Weather in Oslo?", tools=[tool]
    )
    call = next(item for item in first.output if item.type == "function_call")
    assert (call.name, json.loads(call.arguments)) == ("weather", {"city": "Oslo"})
    second = crew.client.responses.create(
        model="bench/crew:route",
        input=[
            {"role": "user", "content": "Weather in Oslo?"},
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            },
            {"type": "function_call_output", "call_id": call.call_id, "output": "windy"},
        ],
        tools=[tool],
    )
    assert second.output_text == "The tool said: windy"


def test_route_mode_in_a_format_without_it_says_so(crew, sim):
    response = crew.http.post("/v1/completions", json={"model": "bench/crew:route", "prompt": "hi"})
    assert response.status_code == 400
    assert "not available in the completions format" in response.json()["error"]["message"]
    assert sim.log() == []


def test_a_client_that_leaves_mid_turn_ends_the_members_stream_and_the_turn_is_recorded(crew, sim):
    sim.set("sim-alpha", chunk_delay_s=60, answer="one two three four five six")
    body = {
        "model": "bench/crew:route",
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
    }
    with crew.http.stream("POST", "/v1/chat/completions", json=body) as response:
        conversation = response.headers["x-bench-conversation"]
        for line in response.iter_lines():
            if "one two three" in line:
                break  # the first piece came; the member now takes a minute for the next
    turns: list = []
    for _ in range(200):  # the gateway notices the hang-up, ends the member's stream, records
        turns = crew.http.get(f"/bench/conversations/{conversation}").json()["turns"]
        if turns and sim.log("sim-alpha")[0]["outcome"] is not None:
            break
        time.sleep(0.05)
    assert [(t["alias"], t["status"]) for t in turns] == [("alpha", "error")]
    assert "hung up" in turns[0]["error"] and turns[0]["answer"] == "one two three "
    assert sim.log("sim-alpha")[0]["outcome"] == "client_disconnected"


def test_a_streamed_turns_first_text_comes_in_the_same_read_as_its_headers(crew, sim):
    """The headers, the held chunks and the first text reach the client together (one write,
    gateway/serve/connection.py: a wake per piece cost the first text ~0.9 ms on a busy core). The
    member then stalls, so nothing later can be in that read. (In one process the GIL also
    lets them pile up before the client reads: the write count itself is tested on `Gathered`
    in tests/serve/test_connection.py.)"""
    sim.set("sim-alpha", answer="one two three four five six", stream_stall_after=1)
    body = json.dumps(
        {
            "model": "bench/crew:route",
            "stream": True,
            "messages": [{"role": "user", "content": "Hi"}],
        }
    ).encode()
    host, port = crew.server.host, crew.server.port
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: %s:%d\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (host.encode(), port, len(body), body)
        )
        first_read = sock.recv(65536)
    assert first_read.startswith(b"HTTP/1.1 200")
    assert b'"role":"assistant"' in first_read
    assert b'"content":"one two three "' in first_read
