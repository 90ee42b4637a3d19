"""A conversation carried on with a panel past `gateway.panel_turns_max` of the panel's own
replies is refused with a 400 naming `:route`: an agent that waits for a tool call a panel never
makes would otherwise ask again and again. Each conversation is the client's own, its assistant
turns the panel's real replies sent back as the SDK returned them."""

from __future__ import annotations

import anthropic
import openai
import pytest

from tests.helpers.bench import quiet_raw

MOST = 2  # panel replies a conversation may carry


@pytest.fixture
def gw(make_gateway, sim):
    return make_gateway(quiet_raw(sim.url, panel_turns_max=MOST))


def test_a_chat_conversation_past_the_panel_turns_max_is_refused_naming_route(gw, sim):
    messages = [{"role": "user", "content": "Is this code right?"}]
    for _ in range(MOST + 1):  # the next ask carries MOST + 1 panel replies
        reply = gw.client.chat.completions.create(model="bench/trio", messages=messages)
        messages += [
            {"role": "assistant", "content": reply.choices[0].message.content},
            {"role": "user", "content": "Go on."},
        ]
    asked = len(sim.log())
    with pytest.raises(openai.BadRequestError) as refused:
        gw.client.chat.completions.create(model="bench/trio", messages=messages)
    error = refused.value.body
    assert ":route" in error["message"] and "gateway.panel_turns_max" in error["message"]
    assert error["param"] == "messages"
    assert len(sim.log()) == asked  # nobody was seated for it
    route = gw.client.chat.completions.create(model="bench/trio:route", messages=messages)
    assert route.choices[0].message.content  # route mode takes the same conversation


def test_an_anthropic_conversation_past_the_panel_turns_max_is_refused_naming_route(gw, sim):
    client = anthropic.Anthropic(base_url=gw.url, api_key="local", max_retries=0, timeout=30)
    messages: list = [{"role": "user", "content": "Is this code right?"}]
    for _ in range(MOST + 1):  # the next ask carries MOST + 1 panel replies
        reply = client.messages.create(model="bench/trio", max_tokens=512, messages=messages)
        messages += [
            {"role": "assistant", "content": [b.model_dump() for b in reply.content]},
            {"role": "user", "content": "Go on."},
        ]
    asked = len(sim.log())
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(model="bench/trio", max_tokens=512, messages=messages)
    error = refused.value.body["error"]
    assert error["type"] == "invalid_request_error" and ":route" in error["message"]
    assert len(sim.log()) == asked


def test_a_conversation_within_the_panel_turns_max_is_answered(gw):
    messages = [{"role": "user", "content": "Is this code right?"}]
    for _ in range(MOST + 1):  # the last ask carries MOST panel replies: still taken
        reply = gw.client.chat.completions.create(model="bench/trio", messages=messages)
        assert reply.choices[0].message.content.startswith("**Panel** `")
        messages += [
            {"role": "assistant", "content": reply.choices[0].message.content},
            {"role": "user", "content": "Go on."},
        ]
