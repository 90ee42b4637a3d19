"""Tests for the simulated upstream, over real HTTP on 127.0.0.1.

Observed client-side view of the connection-level faults (these are asserted below):

* ``stream_cut_after``: the server sends a FIN in the middle of the chunked body. httpx raises
  ``httpx.RemoteProtocolError`` ("incomplete chunked read"); the openai SDK raises
  ``openai.APIConnectionError`` *while iterating* the stream, with a RemoteProtocolError as
  ``__cause__``. The stream does not just end quietly without a finish_reason.
* ``reset``: the server sends a TCP RST before any response bytes. httpx raises
  ``httpx.ReadError`` ("[Errno 104] Connection reset by peer"); the openai SDK raises
  ``openai.APIConnectionError`` with a ReadError as ``__cause__``.

Note: the pinned openai SDK (3.57) is built on ``httpx2``, a separate package, so the causes above
are ``httpx2.RemoteProtocolError`` / ``httpx2.ReadError`` and are *not* instances of the
``httpx`` classes; the tests compare class names so they do not depend on that transitive package.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import openai
import pytest
import uvicorn

from simulator import SimState, create_sim_app, load_spec
from tests.helpers.clocks import ManualClock, wait_until

MESSAGES = [{"role": "user", "content": "Name three prime numbers, please."}]


@contextlib.contextmanager
def _serve_in_thread(app) -> Iterator[str]:
    """Run *app* on a real uvicorn server on a free 127.0.0.1 port; yield its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "simulator did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(5)
        sock.close()


@pytest.fixture(scope="module")
def local_sim() -> Iterator[tuple[str, SimState]]:
    app = create_sim_app({"models": {"spec-model": {"answer": "from the spec"}}})
    with _serve_in_thread(app) as base:
        yield base, app.state.sim


@pytest.fixture
def sim_state(local_sim) -> SimState:
    local_sim[1].reset()
    return local_sim[1]


@pytest.fixture
def sim_http(local_sim) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=local_sim[0], timeout=5) as client:
        yield client


@pytest.fixture
def sim_sdk(local_sim) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=local_sim[0] + "/v1", api_key="x", max_retries=0, timeout=5) as c:
        yield c


def _chat(client: httpx.Client, model: str, **extra) -> httpx.Response:
    return client.post("/v1/chat/completions", json={"model": model, "messages": MESSAGES, **extra})


def test_plain_answer_echoes_model_and_prompt(sim_state, sim_sdk, sim_http):
    reply = sim_sdk.chat.completions.create(model="kimi-k2", messages=MESSAGES)
    text = reply.choices[0].message.content
    assert text == "Simulated answer from kimi-k2. You said: Name three prime numbers, please."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage.prompt_tokens == len(MESSAGES[0]["content"]) // 4
    assert reply.usage.completion_tokens == len(text.split())
    body = sim_http.post("/chat/completions", json={"model": "spec-model", "messages": MESSAGES})
    assert body.json()["choices"][0]["message"]["content"] == "from the spec"  # unprefixed route


def test_a_model_asked_for_json_answers_its_words_in_the_schema(sim_state, sim_sdk):
    """As a real model honours `response_format`: the OpenAI SDK's own parser reads the reply."""
    from pydantic import BaseModel

    class Review(BaseModel):
        safe: bool
        reasons: list[str]
        severity: int | None

    parsed = sim_sdk.chat.completions.parse(
        model="spec-model", messages=MESSAGES, response_format=Review
    )
    review = parsed.choices[0].message.parsed
    assert review == Review(safe=False, reasons=["from the spec"], severity=0)
    loose = sim_sdk.chat.completions.create(
        model="spec-model", messages=MESSAGES, response_format={"type": "json_object"}
    )
    assert loose.choices[0].message.content == '{"answer": "from the spec"}'
    sim_state.set("spec-model", answer='{"safe": true}')  # already JSON: sent as it is
    scripted = sim_sdk.chat.completions.create(
        model="spec-model", messages=MESSAGES, response_format={"type": "json_object"}
    )
    assert scripted.choices[0].message.content == '{"safe": true}'


def test_models_health_and_control_routes(sim_state, sim_http):
    assert sim_http.get("/healthz").json() == {"status": "ok"}
    assert sim_http.post("/_sim/behaviour", json={"model": "m1", "answer": "hi"}).status_code == 200
    assert sim_http.post("/_sim/behaviour", json={"model": "*", "latency_s": 0}).status_code == 200
    assert [m["id"] for m in sim_http.get("/v1/models").json()["data"]] == ["spec-model", "m1"]
    assert _chat(sim_http, "m1").json()["choices"][0]["message"]["content"] == "hi"
    bad = sim_http.post("/_sim/behaviour", json={"model": "m1", "answr": "typo"})
    assert bad.status_code == 400 and "answr" in bad.json()["error"]["message"]
    assert len(sim_http.get("/_sim/requests", params={"model": "m1"}).json()["requests"]) == 1
    assert sim_http.post("/_sim/reset").json() == {"status": "ok"}
    assert (
        sim_state.behaviours == {"spec-model": {"answer": "from the spec"}}
        and sim_state.requests == []
    )


def test_latency_is_a_pause_on_the_simulators_clock():
    clock = ManualClock()
    app = create_sim_app({"models": {"slow": {"latency_s": 0.25}}}, clock=clock)
    with _serve_in_thread(app) as base, httpx.Client(base_url=base, timeout=10) as client:
        replies: list[httpx.Response] = []
        asking = threading.Thread(target=lambda: replies.append(_chat(client, "slow")))
        asking.start()
        state: SimState = app.state.sim
        wait_until(lambda: clock.pausing == 1)
        clock.advance(0.125)  # binary fractions: the sums below are exact
        assert state.log_for("slow")[0]["ended"] is None  # half way: still pausing
        clock.advance(0.125)
        asking.join(10)
    assert replies[0].status_code == 200
    (entry,) = state.log_for("slow")
    assert entry["started"] == 1_000_000.0 and entry["outcome"] == "ok"
    assert entry["ended"] == 1_000_000.25  # the pause ended exactly when the clock said


def test_429_with_retry_after_headers(sim_state, sim_http, sim_sdk):
    sim_state.set("busy", status=429, retry_after=2, retry_after_ms=1500)
    reply = _chat(sim_http, "busy")
    assert reply.status_code == 429
    assert reply.headers["retry-after"] == "2" and reply.headers["retry-after-ms"] == "1500"
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == "rate_limit_exceeded"
    with pytest.raises(openai.RateLimitError):
        sim_sdk.chat.completions.create(model="busy", messages=MESSAGES)


def test_error_message_override(sim_state, sim_http, sim_sdk):
    sim_state.set(
        "small", status=400, error_message="This model's maximum context length is 4096 tokens"
    )
    error = _chat(sim_http, "small").json()["error"]
    assert error["message"].startswith("This model's maximum context length")
    assert error["code"] == "context_length_exceeded"
    with pytest.raises(openai.BadRequestError):
        sim_sdk.chat.completions.create(model="small", messages=MESSAGES)


def test_fail_times_then_success(sim_state, sim_http):
    sim_state.set("flaky", status=503, fail_times=2)
    assert [_chat(sim_http, "flaky").status_code for _ in range(3)] == [503, 503, 200]
    assert [(e["n"], e["status"]) for e in sim_state.log_for("flaky")] == [
        (1, 503),
        (2, 503),
        (3, 200),
    ]
    sim_state.set(
        "flaky", reset=True, fail_times=1
    )  # re-setting restarts the count; any fault works
    with pytest.raises(httpx.ReadError):
        _chat(sim_http, "flaky")
    assert _chat(sim_http, "flaky").status_code == 200


def test_fail_tool_turns_strikes_only_the_turn_carrying_a_tool_result(sim_state, sim_http):
    sim_state.set("midway", status=429, fail_tool_turns=True, tool_call={"name": "t"})
    tools = [{"type": "function", "function": {"name": "t", "parameters": {}}}]
    first = _chat(sim_http, "midway", tools=tools)
    assert first.status_code == 200, first.text
    call = first.json()["choices"][0]["message"]
    result = {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"], "content": "42"}
    later = [*MESSAGES, call, result]
    failed = sim_http.post(
        "/v1/chat/completions", json={"model": "midway", "messages": later, "tools": tools}
    )
    assert failed.status_code == 429
    assert [e["status"] for e in sim_state.log_for("midway")] == [200, 429]


def test_empty_answer(sim_state, sim_sdk):
    sim_state.set("mute", empty=True)
    reply = sim_sdk.chat.completions.create(model="mute", messages=MESSAGES)
    assert reply.choices[0].message.content == "" and reply.usage.completion_tokens == 0


def test_stream_through_sdk_collects_full_answer(sim_state, sim_sdk):
    answer = "one two three four five six seven eight nine ten"
    sim_state.set("streamer", answer=answer, chunk_delay_s=0.01)
    stream = sim_sdk.chat.completions.create(
        model="streamer", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == answer
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage.completion_tokens == 10
    (entry,) = sim_state.log_for("streamer")
    assert entry["stream"] and entry["status"] == 200 and entry["outcome"] == "ok"
    assert entry["ended"] - entry["started"] >= 0.03  # 4 content chunks, 3 delays between them


def test_several_tool_calls_in_one_turn_plain_and_streamed(sim_state, sim_sdk):
    calls = [{"name": "weather", "arguments": {"city": c}} for c in ("Oslo", "Rome")]
    sim_state.set("caller", tool_call=calls)
    tools = [{"type": "function", "function": {"name": "weather", "parameters": {}}}]
    reply = sim_sdk.chat.completions.create(model="caller", messages=MESSAGES, tools=tools)
    made = reply.choices[0].message.tool_calls
    assert [(c.function.name, c.function.arguments) for c in made] == [
        ("weather", '{"city": "Oslo"}'),
        ("weather", '{"city": "Rome"}'),
    ]
    assert len({c.id for c in made}) == 2 and reply.choices[0].finish_reason == "tool_calls"
    pieces: dict[int, str] = {}
    for chunk in sim_sdk.chat.completions.create(
        model="caller", messages=MESSAGES, tools=tools, stream=True
    ):
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            pieces[delta.index] = pieces.get(delta.index, "") + (delta.function.arguments or "")
    assert pieces == {0: '{"city": "Oslo"}', 1: '{"city": "Rome"}'}
    with pytest.raises(ValueError, match="tool_call"):
        sim_state.set("caller", tool_call=["weather"])


def test_stream_cut_raises_in_sdk_and_httpx(sim_state, sim_sdk, sim_http):
    sim_state.set("cut", answer="alpha beta gamma delta epsilon zeta eta", stream_cut_after=1)
    received = []
    with pytest.raises(openai.APIConnectionError) as caught:
        for chunk in sim_sdk.chat.completions.create(model="cut", messages=MESSAGES, stream=True):
            received.append(chunk.choices[0].delta.content)
    assert type(caught.value.__cause__).__name__ == "RemoteProtocolError"  # httpx2's, see top
    assert "".join(filter(None, received)) == "alpha beta gamma "  # role chunk + 1 content chunk
    with pytest.raises(httpx.RemoteProtocolError):
        _chat(sim_http, "cut", stream=True)
    assert [(e["status"], e["outcome"]) for e in sim_state.log_for("cut")] == [(200, "cut")] * 2


def test_no_done_and_malformed_chunk(sim_state, sim_http):
    sim_state.set("nodone", no_done=True)
    body = _chat(sim_http, "nodone", stream=True).text
    assert '"finish_reason": "stop"' in body and "[DONE]" not in body
    sim_state.set("garbled", malformed_chunk=True)
    lines = [x for x in _chat(sim_http, "garbled", stream=True).text.split("\n\n") if x]
    assert "data: {this chunk is not json" in lines and lines[-1] == "data: [DONE]"


def test_reset_is_a_transport_error(sim_state, sim_http, sim_sdk):
    sim_state.set("rst", reset=True)
    with pytest.raises(httpx.ReadError):
        _chat(sim_http, "rst")
    with pytest.raises(openai.APIConnectionError) as caught:
        sim_sdk.chat.completions.create(model="rst", messages=MESSAGES)
    assert type(caught.value.__cause__).__name__ == "ReadError"  # httpx2's, see top
    assert [(e["status"], e["outcome"]) for e in sim_state.log_for("rst")] == [(None, "reset")] * 2


def _wait_for_ended(state: SimState, model: str) -> dict:
    deadline = time.monotonic() + 2
    while state.log_for(model)[-1]["ended"] is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return state.log_for(model)[-1]


def test_hang_times_out_and_log_notices_the_client_leaving(sim_state, sim_http):
    sim_state.set("hang", hang=True)
    with pytest.raises(httpx.ReadTimeout):
        sim_http.post(
            "/v1/chat/completions", json={"model": "hang", "messages": MESSAGES}, timeout=0.5
        )
    entry = _wait_for_ended(sim_state, "hang")
    assert entry["status"] is None and entry["outcome"] == "hung"
    # The client's 0.5 s clock starts before the server logs "started", so allow some slack.
    assert entry["ended"] - entry["started"] >= 0.4


def test_stream_stall_times_out(sim_state, sim_http):
    sim_state.set("stall", stream_stall_after=1)
    payload = {"model": "stall", "messages": MESSAGES, "stream": True}
    lines = []
    with pytest.raises(httpx.ReadTimeout):
        with sim_http.stream("POST", "/v1/chat/completions", json=payload, timeout=0.5) as reply:
            lines.extend(reply.iter_lines())
    assert _wait_for_ended(sim_state, "stall")["outcome"] == "stalled"


def test_unknown_or_mistyped_behaviour_raises():
    state = SimState()
    with pytest.raises(ValueError, match="latncy_s"):
        state.set("m", latncy_s=1)
    with pytest.raises(ValueError, match="latency_s"):
        state.set("m", latency_s="slow")
    with pytest.raises(ValueError, match="hang"):
        state.set("m", hang=1)
    with pytest.raises(ValueError, match="status"):
        state.set("m", status=302)
    with pytest.raises(ValueError, match="bogus"):
        create_sim_app({"models": {"m": {"bogus": True}}})


def test_log_records_every_request(sim_state, sim_http, sim_sdk):
    sim_sdk.chat.completions.create(model="a", messages=MESSAGES, max_tokens=7, temperature=0.2)
    _chat(sim_http, "b", stream=True)
    _chat(sim_http, "a")
    assert [(e["model"], e["n"], e["stream"]) for e in sim_state.requests] == [
        ("a", 1, False),
        ("b", 1, True),
        ("a", 2, False),
    ]
    first = sim_state.log_for("a")[0]
    assert (first["max_tokens"], first["temperature"], first["status"]) == (7, 0.2, 200)
    assert all(e["started"] <= e["ended"] for e in sim_state.requests)
    remote = sim_http.get("/_sim/requests", params={"model": "a"}).json()["requests"]
    assert [e["n"] for e in remote] == [1, 2]


def test_load_spec_yaml_json_and_bare_forms(tmp_path):
    yaml_file = tmp_path / "sim.yaml"
    yaml_file.write_text('models:\n  "*": {latency_s: 0.05}\n  kimi-k2: {answer: "hi"}\n')
    assert load_spec(str(yaml_file)) == {
        "models": {"*": {"latency_s": 0.05}, "kimi-k2": {"answer": "hi"}}
    }
    json_file = tmp_path / "sim.json"
    json_file.write_text('{"slowpoke": {"latency_s": 2}}')
    spec = load_spec(str(json_file))
    assert spec == {"models": {"slowpoke": {"latency_s": 2}}}
    assert create_sim_app(spec).state.sim.behaviour_for("slowpoke")["latency_s"] == 2
    yaml_file.write_text("models:\n  m: {latency: 1}\n")
    with pytest.raises(ValueError, match="latency"):
        load_spec(str(yaml_file))


def test_a_spec_that_does_not_parse_is_a_value_error_naming_the_file(tmp_path):
    for name, text in (("spec.yaml", "models: [unclosed\n"), ("spec.json", "{nope")):
        bad = tmp_path / name
        bad.write_text(text)
        with pytest.raises(ValueError, match=f"simulator spec {bad} is not valid") as caught:
            load_spec(bad)
        assert "<unicode string>" not in str(caught.value)


def test_the_simulator_imports_nothing_from_the_gateway():
    """It is a tool beside the product: importing it, in a fresh interpreter, loads no gateway
    module, so it runs (and can be reasoned about) on its own."""
    probe = (
        "import sys, simulator\n"
        "loaded = sorted(m for m in sys.modules if m == 'gateway' or m.startswith('gateway.'))\n"
        "print(','.join(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_response_headers_are_a_behaviour_checked_like_the_others():
    from simulator.state import validate_behaviour

    assert validate_behaviour({"headers": {"X-RateLimit-Remaining": 0}})["headers"]
    with pytest.raises(ValueError, match="headers"):
        validate_behaviour({"headers": {"X-RateLimit-Remaining": [0]}})
    with pytest.raises(ValueError, match="headers"):
        validate_behaviour({"headers": "x-ratelimit-remaining: 0"})


def test_fail_for_s_fails_for_a_while_on_the_simulators_clock_then_recovers():
    clock = ManualClock()
    app = create_sim_app(clock=clock)
    state: SimState = app.state.sim
    with _serve_in_thread(app) as base, httpx.Client(base_url=base, timeout=5) as client:
        state.set("flapping", status=503, fail_for_s=60)
        assert [_chat(client, "flapping").status_code for _ in range(3)] == [503] * 3
        clock.advance(59.5)
        assert _chat(client, "flapping").status_code == 503
        clock.advance(0.5)
        assert [_chat(client, "flapping").status_code for _ in range(2)] == [200] * 2
        state.set("flapping", status=503, fail_for_s=60)  # set again: the time starts again
        assert _chat(client, "flapping").status_code == 503


CONTINUE = "Continue your reply exactly from where it stops."


def test_a_prefill_is_continued_refused_or_repeated(sim_state, sim_sdk, sim_http):
    answer = "alpha beta gamma delta epsilon"
    prefill = [*MESSAGES, {"role": "assistant", "content": "alpha beta "}]
    sim_state.set("goes-on", answer=answer)
    reply = sim_sdk.chat.completions.create(model="goes-on", messages=prefill)
    assert reply.choices[0].message.content == "gamma delta epsilon"
    told = [*prefill, {"role": "user", "content": CONTINUE}]  # the instruction form
    reply = sim_sdk.chat.completions.create(model="goes-on", messages=told)
    assert reply.choices[0].message.content == "gamma delta epsilon"
    sim_state.set("refuses", answer=answer, refuses_prefill=True)
    with pytest.raises(openai.BadRequestError, match="prefill"):
        sim_sdk.chat.completions.create(model="refuses", messages=prefill)
    assert sim_sdk.chat.completions.create(model="refuses", messages=told).choices
    sim_state.set("repeats", answer=answer, repeats_prefix=True)
    reply = sim_sdk.chat.completions.create(model="repeats", messages=told)
    assert reply.choices[0].message.content == answer


def test_a_reasoning_model_streams_its_thinking_first(sim_state, sim_http):
    sim_state.set("thinker", answer="The answer.", reasoning="let me think about it", think_s=0.2)
    began = time.monotonic()
    lines = _chat(sim_http, "thinker", stream=True).text.split("\n\n")
    deltas = [json.loads(x[6:])["choices"][0]["delta"] for x in lines if x.startswith("data: {")]
    assert [d.get("reasoning_content") for d in deltas[1:3]] == ["let me think ", "about it"]
    assert deltas[3] == {"content": "The answer."}
    assert time.monotonic() - began >= 0.2
    plain = _chat(sim_http, "thinker").json()["choices"][0]["message"]
    assert plain["reasoning_content"] == "let me think about it"
    sim_state.set("silent-thinker", think_s=0.2)  # no reasoning shown: silent, then the answer
    began = time.monotonic()
    assert "Simulated answer" in _chat(sim_http, "silent-thinker", stream=True).text
    assert time.monotonic() - began >= 0.2


def test_an_answer_of_many_bytes_comes_in_big_pieces(sim_state, sim_http):
    sim_state.set("huge", answer_bytes=300_000, piece_bytes=100_000)
    lines = [x for x in _chat(sim_http, "huge", stream=True).text.split("\n\n") if x]
    pieces = [json.loads(x[6:])["choices"] for x in lines if x.startswith("data: {")]
    texts = [c[0]["delta"].get("content") for c in pieces if c and c[0]["delta"].get("content")]
    assert [len(t) for t in texts] == [100_000] * 3
    assert len(_chat(sim_http, "huge").json()["choices"][0]["message"]["content"]) == 300_000


def test_a_stream_cut_inside_a_tool_calls_arguments(sim_state, sim_http):
    sim_state.set(
        "caller", tool_call={"name": "weather", "arguments": {"city": "Oslo"}}, stream_cut_after=2
    )
    tools = [{"type": "function", "function": {"name": "weather", "parameters": {}}}]
    payload = {"model": "caller", "messages": MESSAGES, "stream": True, "tools": tools}
    lines: list[str] = []
    with pytest.raises(httpx.RemoteProtocolError):
        with sim_http.stream("POST", "/v1/chat/completions", json=payload) as reply:
            lines.extend(reply.iter_lines())
    parts = [
        call["function"]["arguments"]
        for line in lines
        if line.startswith("data: {")
        for call in json.loads(line[6:])["choices"][0]["delta"].get("tool_calls") or ()
    ]
    assert parts == ["", '{"city":']  # the call's head and the first half of its arguments
    (entry,) = sim_state.log_for("caller")
    assert entry["outcome"] == "cut"


def test_a_scripted_reply_is_sent_byte_for_byte(sim_state, sim_http):
    parts = ['data: {"a": 1}\n\n', 'data: {"b": "\udcff"}\n\n']
    sim_state.set("scripted", script={"status": 203, "headers": {"x-what": "so"}, "parts": parts})
    reply = _chat(sim_http, "scripted")
    assert reply.status_code == 203 and reply.headers["x-what"] == "so"
    assert reply.headers["content-type"].startswith("text/event-stream")
    assert reply.content == b'data: {"a": 1}\n\ndata: {"b": "\xff"}\n\n'
    assert sim_state.log_for("scripted")[-1]["outcome"] == "scripted"


def test_a_script_with_an_unknown_key_is_refused(sim_state):
    with pytest.raises(ValueError, match="script key 'body'"):
        sim_state.set("scripted", script={"body": "x"})
