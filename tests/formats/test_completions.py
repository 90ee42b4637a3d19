"""OpenAI legacy completions (`/v1/completions`) through the official `openai` SDK, unchanged:
the same panel as chat, as a `text_completion` or its chunk stream, and errors."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.bench import MODELS, nothing_happened, served
from tests.helpers.fuzz import against_a_gateway, json_values

PROMPT = "Is the retry loop safe?"


def test_create_answers_with_every_seat_and_bench(gateway, sim):
    for alias in MODELS:
        sim.set(served(alias), answer=f"{alias} says yes.")
    raw = gateway.client.completions.with_raw_response.create(
        model="bench/trio", prompt=PROMPT, max_tokens=50, temperature=0.2
    )
    completion = raw.parse()
    bench = completion.model_extra["bench"]
    assert completion.id == f"cmpl-{bench['panel']}"
    assert completion.object == "text_completion" and completion.model == "bench/trio"
    (choice,) = completion.choices
    assert choice.finish_reason == "stop" and choice.logprobs is None
    for seat in bench["seats"]:
        assert f"{seat['alias']} says yes." in choice.text and seat["call"] in choice.text
    assert completion.usage.completion_tokens > 0
    assert [(c["max_tokens"], c["temperature"]) for c in sim.log()] == [(50, 0.2)] * len(sim.log())
    seats = json.loads(raw.headers["X-Bench-Seats"])
    assert [s["status"] for s in seats] == [s["status"] for s in bench["seats"]]
    record = gateway.http.get(f"/bench/panels/{bench['panel']}").json()
    assert record["prompt"] == PROMPT and len(record["seats"]) == len(bench["seats"])


def test_a_prompt_list_of_one_string_is_one_panel(gateway, sim):
    completion = gateway.client.completions.create(model="solo", prompt=[PROMPT])
    assert completion.model_extra["bench"]["collection"] == "solo"


def test_a_stream_sends_each_seat_then_bench_then_done(gateway, sim):
    sim.set(served("delta"), answer="delta streamed this")
    with gateway.client.completions.with_streaming_response.create(
        model="bench/trio", prompt=PROMPT, stream=True
    ) as raw:
        assert {s["status"] for s in json.loads(raw.headers["X-Bench-Seats"])} == {"seated"}
        chunks = list(raw.parse())
    assert all(c.object == "text_completion" for c in chunks)
    last = chunks[-1]
    bench = last.model_extra["bench"]
    assert last.choices[0].finish_reason == "stop" and last.usage.total_tokens > 0
    text = "".join(c.choices[0].text for c in chunks)
    assert "delta streamed this" in text
    assert all(s["call"] in text for s in bench["seats"])
    assert len(chunks) == 1 + len(bench["seats"]) + 1  # header, a section per seat, the last


def test_when_no_seat_answers_it_is_a_502_plain_and_an_error_event_streamed(gateway, sim):
    for alias in MODELS:
        sim.set(served(alias), status=503)
    with pytest.raises(openai.InternalServerError) as caught:
        gateway.client.completions.create(model="bench/trio", prompt=PROMPT)
    assert caught.value.status_code == 502 and "bench" in caught.value.response.json()
    with pytest.raises(openai.APIError, match="No seat"):
        list(gateway.client.completions.create(model="bench/trio", prompt=PROMPT, stream=True))


def test_a_failing_seat_shows(gateway, sim):
    sim.set(served("gamma"), status=429, retry_after=30)
    completion = gateway.client.completions.create(model="bench/trio", prompt=PROMPT)
    statuses = {s["alias"]: s["status"] for s in completion.model_extra["bench"]["seats"]}
    assert statuses["gamma"] == "rate_limited"


@pytest.mark.parametrize(
    "fields, param",
    [
        ({"prompt": ["one", "two"]}, "prompt"),
        ({"prompt": [1, 2, 3]}, "prompt"),
        ({"prompt": None}, "prompt"),
        ({"n": 2}, "n"),
        ({"best_of": 3}, "best_of"),
        ({"echo": True}, "echo"),
        ({"suffix": "end"}, "suffix"),
        ({"logprobs": 2}, "logprobs"),
        ({"stream": "yes"}, "stream"),
        ({"temperature": "hot"}, "temperature"),
    ],
)
def test_what_a_panel_cannot_honour_is_refused_and_calls_nothing(gateway, sim, fields, param):
    with pytest.raises(openai.BadRequestError) as caught:
        gateway.client.completions.create(model="bench/trio", prompt=PROMPT, extra_body=fields)
    assert caught.value.body["param"] == param
    nothing_happened(sim, gateway)


def test_the_unprefixed_route_answers(gateway, sim):
    reply = gateway.http.post("/completions", json={"model": "bench/solo", "prompt": PROMPT})
    assert reply.status_code == 200 and reply.json()["object"] == "text_completion"


bodies = st.fixed_dictionaries(
    {"model": st.sampled_from(["bench/trio", "solo", "bench/nope"]) | json_values},
    optional={
        "prompt": st.text(max_size=20) | st.lists(st.text(max_size=5), max_size=2) | json_values,
        "stream": st.booleans() | json_values,
        "max_tokens": json_values,
        "temperature": json_values,
        "stop": json_values,
        "n": json_values,
        "best_of": json_values,
        "echo": json_values,
        "suffix": json_values,
        "logprobs": json_values,
        "bench": json_values,
    },
)


@against_a_gateway(60)
@given(body=bodies)
def test_any_completions_body_is_answered_or_refused_in_openai_shape(gateway, body):
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        reply = http.post("/v1/completions", json=body)
    assert reply.status_code != 500, reply.text
    if reply.status_code == 200:
        if reply.headers["content-type"].startswith("text/event-stream"):
            assert reply.text.endswith("data: [DONE]\n\n")
        else:
            assert reply.json()["object"] == "text_completion"
        return
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
