"""Heavy and out-of-range bodies, sent as an attacker would: refused with a 400 before anyone
is seated, and never holding the event loop (health checks stay quick meanwhile)."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.helpers.bench import (
    WORST_HEALTH_S,
    assert_openai_error,
    nothing_happened,
    while_polling_health,
)

# CPU-heavy, and timed against /healthz: no other worker runs a test meanwhile (conftest.py)
pytestmark = pytest.mark.alone

START = b'{"model": "bench/trio", "messages": [{"role": "user", "content": "hi"}]'


def post(gateway, body: bytes) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    return gateway.http.post("/v1/chat/completions", content=body, headers=headers, timeout=120)


def with_field(name: str, raw_value: bytes) -> bytes:
    return START + b', "' + name.encode() + b'": ' + raw_value + b"}"


def test_a_million_and_a_half_logit_bias_keys_are_refused_without_stalling_health(
    gateway, sim, tmp_path
):
    keys = b",".join(map(b'"%d":1'.__mod__, range(1_500_000)))
    body = with_field("logit_bias", b"{" + keys + b"}")
    assert len(body) > 16_000_000
    response, worst = while_polling_health(gateway, lambda: post(gateway, body))
    error = assert_openai_error(response, 400)
    assert error["param"] == "logit_bias"
    assert "300" in error["message"]
    assert worst < WORST_HEALTH_S, f"/healthz took {worst:.2f} s while the body was read"
    nothing_happened(sim, tmp_path / "records.db")


def test_a_hundred_thousand_empty_messages_are_refused_without_stalling_health(
    gateway, sim, tmp_path
):
    empty = b'{"role": "user", "content": ""}'
    body = b'{"model": "bench/trio", "messages": [' + b",".join([empty] * 100_000) + b"]}"
    response, worst = while_polling_health(gateway, lambda: post(gateway, body))
    error = assert_openai_error(response, 400)
    assert error["param"] == "messages"
    assert "1000" in error["message"]
    assert worst < WORST_HEALTH_S, f"/healthz took {worst:.2f} s while the body was read"
    nothing_happened(sim, tmp_path / "records.db")


def test_stop_as_a_long_list_of_integers_is_refused(gateway, sim, tmp_path):
    body = with_field("stop", b"[" + b",".join([b"7"] * 1_000_000) + b"]")
    error = assert_openai_error(post(gateway, body), 400)
    assert error["param"] == "stop"
    nothing_happened(sim, tmp_path / "records.db")


@pytest.mark.parametrize(
    "field, raw_value",
    [
        ("temperature", b"1e999"),
        ("temperature", b"-1e999"),
        ("temperature", b"2.5"),
        ("top_p", b"1.01"),
        ("presence_penalty", b"-3"),
        ("frequency_penalty", b"2.1"),
        ("max_tokens", b"0"),
        ("max_completion_tokens", b"-5"),
        ("max_tokens", b"1" + b"0" * 30),
        ("seed", b"1.5"),
        ("seed", b"1" + b"0" * 30),
        ("stop", b'["a", "b", "c", "d", "e"]'),
        ("stop", b"[1]"),
        ("logit_bias", b'{"50256": 101}'),
        ("logit_bias", b'{"50256": 1e999}'),
        ("logit_bias", b'{"50256": true}'),
        ("logit_bias", b'{"token": 5}'),
        ("logit_bias", b'{"-1": 5}'),
        ("response_format", b'{"type": "json_schema", "s": [' + b",".join([b"0"] * 20_000) + b"]}"),
        ("with", b"[" + b",".join([b'"alpha"'] * 100) + b"]"),
    ],
)
def test_a_sampling_field_out_of_range_is_refused_and_no_seat_is_called(
    gateway, sim, tmp_path, field, raw_value
):
    error = assert_openai_error(post(gateway, with_field(field, raw_value)), 400)
    assert error["param"] == field
    nothing_happened(sim, tmp_path / "records.db")


def test_sampling_fields_at_the_edges_of_their_ranges_are_passed_on(gateway, sim):
    completion, _ = gateway.ask(
        temperature=2,
        top_p=0,
        presence_penalty=-2,
        frequency_penalty=2,
        max_tokens=1,
        seed=-(2**63),
        stop=["a", "b", "c", "d"],
        logit_bias={"50256": -100, "0": 100},
    )
    assert all(seat["status"] == "ok" for seat in completion.model_extra["bench"]["seats"])
    assert {entry["temperature"] for entry in sim.log()} == {2}


def test_more_messages_than_the_gateway_takes_are_refused(make_gateway, sim, tmp_path):
    gateway = make_gateway(max_messages=3)
    messages = [{"role": "user", "content": f"part {i}"} for i in range(4)]
    body = json.dumps({"model": "bench/trio", "messages": messages}).encode()
    error = assert_openai_error(post(gateway, body), 400)
    assert error["param"] == "messages"
    parts = [{"type": "text", "text": "x"}] * 4
    body = json.dumps({"model": "bench/trio", "messages": [{"role": "user", "content": parts}]})
    assert_openai_error(post(gateway, body.encode()), 400)
    nothing_happened(sim, tmp_path / "records.db")
    body = json.dumps({"model": "bench/trio", "messages": messages[:3]}).encode()
    assert post(gateway, body).status_code == 200


@pytest.mark.parametrize(
    "content",
    [
        "word " * 400_000,  # 2 MB: read off the loop for its size
        "a, " * 30_000,  # many commas in a string: read off the loop, then answered
    ],
)
def test_a_large_but_honest_prompt_is_answered(gateway, content):
    completion, _ = gateway.ask(content=content)
    seats = completion.model_extra["bench"]["seats"]
    assert seats and all(seat["status"] == "ok" for seat in seats)
    panel = gateway.http.get(f"/bench/panels/{completion.model_extra['bench']['panel']}").json()
    assert panel["prompt"] == content


def test_messages_with_fields_a_seat_is_not_given_are_still_answered(gateway):
    echoed = {"role": "assistant", "content": "earlier", "refusal": None, "annotations": []}
    raw = gateway.client.chat.completions.with_raw_response.create(
        model="bench/trio",
        messages=[
            {"role": "user", "content": "first", "name": "ann"},
            echoed,
            {"role": "user", "content": "again?", "junk": {"deep": list(range(50))}},
        ],
    )
    assert all(seat["status"] == "ok" for seat in raw.parse().model_extra["bench"]["seats"])
