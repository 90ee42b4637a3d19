"""The two operations the fuzzer cannot drive are described exactly too: every event of the
dashboard's `/ui/events` stream matches the event schema (its data JSON, as the document says),
and `POST /mcp`'s body is a JSON-RPC message (`{}` is not one, and the server refuses it)."""

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
