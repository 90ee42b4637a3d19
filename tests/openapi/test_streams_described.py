"""The two operations that answer with event streams, as a client sees them (the fuzzer reads
only the first event of `/ui/events`, and rarely makes a message that does something): every
event of the dashboard's stream matches the event schema (its data JSON, as the document says),
even one written after it opened; `POST /mcp` takes a JSON-RPC message and answers what is not
one with a JSON-RPC error, in its described shapes."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import jsonschema
import pytest


@pytest.fixture
def spec(gateway):
    return gateway.http.get("/openapi.json").json()


def events(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """Server-sent events as a reader parses them: fields until a blank line; comments skipped."""
    event: dict[str, str] = {}
    for line in lines:
        if not line:
            if "data" in event:
                yield {"event": "message", **event}
            event = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            if name in ("event", "data"):
                event[name] = value.removeprefix(" ")


def test_every_event_of_the_dashboard_stream_matches_its_description(gateway, spec):
    media = spec["paths"]["/ui/events"]["get"]["responses"]["200"]["content"]["text/event-stream"]
    schema = media["schema"]
    seen = []
    with httpx.stream("GET", f"{gateway.url}/ui/events", timeout=30) as stream:
        for event in events(stream.iter_lines()):
            seen.append(event)
            if event["event"] == "hello":
                gateway.ask("bench/trio", "Is this code right?")  # something new is written
            if event["event"] == "change":
                break
    assert [e["event"] for e in seen] == ["hello", "change"]
    for event in seen:
        jsonschema.validate(event, schema)
        content = schema["properties"]["data"]
        assert content["contentMediaType"] == "application/json"
        jsonschema.validate(json.loads(event["data"]), content["contentSchema"])


def test_the_mcp_body_is_described_as_a_json_rpc_message(gateway, spec):
    body = spec["paths"]["/mcp"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "a-client", "version": "1"},
        },
    }
    jsonschema.validate(initialize, body)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({}, body)
    accept = {"Accept": "application/json, text/event-stream"}
    refused = gateway.http.post("/mcp", json={}, headers=accept)
    assert refused.status_code == 400  # as the description says of what is not a message
    taken = gateway.http.post("/mcp", json=initialize, headers=accept)
    assert taken.status_code == 200, taken.text


ACCEPT = {"Accept": "application/json, text/event-stream"}
PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}


def test_a_request_with_an_id_mcp_does_not_allow_is_refused_not_dropped(gateway, spec):
    """The SDK took `id: null` as a notification: a 202, and the request was never answered."""
    described = spec["paths"]["/mcp"]["post"]["responses"]["400"]["content"]["application/json"]
    for wrong in (None, 1.5, True, ["7"]):
        refused = gateway.http.post("/mcp", json={**PING, "id": wrong}, headers=ACCEPT)
        assert refused.status_code == 400, (wrong, refused.text)
        error = refused.json()
        jsonschema.validate(error, described["schema"])
        assert error["error"] == {
            "code": -32600,
            "message": "Invalid Request: `id` must be a string or an integer",
        }


def test_a_notification_is_taken_with_a_bare_202(gateway, spec):
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    taken = gateway.http.post("/mcp", json=notification, headers=ACCEPT)
    assert (taken.status_code, taken.content) == (202, b"")
    assert "content-type" not in taken.headers  # (the SDK labelled the empty body JSON)
    assert "content" not in spec["paths"]["/mcp"]["post"]["responses"]["202"]


def test_a_message_sent_without_a_content_type_is_answered_as_on_every_route(gateway):
    """The guard takes a body without `Content-Type` as JSON; the SDK refused it in plain text."""
    answered = gateway.http.post("/mcp", content=json.dumps(PING).encode(), headers=ACCEPT)
    assert answered.status_code == 200, answered.text
    assert answered.headers["content-type"].startswith("text/event-stream")
    data = [line for line in answered.text.splitlines() if line.startswith("data:")]
    assert [json.loads(line.removeprefix("data:")) for line in data] == [
        {"jsonrpc": "2.0", "id": 7, "result": {}}
    ]
