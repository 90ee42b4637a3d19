"""Errors raised before any format reads the request come in the caller's format too.

The guard's 403 and 415 and the app's own 404 and 405 happen before a format's reader runs; they
are rendered by the format the path belongs to (gateway/formats: error_renderer_for), so each
official SDK raises its own error with its own body, not a parse failure on OpenAI's shape.
"""

from __future__ import annotations

import anthropic
import ollama
import pytest
from google import genai
from google.genai import errors, types

from gateway.formats.by_path import error_renderer_for, format_of_path
from tests.helpers.bench import nothing_happened

PROMPT = [{"role": "user", "content": "spend my quota"}]


@pytest.mark.parametrize(
    ("path", "format_name"),
    [
        ("/v1/messages", "anthropic"),
        ("/v1/messages/count_tokens", "anthropic"),
        ("/messages", "anthropic"),
        ("/v1/messages-batches", "openai"),  # a segment, not a string prefix
        ("/api/chat", "ollama"),
        ("/api/pull", "ollama"),
        ("/apis", "openai"),
        ("/v1beta/models/core:generateContent", "gemini"),
        ("/v1beta/files", "gemini"),
        ("/v1/chat/completions", "openai"),
        ("/v1/responses", "openai"),
        ("/v1/models", "openai"),
        ("/bench/verdict", "openai"),
        ("/", "openai"),
    ],
)
def test_the_format_of_a_path_is_that_of_the_clients_that_call_it(path, format_name):
    assert format_of_path(path) == format_name
    assert callable(error_renderer_for(path))


def test_a_foreign_host_on_messages_raises_anthropics_permission_error(gateway, sim):
    client = anthropic.Anthropic(
        base_url=gateway.url,
        api_key="local",
        max_retries=0,
        default_headers={"Host": "evil.example"},
    )
    with pytest.raises(anthropic.PermissionDeniedError) as caught:
        client.messages.create(model="bench/trio", max_tokens=50, messages=PROMPT)
    body = caught.value.body
    assert isinstance(body, dict) and set(body) == {"type", "error"}
    assert body["type"] == "error"
    assert body["error"]["type"] == "permission_error"
    assert "evil.example" in body["error"]["message"]
    nothing_happened(sim, gateway)


def test_a_wrong_method_on_messages_is_an_anthropic_405(gateway, sim):
    reply = gateway.http.get("/v1/messages")
    assert reply.status_code == 405 and "POST" in reply.headers["allow"]
    assert reply.json()["type"] == "error"
    assert reply.json()["error"]["type"] == "invalid_request_error"


def test_a_text_body_on_api_chat_is_refused_in_ollamas_shape(gateway, sim):
    reply = gateway.http.post(
        "/api/chat",
        content=b'{"model": "bench/trio", "messages": [{"role": "user", "content": "x"}]}',
        headers={"Content-Type": "text/plain"},
    )
    assert reply.status_code == 415
    body = reply.json()
    assert set(body) == {"error"} and isinstance(body["error"], str)
    assert "JSON" in body["error"]
    nothing_happened(sim, gateway)


def test_an_ollama_route_the_gateway_lacks_raises_the_ollama_sdks_error(gateway, sim):
    with pytest.raises(ollama.ResponseError) as caught:
        ollama.Client(host=gateway.url, timeout=30).pull("bench/trio")
    assert caught.value.status_code == 404
    assert caught.value.error == "No route /api/pull."


def test_an_unknown_v1beta_route_is_a_gemini_404(gateway, sim):
    options = types.HttpOptions(base_url=gateway.url, api_version="v1beta", timeout=30_000)
    client = genai.Client(api_key="local", http_options=options)
    with pytest.raises(errors.ClientError) as caught:
        list(client.files.list())
    assert caught.value.code == 404 and caught.value.status == "NOT_FOUND"
    reply = gateway.http.get("/v1beta/files")
    assert reply.status_code == 404
    assert reply.json() == {
        "error": {"code": 404, "message": "No route /v1beta/files.", "status": "NOT_FOUND"}
    }


def test_openai_routes_keep_openais_shape(gateway, sim):
    reply = gateway.http.post("/v1/chat/completions", json={}, headers={"Host": "evil.example"})
    assert reply.status_code == 403
    assert set(reply.json()["error"]) == {"message", "type", "param", "code"}
    missing = gateway.http.get("/v1/nothing-here")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
