"""OpenAI Responses (`/v1/responses`) through the official `openai` SDK, unchanged: the same
panel as chat, rendered as a `response` (ids `resp_...`), its typed event stream, and errors."""

from __future__ import annotations

import json
import sqlite3

import httpx
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import MODELS, served

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


def nothing_happened(gateway, sim) -> None:
    assert sim.log() == [], "a refused request reached the upstream"
    with sqlite3.connect(gateway.config.store.removeprefix("sqlite:///")) as db:
        assert db.execute("SELECT COUNT(*) FROM panels").fetchone()[0] == 0


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
