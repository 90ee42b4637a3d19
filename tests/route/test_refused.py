"""A route request every member refuses for itself (its parameters; a context too long) is the
client's 400 (413 for the context) at once, in its format: never a 502 an agent retries for
minutes. Where trying again could help (a member's 5xx), it is still a 502."""

from __future__ import annotations

import json

import anthropic
import openai
import pytest

from tests.helpers.agents import captured

MEMBERS = ("sim-alpha", "sim-gamma", "sim-delta")


def refuse(sim, message: str = "Unsupported parameter: 'frobnicate'", status: int = 400) -> None:
    for served in MEMBERS:
        sim.set(served, status=status, error_message=message)


def test_a_request_every_member_refuses_is_the_clients_400(crew, sim):
    refuse(sim)
    with pytest.raises(openai.BadRequestError) as caught:
        crew.ask("bench/crew:route", "hi")
    assert "Every member refused" in caught.value.message
    assert "frobnicate" in caught.value.message
    assert [len(sim.log(s)) for s in MEMBERS] == [1, 1, 1]  # each tried once, no retry
    conversation = caught.value.response.headers["x-bench-conversation"]
    turns = crew.http.get(f"/bench/conversations/{conversation}").json()["turns"]
    assert turns[0]["error_class"] == "refused"


def test_a_context_no_member_holds_is_a_413(crew, sim):
    refuse(sim, "This model's maximum context length is 4096 tokens.")
    with pytest.raises(openai.APIStatusError) as caught:
        crew.ask("bench/crew:route", "a long story")
    assert caught.value.status_code == 413
    assert "context window" in caught.value.message


def test_claude_code_is_refused_at_once_in_anthropics_shape(crew, sim):
    refuse(sim, status=422)
    request = captured("claude_code", "turn1")
    body = {**request["body"], "model": "bench/crew:route"}
    client = anthropic.Anthropic(base_url=crew.url, api_key="local", max_retries=0)
    body.pop("stream")
    with pytest.raises(anthropic.BadRequestError) as caught:
        with client.beta.messages.stream(**body, betas=["claude-code-20250219"]) as events:
            events.get_final_message()
    assert caught.value.body["error"]["type"] == "invalid_request_error"
    assert [len(sim.log(s)) for s in MEMBERS] == [1, 1, 1]


def test_the_gemini_cli_is_refused_with_a_real_status(crew, sim):
    refuse(sim)
    path = "/v1beta/models/crew:route:streamGenerateContent?alt=sse"
    response = crew.http.post(path, json=captured("gemini", "turn1_main")["body"])
    assert response.status_code == 400
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_a_member_that_fails_where_trying_again_could_help_is_still_a_502(crew, sim):
    sim.set("sim-alpha", status=400, error_message="Unsupported parameter")
    sim.set("sim-gamma", status=503)
    sim.set("sim-delta", status=400, error_message="Unsupported parameter")
    with pytest.raises(openai.APIStatusError) as caught:
        crew.ask("bench/crew:route", "hi")
    assert caught.value.status_code == 502


def test_a_400_naming_a_content_policy_only_in_its_code_is_the_clients_at_once(crew, sim):
    body = {"error": {"message": "Request blocked.", "type": "invalid_request_error",
                      "code": "content_policy_violation"}}  # fmt: skip
    script = {"status": 400, "content_type": "application/json", "parts": [json.dumps(body)]}
    sim.set("sim-alpha", script=script)
    with pytest.raises(openai.BadRequestError) as caught:
        crew.ask("bench/crew:route", "hi")
    assert caught.value.code == "content_policy_violation"
    assert "content policy" in caught.value.message and "Request blocked." in caught.value.message
    assert [len(sim.log(s)) for s in MEMBERS] == [1, 0, 0]  # nobody else asked


def test_a_400_naming_no_content_policy_still_goes_to_the_next_member(crew, sim):
    sim.set("sim-alpha", status=400, error_message="Unsupported parameter: 'frobnicate'")
    completion, raw = crew.ask("bench/crew:route", "hi")
    assert completion.model == raw.headers["x-bench-model"] == "gamma"
    assert completion.model_extra["bench"]["failed_over"][0]["alias"] == "alpha"
