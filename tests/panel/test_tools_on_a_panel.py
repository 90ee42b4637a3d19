"""Tools on a panel (contract §11): a panel asked with tools answers in prose, every seat, the
tools not offered to them and named (`X-Bench-Dropped: tools`); earlier tool calls and results
reach the seats as text; `tools: []` is no tools. Each agent's own one-shot question and tool
turn (captured from the programs, trimmed), in its own format, against the real gateway."""

from __future__ import annotations

import json

import anthropic
import ollama
import pytest

from tests.helpers.agents import captured, sse_events
from tests.helpers.bench import quiet_raw
from tests.helpers.route import WEATHER

CALL_TEXT = '[tool call weather({"city": "Oslo"})]'


@pytest.fixture
def gw(make_gateway, sim):
    return make_gateway(quiet_raw(sim.url))


def seats_were_asked_in_prose(sim, count: int = 3) -> list[dict]:
    """Every seat was called, none was offered a tool; their requests' messages."""
    log = sim.log()
    assert len(log) == count
    assert all("tools" not in r["body"] and "tool_choice" not in r["body"] for r in log)
    return [r["body"]["messages"] for r in log]


def dropped(response) -> list[str]:
    return [n.strip() for n in response.headers.get("x-bench-dropped", "").split(",") if n]


def test_an_openai_panel_with_tools_answers_every_seat_in_prose(gw, sim):
    completion, raw = gw.ask("bench/trio", "Weather in Oslo?", tools=[WEATHER], tool_choice="auto")
    assert raw.headers["x-bench-dropped"] == "tools"
    assert all(s["status"] == "ok" for s in completion.model_extra["bench"]["seats"])
    seats_were_asked_in_prose(sim)


def test_empty_tools_are_no_tools(gw, sim):
    _, raw = gw.ask("bench/trio", "hi", tools=[])
    assert "x-bench-dropped" not in raw.headers


def test_earlier_tool_calls_and_results_reach_the_seats_as_text(gw, sim):
    messages = [
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "user", "content": "So, a coat?"},
    ]
    gw.client.chat.completions.create(model="bench/trio", messages=messages, tools=[WEATHER])
    for sent in seats_were_asked_in_prose(sim):
        assert sent[1] == {"role": "assistant", "content": CALL_TEXT}
        assert sent[2] == {"role": "user", "content": "[tool result: sunny]"}


@pytest.mark.parametrize("name", ["turn1", "turn2"])
def test_qwen_codes_turns_to_a_panel_are_answered_by_every_seat(gw, sim, name):
    request = captured("qwen_code", name, model="bench/trio")
    response = gw.http.post("/v1/chat/completions", json=request["body"])
    assert response.status_code == 200, response.text
    assert sse_events(response.text)[-1]["choices"][0]["finish_reason"] == "stop"
    assert dropped(response) == ["tools"]
    for sent in seats_were_asked_in_prose(sim):
        assert all(m["role"] in ("system", "user", "assistant") for m in sent)
    if name == "turn2":
        assert sent[-1]["content"].startswith("[tool result: Command: ")


def test_opencodes_one_shot_question_to_a_panel(gw, sim):
    request = captured("opencode", "req1", model="bench/trio")  # tools, tool_choice auto
    response = gw.http.post(
        "/v1/chat/completions", json=request["body"], headers=request["headers"]
    )
    assert response.status_code == 200, response.text
    assert dropped(response) == ["tools"]
    seats_were_asked_in_prose(sim)


def test_claude_codes_turns_to_a_panel(gw, sim):
    client = anthropic.Anthropic(base_url=gw.url, api_key="local", max_retries=0)
    first = captured("claude_code", "turn1", model="bench/trio")["body"]
    first.pop("stream")
    # Claude Code's own client: the SDK's beta messages, betas in the anthropic-beta header
    with client.beta.messages.stream(**first, betas=["context-management-2025-06-27"]) as events:
        message = events.get_final_message()
    assert message.stop_reason == "end_turn" and "## member1 — alpha" in message.content[0].text
    sim.state.reset()
    second = captured("claude_code", "turn2", model="bench/trio")
    response = gw.http.post("/v1/messages", json=second["body"], headers=second["headers"])
    assert response.status_code == 200, response.text
    assert "tools" in dropped(response)
    for sent in seats_were_asked_in_prose(sim):
        assert sent[-2]["content"].startswith("[tool call Bash(")
        assert sent[-1] == {"role": "user", "content": "[tool result: bench-ok-7319]"}


def test_codexs_turns_to_a_panel(gw, sim):
    request = captured("codex", "turn2", model="bench/trio")
    response = gw.http.post("/v1/responses", json=request["body"], headers=request["headers"])
    assert response.status_code == 200, response.text
    assert sse_events(response.text)[-1]["type"] == "response.completed"
    assert {"tools", "tools[web_search]"} <= set(dropped(response))
    for sent in seats_were_asked_in_prose(sim):
        assert sent[-2]["content"].startswith("[tool call exec_command(")
        assert sent[-1]["content"].startswith("[tool result: Chunk ID")


def test_the_gemini_clis_turns_to_a_panel(gw, sim):
    request = captured("gemini", "turn2_tool_result")
    path = "/v1beta/models/bench/trio:streamGenerateContent?alt=sse"
    response = gw.http.post(path, json=request["body"])
    assert response.status_code == 200, response.text
    assert sse_events(response.text)[-1]["candidates"][0]["finishReason"] == "STOP"
    assert "tools" in dropped(response)
    for sent in seats_were_asked_in_prose(sim):
        text = json.dumps(sent)
        assert "[tool call run_shell_command(" in text and "[tool result: " in text


def test_an_ollama_panel_with_tools_and_tool_turns(gw, sim):
    client = ollama.Client(host=gw.url)
    messages = [
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "weather", "arguments": {"city": "Oslo"}}}],
        },
        {"role": "tool", "content": "sunny", "tool_name": "weather"},
    ]
    reply = client.chat(model="bench/trio", messages=messages, tools=[WEATHER], stream=False)
    assert "## member1 — alpha" in reply.message.content
    for sent in seats_were_asked_in_prose(sim):
        assert sent[1]["content"] == '[tool call weather({"city": "Oslo"})]'
        assert sent[2] == {"role": "user", "content": "[tool result: sunny]"}
