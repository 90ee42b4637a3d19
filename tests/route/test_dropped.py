"""Route mode's hint fields: given to the member where its provider takes them (litellm says
which), else dropped and named in `X-Bench-Dropped` and on the turn's record; never a failed
turn."""

from __future__ import annotations

import pytest

from tests.helpers.hints import OLD, dropped, mixed_raw


@pytest.fixture
def mixed(make_gateway, sim):
    return make_gateway(mixed_raw(sim.url))


def test_a_hint_goes_to_a_member_that_takes_it_and_is_named_for_one_that_does_not(mixed, sim):
    body = {
        "model": "bench/mixed:route",
        "messages": [{"role": "user", "content": "think hard"}],
        "reasoning_effort": "high",
    }
    first = mixed.http.post("/v1/chat/completions", json=body)
    assert first.status_code == 200, first.text
    assert first.headers["x-bench-model"] == "old"
    assert dropped(first) == ["reasoning_effort"]
    assert "reasoning_effort" not in sim.log(OLD)[-1]["body"]
    record = mixed.http.get(f"/bench/calls/{first.json()['bench']['call']}").json()
    assert record["dropped"] == ["reasoning_effort"]

    sim.set(OLD, status=500)  # now alpha answers, and alpha's provider takes the hint
    second = mixed.http.post("/v1/chat/completions", json=body)
    assert second.headers["x-bench-model"] == "alpha"
    assert "x-bench-dropped" not in second.headers
    assert sim.log("sim-alpha")[-1]["body"]["reasoning_effort"] == "high"
    record = mixed.http.get(f"/bench/calls/{second.json()['bench']['call']}").json()
    assert record["dropped"] == []


def test_hints_no_member_takes_and_unknown_fields_are_named_and_the_turn_answers(mixed, sim):
    sim.set(OLD, status=500)
    body = {
        "model": "bench/mixed:route",
        "messages": [{"role": "user", "content": "hi"}],
        "top_k": 40,  # no OpenAI model takes it
        "store": False,  # OpenAI's, and litellm passes it on
        "metadata": {"run": "7"},  # OpenAI's, but litellm passes it on to no chat model
        "thinking": {"type": "enabled"},  # not a chat field at all
    }
    response = mixed.http.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    assert sorted(dropped(response)) == ["metadata", "thinking", "top_k"]
    sent = sim.log("sim-alpha")[-1]["body"]
    assert sent["store"] is False
    assert not {"top_k", "thinking", "metadata"} & set(sent)
