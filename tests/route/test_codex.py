"""Codex CLI's own requests (captured from Codex 0.171.0, trimmed) in route mode, through the
real gateway to members litellm calls on the simulated upstream: namespace tools flattened and
their calls mapped back, hosted and custom tools and Codex's own fields named as dropped, the
hint fields given where the member takes them; never a refused or failed turn."""

from __future__ import annotations

import json

import openai
import pytest

from tests.helpers.agents import captured, sse_events
from tests.helpers.hints import dropped

EXEC = {"name": "exec_command", "arguments": {"cmd": "echo bench-ok-7f3a9c > proof.txt"}}
CLOSE = {"name": "multi_agent_v1__close_agent", "arguments": {"target": "agent-x"}}


def send(gateway, request, model="bench/crew:route"):
    body = {**request["body"], "model": model}
    return gateway.http.post("/v1/responses", json=body, headers=request["headers"])


def finished_items(response) -> list[dict]:
    done = "response.output_item.done"
    return [e["item"] for e in sse_events(response.text) if e["type"] == done]


@pytest.fixture
def codex_crew(crew, sim):
    for served in ("sim-alpha", "sim-gamma", "sim-delta"):
        sim.set(served, tool_call=EXEC)
    return crew


def test_codexs_first_turn_calls_its_shell_tool(codex_crew, sim):
    response = send(codex_crew, captured("codex", "turn1"))
    assert response.status_code == 200, response.text
    events = sse_events(response.text)
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["id"].startswith("resp_")
    assert events[-1]["response"]["model"] == "alpha"
    call = finished_items(response)[0]
    assert (call["type"], call["name"]) == ("function_call", "exec_command")
    assert json.loads(call["arguments"]) == EXEC["arguments"]  # whole in output_item.done
    sent = sim.log("sim-alpha")[-1]["body"]
    names = [t["function"]["name"] for t in sent["tools"]]
    assert names[0] == "exec_command"
    assert "multi_agent_v1__close_agent" in names and "multi_agent_v1__spawn_agent" in names
    assert [m["role"] for m in sent["messages"]] == ["system", "system", "user", "user"]
    assert sent["prompt_cache_key"] == captured("codex", "turn1")["body"]["prompt_cache_key"]
    assert sent["parallel_tool_calls"] is True
    assert sent["store"] is False  # what the gateway does anyway; the member is told so too
    assert not {"include", "client_metadata", "reasoning"} & set(sent)
    assert sorted(dropped(response)) == [
        "client_metadata",
        "include",
        "reasoning.summary",
        "tools[web_search]",
    ]


def test_codexs_tool_result_turn_gets_the_tools_answer(codex_crew, sim):
    response = send(codex_crew, captured("codex", "turn2"))
    assert response.status_code == 200, response.text
    message = finished_items(response)[0]
    assert message["content"][0]["text"].startswith("The tool said: Chunk ID")
    sent = sim.log("sim-alpha")[-1]["body"]["messages"]
    assert [m["role"] for m in sent[-2:]] == ["assistant", "tool"]


def test_a_namespaced_call_comes_back_as_its_name_and_namespace(codex_crew, sim):
    sim.set("sim-alpha", tool_call=CLOSE)
    streamed = send(codex_crew, captured("codex", "turn1"))
    call = finished_items(streamed)[0]
    assert (call["name"], call["namespace"]) == ("close_agent", "multi_agent_v1")
    completed = sse_events(streamed.text)[-1]["response"]["output"][0]
    assert (completed["name"], completed["namespace"]) == ("close_agent", "multi_agent_v1")
    plain = send(codex_crew, captured("codex", "turn1", stream=False))
    item = plain.json()["output"][0]
    assert (item["name"], item["namespace"]) == ("close_agent", "multi_agent_v1")


def test_a_later_turns_namespaced_call_reaches_the_member_flattened(codex_crew, sim):
    response = send(codex_crew, captured("codex", "namespaced_turn2"))
    assert response.status_code == 200, response.text
    sent = sim.log("sim-alpha")[-1]["body"]["messages"]
    assert sent[-2]["tool_calls"][0]["function"]["name"] == "multi_agent_v1__close_agent"
    assert sent[-1]["role"] == "tool"
    assert finished_items(response)[0]["content"][0]["text"].startswith("The tool said: invalid")


def test_a_catalog_models_custom_and_hosted_tools_are_named_and_its_effort_translated(
    codex_crew, sim
):
    response = send(codex_crew, captured("codex", "known_turn1"))
    assert response.status_code == 200, response.text
    sent = sim.log("sim-alpha")[-1]["body"]
    assert [t["function"]["name"] for t in sent["tools"]] == ["exec_command"]
    assert sent["reasoning_effort"] == "medium"
    assert {"tools[apply_patch]", "tools[tool_search]", "tools[web_search]"} <= set(
        dropped(response)
    )
    assert "text.verbosity" in dropped(response)  # litellm: an unknown model takes no verbosity


def test_the_openai_sdk_reads_a_namespaced_call(codex_crew, sim):
    sim.set("sim-alpha", tool_call=CLOSE)
    namespace = captured("codex", "turn1")["body"]["tools"][1]
    assert namespace["type"] == "namespace"
    reply = codex_crew.client.responses.create(
        model="bench/crew:route", input="Close agent agent-x.", tools=[namespace]
    )
    call = reply.output[0]
    assert call.type == "function_call" and call.name == "close_agent"
    assert call.namespace == "multi_agent_v1"


def test_a_stored_conversation_is_still_refused(codex_crew, sim):
    with pytest.raises(openai.BadRequestError) as caught:
        codex_crew.client.responses.create(
            model="bench/crew:route", input="hi", previous_response_id="resp_1"
        )
    assert "stores no responses" in caught.value.message
    assert sim.log() == []
