"""Route conversations only when a request continues one (contract §11, "Conversations"):
earlier turns in it, or a session the client names (X-Bench-Conversation, Claude Code's
metadata.user_id and session header, Codex's prompt_cache_key and session headers, opencode's
x-session-id). A request with none starts a new conversation, even when its text equals an
earlier one's: the members in order again, a recovered member in its place."""

from __future__ import annotations

import pytest

from tests.helpers.agents import captured

HI = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hi"}]


def turn(gateway, messages=HI, headers=None) -> dict:
    body = {"model": "bench/crew:route", "messages": messages}
    response = gateway.http.post("/v1/chat/completions", json=body, headers=headers or {})
    assert response.status_code == 200, response.text
    return response.json()["bench"]


def test_two_sessions_with_one_opening_are_two_conversations(crew, sim):
    sim.set("sim-alpha", status=503, fail_times=1)  # the first goes to gamma
    first = turn(crew)
    assert first["alias"] == "gamma"
    second = turn(crew)  # the same text, no earlier turn: a new conversation, alpha again
    assert second["conversation"] != first["conversation"]
    assert (second["alias"], second["turn"]) == ("alpha", 1)


def test_a_request_carrying_earlier_turns_continues_its_conversation(crew, sim):
    first = turn(crew)
    later = turn(
        crew, [*HI, {"role": "assistant", "content": "hello"}, {"role": "user", "content": "and?"}]
    )
    assert (later["conversation"], later["turn"]) == (first["conversation"], 2)


def test_x_bench_conversation_names_a_session(crew, sim):
    named = {"X-Bench-Conversation": "my-task-7"}
    first, second = turn(crew, headers=named), turn(crew, headers=named)
    assert (second["conversation"], second["turn"]) == (first["conversation"], 2)
    other = turn(crew, headers={"X-Bench-Conversation": "other"})
    assert other["conversation"] != first["conversation"]


def _claude(gateway, request) -> str:
    body = {**request["body"], "model": "bench/crew:route", "stream": False}
    response = gateway.http.post("/v1/messages", json=body, headers=request["headers"])
    assert response.status_code == 200, response.text
    return response.json()["bench"]["call"]


def test_claude_codes_session_keys_its_conversation(crew, sim):
    first = _claude(crew, captured("claude_code", "turn1"))
    again = _claude(crew, captured("claude_code", "turn1"))  # the same session, no earlier turn
    assert again.split(".")[0] == first.split(".")[0] and again.endswith(".2")
    other = captured("claude_code", "turn1")  # another session (its metadata and header)
    other["body"]["metadata"]["user_id"] = other["body"]["metadata"]["user_id"].replace(
        other["headers"]["x-claude-code-session-id"], "0000-another"
    )
    other["headers"]["x-claude-code-session-id"] = "0000-another"
    assert _claude(crew, other).split(".")[0] != first.split(".")[0]


@pytest.mark.parametrize("named_by", ["prompt_cache_key", "session-id"])
def test_codexs_session_keys_its_conversation(crew, sim, named_by):
    request = captured("codex", "turn1", model="bench/crew:route", stream=False)
    if named_by == "session-id":
        del request["body"]["prompt_cache_key"]
        del request["headers"]["thread-id"]
    else:
        request["headers"] = {}

    def conversation() -> str:
        response = crew.http.post("/v1/responses", json=request["body"], headers=request["headers"])
        assert response.status_code == 200, response.text
        return response.headers["x-bench-conversation"]

    assert conversation() == conversation()


def test_opencodes_title_call_and_turn_are_one_session(crew, sim):
    calls = []
    for name in ("req0", "req1"):  # the title request, then the turn: one x-session-id
        request = captured("opencode", name, model="bench/crew:route", stream=False)
        response = crew.http.post(
            "/v1/chat/completions", json=request["body"], headers=request["headers"]
        )
        calls.append(response.json()["bench"]["call"])
    assert calls[0].split(".")[0] == calls[1].split(".")[0] and calls[1].endswith(".2")
