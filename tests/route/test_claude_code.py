"""Claude Code's own requests (captured from Claude Code 2.1.197, trimmed) in route mode, through
the real gateway to members litellm calls on the simulated upstream: its hint fields are given
where the member takes them and named otherwise, its betas and cache marks named, its
mid-conversation system message folded into the system text; never a refused or failed turn."""

from __future__ import annotations

import json

import pytest

from tests.helpers.agents import captured, sse_events
from tests.helpers.hints import dropped

BASH = {"name": "Bash", "arguments": {"command": "echo bench-ok-7319 > proof.txt"}}


@pytest.fixture
def claude_crew(crew, sim):
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, tool_call=BASH)
    return crew


def send(gateway, request, model="bench/crew:route"):
    """POST a captured request as Claude Code sends it (its headers, `?beta=true`)."""
    body = {**request["body"], "model": model}
    return gateway.http.post("/v1/messages?beta=true", json=body, headers=request["headers"])


def events(response) -> list[dict]:
    return sse_events(response.text)


def test_claude_codes_turn_runs_its_tool_and_its_hints_are_named_or_translated(claude_crew, sim):
    response = send(claude_crew, captured("claude_code", "turn1"))
    assert response.status_code == 200, response.text
    seen = events(response)
    assert seen[0]["type"] == "message_start" and seen[0]["message"]["model"] == "alpha"
    use = next(e for e in seen if e["type"] == "content_block_start")["content_block"]
    assert (use["type"], use["name"]) == ("tool_use", "Bash")
    assert seen[-1]["type"] == "message_stop"
    # litellm says an unknown OpenAI model takes reasoning_effort: thinking and effort become it
    sent = sim.log("sim-alpha")[-1]["body"]
    assert sent["reasoning_effort"] == "high"  # output_config.effort high wins over adaptive
    assert not {"context_management", "thinking", "output_config", "top_k"} & set(sent)
    assert sorted(dropped(response)) == [
        "anthropic-beta",
        "cache_control",
        "context_management",
        "metadata.user_id",
    ]
    # the system-role message inside `messages` is in the system text, and nowhere else
    system = sent["messages"][0]
    assert system["role"] == "system"
    assert "Available agent types" in json.dumps(system["content"])
    assert all("Available agent types" not in json.dumps(m) for m in sent["messages"][1:])
    assert "cache_control" not in json.dumps(sent)
    record = claude_crew.http.get(f"/bench/calls/{response.headers['x-bench-conversation']}.1")
    assert sorted(record.json()["dropped"]) == sorted(dropped(response))


def test_claude_codes_tool_result_turn_gets_the_tools_answer(claude_crew, sim):
    response = send(claude_crew, captured("claude_code", "turn2"))
    assert response.status_code == 200, response.text
    text = "".join(
        e["delta"].get("text", "") for e in events(response) if e["type"] == "content_block_delta"
    )
    assert text == "The tool said: bench-ok-7319"
    sent = sim.log("sim-alpha")[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]


def test_a_thinking_budget_becomes_an_effort(claude_crew, sim):
    response = send(claude_crew, captured("claude_code", "known_turn1"))
    assert response.status_code == 200, response.text
    assert sim.log("sim-alpha")[-1]["body"]["reasoning_effort"] == "high"  # budget 31999


def test_claude_codes_title_call_in_route_mode_asks_for_its_json(claude_crew, sim):
    """The title side call: `tools: []`, `thinking: disabled`, `output_config.format` a JSON
    schema (a real output requirement: the member is asked for it as response_format)."""
    response = send(claude_crew, captured("claude_code", "known_title"))
    assert response.status_code == 200, response.text
    sent = sim.log("sim-alpha")[-1]["body"]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["schema"]["required"] == ["title"]
    assert "tools" not in sent and "reasoning_effort" not in sent
    assert "output_config.format" not in dropped(response)


def test_a_malformed_hint_is_the_clients_400_in_anthropics_shape(claude_crew, sim):
    request = captured("claude_code", "turn1")
    request["body"]["thinking"] = {"type": "sometimes"}
    response = send(claude_crew, request)
    assert response.status_code == 400
    assert response.json()["type"] == "error" and "thinking" in response.json()["error"]["message"]
    assert sim.log() == []
