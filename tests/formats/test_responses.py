"""OpenAI Responses (`/v1/responses`) through the official `openai` SDK, unchanged: the same
panel as chat, rendered as a `response` (ids `resp_...`), its typed event stream, and errors."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.bench import MODELS, nothing_happened, served
from tests.helpers.fuzz import against_a_gateway, json_values

ASK = "Is the retry loop safe?"
STREAM_EVENTS = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
]
CLOSING_EVENTS = [
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]


def seats_header(raw) -> list[dict]:
    return json.loads(raw.headers["X-Bench-Seats"])


def test_create_answers_with_a_response_holding_every_seat(gateway, sim):
    for alias in MODELS:
        sim.set(served(alias), answer=f"{alias} thinks it is fine.")
    raw = gateway.client.responses.with_raw_response.create(
        model="bench/trio", input=ASK, instructions="Answer briefly."
    )
    response = raw.parse()
    bench = response.model_extra["bench"]

    assert response.id == f"resp_{bench['panel']}"
    assert response.object == "response" and response.status == "completed"
    assert response.model == "bench/trio"
    assert response.store is False
    (message,) = response.output
    assert message.type == "message" and message.id.startswith("msg_")
    assert message.role == "assistant" and message.status == "completed"
    (part,) = message.content
    assert part.type == "output_text" and part.annotations == []
    for seat in bench["seats"]:
        assert f"{seat['alias']} thinks it is fine." in response.output_text
        assert seat["call"] in response.output_text
    assert response.usage.output_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens

    assert raw.headers["X-Bench-Panel"] == bench["panel"]
    assert seats_header(raw) == [
        {"call": s["call"], "seat": s["seat"], "alias": s["alias"], "status": s["status"]}
        for s in bench["seats"]
    ]


def test_the_panel_is_on_the_record_with_the_instructions(gateway, sim):
    response = gateway.client.responses.create(
        model="trio",
        instructions="Answer as a reviewer.",
        input=[
            {"role": "user", "content": [{"type": "input_text", "text": "First question"}]},
            {"type": "message", "role": "assistant", "content": "An earlier answer"},
            {"role": "user", "content": ASK},
        ],
    )
    panel = response.model_extra["bench"]["panel"]
    record = gateway.http.get(f"/bench/panels/{panel}").json()
    assert record["requested_model"] == "trio" and record["collection"] == "trio"
    assert "Answer as a reviewer." in record["prompt"] and ASK in record["prompt"]
    assert sorted(s["id"] for s in record["seats"]) == sorted(
        s["call"] for s in response.model_extra["bench"]["seats"]
    )
    assert len(sim.log()) == len(record["seats"])


def test_a_stream_sends_typed_numbered_events_and_completes_with_bench(gateway, sim):
    sim.set(served("gamma"), answer="gamma streamed this")
    events = []
    with gateway.client.responses.with_streaming_response.create(
        model="bench/trio", input=ASK, stream=True
    ) as raw:
        seated = seats_header(raw)
        for event in raw.parse():
            events.append(event)

    kinds = [e.type for e in events]
    assert kinds[:4] == STREAM_EVENTS and kinds[-4:] == CLOSING_EVENTS
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    assert set(kinds[4:-4]) == {"response.output_text.delta"}
    numbers = [e.sequence_number for e in events]
    assert numbers == list(range(len(events)))

    final = events[-1].response
    bench = final.model_extra["bench"]
    assert len(deltas) == 1 + len(bench["seats"])  # the header line, then a section per seat
    assert all(d.logprobs == [] for d in deltas)
    assert final.id == f"resp_{bench['panel']}" and events[0].response.id == final.id
    item_ids = {e.item_id for e in events if hasattr(e, "item_id")}
    assert item_ids == {final.output[0].id} and final.output[0].id.startswith("msg_")
    streamed = "".join(d.delta for d in deltas)
    assert final.output_text == streamed == events[-4].text
    assert "gamma streamed this" in streamed
    assert final.status == "completed" and final.usage.output_tokens > 0
    # the header goes out before any seat finishes: the seated plan, each `seated`
    assert [s["call"] for s in seated] == [s["call"] for s in bench["seats"]]
    assert {s["status"] for s in seated} == {"seated"}


def test_the_sdk_stream_helper_assembles_the_final_response(gateway, sim):
    with gateway.client.responses.stream(model="bench/trio", input=ASK) as stream:
        texts = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert final.id.startswith("resp_") and final.output_text == "".join(texts)
    assert all(s["status"] == "ok" for s in final.model_extra["bench"]["seats"])


def test_a_failing_seat_shows_in_the_reply(gateway, sim):
    sim.set(served("alpha"), status=500, error_message="alpha fell over")
    response = gateway.client.responses.create(model="bench/trio", input=ASK)
    seats = {s["alias"]: s for s in response.model_extra["bench"]["seats"]}
    assert seats["alpha"]["status"] == "error"
    assert "alpha fell over" in seats["alpha"]["error"]
    assert "alpha fell over" in response.output_text
    assert any(s["status"] == "ok" for s in seats.values())


def test_when_no_seat_answers_it_is_a_502_plain_and_a_failed_response_streamed(gateway, sim):
    for alias in MODELS:
        sim.set(served(alias), status=500)
    with pytest.raises(openai.InternalServerError) as caught:
        gateway.client.responses.create(model="bench/trio", input=ASK)
    assert caught.value.status_code == 502
    assert caught.value.body["code"] == "no_seat_answered"
    assert json.loads(caught.value.response.headers["X-Bench-Seats"])[0]["status"] == "error"

    events = list(gateway.client.responses.create(model="bench/trio", input=ASK, stream=True))
    assert [e.type for e in events[-2:]] == ["error", "response.failed"]
    assert events[-2].code == "no_seat_answered"
    failed = events[-1].response
    assert failed.status == "failed" and failed.error.code == "server_error"
    assert all(s["status"] == "error" for s in failed.model_extra["bench"]["seats"])
    assert [e.sequence_number for e in events] == list(range(len(events)))


def test_a_merged_reply_is_one_answer(gateway, sim):
    response = gateway.client.responses.create(model="bench/trio:merged", input=ASK)
    bench = response.model_extra["bench"]
    assert bench["merger"]["status"] == "ok"
    assert response.output_text == bench["merger"]["answer"]


def test_text_format_goes_to_every_seat_and_the_panel_says_its_content_is_markdown(gateway, sim):
    response = gateway.client.responses.create(
        model="bench/trio", input=f"{ASK} Reply in JSON.", text={"format": {"type": "json_object"}}
    )
    assert [c["response_format"] for c in sim.log()] == [{"type": "json_object"}] * len(sim.log())
    assert any("side by side" in note for note in response.model_extra["bench"]["notes"])
    assert response.text.format.type == "json_object"


REFUSED = [
    ({"previous_response_id": "resp_abc"}, "previous_response_id", "keeps no responses"),
    ({"conversation": "conv_1"}, "conversation", "keeps no responses"),
    ({"store": True}, "store", "store"),
    ({"tool_choice": "required"}, "tool_choice", ":route"),
    ({"tool_choice": {"type": "function", "name": "f"}}, "tool_choice", ":route"),
    ({"n": 2}, "n", "`n` must be 1"),
    ({"background": True}, "background", "background"),
    ({"temperature": "hot"}, "temperature", "wrong type"),
    ({"max_output_tokens": "many"}, "max_output_tokens", "`max_output_tokens`"),
    ({"text": {"format": {"type": "yaml"}}}, "text.format", "json_object"),
    ({"input": []}, "input", "non-empty"),
    ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0]", "stored"),
    (
        {"input": [{"type": "web_search_call", "id": "ws_1", "status": "completed"}]},
        "input[0]",
        "hosted tool",
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file-1"}]}]},
        "input[0].content[0]",
        "files",
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "file-1"}]}]},
        "input[0].content[0]",
        "file ids",
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}]},
        "input[0].content[0]",
        "audio",
    ),
]


@pytest.mark.parametrize("fields, param, words", REFUSED)
def test_what_a_panel_cannot_honour_is_refused_and_calls_nothing(
    gateway, sim, fields, param, words
):
    with pytest.raises(openai.BadRequestError) as caught:  # extra_body: as sent, unchecked
        gateway.client.responses.create(model="bench/trio", input=ASK, extra_body=fields)
    assert caught.value.status_code == 400
    assert caught.value.body["param"] == param
    assert words in caught.value.body["message"]
    nothing_happened(sim, gateway)


def test_an_unknown_collection_is_a_404_and_calls_nothing(gateway, sim):
    with pytest.raises(openai.NotFoundError) as caught:
        gateway.client.responses.create(model="bench/nope", input=ASK)
    assert "trio" in caught.value.body["message"]  # the known collections are listed
    nothing_happened(sim, gateway)


def test_the_unprefixed_route_and_store_false_answer(gateway, sim):
    reply = gateway.http.post(
        "/responses", json={"model": "bench/solo", "input": ASK, "store": False}
    )
    assert reply.status_code == 200 and reply.json()["store"] is False
    assert reply.json()["id"].startswith("resp_")


# -- any body: never a 500, always OpenAI's error shape ----------------------------------------

parts = st.fixed_dictionaries(
    {"type": st.sampled_from(["input_text", "output_text", "input_image", "input_file", "x"])},
    optional={"text": json_values, "image_url": json_values, "file_id": json_values},
)
items = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["message", "function_call", "reasoning", "item_reference"])
        | json_values,
        "role": st.sampled_from(["user", "assistant", "system", "developer", "tool"]) | json_values,
        "content": st.text(max_size=8) | st.lists(parts, max_size=3) | json_values,
    },
)
bodies = st.fixed_dictionaries(
    {"model": st.sampled_from(["bench/trio", "solo", "bench/nope", "bench/trio:merged"])},
    optional={
        "input": st.text(max_size=20) | st.lists(items, max_size=3) | json_values,
        "instructions": st.text(max_size=8) | json_values,
        "stream": st.booleans() | json_values,
        "store": st.booleans() | json_values,
        "text": st.fixed_dictionaries({"format": json_values}) | json_values,
        "reasoning": st.fixed_dictionaries({"effort": json_values}) | json_values,
        "temperature": json_values,
        "max_output_tokens": json_values,
        "tools": json_values,
        "n": json_values,
        "bench": json_values,
        "with": json_values,
    },
)


@against_a_gateway(100)
@given(body=bodies)
def test_any_responses_body_is_answered_or_refused_in_openai_shape(gateway, body):
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        reply = http.post("/v1/responses", json=body)
    assert reply.status_code != 500, reply.text
    if reply.status_code == 200:
        if reply.headers["content-type"].startswith("text/event-stream"):
            assert "event: response." in reply.text
        else:
            assert reply.json()["object"] == "response"
        return
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
