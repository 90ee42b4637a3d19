"""Gemini's API on a panel, driven by the official `google-genai` SDK against the real gateway."""

from __future__ import annotations

import asyncio
import base64
import json
import logging

import pytest
from google import genai
from google.genai import errors, types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.access.keys import key_record, new_key
from gateway.store.open import open_store
from tests.helpers.bench import (
    PNG,
    quiet_raw,
    seeing_raw,
    served,
    streamed_in_finish_order,
)

PROMPT = "Is the retry loop safe?"


def client(gw, key: str = "local") -> genai.Client:
    """The SDK's client, kept on the gateway object: a Client closes its connection pool when
    it is garbage collected, which a one-line `client(gw).models...` would do mid-call."""
    made = gw.__dict__.setdefault("genai", {})
    if key not in made:
        options = types.HttpOptions(base_url=gw.url, api_version="v1beta", timeout=30_000)
        made[key] = genai.Client(api_key=key, http_options=options)
    return made[key]


def seats_of(headers) -> list[tuple[str, str]]:
    return [(s["alias"], s["status"]) for s in json.loads(headers["x-bench-seats"])]


def test_generate_content_returns_every_seats_answer_and_bench_in_headers(gw, sim):
    for alias in ("alpha", "gamma", "delta"):
        sim.set(served(alias), answer=f"{alias} says yes")
    reply = client(gw).models.generate_content(model="bench/trio", contents=PROMPT)
    for alias in ("alpha", "gamma", "delta"):
        assert f"{alias} says yes" in reply.text
    candidate = reply.candidates[0]
    assert candidate.finish_reason == types.FinishReason.STOP and candidate.content.role == "model"
    assert reply.model_version == "bench/trio"
    assert reply.usage_metadata.total_token_count > 0
    headers = reply.sdk_http_response.headers
    assert seats_of(headers) == [("alpha", "ok"), ("gamma", "ok"), ("delta", "ok")]
    panel = gw.http.get(f"/bench/panels/{headers['x-bench-panel']}").json()
    assert panel["requested_model"] == "bench/trio" and len(panel["seats"]) == 3
    assert panel["prompt"] == PROMPT


def test_the_bare_collection_name_and_merged_work(gw, sim):
    reply = client(gw).models.generate_content(model="trio", contents=PROMPT)
    assert "## member1 — alpha" in reply.text
    r = gw.http.post(
        "/v1beta/models/bench/trio:merged:generateContent",
        json={"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]},
    )
    assert r.status_code == 200 and "## member1" not in r.json()["candidates"][0]["content"]


def test_config_goes_to_every_seat(gw, sim):
    config = types.GenerateContentConfig(
        system_instruction=["Be brief.", "Be kind."],
        temperature=0.3,
        top_p=0.9,
        max_output_tokens=64,
        stop_sequences=["END"],
        seed=11,
        response_mime_type="application/json",
    )
    client(gw).models.generate_content(model="bench/trio", contents=PROMPT, config=config)
    sent = sim.log(served("gamma"))[-1]["body"]
    assert sent["messages"][0] == {"role": "system", "content": "Be brief.\n\nBe kind."}
    assert sent["temperature"] == 0.3 and sent["top_p"] == 0.9 and sent["max_tokens"] == 64
    assert sent["stop"] == ["END"] and sent["seed"] == 11
    assert sent["response_format"] == {"type": "json_object"}
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_json_schema=schema
    )
    client(gw).models.generate_content(model="bench/trio", contents=PROMPT, config=config)
    sent = sim.log(served("gamma"))[-1]["body"]
    assert sent["response_format"]["json_schema"]["schema"] == schema


def test_a_conversation_and_an_image_reach_the_seats_that_can_see(make_gateway, sim):
    gw = make_gateway(seeing_raw(sim.url))
    contents = [
        types.Content(role="user", parts=[types.Part(text="Hello")]),
        types.Content(role="model", parts=[types.Part(text="Hi.")]),
        types.Content(
            role="user",
            parts=[
                types.Part(text="What is this?"),
                types.Part.from_bytes(data=base64.b64decode(PNG), mime_type="image/png"),
            ],
        ),
    ]
    client(gw).models.generate_content(model="bench/looks", contents=contents)
    messages = sim.log("sim-eye")[-1]["body"]["messages"]
    assert messages[:2] == [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi."},
    ]
    assert messages[2]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{PNG}"},
    }


def test_the_stream_sends_a_chunk_per_seat_as_it_finishes(gw, sim):
    sim.set(served("alpha"), answer="alpha streamed", latency_s=1.0)
    sim.set(served("gamma"), answer="gamma streamed")
    chunks = list(client(gw).models.generate_content_stream(model="bench/trio", contents=PROMPT))
    text = "".join(c.text or "" for c in chunks)
    panel = chunks[0].sdk_http_response.headers["x-bench-panel"]
    assert streamed_in_finish_order(gw, panel, text)
    sections = [c.text for c in chunks if (c.text or "").startswith("## ")]
    assert len(sections) == 3
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    assert chunks[-1].usage_metadata.total_token_count > 0
    headers = chunks[0].sdk_http_response.headers
    assert [a for a, _ in seats_of(headers)] == ["alpha", "gamma", "delta"]
    assert gw.http.get(f"/bench/panels/{headers['x-bench-panel']}").status_code == 200


def test_the_stream_without_alt_sse_is_one_json_array(gw, sim):
    body = {"contents": [{"parts": [{"text": PROMPT}]}]}
    r = gw.http.post("/v1beta/models/trio:streamGenerateContent", json=body)
    chunks = r.json()
    assert isinstance(chunks, list) and len(chunks) == 5  # header, three seats, last
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    r = gw.http.post("/v1beta/models/trio:streamGenerateContent?alt=sse", json=body)
    assert r.headers["content-type"].startswith("text/event-stream")
    events = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: ")]
    assert events == [{**c, "responseId": events[0]["responseId"]} for c in events]


def test_count_tokens_estimates_without_calling_anyone(gw, sim):
    counted = client(gw).models.count_tokens(model="bench/trio", contents="x" * 400)
    assert counted.total_tokens == 110  # characters / 4 + 10 %
    assert sim.log() == []
    with pytest.raises(errors.ClientError) as unknown:
        client(gw).models.count_tokens(model="bench/nope", contents="hi")
    assert unknown.value.code == 404


def test_models_list_and_get_show_the_same_collections(gw):
    names = [m.name for m in client(gw).models.list()]
    listed = [m["id"] for m in gw.http.get("/v1/models").json()["data"]]
    assert names == ["models/" + name for name in listed]
    model = client(gw).models.get(model="bench/trio")
    assert model.name == "models/bench/trio" and model.description == "three members"
    assert "generateContent" in model.supported_actions
    assert client(gw).models.get(model="trio").name == "models/bench/trio"
    with pytest.raises(errors.ClientError) as unknown:
        client(gw).models.get(model="bench/nope")
    assert unknown.value.code == 404 and unknown.value.status == "NOT_FOUND"


def test_errors_are_gemini_shaped_with_the_gateways_statuses(gw, sim):
    c = client(gw)
    with pytest.raises(errors.ClientError) as unknown:
        c.models.generate_content(model="bench/nope", contents=PROMPT)
    assert unknown.value.code == 404 and unknown.value.status == "NOT_FOUND"
    assert "trio" in unknown.value.message
    tool = types.Tool(function_declarations=[types.FunctionDeclaration(name="f")])
    forced = types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode=types.FunctionCallingConfigMode.ANY
        )
    )
    with pytest.raises(errors.ClientError) as refused:
        c.models.generate_content(
            model="bench/trio",
            contents=PROMPT,
            config=types.GenerateContentConfig(tools=[tool], tool_config=forced),
        )
    assert refused.value.code == 400 and refused.value.status == "INVALID_ARGUMENT"
    assert ":route" in refused.value.message
    with pytest.raises(errors.ClientError) as two:
        c.models.generate_content(
            model="bench/trio",
            contents=PROMPT,
            config=types.GenerateContentConfig(candidate_count=2),
        )
    assert two.value.code == 400 and "candidateCount" in two.value.message
    r = gw.http.post("/v1beta/models/trio:generateContent", content=b"[", headers=JSON)
    assert r.status_code == 400 and set(r.json()["error"]) == {"code", "message", "status"}
    assert sim.log() == []


JSON = {"content-type": "application/json"}
_TEXT = [{"role": "user", "parts": [{"text": PROMPT}]}]


@pytest.mark.parametrize(
    "body",
    [
        {
            "contents": _TEXT,
            "tools": [{"functionDeclarations": [{"name": "f"}]}],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
        },
        {"contents": _TEXT, "cachedContent": "cachedContents/abc"},
        {"contents": [{"parts": [{"fileData": {"fileUri": "files/x", "mimeType": "image/png"}}]}]},
        {"contents": [{"parts": [{"functionCall": {"args": {}}}]}]},
        {"contents": [{"parts": [{"inlineData": {"mimeType": "audio/wav", "data": "AAAA"}}]}]},
        {"contents": _TEXT, "generationConfig": {"topK": -3}},
        {"contents": _TEXT, "generationConfig": {"thinkingConfig": {"thinkingLevel": "MAX"}}},
        {"contents": _TEXT, "generationConfig": {"responseMimeType": "text/x.enum"}},
        {"contents": _TEXT, "systemInstruction": {"parts": [{"inlineData": {}}]}},
        {"contents": [{"role": "tool", "parts": [{"text": "x"}]}]},
        {"contents": []},
    ],
)
def test_a_refused_request_calls_nothing_and_records_nothing(gw, sim, body):
    r = gw.http.post("/v1beta/models/bench/trio:generateContent", json=body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert sim.log() == []
    assert gw.runtime.figures.row("alpha")["seated"] == 0


def test_a_seats_failure_shows_and_no_answer_is_an_error(gw, sim):
    sim.set(served("gamma"), status=500)
    reply = client(gw).models.generate_content(model="bench/trio", contents=PROMPT)
    assert "## member2 — gamma" in reply.text
    assert ("gamma", "error") in seats_of(reply.sdk_http_response.headers)
    for alias in ("alpha", "delta"):
        sim.set(served(alias), status=500)
    r = gw.http.post("/v1beta/models/trio:generateContent", json={"contents": _TEXT})
    assert r.status_code == 502 and r.json()["error"]["status"] == "UNAVAILABLE"
    assert [status for _, status in seats_of(r.headers)] == ["error"] * 3
    with pytest.raises(errors.APIError) as streamed:
        list(client(gw).models.generate_content_stream(model="bench/trio", contents=PROMPT))
    assert streamed.value.code == 502


async def add_key(gw, record) -> None:
    """As `bench-gateway keys create` does: into the gateway's store, from beside it."""
    store = open_store(gw.config.store)
    await store.open()
    try:
        await store.add_key(record)
    finally:
        await store.close()


def test_keys_come_from_x_goog_api_key_or_the_key_parameter(make_gateway, sim, caplog):
    gw = make_gateway(quiet_raw(sim.url, require_keys=True))
    with pytest.raises(errors.ClientError) as unknown:
        client(gw, key="not-a-key").models.generate_content(model="bench/trio", contents=PROMPT)
    assert unknown.value.code == 401 and unknown.value.status == "UNAUTHENTICATED"
    assert sim.log() == []
    key = new_key()
    asyncio.run(add_key(gw, key_record("gem", key, None, None)))
    caplog.set_level(logging.DEBUG)
    reply = client(gw, key=key).models.generate_content(model="bench/trio", contents=PROMPT)
    assert "## member1" in reply.text  # the SDK sends x-goog-api-key
    r = gw.http.post(f"/v1beta/models/trio:generateContent?key={key}", json={"contents": _TEXT})
    assert r.status_code == 200
    assert gw.http.get(f"/v1beta/models?key={key}").status_code == 200
    assert gw.http.get("/v1/models", params={"key": key}).status_code == 401  # Gemini routes only
    assert key not in caplog.text


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
_PART = st.fixed_dictionaries(
    {}, optional={"text": _JSON, "inlineData": _JSON, "functionCall": _JSON}
)
_BODY = st.fixed_dictionaries(
    {},
    optional={
        "contents": st.lists(
            st.fixed_dictionaries(
                {}, optional={"role": st.sampled_from(["user", "model", "x"]), "parts": _JSON}
            )
            | st.fixed_dictionaries({"parts": st.lists(_PART, max_size=2)}),
            max_size=2,
        )
        | _JSON,
        "systemInstruction": _JSON,
        "generationConfig": st.dictionaries(
            st.sampled_from(["temperature", "maxOutputTokens", "topK", "candidateCount"]), _JSON
        )
        | _JSON,
        "tools": _JSON,
    },
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=_BODY,
    path=st.sampled_from(
        [
            "bench/trio:generateContent",
            "trio:streamGenerateContent?alt=sse",
            "trio:countTokens",
            "nope:generateContent",
        ]
    ),
)
def test_any_body_gets_an_answer_or_a_gemini_error_never_a_500(gw, body, path):
    r = gw.http.post(f"/v1beta/models/{path}", json=body)
    assert r.status_code < 500 or r.status_code == 502
    if r.status_code >= 400:
        error = r.json()["error"]
        assert error["code"] == r.status_code and isinstance(error["message"], str)
        assert error["status"] in ("INVALID_ARGUMENT", "NOT_FOUND", "UNAVAILABLE")


def test_keep_alives_while_seats_think_do_not_disturb_the_sdk(make_gateway, sim):
    gw = make_gateway(quiet_raw(sim.url, keepalive_s=0.2))
    sim.set(served("alpha"), latency_s=1.0, answer="slow alpha")
    chunks = list(client(gw).models.generate_content_stream(model="bench/trio", contents=PROMPT))
    assert sum(1 for c in chunks if c.text in ("", None)) >= 2  # the keep-alives, then the last
    assert "slow alpha" in "".join(c.text or "" for c in chunks)
