"""Anthropic hint fields on a panel, as Claude Code's side calls and one-shot questions send
them (captured from Claude Code 2.1.197, trimmed): dropped or translated the way route mode does,
named in `X-Bench-Dropped`, never refused."""

from __future__ import annotations

from tests.helpers.agents import captured
from tests.helpers.hints import dropped


def test_claude_codes_title_call_to_a_panel_is_answered_by_every_seat(gw, sim):
    request = captured("claude_code", "title", model="bench/trio")
    response = gw.http.post(
        "/v1/messages?beta=true", json=request["body"], headers=request["headers"]
    )
    assert response.status_code == 200, response.text
    assert len(sim.log()) == 3
    for seat in sim.log():
        sent = seat["body"]
        assert sent["reasoning_effort"] == "high"  # output_config.effort, which sim-* takes
        assert sent["response_format"]["type"] == "json_schema"
        assert "output_config" not in sent and "user" not in sent
    assert sorted(dropped(response)) == ["anthropic-beta", "metadata.user_id"]


def test_a_system_message_inside_messages_is_folded_into_the_system_text(gw, sim):
    body = {
        "model": "bench/trio",
        "max_tokens": 50,
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": "Hello"},
            {"role": "system", "content": "Answer in French."},
        ],
    }
    response = gw.http.post("/v1/messages", json=body)
    assert response.status_code == 200, response.text
    sent = sim.log()[0]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert "Be brief." in str(sent[0]["content"]) and "Answer in French." in str(sent[0]["content"])


def test_server_side_fields_and_provider_options_are_dropped_and_named(gw, sim):
    body = {
        "model": "bench/trio",
        "max_tokens": 20,
        "messages": [{"role": "user", "content": "hi"}],
        "context_management": {"edits": []},
        "mcp_servers": [{"type": "url", "url": "https://x", "name": "x"}],
        "container": "c1",
        "speed": "fast",
        "inference_geo": "eu",
        "service_tier": "auto",  # the default: nothing asked, nothing named
        "top_k": 5,
        "thinking": {"type": "adaptive"},
    }
    response = gw.http.post("/v1/messages", json=body)
    assert response.status_code == 200, response.text
    assert sorted(dropped(response)) == [
        "container",
        "context_management",
        "inference_geo",
        "mcp_servers",
        "speed",
        "top_k",
    ]
    assert {r["body"]["reasoning_effort"] for r in sim.log()} == {"medium"}  # adaptive
