"""The Gemini CLI's own requests (captured from Gemini CLI 0.61.0, trimmed) in route mode,
through the real gateway to members litellm calls on the simulated upstream: its model in the
path with two colons, its generationConfig hints translated or named, the thought signatures it
adds to earlier calls left out; never a refused or failed turn."""

from __future__ import annotations

import json

import pytest

from tests.helpers.agents import captured, sse_events
from tests.helpers.hints import dropped

SHELL = {"name": "run_shell_command", "arguments": {"command": "echo bench-ok-7f3a9c"}}


@pytest.fixture
def gemini_crew(crew, sim):
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, tool_call=SHELL)
    return crew


def send(gateway, request, model="crew:route", method="streamGenerateContent?alt=sse"):
    """POST a captured request as the CLI does: its model raw in the path, colons and all."""
    path = f"/v1beta/models/{model}:{method}"
    return gateway.http.post(path, json=request["body"], headers={"x-goog-api-key": "local"})


@pytest.mark.parametrize("model", ["crew:route", "bench/crew:route"])
def test_the_clis_first_turn_calls_its_shell_tool(gemini_crew, sim, model):
    response = send(gemini_crew, captured("gemini", "turn1_main"), model)
    assert response.status_code == 200, response.text
    chunks = sse_events(response.text)
    last = chunks[-1]["candidates"][0]
    call = next(p["functionCall"] for p in last["content"]["parts"] if "functionCall" in p)
    assert (call["name"], call["args"]) == ("run_shell_command", SHELL["arguments"])
    assert call["id"] and last["finishReason"] == "STOP"
    assert {c["modelVersion"] for c in chunks} == {"alpha"}
    sent = sim.log("sim-alpha")[-1]["body"]
    assert sent["reasoning_effort"] == "medium"  # thinkingBudget 8192
    assert (sent["temperature"], sent["top_p"]) == (1, 0.95)
    assert "top_k" not in sent
    assert sorted(dropped(response)) == ["thinkingConfig.includeThoughts", "topK"]
    skill = next(t for t in sent["tools"] if t["function"]["name"] == "activate_skill")
    assert "$schema" not in skill["function"]["parameters"]
    assert skill["function"]["parameters"]["additionalProperties"] is False


def test_the_clis_tool_result_turn_gets_the_tools_answer(gemini_crew, sim):
    request = captured("gemini", "turn2_tool_result")
    assert "thoughtSignature" in json.dumps(request["body"])  # the CLI adds its own
    response = send(gemini_crew, request)
    assert response.status_code == 200, response.text
    last = sse_events(response.text)[-1]["candidates"][0]
    text = "".join(
        p.get("text", "")
        for c in sse_events(response.text)
        for p in c["candidates"][0]["content"]["parts"]
    )
    assert text.startswith("The tool said: ") and "Output: bench-ok-7f3a9c" in text
    assert last["finishReason"] == "STOP"
    sent = sim.log("sim-alpha")[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert "thoughtSignature" not in json.dumps(sent)


def test_a_thought_part_from_an_earlier_turn_is_left_out(gemini_crew, sim):
    request = captured("gemini", "turn2_tool_result")
    model_turn = request["body"]["contents"][1]
    model_turn["parts"].insert(0, {"text": "Let me think about it.", "thought": True})
    response = send(gemini_crew, request)
    assert response.status_code == 200, response.text
    assert "Let me think" not in json.dumps(sim.log("sim-alpha")[-1]["body"])


def test_safety_settings_and_a_hosted_tool_are_named_never_refused(gemini_crew, sim):
    request = captured("gemini", "turn1_main")
    request["body"]["safetySettings"] = [
        {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}
    ]
    request["body"]["tools"].append({"googleSearch": {}})
    response = send(gemini_crew, request, method="generateContent")
    assert response.status_code == 200, response.text
    assert {"safetySettings", "tools[googleSearch]"} <= set(dropped(response))
    assert response.json()["modelVersion"] == "alpha"
    empty = captured("gemini", "turn1_main")
    empty["body"]["safetySettings"] = []
    assert "safetySettings" not in dropped(send(gemini_crew, empty, method="generateContent"))
