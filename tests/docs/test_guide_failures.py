"""The guide's "what you see when a provider fails" lines are what the gateway says: four
seats of one panel, each failing as the guide's line does (the simulator answering with the
provider's status and words, a port nobody listens on), and each seat's `error` compared with
its line. The liberty: the host in parentheses, here the simulator's or the closed port's.
"""

from __future__ import annotations

import re

import httpx

from gateway.serve.server import free_port
from tests.docs.test_guide import BLOCKS

HOST = re.compile(r"^(\S+) \([^)]*\)")


def without_host(line: str) -> str:
    return HOST.sub(r"\1 (HOST)", line)


def test_each_failure_line_of_the_guide_is_what_a_seat_says(make_gateway, sim):
    closed = free_port()
    models = {
        "free": ("openrouter/vendor/some-model:free", f"{sim.url}/v1"),
        "fast": ("groq/llama-fast", f"{sim.url}/v1"),
        "kimi": ("openai/kimi-k3", f"{sim.url}/v1"),
        "local": ("ollama_chat/qwen-local", f"http://127.0.0.1:{closed}"),
    }
    raw = {
        "model_list": [
            {
                "model_name": alias,
                "litellm_params": {"model": model, "api_base": base, "api_key": "k"},
                "bench": {"connection": alias},
            }
            for alias, (model, base) in models.items()
        ],
        "collections": {"all": {"members": list(models)}},
        "gateway": {"max_calls": 4, "reserves": 0},
    }
    sim.set(
        "vendor/some-model:free",
        status=429,
        error_message="Rate limit exceeded: free-models-per-day",
        retry_after=3600,
    )
    sim.set("llama-fast", status=401, error_message="Invalid API Key")
    sim.set("kimi-k3", status=404, error_message="The model `kimi-k3` does not exist.")
    gw = make_gateway(raw)
    ask = {"model": "bench/all", "messages": [{"role": "user", "content": "review this"}]}
    reply = httpx.post(f"{gw.url}/v1/chat/completions", json=ask, timeout=60)
    assert reply.status_code == 502, reply.text  # no seat answered: every seat says why
    said = {seat["alias"]: seat.get("error") for seat in reply.json()["bench"]["seats"]}
    shown = BLOCKS["provider failures"].splitlines()
    assert len(shown) == len(models)
    for alias, line in zip(models, shown, strict=True):
        assert said[alias] is not None, (alias, said)
        assert without_host(said[alias]) == without_host(line), alias
