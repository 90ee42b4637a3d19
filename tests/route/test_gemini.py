"""Route mode in Gemini's format: agent loops through the official `google-genai` client (its
automatic function calling, and a loop of our own), against the real gateway and litellm calling
the simulated upstream."""

from __future__ import annotations

import json

import pytest
from google import genai
from google.genai import errors, types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.route import CALL

MODEL = "bench/crew:route"
QUESTION = "What is the weather in Oslo?"


def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def client(gw) -> genai.Client:
    """The SDK's client, kept on the gateway object (a Client closes its pool when collected)."""
    if "genai" not in gw.__dict__:
        options = types.HttpOptions(base_url=gw.url, api_version="v1beta", timeout=30_000)
        gw.genai = genai.Client(api_key="local", http_options=options)
    return gw.genai


def conversation(gw, headers) -> dict:
    return gw.http.get(f"/bench/conversations/{headers['x-bench-conversation']}").json()


def test_automatic_function_calling_runs_its_loop_through_route_mode(crew, sim):
    config = types.GenerateContentConfig(tools=[weather], system_instruction="Be a weather agent.")
    reply = client(crew).models.generate_content(model=MODEL, contents=QUESTION, config=config)
    assert reply.text == 'The tool said: {"result": "sunny in Oslo"}'
    call = reply.automatic_function_calling_history[1].parts[0].function_call
    assert (call.name, call.args) == ("weather", CALL["arguments"]) and call.id.startswith("call_")
    first, second = (r["body"] for r in sim.log("sim-alpha"))
    assert first["tools"][0]["function"]["parameters"]["properties"] == {
        "city": {"type": "string"}
    }  # the SDK's schema of the function, in OpenAI's words
    assistant, result = second["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == call.id  # the id the client was given, echoed
    assert result["tool_call_id"] == call.id and json.loads(result["content"]) == {
        "result": "sunny in Oslo"
    }
    record = conversation(crew, reply.sdk_http_response.headers)
    assert [(t["alias"], t["status"]) for t in record["turns"]] == [("alpha", "ok")] * 2
    assert reply.response_id == record["turns"][1]["id"]  # the turn's call, to judge


def test_two_calls_of_one_function_keep_their_own_ids(crew, sim):
    calls = [{"name": "weather", "arguments": {"city": c}} for c in ("Oslo", "Rome")]
    sim.set("sim-alpha", tool_call=calls)
    config = types.GenerateContentConfig(tools=[weather])
    reply = client(crew).models.generate_content(model=MODEL, contents=QUESTION, config=config)
    made = [p.function_call for p in reply.automatic_function_calling_history[1].parts]
    assert [c.args["city"] for c in made] == ["Oslo", "Rome"] and made[0].id != made[1].id
    sent = sim.log("sim-alpha")[-1]["body"]["messages"]
    answers = {m["tool_call_id"]: json.loads(m["content"])["result"] for m in sent[-2:]}
    assert answers == {made[0].id: "sunny in Oslo", made[1].id: "sunny in Rome"}


def test_a_streamed_loop_of_our_own_with_ids_and_a_forced_function(crew, sim):
    declaration = types.FunctionDeclaration.from_callable(
        client=client(crew)._api_client, callable=weather
    )
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])],
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode="ANY", allowed_function_names=["weather"]
            )
        ),
    )
    contents = [types.Content(role="user", parts=[types.Part(text=QUESTION)])]
    texts, calls = [], []
    for chunk in client(crew).models.generate_content_stream(
        model=MODEL, contents=contents, config=config
    ):
        calls += chunk.function_calls or []
    (call,) = calls
    assert sim.log("sim-alpha")[-1]["body"]["tool_choice"] == {
        "type": "function", "function": {"name": "weather"}
    }  # fmt: skip
    contents += [
        types.Content(role="model", parts=[types.Part(function_call=call)]),
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=call.id, name=call.name, response={"output": weather(**call.args)}
                    )
                )
            ],
        ),
    ]
    for chunk in client(crew).models.generate_content_stream(
        model=MODEL, contents=contents, config=config
    ):
        texts.append(chunk.text or "")
    assert "".join(texts) == 'The tool said: {"output": "sunny in Oslo"}'
    assert len([t for t in texts if t]) > 1  # relayed piece by piece
    assert chunk.candidates[0].finish_reason == types.FinishReason.STOP
    assert chunk.usage_metadata.candidates_token_count > 0


def test_the_stream_without_alt_sse_is_one_json_array(crew, sim):
    body = {"contents": [{"role": "user", "parts": [{"text": "hello"}]}]}
    r = crew.http.post(f"/v1beta/models/{MODEL}:streamGenerateContent", json=body)
    chunks = r.json()
    assert r.status_code == 200 and len(chunks) > 2
    text = "".join(p["text"] for c in chunks for p in c["candidates"][0]["content"]["parts"])
    assert text == "Simulated answer from sim-alpha. You said: hello"
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert r.headers["x-bench-model"] == "alpha"


def test_a_rate_limited_member_hands_the_turn_on_before_the_first_chunk(crew, sim):
    sim.set("sim-alpha", status=429, retry_after=30)
    chunks = list(client(crew).models.generate_content_stream(model=MODEL, contents=QUESTION))
    assert "".join(c.text or "" for c in chunks).startswith("Simulated answer from sim-gamma.")
    assert chunks[0].sdk_http_response.headers["x-bench-model"] == "gamma"
    assert len(sim.log("sim-alpha")) == 1
    record = conversation(crew, chunks[0].sdk_http_response.headers)
    assert record["turns"][0]["failed_over"][0]["status"] == "rate_limited"


def test_an_error_after_the_first_chunk_is_an_error_never_a_short_success(crew, sim):
    sim.set("sim-alpha", error_after=1, answer="one two three four five six seven")
    for other in ("sim-gamma", "sim-delta"):  # and nobody can continue it
        sim.set(other, status=500)
    seen = []
    with pytest.raises(errors.ServerError) as caught:
        for chunk in client(crew).models.generate_content_stream(model=MODEL, contents=QUESTION):
            seen.append(chunk.text)
    assert caught.value.code == 502 and "mid-stream" in caught.value.message
    assert [text for text in seen if text] == ["one two three "]  # keep-alives carry ""
    assert [len(sim.log(m)) for m in ("sim-gamma", "sim-delta")] == [1, 1]  # asked to go on


@pytest.mark.parametrize(
    ("parts", "tools", "says"),
    [
        ([{"functionResponse": {"name": "weather", "response": "sunny"}}], None, "object"),
        ([{"functionResponse": {"name": "weather", "response": {}}}], None, "answers no"),
        ([{"text": "hi"}], [{"functionDeclarations": [{"name": "w", "behavior": 1}]}], "behavior"),
    ],
)
def test_bad_function_parts_and_declarations_are_refused_calling_nothing(
    crew,
    sim,
    parts,
    tools,
    says,
):
    body = {"contents": [{"role": "user", "parts": parts}], **({"tools": tools} if tools else {})}
    r = crew.http.post(f"/v1beta/models/{MODEL}:generateContent", json=body)
    error = r.json()["error"]
    assert (
        r.status_code == 400 and error["status"] == "INVALID_ARGUMENT" and says in error["message"]
    )
    assert sim.log() == []
    assert crew.http.get("/bench/panels").json()["panels"] == []


def test_a_call_left_unanswered_is_refused_through_the_sdk(crew, sim):
    contents = [
        types.Content(role="user", parts=[types.Part(text=QUESTION)]),
        types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(name="weather", args={}))],
        ),
        types.Content(role="user", parts=[types.Part(text="never mind")]),
    ]
    with pytest.raises(errors.ClientError) as caught:
        client(crew).models.generate_content(model=MODEL, contents=contents)
    assert caught.value.code == 400 and "has no functionResponse" in caught.value.message
    assert sim.log() == []


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)
_PART = (
    st.fixed_dictionaries({"text": st.text(max_size=5)})
    | st.fixed_dictionaries(
        {
            "functionCall": st.fixed_dictionaries(
                {"name": st.just("weather") | _JSON}, optional={"args": _JSON, "id": _JSON}
            )
        }
    )
    | st.fixed_dictionaries(
        {
            "functionResponse": st.fixed_dictionaries(
                {"name": st.just("weather") | _JSON},
                optional={"response": st.just({"r": 1}) | _JSON, "id": _JSON},
            )
        }
    )
    | st.dictionaries(st.text(max_size=6), _JSON, max_size=2)
)
_TOOLS = st.just(
    [{"functionDeclarations": [{"name": "weather", "parameters": {"type": "OBJECT"}}]}]
)
_BODY = st.fixed_dictionaries(
    {
        "contents": st.lists(
            st.fixed_dictionaries(
                {
                    "role": st.sampled_from(["user", "model", "user", "model", "x"]),
                    "parts": st.lists(_PART, min_size=1, max_size=2),
                }
            ),
            min_size=1,
            max_size=3,
        )
    },
    optional={
        "tools": _TOOLS | st.lists(_JSON, max_size=1),
        "toolConfig": st.just({"functionCallingConfig": {"mode": "ANY"}}) | _JSON,
    },
) | st.dictionaries(st.sampled_from(["contents", "tools", "toolConfig"]), _JSON)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=_BODY, method=st.sampled_from(["generateContent", "streamGenerateContent?alt=sse"]))
def test_any_route_body_gets_a_turn_or_a_gemini_error_and_a_refusal_calls_nothing(
    crew, sim, body, method
):
    called = len(sim.log())
    r = crew.http.post(f"/v1beta/models/{MODEL}:{method}", json=body)
    assert r.status_code in (200, 400), r.text
    if r.status_code == 400:
        error = r.json()["error"]
        assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
        assert len(sim.log()) == called
    elif method == "generateContent":
        assert r.json()["candidates"][0]["finishReason"] == "STOP"
    else:
        last = json.loads(r.text.strip().rsplit("data: ", 1)[-1])
        assert last["candidates"][0]["finishReason"] == "STOP"
