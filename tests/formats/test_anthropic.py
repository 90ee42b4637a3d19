"""Anthropic Messages, driven by the official `anthropic` SDK against the real gateway and the
simulated upstream: create, stream, count_tokens, errors in Anthropic's shape, images."""

from __future__ import annotations

import base64
import inspect
import json
import sqlite3

import anthropic
import httpx
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.bench import nothing_happened, seeing_raw, served
from tests.helpers.fuzz import against_a_gateway

USER = [{"role": "user", "content": "Is this code right?"}]
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8).decode()
ANTHROPIC_ERRORS = {
    "invalid_request_error",
    "authentication_error",
    "permission_error",
    "not_found_error",
    "request_too_large",
    "rate_limit_error",
    "api_error",
    "overloaded_error",
}


def client_of(gw, key: str = "local") -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=gw.url, api_key=key, max_retries=0, timeout=30)


def db_of(gw) -> str:
    return gw.config.store.removeprefix("sqlite:///")


# -- create -------------------------------------------------------------------------------------


def test_a_panel_answers_as_an_anthropic_message_with_every_seat(gateway, sim):
    raw = client_of(gateway).messages.with_raw_response.create(
        model="bench/trio", max_tokens=200, messages=USER, system="Be brief."
    )
    message = raw.parse()
    assert message.type == "message" and message.role == "assistant"
    assert message.id.startswith("msg_p") and message.model == "bench/trio"
    assert message.stop_reason == "end_turn"
    [block] = message.content
    bench = message.model_extra["bench"]
    assert len(bench["seats"]) == 5  # three members, two explorers
    for seat in bench["seats"]:
        assert seat["status"] == "ok"
        assert f"## {seat['seat']} — {seat['alias']}" in block.text
        assert seat["answer"] in block.text
    assert message.usage.output_tokens > 0
    assert raw.headers["X-Bench-Panel"] == bench["panel"]
    seats = json.loads(raw.headers["X-Bench-Seats"])
    assert [s["call"] for s in seats] == [s["call"] for s in bench["seats"]]
    assert {r["max_tokens"] for r in sim.log()} == {200}
    record = gateway.http.get(f"/bench/panels/{bench['panel']}").json()
    assert record["requested_model"] == "bench/trio"
    assert "Is this code right?" in record["prompt"] and "Be brief." in record["prompt"]
    assert len(record["seats"]) == 5


def test_sampling_is_mapped_and_passed_to_every_seat(gateway, sim):
    message = client_of(gateway).messages.create(
        model="trio",
        max_tokens=50,
        messages=USER,
        extra_body={"temperature": 0.3, "top_p": 0.9, "top_k": 5},
        stop_sequences=["END"],
        service_tier="auto",
        cache_control={"type": "ephemeral"},
        metadata={"user_id": "someone"},
        extra_headers={"anthropic-version": "2023-06-01"},
    )
    assert message.stop_reason == "end_turn"
    assert [(r["max_tokens"], r["temperature"]) for r in sim.log()] == [(50, 0.3)] * 5


def test_the_panel_shape_header_is_honoured(gateway, sim):
    raw = client_of(gateway).messages.with_raw_response.create(
        model="bench/trio",
        max_tokens=20,
        messages=USER,
        extra_headers={"X-Panel-Shape": "code"},
    )
    assert raw.headers["X-Panel-Shape"] == "code"
    assert raw.parse().model_extra["bench"]["shape_by"] == "header"


def test_a_seat_failure_shows_in_the_message(gateway, sim):
    sim.set(served("gamma"), status=500)
    message = client_of(gateway).messages.create(model="bench/trio", max_tokens=20, messages=USER)
    by_alias = {s["alias"]: s for s in message.model_extra["bench"]["seats"]}
    assert by_alias["gamma"]["status"] == "error"
    assert "> " in message.content[0].text  # the failed seat's error is quoted in its section


def test_no_seat_answering_is_an_anthropic_api_error_carrying_bench(gateway, sim):
    sim.set("*", status=500)
    with pytest.raises(anthropic.InternalServerError) as caught:
        client_of(gateway).messages.create(model="bench/solo", max_tokens=20, messages=USER)
    body = caught.value.response.json()
    assert caught.value.status_code == 502
    assert body["type"] == "error" and body["error"]["type"] == "api_error"
    assert body["bench"]["seats"]


def test_a_merged_reply_is_one_answer(gateway, sim):
    message = client_of(gateway).messages.create(
        model="bench/trio:merged", max_tokens=50, messages=USER
    )
    assert not message.content[0].text.startswith("**Panel**")  # not the seats side by side
    assert message.model_extra["bench"]["merger"]["status"] == "ok"


# -- stream -------------------------------------------------------------------------------------


def test_the_stream_delivers_every_seat_then_the_final_message(gateway, sim):
    with client_of(gateway).messages.stream(
        model="bench/trio", max_tokens=100, messages=USER
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert final.stop_reason == "end_turn" and final.id.startswith("msg_p")
    assert final.content[0].text == text
    assert text.count("\n## ") == 5
    assert final.usage.output_tokens > 0


def test_the_stream_ends_with_bench_in_message_delta(gateway, sim):
    with client_of(gateway).messages.stream(
        model="bench/trio", max_tokens=100, messages=USER
    ) as stream:
        events = [event.type for event in stream]
    assert events[0] == "message_start" and events[-1] == "message_stop"
    raw = gateway.http.post(
        "/v1/messages",
        json={"model": "bench/trio", "max_tokens": 100, "messages": USER, "stream": True},
    )
    frames = [line for line in raw.text.split("\n\n") if line]
    kinds = [frame.split("\n")[0].removeprefix("event: ") for frame in frames]
    assert kinds[:2] == ["message_start", "content_block_start"]
    assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert kinds.count("content_block_delta") == 1 + 5  # the header, then a section per seat
    delta = json.loads(frames[kinds.index("message_delta")].split("data: ", 1)[1])
    assert delta["delta"]["stop_reason"] == "end_turn"
    assert [s["status"] for s in delta["bench"]["seats"]] == ["ok"] * 5
    assert raw.headers["X-Bench-Panel"] == delta["bench"]["panel"]
    record = gateway.http.get(f"/bench/panels/{delta['bench']['panel']}").json()
    assert len(record["seats"]) == 5


def test_pings_keep_a_slow_stream_alive(make_gateway, sim):
    gw = make_gateway(keepalive_s=0.05)
    sim.set("*", latency_s=0.3)
    raw = gw.http.post(
        "/v1/messages",
        json={"model": "bench/solo", "max_tokens": 10, "messages": USER, "stream": True},
    )
    assert 'event: ping\ndata: {"type":"ping"}' in raw.text


def test_a_panel_failing_mid_stream_is_an_error_event(gateway, sim):
    sim.set("*", status=500)
    with pytest.raises(anthropic.APIStatusError):
        with client_of(gateway).messages.stream(
            model="bench/solo", max_tokens=10, messages=USER
        ) as stream:
            stream.get_final_message()


# -- count_tokens -------------------------------------------------------------------------------


def test_count_tokens_is_the_gateways_estimate_and_calls_nothing(gateway, sim):
    client = client_of(gateway)
    short = client.messages.count_tokens(model="bench/trio", messages=USER)
    longer = client.messages.count_tokens(
        model="bench/trio", messages=[{"role": "user", "content": "word " * 400}], system="x"
    )
    assert 0 < short.input_tokens < longer.input_tokens
    assert longer.input_tokens == int(len("x\n\n" + "word " * 400) / 4 * 1.1)
    nothing_happened(sim, gateway)
    with pytest.raises(anthropic.NotFoundError):
        client.messages.count_tokens(model="bench/nope", messages=USER)


# -- errors -------------------------------------------------------------------------------------


def anthropic_error(caught, status: int, kind: str) -> str:
    assert caught.value.status_code == status
    body = caught.value.response.json()
    assert body["type"] == "error" and body["error"]["type"] == kind
    return body["error"]["message"]


def test_an_unknown_collection_is_not_found_in_anthropic_shape(gateway, sim):
    with pytest.raises(anthropic.NotFoundError) as caught:
        client_of(gateway).messages.create(model="bench/nope", max_tokens=10, messages=USER)
    message = anthropic_error(caught, 404, "not_found_error")
    assert "bench/trio" in message  # the known collections are listed
    nothing_happened(sim, gateway)


@pytest.mark.parametrize(
    "extra, words",
    [
        ({"tool_choice": {"type": "any"}}, ":route"),
        ({"tool_choice": {"type": "tool", "name": "f"}}, ":route"),
        ({"thinking": {"type": "sometimes"}}, "thinking"),
        ({"output_config": {"effort": "extreme"}}, "effort"),
        ({"output_config": {"format": {"type": "xml"}}}, "json_schema"),
        ({"top_k": -1}, "top_k"),
    ],
)
def test_what_a_panel_cannot_read_is_refused_and_calls_nothing(gateway, sim, extra, words):
    with pytest.raises(anthropic.BadRequestError) as caught:
        client_of(gateway).messages.create(
            model="bench/trio", max_tokens=10, messages=USER, extra_body=extra
        )
    assert words in anthropic_error(caught, 400, "invalid_request_error")
    nothing_happened(sim, gateway)


@pytest.mark.parametrize(
    "content, words",
    [
        ([{"type": "web_search_tool_result", "tool_use_id": "t1", "content": []}], "its side"),
        (
            [
                {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": "x"},
                }
            ],
            "documents",
        ),
        ([{"type": "image", "source": {"type": "file", "file_id": "f1"}}], "file ids"),
        ([{"type": "image", "source": {"type": "base64", "media_type": "image/png"}}], "base64"),
    ],
)
def test_blocks_a_panel_cannot_take_are_refused_by_name(gateway, sim, content, words):
    with pytest.raises(anthropic.BadRequestError) as caught:
        client_of(gateway).messages.create(
            model="bench/trio", max_tokens=10, messages=[{"role": "user", "content": content}]
        )
    assert words in anthropic_error(caught, 400, "invalid_request_error")
    nothing_happened(sim, gateway)


def test_max_tokens_is_required(gateway, sim):
    response = gateway.http.post("/v1/messages", json={"model": "bench/trio", "messages": USER})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    nothing_happened(sim, gateway)


def test_without_a_key_when_keys_are_required_is_an_authentication_error(make_gateway, sim):
    gw = make_gateway(require_keys=True)
    with pytest.raises(anthropic.AuthenticationError) as caught:
        client_of(gw, key="bwk_" + "x" * 43).messages.create(
            model="bench/trio", max_tokens=10, messages=USER
        )
    assert "Unknown" in anthropic_error(caught, 401, "authentication_error")
    keyless = gw.http.post(
        "/v1/messages", json={"model": "bench/trio", "max_tokens": 10, "messages": USER}
    )
    assert keyless.status_code == 401 and keyless.headers["WWW-Authenticate"] == "Bearer"
    assert keyless.json()["error"]["type"] == "authentication_error"
    assert "No gateway key" in keyless.json()["error"]["message"]
    nothing_happened(sim, gw)


# -- images -------------------------------------------------------------------------------------


def stored_bytes(gw) -> bytes:
    path = db_of(gw)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(FULL)")
    with open(path, "rb") as f:
        data = f.read()
    try:
        with open(path + "-wal", "rb") as f:
            data += f.read()
    except FileNotFoundError:
        pass
    return data


def assert_seated_only_seeing(gw, sim, bench: dict) -> None:
    aliases = {s["alias"] for s in bench["seats"]}
    assert aliases and aliases <= {"eye", "seer"}
    assert bench["shape"] == "vision" and bench["shape_by"] == "images"
    assert any("images" in note for note in bench["notes"])
    assert any(s["alias"] == "alpha" and "cannot see" in s["why"] for s in bench["skipped"])
    images = {r["model"]: r["images"] for r in sim.log()}
    assert set(images) == {f"sim-{a}" for a in aliases}
    assert all(urls == [f"data:image/png;base64,{PNG}"] for urls in images.values())
    record = gw.http.get(f"/bench/panels/{bench['panel']}").json()
    assert "[image]" in record["prompt"]
    assert PNG[:200].encode() not in stored_bytes(gw)


def test_an_image_through_the_anthropic_sdk_is_a_vision_panel(make_gateway, sim):
    gw = make_gateway(seeing_raw(sim.url))
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    message = client_of(gw).messages.create(
        model="bench/looks",
        max_tokens=30,
        messages=[{"role": "user", "content": [{"type": "text", "text": "What is it?"}, image]}],
    )
    assert_seated_only_seeing(gw, sim, message.model_extra["bench"])


def test_an_image_through_the_openai_sdk_is_a_vision_panel(make_gateway, sim):
    gw = make_gateway(seeing_raw(sim.url))
    part = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    completion = gw.client.chat.completions.create(
        model="bench/looks",
        messages=[{"role": "user", "content": [{"type": "text", "text": "What is it?"}, part]}],
    )
    assert_seated_only_seeing(gw, sim, completion.model_extra["bench"])


def test_a_provider_echoing_the_image_in_its_error_leaves_no_bytes_on_record(make_gateway, sim):
    gw = make_gateway(seeing_raw(sim.url))
    sim.set("sim-eye", status=400, error_message=f"bad image data:image/png;base64,{PNG}")
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    message = client_of(gw).messages.create(
        model="bench/looks", max_tokens=30, messages=[{"role": "user", "content": [image]}]
    )
    failed = [s for s in message.model_extra["bench"]["seats"] if s["alias"] == "eye"]
    assert failed and failed[0]["status"] == "error" and "[image]" in failed[0]["error"]
    assert PNG[:200] not in message.content[0].text
    assert PNG[:200].encode() not in stored_bytes(gw)


def test_a_shape_that_admits_vision_is_kept_for_an_image(make_gateway, sim):
    gw = make_gateway(seeing_raw(sim.url))
    image = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}
    raw = client_of(gw).messages.with_raw_response.create(
        model="bench/looks",
        max_tokens=30,
        messages=[{"role": "user", "content": [image]}],
        extra_headers={"X-Panel-Shape": "vision"},
    )
    bench = raw.parse().model_extra["bench"]
    assert (bench["shape"], bench["shape_by"]) == ("vision", "header")
    assert any("kept" in note for note in bench["notes"])


def test_an_image_no_seat_can_see_is_refused(gateway, sim):
    part = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    with pytest.raises(openai.InternalServerError) as caught:
        gateway.client.chat.completions.create(
            model="bench/trio", messages=[{"role": "user", "content": [part]}]
        )
    assert caught.value.status_code == 503 and "images" in caught.value.message
    nothing_happened(sim, gateway)


# -- the translator litellm provides --------------------------------------------------------------


def test_the_litellm_translators_relied_on_are_where_they_were():
    from litellm.llms.anthropic.messages.adapters import transformation

    adapter = transformation.LiteLLMAnthropicMessagesAdapter
    assert "keep_tool_errors" in inspect.signature(adapter).parameters
    params = inspect.signature(adapter.translate_anthropic_to_openai).parameters
    assert list(params)[:2] == ["self", "anthropic_message_request"]
    params = inspect.signature(adapter.translate_openai_response_to_anthropic).parameters
    assert list(params)[:2] == ["self", "response"]
    assert hasattr(transformation, "AnthropicAdapter")


def test_the_translation_neither_mutates_the_body_nor_drops_tool_errors():
    from gateway.upstream.translate.anthropic import to_openai_chat

    body = {
        "model": "bench/trio",
        "max_tokens": 5,
        "system": [{"type": "text", "text": "sys"}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t", "content": "boom", "is_error": True}
                ],
            },
        ],
    }
    before = json.dumps(body, sort_keys=True)
    chat = to_openai_chat(body)
    assert json.dumps(body, sort_keys=True) == before
    assert chat["messages"][0] == {"role": "system", "content": [{"type": "text", "text": "sys"}]}
    assert chat["messages"][1]["is_error"] is True


# -- hypothesis over bodies -----------------------------------------------------------------------

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = [
    "model",
    "messages",
    "max_tokens",
    "system",
    "stream",
    "temperature",
    "top_k",
    "stop_sequences",
    "metadata",
    "thinking",
    "tools",
    "with",
    "bench",
]
block = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "tool_use", "document", "x"])},
    optional={"text": json_value, "source": json_value},
)
message = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", "x"])},
    optional={"content": st.text(max_size=5) | st.lists(block, max_size=3) | json_value},
)
bodies = st.fixed_dictionaries(
    {"model": st.sampled_from(["bench/trio", "solo", "bench/nope", 5])},
    optional={
        "messages": st.lists(message, max_size=3) | json_value,
        "max_tokens": st.integers(-1, 50) | json_value,
        **{field: json_value for field in FIELDS if field not in ("model", "messages")},
    },
)


@against_a_gateway(60)
@given(body=bodies)
def test_any_body_gets_a_message_or_an_anthropic_error_never_a_500(gateway, body):
    response = gateway.http.post("/v1/messages", json=body)
    assert response.status_code != 500, response.text
    payload = response.json() if not body.get("stream") or response.status_code != 200 else None
    if response.status_code == 200:
        if payload is not None:
            assert payload["type"] == "message"
        else:
            assert response.text.startswith("event: message_start")
        return
    assert payload["type"] == "error", payload
    assert payload["error"]["type"] in ANTHROPIC_ERRORS and payload["error"]["message"]


@against_a_gateway(30)
@given(raw=st.binary(max_size=100))
def test_any_bytes_get_an_anthropic_error(gateway, raw):
    response = gateway.http.post(
        "/v1/messages", content=raw, headers={"content-type": "application/json"}
    )
    if response.status_code == 200:
        return
    payload = response.json()
    assert payload["type"] == "error" and payload["error"]["type"] in ANTHROPIC_ERRORS


def test_a_body_that_is_not_an_object_is_an_anthropic_error(gateway):
    response = httpx.post(f"{gateway.url}/v1/messages", json=[], timeout=10)
    assert response.status_code == 400 and response.json()["type"] == "error"


def test_replies_match_the_openapi_description(gateway, sim):
    import jsonschema

    spec = gateway.http.get("/openapi.json").json()

    def check(path: str, status: int, body: dict) -> None:
        response = spec["paths"][path]["post"]["responses"][str(status)]
        schema = response["content"]["application/json"]["schema"]
        jsonschema.validate(body, {**schema, "components": spec["components"]})

    ok = {"model": "bench/trio", "max_tokens": 10, "messages": USER}
    check("/v1/messages", 200, gateway.http.post("/v1/messages", json=ok).json())
    check("/messages", 404, gateway.http.post("/messages", json={**ok, "model": "x"}).json())
    counted = gateway.http.post("/v1/messages/count_tokens", json=ok).json()
    check("/v1/messages/count_tokens", 200, counted)
