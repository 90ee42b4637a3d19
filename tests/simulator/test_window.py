"""A simulated model with a context window: a prompt that fits is answered, one over it is
refused as a provider refuses it, naming the window (what `models add` learns it from)."""

from __future__ import annotations

import httpx


def ask(sim, words: str) -> httpx.Response:
    body = {"model": "sim-small", "messages": [{"role": "user", "content": words}]}
    return httpx.post(f"{sim.url}/v1/chat/completions", json=body, timeout=10)


def test_a_prompt_over_the_window_is_refused_naming_it_and_one_within_is_answered(sim):
    sim.set("sim-small", context_window=100)
    assert ask(sim, "x" * 400).status_code == 200  # 100 tokens: fits
    refused = ask(sim, "x" * 404)
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "context_length_exceeded"
    assert error["message"].startswith("This model's maximum context length is 100 tokens.")
    assert "resulted in 101 tokens" in error["message"]
    assert [r["status"] for r in sim.log("sim-small")] == [200, 400]
