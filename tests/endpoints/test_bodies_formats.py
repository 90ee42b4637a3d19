"""Every client format's bodies are bounded as chat's are: a body of a huge structure is refused
with a 400 in that format's own error shape, read off the event loop (health checks stay quick
meanwhile), and the sampling bounds chat's fields get hold for every format's translated ones."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

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

MANY = 200_000  # tiny items, far past gateway.max_messages (1000)
GEMINI = "/v1beta/models/bench/trio"


def many(item: bytes) -> bytes:
    return b"[" + b",".join([item] * MANY) + b"]"


def openai_message(response: httpx.Response) -> str:
    return str(assert_openai_error(response, 400)["message"])


def anthropic_message(response: httpx.Response) -> str:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    return str(body["error"]["message"])


def gemini_message(response: httpx.Response) -> str:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == 400 and error["status"] == "INVALID_ARGUMENT"
    return str(error["message"])


def ollama_message(response: httpx.Response) -> str:
    assert response.status_code == 400, response.text
    body = response.json()
    assert set(body) == {"error"} and isinstance(body["error"], str)
    return str(body["error"])


USER = b'{"role": "user", "content": "a"}'
GEMINI_USER = b'{"role": "user", "parts": [{"text": "a"}]}'
LOGIT_BIAS = b"{" + b",".join(b'"%d": 1' % i for i in range(MANY)) + b"}"

HUGE: list[tuple[str, bytes, Callable[[httpx.Response], str], str]] = [
    (
        "/v1/messages",
        b'{"model": "bench/trio", "max_tokens": 64, "messages": ' + many(USER) + b"}",
        anthropic_message,
        "`messages`",
    ),
    (
        "/v1/messages/count_tokens",
        b'{"model": "bench/trio", "messages": ' + many(USER) + b"}",
        anthropic_message,
        "`messages`",
    ),
    (
        "/v1/responses",
        b'{"model": "bench/trio", "input": ' + many(USER) + b"}",
        openai_message,
        "`input`",
    ),  # fmt: skip
    (
        "/v1/completions",
        b'{"model": "bench/trio", "prompt": "hi", "logit_bias": ' + LOGIT_BIAS + b"}",
        openai_message,
        "`logit_bias`",
    ),
    (
        "/api/chat",
        b'{"model": "bench/trio", "messages": ' + many(USER) + b"}",
        ollama_message,
        "`messages`",
    ),  # fmt: skip
    (
        "/api/generate",
        b'{"model": "bench/trio", "prompt": "hi", "images": ' + many(b'"aGk="') + b"}",
        ollama_message,
        "JSON values",
    ),
    (
        f"{GEMINI}:generateContent",
        b'{"contents": ' + many(GEMINI_USER) + b"}",
        gemini_message,
        "`contents`",
    ),  # fmt: skip
    (
        f"{GEMINI}:countTokens",
        b'{"contents": ' + many(GEMINI_USER) + b"}",
        gemini_message,
        "`contents`",
    ),  # fmt: skip
]


@pytest.mark.parametrize("path, body, message_of, named", HUGE, ids=[h[0] for h in HUGE])
def test_a_huge_structure_is_refused_in_each_formats_shape_without_stalling_health(
    gateway, sim, tmp_path, path, body, message_of, named
):
    headers = {"Content-Type": "application/json"}
    assert body.count(b",") > MANY  # heavy: read in the body reader's child process

    def send() -> httpx.Response:
        return gateway.http.post(path, content=body, headers=headers, timeout=120)

    response, worst = while_polling_health(gateway, send)
    message = message_of(response)
    assert named in message, message
    assert worst < WORST_HEALTH_S, f"/healthz took {worst:.2f} s while the body was read"
    nothing_happened(sim, tmp_path / "records.db")


# Each format's way of asking for a sampling value past chat's bounds, and the name it is refused
# under (the format's own name for the field).
OUT_OF_BOUNDS: list[tuple[str, dict[str, Any], Callable[[httpx.Response], str], str]] = [
    (
        "/v1/messages",
        {
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "hi"}],
            "stop_sequences": ["a", "b", "c", "d", "e"],
        },
        anthropic_message,
        "stop",
    ),  # fmt: skip
    ("/v1/responses", {"input": "hi", "temperature": 7}, openai_message, "temperature"),
    ("/v1/completions", {"prompt": "hi", "top_p": 1.5}, openai_message, "top_p"),
    (
        "/api/chat",
        {"messages": [{"role": "user", "content": "hi"}], "options": {"stop": list("abcde")}},
        ollama_message,
        "stop",
    ),
    (
        f"{GEMINI}:generateContent",
        {"contents": [{"parts": [{"text": "hi"}]}], "generationConfig": {"temperature": 9}},
        gemini_message,
        "temperature",
    ),
]


@pytest.mark.parametrize(
    "path, fields, message_of, named", OUT_OF_BOUNDS, ids=[o[0] for o in OUT_OF_BOUNDS]
)
def test_chats_sampling_bounds_hold_for_every_formats_translated_request(
    gateway, sim, tmp_path, path, fields, message_of, named
):
    body = {"model": "bench/trio", **fields} if "bench/trio" not in path else fields
    response = gateway.http.post(path, content=json.dumps(body), timeout=30,
                                 headers={"Content-Type": "application/json"})  # fmt: skip
    assert named in message_of(response)
    nothing_happened(sim, tmp_path / "records.db")
