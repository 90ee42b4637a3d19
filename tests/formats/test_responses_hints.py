"""Responses hint fields on a panel, read as route mode reads them: given to the seats that take
them, named in `X-Bench-Dropped` otherwise, never refused."""

from __future__ import annotations

from tests.helpers.hints import dropped


def test_codexs_hint_fields_on_a_panel_are_given_or_named(gw, sim):
    body = {
        "model": "bench/trio",
        "input": [{"type": "message", "id": "msg_1", "role": "developer", "content": "Be brief."},
                  {"type": "message", "id": "msg_2", "role": "user", "content": "hello"}],
        "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
        "client_metadata": {"session_id": "s1"},
        "prompt_cache_key": "s1",
        "store": False,
        "top_logprobs": 2,
        "parallel_tool_calls": True,  # a provider refuses it without tools: named, not passed
    }  # fmt: skip
    response = gw.http.post("/v1/responses", json=body)
    assert response.status_code == 200, response.text
    assert sorted(dropped(response)) == [
        "client_metadata",
        "include",
        "parallel_tool_calls",
        "reasoning.summary",
    ]
    for seat in sim.log():
        sent = seat["body"]
        assert (sent["reasoning_effort"], sent["prompt_cache_key"]) == ("low", "s1")
        assert sent["top_logprobs"] == 2 and "parallel_tool_calls" not in sent
