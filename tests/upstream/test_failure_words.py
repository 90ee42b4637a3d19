"""What a person reads when a provider fails: the provider and its host, the status and the
provider's own words, in the panel's markdown, in `bench-gateway ask`'s seat table and in the
server's log, never litellm's doubled class names or an object's repr.

One `bench-gateway serve` process for the file, its models on the simulated upstream (replying
as the providers do: 401, 404, a 429 naming a daily limit) or on a port nobody listens on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gateway.serve.server import free_port
from gateway.upstream.wording import provider_at
from tests.helpers.served import ServedGateway, served_gateway

ROOT = Path(__file__).parents[2]
DEAD = free_port()  # nothing listens on it


def said(status: int, message: str, **headers: str) -> dict:
    """The simulator's reply as a provider's error: its status, headers and JSON body."""
    body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    return {
        "script": {
            "status": status,
            "headers": headers,
            "content_type": "application/json",
            "parts": [json.dumps(body)],
        }
    }


def entry(alias: str, model: str, base: str, **more) -> dict:
    return {"model_name": alias, "litellm_params": {"model": model, "api_base": base, **more}}


@pytest.fixture(scope="module")
def gateway(sim_server, tmp_path_factory) -> Iterator[ServedGateway]:
    sim = sim_server
    sim.state.reset()
    on_sim = f"{sim.url}/v1"
    models = [
        entry("fine", "openai/sim-fine", on_sim, api_key="sim"),
        entry("bad-key", "openai/sim-bad-key", on_sim, api_key="sim"),
        entry("bad-key-litellm", "openai/sim-bad-key", on_sim, api_key="sim"),
        entry("no-such", "openai/sim-no-such", on_sim, api_key="sim"),
        entry("out-of-quota", "openai/sim-quota", on_sim, api_key="sim"),
        entry("groq-down", "groq/llama-3.3-70b-versatile", f"http://127.0.0.1:{DEAD}/v1",
              api_key="gsk-test"),
        entry("ollama-down", "ollama_chat/llama3.2", f"http://127.0.0.1:{DEAD}"),
    ]  # fmt: skip
    models[2]["upstream_reader"] = "litellm"  # the same 401, read by litellm
    raw = {
        "model_list": models,
        "collections": {
            "all": {"members": [m["model_name"] for m in models]},
            "down": {"members": ["groq-down", "ollama-down"]},
        },
        "gateway": {"max_calls": 7, "max_explorers": 0, "reserves": 0, "seat_timeout_s": 10},
    }
    sim.set("sim-bad-key", **said(401, "Invalid API Key"))
    sim.set("sim-no-such", **said(404, "The model `sim-no-such` does not exist."))
    sim.set(
        "sim-quota",
        **said(429, "Rate limit reached on requests per day (RPD)", **{"retry-after": "30"}),
    )
    with served_gateway(raw, tmp_path_factory.mktemp("words")) as served:
        yield served


@pytest.fixture(scope="module")
def panel(gateway) -> dict:
    asked = gateway.http.post(
        "/v1/chat/completions",
        json={"model": "bench/all", "messages": [{"role": "user", "content": "Is it right?"}]},
    )
    assert asked.status_code == 200, asked.text
    return asked.json()


def errors(panel: dict) -> dict[str, str]:
    return {seat["alias"]: seat["error"] for seat in panel["bench"]["seats"] if seat["error"]}


def test_a_refused_key_reads_as_its_status_and_the_providers_words(gateway, panel):
    host = gateway_sim_host(panel)
    assert errors(panel)["bad-key"] == f"openai ({host}): 401 Invalid API Key"
    assert errors(panel)["bad-key-litellm"] == f"openai ({host}): 401 Invalid API Key"
    assert errors(panel)["no-such"] == (
        f"openai ({host}): 404 The model `sim-no-such` does not exist."
    )


def test_an_unreachable_provider_names_itself_its_host_and_connection_refused(panel):
    assert errors(panel)["groq-down"] == f"groq (127.0.0.1:{DEAD}): connection refused"
    assert errors(panel)["ollama-down"] == f"ollama_chat (127.0.0.1:{DEAD}): connection refused"


def test_no_error_carries_litellms_class_names_or_an_objects_repr(panel):
    content = panel["choices"][0]["message"]["content"]
    for text in [content, *errors(panel).values()]:
        for litter in ("Error: ", "Exception -", "object at 0x", "ssl:<"):
            assert litter not in text, text


def test_the_panels_markdown_quotes_the_same_words(gateway, panel):
    content = panel["choices"][0]["message"]["content"]
    host = gateway_sim_host(panel)
    assert f"> openai ({host}): 401 Invalid API Key" in content
    assert f"> groq (127.0.0.1:{DEAD}): connection refused" in content


def test_a_429_says_the_wait_it_applies(gateway, panel):
    host = gateway_sim_host(panel)
    assert errors(panel)["out-of-quota"] == (
        f"openai ({host}): 429 Rate limit reached on requests per day (RPD) (cooling 30 s)"
    )
    models = {m["alias"]: m for m in gateway.http.get("/bench/models").json()["models"]}
    assert models["out-of-quota"]["cooling_why"] == (
        "daily limit (Rate limit reached on requests per day (RPD)); the 30 s it stated"
    )


def test_the_server_logs_a_line_per_failed_seat_with_its_reason(gateway, panel):
    log = gateway.log.read_text()
    seat = next(s for s in panel["bench"]["seats"] if s["alias"] == "bad-key")
    host = gateway_sim_host(panel)
    assert (
        f"WARNING:  seat {seat['call']} failed: model bad-key (openai/sim-bad-key) on connection "
        f"{host}: signin: openai ({host}): 401 Invalid API Key" in log
    ), log[-3000:]
    assert (
        f"model ollama-down (ollama_chat/llama3.2) on connection 127.0.0.1:{DEAD}: capacity: "
        f"ollama_chat (127.0.0.1:{DEAD}): connection refused" in log
    )


def test_ask_prints_each_failed_seats_reason_when_no_seat_answered(gateway):
    # the earlier panels left their connection down, so both are benched: restored by hand,
    # they are seated again and fail in front of `ask`
    for alias in ("groq-down", "ollama-down"):
        restored = httpx.post(f"{gateway.url}/bench/models/{alias}/restore", timeout=30)
        assert restored.status_code == 200, restored.text
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "ask", "down", "Is it right?", "--url", gateway.url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode != 0
    assert f"groq (127.0.0.1:{DEAD}): connection refused" in done.stderr, done.stderr
    assert f"ollama_chat (127.0.0.1:{DEAD}): connection refused" in done.stderr, done.stderr


WHERE = {
    "groq/llama-3.3-70b-versatile": "groq (api.groq.com)",
    "mistral/mistral-small-latest": "mistral (api.mistral.ai)",
    "nvidia_nim/meta/llama-3.1-8b-instruct": "nvidia_nim (integrate.api.nvidia.com)",
    "openrouter/meta-llama/llama-3.3-70b-instruct:free": "openrouter (openrouter.ai)",
    "ollama_chat/llama3.2": "ollama_chat (localhost:11434)",
}


@pytest.mark.parametrize("model", WHERE)
def test_a_provider_without_an_api_base_is_named_with_its_default_host(model):
    assert provider_at({"model": model}) == WHERE[model]


def test_an_api_base_is_named_by_its_host_without_its_user_or_query():
    params = {"model": "openai/x", "api_base": "https://u:secret@llm.example/v1?key=k"}
    assert provider_at(params) == "openai (llm.example)"


def gateway_sim_host(panel: dict) -> str:
    """The simulator's host:port, as the seats on it name their connection."""
    return next(s["connection"] for s in panel["bench"]["seats"] if s["alias"] == "fine")
