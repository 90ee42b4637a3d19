"""The field's failover matrix (docs/reliability.md, "Route mode"), one test per scenario: a
collection of a faulty primary and healthy fallbacks, asked through the official SDKs, against
the real gateway and litellm calling the simulated upstream. Each test asserts what the client
gets (one whole answer in its format, from whom, how soon) or the error it is told."""

from __future__ import annotations

import time

import httpx
import ollama

QUESTION = [{"role": "user", "content": "What is 2 + 2?"}]
MODEL = "bench/crew:route"


def _asked(crew, headers: dict[str, str] | None = None):
    raw = crew.client.chat.completions.with_raw_response.create(
        model=MODEL, messages=QUESTION, extra_headers=headers or {}
    )
    return raw.parse(), raw.headers


def test_a_primary_that_flaps_gets_its_one_shot_turns_back_once_it_recovers(crew, sim):
    """503 for a while, then healthy; identical one-shot requests sent throughout (the field's
    matrix: 503 for 60 s, 20 requests 4 s apart, scaled here to 1.2 s and 0.15 s)."""
    sim.set("sim-alpha", status=503, fail_for_s=1.2, latency_s=0.01)
    began = time.monotonic()
    answered: list[tuple[float, str, str]] = []
    for _ in range(14):
        reply, headers = _asked(crew)
        answered.append((time.monotonic() - began, reply.model, headers["x-bench-model"]))
        time.sleep(0.15)
    assert all(model == header for _, model, header in answered)
    during = [model for at, model, _ in answered if at < 1.1]
    after = [model for at, model, _ in answered if at > 1.3]
    assert during and set(during) == {"gamma"}  # failed over at once while alpha is down
    assert after and set(after) == {"alpha"}  # and alpha answers again once it is up


def test_the_reported_model_is_the_member_that_answered_in_every_shape(crew, sim):
    sim.set("sim-alpha", status=500)
    reply, headers = _asked(crew)
    assert reply.model == headers["x-bench-model"] == "gamma"
    body = {"model": MODEL, "messages": QUESTION, "stream": True}
    with httpx.stream("POST", f"{crew.url}/v1/chat/completions", json=body) as response:
        chunks = [line for line in response.iter_lines() if line.startswith("data: {")]
    assert chunks and all('"model":"gamma"' in line for line in chunks)
    client = ollama.Client(host=crew.url)
    assert client.chat(model=MODEL, messages=QUESTION, stream=False).model == "gamma"
    lines = list(client.chat(model=MODEL, messages=QUESTION, stream=True))
    assert {line.model for line in lines} == {"gamma"}
